"""The meta partition: the job source and the meta-scheduler.

It submits jobs at their submit time, asks the meta policy for a cluster, and
dispatches each job over that cluster's link (latency plus the input data's
transfer time, transfers on one link serialized). It knows the clusters only
from the static platform and their status messages.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .coordinator import EVENT_BUDGET
from .horizons import Timeline
from .messages import DISPATCH, DISPATCHED, META, NO_CPUS, REJECT, RETURN_JOB, SUBMIT, Message, Status
from .model import SINGLE, Job, Platform, link_clock
from .policies import META as META_POLICIES
from .policies.meta_base import HOLD, Dispatch, Reject
from .policies.registry import PolicySpec

# Status reports at a time are applied before that time's submissions, then jobs sent back by outages.
_STATUS, _SUBMIT, _RETURNED = 0, 1, 2


class MetaView:
    """What a meta policy may read. Arrays are indexed by cluster; do not mutate them.

    Static: ``platform``, ``cpus`` (CPUs per cluster); ``bandwidth`` (bytes/s)
    and ``latency`` (s) of each cluster's link, as the scenario gives them, then
    as the cluster last reported them when its link changes (stress tests:
    never the link's live state). From the last :class:`Status` of each cluster (as of
    ``report_time``): ``reported_queued``, ``running``, ``free_cpus``,
    ``queued_work`` (MI), ``queued_cpu_work`` (CPU x MI), ``running_work``
    (CPU-seconds left by estimate) and ``draining_cpus`` (see
    :mod:`emulator.backlog`). Its own dispatches not yet acknowledged:
    ``in_flight`` (job id -> CPU x MI, per cluster) and ``in_flight_work``.
    Failures and outages (stress tests), as last reported: ``up_cpus`` (CPUs of
    the machines up) and ``down`` (in an outage); :meth:`eligible` leaves out the
    clusters believed down, so no policy sends a job there.
    """

    def __init__(self, platform: Platform, rng: np.random.Generator) -> None:
        self.platform = platform
        self.rng = rng
        self.now = 0.0
        clusters = platform.clusters
        n = len(clusters)
        self.cluster_index = {c.name: i for i, c in enumerate(clusters)}
        self.cpus = np.array([c.cpus for c in clusters], dtype=np.int64)
        self.bandwidth = np.array([c.link.bandwidth for c in clusters], dtype=float)
        self.latency = np.array([c.link.latency for c in clusters], dtype=float)
        self.reported_queued = np.zeros(n, dtype=np.int64)
        self.running = np.zeros(n, dtype=np.int64)
        self.free_cpus = self.cpus.copy()
        self.queued_work = np.zeros(n)
        self.queued_cpu_work = np.zeros(n)
        self.running_work = np.zeros(n)
        self.draining_cpus = np.zeros(n, dtype=np.int64)
        self.report_time = np.zeros(n)
        self.in_flight: list[dict[int, float]] = [{} for _ in range(n)]
        self._flying = np.zeros(n, dtype=np.int64)  # len() of each in_flight dict, kept as they change
        self.in_flight_work = np.zeros(n)
        self.up_cpus = self.cpus.copy()
        self.down = np.zeros(n, dtype=bool)
        self.any_down = False
        self._up = ~self.down
        self._eligible: dict[tuple, np.ndarray] = {}
        self._speed: dict[tuple, np.ndarray] = {}

    @property
    def queued(self) -> np.ndarray:
        """Jobs believed queued at each cluster: last report plus dispatches not yet reported."""
        return self.reported_queued + self._flying

    def speed(self, job: Job) -> np.ndarray:
        """MIPS per CPU ``job`` would run at on each cluster, as placed on the idle cluster (0: cannot).

        The machines a first fit in machine order takes (what ``fcfs`` and
        ``easy`` do); a spread job runs at the pace of the slowest of them.
        Cached per job shape; read-only.
        """
        key = (job.cpus, job.placement, job.licenses)
        speed = self._speed.get(key)
        if speed is None:
            speed = np.array([_idle_speed(c, job) for c in self.platform.clusters])
            speed.flags.writeable = False
            self._speed[key] = speed
        return speed

    def sent(self, c: int, job: Job) -> None:
        """The partition dispatched ``job`` to cluster ``c`` (in flight until the cluster reports it)."""
        work = job.cpus * job.length
        self.in_flight[c][job.id] = work
        self._flying[c] = len(self.in_flight[c])
        self.in_flight_work[c] += work

    def idle(self) -> bool:
        """Nothing queued or running anywhere, as last reported, and nothing in flight."""
        return not (self.reported_queued.any() or self.running.any() or any(self.in_flight))

    def eligible(self, job: Job) -> np.ndarray:
        """Clusters that can run ``job``: :meth:`possible` ones not believed down (an outage)."""
        mask = self.possible(job)
        return mask & self._up if self.any_down else mask

    def possible(self, job: Job) -> np.ndarray:
        """Clusters whose hardware and licenses can ever run ``job`` (cached per job shape)."""
        key = (job.cpus, job.placement, job.licenses)
        mask = self._eligible.get(key)
        if mask is None:
            mask = np.array([c.refusal(job) is None for c in self.platform.clusters], dtype=bool)
            mask.flags.writeable = False
            self._eligible[key] = mask
        return mask

    def apply(self, c: int, status: Status) -> None:
        self.reported_queued[c] = status.queued
        self.running[c] = status.running
        self.free_cpus[c] = status.free_cpus
        self.queued_work[c] = status.queued_work
        self.queued_cpu_work[c] = status.queued_cpu_work
        self.running_work[c] = status.running_work
        self.draining_cpus[c] = status.draining_cpus
        self.report_time[c] = status.time
        if status.latency:  # a cluster whose link changes reports it
            self.latency[c] = status.latency
            self.bandwidth[c] = status.bandwidth
        if status.up_cpus >= 0:  # a cluster whose machines can fail, or which can go down, reports it
            self.up_cpus[c] = status.up_cpus
            if status.down != self.down[c]:
                self.down[c] = status.down
                self._up = ~self.down
                self.any_down = bool(self.down.any())
        flying = self.in_flight[c]
        if flying:
            for ids in (status.arrived, status.rejected):
                for job_id in ids:
                    work = flying.pop(job_id, None)
                    if work is not None:
                        self.in_flight_work[c] -= work
            self._flying[c] = len(flying)
            if not flying:
                self.in_flight_work[c] = 0.0  # no rounding residue


def _idle_speed(cluster, job: Job) -> float:
    """MIPS per CPU of the machines a first fit would give ``job`` on ``cluster`` when idle (0: none)."""
    if cluster.refusal(job) is not None:
        return 0.0
    able = [m for m in cluster.machines if m.can_run(job.licenses)]
    if job.placement == SINGLE:
        return next(m.mips for m in able if m.cpus >= job.cpus)
    speeds, cpus = [], 0
    for m in able:
        speeds.append(m.mips)
        cpus += m.cpus
        if cpus >= job.cpus:
            break
    return min(speeds)


class MetaPartition:
    """Partition 0: submits the jobs that do not enter a cluster directly and dispatches them."""

    pid = META

    def __init__(
        self,
        platform: Platform,
        policy: PolicySpec,
        seed_seq: np.random.SeedSequence,
        jobs: list[Job],
        returns: bool = False,
    ):
        """``jobs`` in submit order; ``returns``: some cluster's outages may send jobs back to it."""
        self.platform = platform
        self.rng = np.random.default_rng(seed_seq)
        self.policy = META_POLICIES.create(policy, rng=self.rng, platform=platform)
        self.view = MetaView(platform, self.rng)
        self.links = [link_clock(c.link, c.link_changes) for c in platform.clusters]  # the true links
        self.now = 0.0
        self._seq = 0
        self._msg_seq = 0
        self._events = [(job.submit, _SUBMIT, i, job) for i, job in enumerate(jobs)]
        self._submits = [job.submit for job in jobs]  # in order: the next one is the promise
        self._submitted = 0
        self._returned: list[float] = []  # times of the jobs sent back and not yet dispatched again (heap)
        self.returns = returns
        self._seq = len(jobs)
        heapq.heapify(self._events)
        self._rows: list[tuple] = []
        self._outbox: list[Message] = []
        self._held: list[Job] = []  # jobs held (HOLD, or every cluster able to run them down), in order
        self._kills: dict[int, int] = {}  # jobs sent back by outages: their kills so far
        self.timeline = Timeline(self.busy)

    @property
    def next_time(self) -> float:
        return self._events[0][0] if self._events else math.inf

    @property
    def busy(self) -> bool:
        """Foreground work left: jobs to submit, sent back and not yet dispatched again, or held.

        Status reports waiting in its queue are not: with no job left to place
        they change nothing (and a partition called with a small event budget
        may stop before them).
        """
        return self._submitted < len(self._submits) or bool(self._returned or self._held)

    @property
    def promise(self) -> float:
        """The earliest time it could dispatch with nothing more arriving: its next submission or
        returned job; with jobs held, its next status report too (one may release them)."""
        if self._held:
            return self.next_time
        submit = self._submits[self._submitted] if self._submitted < len(self._submits) else math.inf
        return min(submit, self._returned[0]) if self._returned else submit

    @property
    def reacts(self) -> bool:
        """A status report can release held jobs; a job an outage sends back is dispatched again."""
        return bool(self._held) or self.returns

    def advance(
        self, horizon: float, inbox: list[Message], budget: int = EVENT_BUDGET
    ) -> tuple[list[Message], float, list[tuple], bool, float, bool]:
        """Apply status reports, submit and dispatch the jobs due before ``horizon`` (at most ``budget``
        times of them); returns as :class:`emulator.coordinator.Result`."""
        for msg in inbox:
            self._seq += 1
            kind = _STATUS
            if msg.kind == RETURN_JOB:
                kind = _RETURNED
                heapq.heappush(self._returned, msg.time)
                self.timeline.woken()
            heapq.heappush(self._events, (msg.time, kind, self._seq, (msg.src - 1, msg.payload)))
        events = self._events
        while events and events[0][0] < horizon and budget > 0:
            budget -= 1
            self.now = self.view.now = time = events[0][0]
            submitted: list[Job] = []
            reported = False
            while events and events[0][0] == time:
                _, kind, _, data = heapq.heappop(events)
                if kind == _STATUS:
                    self.view.apply(*data)
                    self.policy.observe(*data)
                    reported = True
                elif kind == _SUBMIT:
                    self._submitted += 1
                    submitted.append(data)
                    self._rows.append((time, SUBMIT, data.id, -1, 0, NO_CPUS, NO_CPUS, None))
                else:  # sent back by an outage (the cluster wrote the `return` row): dispatched again
                    heapq.heappop(self._returned)
                    job_tuple, kills = data[1]
                    job = Job.from_tuple(job_tuple)
                    if kills:
                        self._kills[job.id] = kills
                    submitted.append(job)
            if submitted or (reported and self._held):
                self._dispatch(self._held + submitted)
            self.timeline.step(time, self.busy)
        out, rows = self._outbox, self._rows
        self._outbox, self._rows = [], []
        return out, self.next_time, rows, self.busy, self.promise, self.reacts

    def _send(self, job: Job, c: int, priority: float) -> None:
        """Dispatch ``job`` to cluster ``c`` now, with ``priority`` for its local policy."""
        self._rows.append((self.now, DISPATCHED, job.id, c, 0, NO_CPUS, NO_CPUS, None))
        self.view.sent(c, job)
        deliver = self.links[c].send(self.now, job.in_bytes)
        self._msg_seq += 1
        payload = (job.to_tuple(), priority)
        if self._kills and job.id in self._kills:
            payload = (*payload, self._kills.pop(job.id))
        self._outbox.append(Message(deliver, META, self._msg_seq, c + 1, DISPATCH, payload))

    def _dispatch(self, jobs: list[Job]) -> None:
        held = []
        offered = jobs
        if self.view.any_down:  # jobs only clusters believed down could run wait here, for an `up` report
            view = self.view
            waiting = {j.id for j in jobs if not view.eligible(j).any() and view.possible(j).any()}
            if waiting:
                offered = [j for j in jobs if j.id not in waiting]
        choices = self.policy.select(offered, self.view) if offered else ()
        for job, choice in zip(offered, choices, strict=True):
            if choice is HOLD:
                held.append(job)
            elif type(choice) is Reject:
                self._rows.append((self.now, REJECT, job.id, -1, 0, NO_CPUS, NO_CPUS, choice.reason))
            elif type(choice) is Dispatch:
                self._send(job, choice.cluster, choice.priority)
            else:
                raise TypeError(
                    f"meta policy {self.policy.name} decided {choice!r} for job {job.id}: "
                    "expected Dispatch(cluster, priority), Reject(reason) or HOLD"
                )
        if offered is not jobs:
            held_ids = {j.id for j in held} | waiting
            held = [j for j in jobs if j.id in held_ids]
        self._held = held
        if held and not self._events and self.view.idle() and not self.view.any_down:
            reason = f"held by meta policy {self.policy.name} with nothing left that could release it"
            self._rows += [(self.now, REJECT, job.id, -1, 0, NO_CPUS, NO_CPUS, reason) for job in held]
            self._held = []
