"""The meta partition: the job source and the meta-scheduler.

It submits jobs at their submit time, asks the meta policy for a cluster, and
dispatches each job over that cluster's link (latency plus the input data's
transfer time, transfers on one link serialized). It knows the clusters only
from the static platform and their status messages.
"""

from __future__ import annotations

import heapq
import math
from time import perf_counter

import numpy as np

from ..core.messages import DISPATCH, DISPATCHED, META, NO_CPUS, REJECT, RETURN_JOB, SUBMIT, Message
from ..core.model import Job, Platform, link_clock
from ..policies import META as META_POLICIES
from ..policies.meta_base import HOLD, Dispatch, MetaPolicy, Reject
from ..policies.registry import PolicySpec
from ..state.meta_view import MetaState, MetaView
from ..sync import coordinator
from ..sync.coordinator import EVENT_BUDGET
from ..sync.horizons import Timeline

# Status reports at a time are applied before that time's submissions, then jobs sent back by outages.
_STATUS, _RETURNED = 0, 1


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
        self.knowledge = MetaState(platform, self.rng)
        self.view = MetaView(self.knowledge)
        self.links = [link_clock(c.link, c.link_changes) for c in platform.clusters]  # the true links
        self.now = 0.0
        self._seq = 0
        self._msg_seq = 0
        # Submissions stay in their list, in order, and are taken from it at their times: only status
        # reports and returned jobs go through the heap (a heap of a million submissions cost ~20
        # comparisons per pop).
        self._events: list[tuple] = []  # (time, _STATUS or _RETURNED, sequence, (cluster, payload))
        self._jobs = jobs
        self._submits = [job.submit for job in jobs]  # in order: the next one is the promise
        self._submitted = 0
        self._returned: list[float] = []  # times of the jobs sent back and not yet dispatched again (heap)
        self.returns = returns
        self._rows: list[tuple] = []
        self._outbox: list[Message] = []
        self._held: list[Job] = []  # jobs held (HOLD, or every cluster able to run them down), in order
        self._kills: dict[int, int] = {}  # jobs sent back by outages: their kills so far
        self.timeline = Timeline(self.busy)

    @property
    def next_time(self) -> float:
        submit = self._submits[self._submitted] if self._submitted < len(self._submits) else math.inf
        return min(self._events[0][0], submit) if self._events else submit

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
        times of them); returns as :class:`emulator.sync.coordinator.Result`."""
        events, seq = self._events, self._seq
        for time, src, _, _, kind, payload in inbox:
            seq += 1
            if kind == RETURN_JOB:
                heapq.heappush(self._returned, time)
                self.timeline.woken()
                heapq.heappush(events, (time, _RETURNED, seq, (src - 1, payload)))
            else:
                heapq.heappush(events, (time, _STATUS, seq, (src - 1, payload)))
        self._seq = seq
        # The loop runs once per event time (a million submissions and as many status reports on
        # grid1000): what it reads each time is taken into locals once per call.
        submits, knowledge, step = self._submits, self.knowledge, self.timeline.step
        apply, observe = knowledge.apply, getattr(self.policy, "observe", None)
        if getattr(observe, "__func__", None) is MetaPolicy.observe:  # (keeps no account of the reports:
            observe = None  # not called for each of them)
        last = len(submits)
        deadline = perf_counter() + coordinator.CALL_SECONDS
        while budget > 0:
            submit = submits[self._submitted] if self._submitted < last else math.inf
            time = events[0][0] if events and events[0][0] < submit else submit
            if not time < horizon:
                break
            budget -= 1
            self.now = knowledge.now = time
            reported = False
            while events and events[0][0] == time and events[0][1] == _STATUS:
                cluster, status = heapq.heappop(events)[3]
                apply(cluster, status)
                if observe is not None:
                    observe(cluster, status)
                reported = True
            submitted = self._submit(time) if submit == time else []
            while events and events[0][0] == time:  # sent back by an outage (the cluster wrote the
                heapq.heappop(self._returned)  # `return` row): dispatched again
                job_tuple, kills = heapq.heappop(events)[3][1]
                job = Job.from_tuple(job_tuple)
                if kills:
                    self._kills[job.id] = kills
                submitted.append(job)
            if submitted or (reported and self._held):
                self._dispatch(self._held + submitted)
            step(time, self.busy)
            if perf_counter() > deadline:  # a slow policy (coordinator.CALL_SECONDS)
                break
        out, rows = self._outbox, self._rows
        self._outbox, self._rows = [], []
        return out, self.next_time, rows, self.busy, self.promise, self.reacts

    def _submit(self, time: float) -> list[Job]:
        """The jobs submitted at ``time``, the next ones in submit order (one at least), with their rows."""
        submits, first = self._submits, self._submitted
        last = first + 1
        while last < len(submits) and submits[last] == time:
            last += 1
        self._submitted = last
        jobs = self._jobs[first:last]
        self._rows += [(time, SUBMIT, job.id, -1, 0, NO_CPUS, NO_CPUS, None) for job in jobs]
        return jobs

    def _send(self, job: Job, c: int, priority: float) -> None:
        """Dispatch ``job`` to cluster ``c`` now, with ``priority`` for its local policy."""
        self._rows.append((self.now, DISPATCHED, job.id, c, 0, NO_CPUS, NO_CPUS, None))
        self.knowledge.sent(c, job)
        deliver = self.links[c].send(self.now, job.in_bytes)
        self._msg_seq += 1
        payload = (job.to_tuple(), priority)
        if self._kills and job.id in self._kills:
            payload = (*payload, self._kills.pop(job.id))
        self._outbox.append(Message(deliver, META, self._msg_seq, c + 1, DISPATCH, payload))

    def _dispatch(self, jobs: list[Job]) -> None:
        held = []
        offered = jobs
        if self.knowledge.any_down:  # jobs only clusters believed down can run wait for an `up` report
            view = self.view
            waiting = {j.id for j in jobs if not view.eligible(j).any() and view.possible(j).any()}
            if waiting:
                offered = [j for j in jobs if j.id not in waiting]
        choices = self.policy.select(offered, self.view) if offered else ()
        for job, choice in zip(offered, choices, strict=True):
            kind = type(choice)
            if kind is Dispatch:
                self._send(job, choice.cluster, choice.priority)
            elif choice is HOLD:
                held.append(job)
            elif kind is Reject:
                self._rows.append((self.now, REJECT, job.id, -1, 0, NO_CPUS, NO_CPUS, choice.reason))
            else:
                raise TypeError(
                    f"meta policy {self.policy.name} decided {choice!r} for job {job.id}: "
                    "expected Dispatch(cluster, priority), Reject(reason) or HOLD"
                )
        if offered is not jobs:
            held_ids = {j.id for j in held} | waiting
            held = [j for j in jobs if j.id in held_ids]
        self._held = held
        if held and self.next_time == math.inf and self.knowledge.idle() and not self.knowledge.any_down:
            reason = f"held by meta policy {self.policy.name} with nothing left that could release it"
            self._rows += [(self.now, REJECT, job.id, -1, 0, NO_CPUS, NO_CPUS, reason) for job in held]
            self._held = []
