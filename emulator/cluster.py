"""A cluster partition: its local scheduler, its machines and its event queue.

It receives jobs (dispatched by the meta-scheduler, or entering directly when
they name this cluster), runs its local policy after all events of a time
have been applied, starts what the policy decides, and reports its status to
the meta-scheduler after each scheduling event.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .execution import Run
from .messages import ARRIVE, FINISH, META, NO_CPUS, REJECT, START, STATUS, SUBMIT, Message, Status
from .model import Cluster, Job, LinkClock
from .policies import LOCAL
from .policies.registry import PolicySpec
from .resources import Pes, Plan

# Event priorities at equal times: completions and internal events before arrivals (GridSim's order).
_FINISH, _TICK, _ARRIVE, _SUBMIT = range(4)


class ClusterView:
    """What a local policy may read: the cluster's live state, by reference, not to be mutated.

    ``queue`` maps job id to job in arrival order; ``running`` maps job id to
    :class:`~emulator.execution.Run` in start order.
    """

    def __init__(self, part: ClusterPartition) -> None:
        self._part = part
        self.cluster = part.cluster
        self.resources = part.resources
        self.queue = part.queue
        self.running = part.running
        self.rng = part.rng

    @property
    def now(self) -> float:
        return self._part.now

    def estimated_ends(self) -> list[tuple[float, Plan, tuple[str, ...]]]:
        """Running jobs as ``(estimated end, plan, licenses)``, soonest first (for reservations)."""
        runs = sorted(self.running.values(), key=lambda r: (r.estimated_end, r.seq))
        return [(r.estimated_end, r.plan, r.job.licenses) for r in runs]


class ClusterPartition:
    """One cluster of the grid as a partition: ``advance(horizon, inbox)`` per barrier round."""

    def __init__(
        self,
        pid: int,
        cluster: Cluster,
        policy: PolicySpec,
        seed_seq: np.random.SeedSequence,
        direct: list[Job] = (),
        direct_link: LinkClock | None = None,
        report: bool = True,
    ) -> None:
        self.pid = pid
        self.index = pid - 1
        self.cluster = cluster
        self.rng = np.random.default_rng(seed_seq)
        self.policy = LOCAL.create(policy, rng=self.rng, cluster=cluster)
        self.execution = self.policy.execution()
        self.resources = self.policy.resources_class(cluster)
        self.queue: dict[int, Job] = {}
        self.running: dict[int, Run] = {}
        self.now = 0.0
        self._seq = 0
        self._msg_seq = 0
        self._events: list[tuple] = []
        self._rows: list[tuple] = []
        self._outbox: list[Message] = []
        self._changes: tuple[list[int], ...] = ([], [], [], [], [])
        self._queued_work = 0.0
        self.report = report
        self._load_direct(direct, direct_link)
        self.view = ClusterView(self)

    # -- the partition step ---------------------------------------------------------------------

    @property
    def next_time(self) -> float:
        return self._events[0][0] if self._events else math.inf

    def advance(self, horizon: float, inbox: list[Message]) -> tuple[list[Message], float, list[tuple]]:
        """Apply ``inbox``, process every event before ``horizon``; return outbox, next time, rows."""
        for msg in inbox:
            job = Job.from_tuple(msg.payload[0])
            self._push(msg.time, _ARRIVE, (job, False))
        events = self._events
        while events and events[0][0] < horizon:
            self.now = time = events[0][0]
            while events and events[0][0] == time:
                _, kind, _, data = heapq.heappop(events)
                if kind == _FINISH:
                    self.finish(data)
                elif kind == _TICK:
                    self.execution.tick(self)
                elif kind == _ARRIVE:
                    self._arrive(*data)
                else:
                    self._rows.append((time, SUBMIT, data.id, self.index, 0, NO_CPUS, NO_CPUS, None))
            self.schedule()
            while self.queue and not self.running and not events:
                self._reject_stuck()
            if self.report:
                self._report()
        out, rows = self._outbox, self._rows
        self._outbox, self._rows = [], []
        return out, self.next_time, rows

    # -- events -----------------------------------------------------------------------------------

    def _push(self, time: float, kind: int, data) -> None:
        self._seq += 1
        heapq.heappush(self._events, (time, kind, self._seq, data))

    def push_finish(self, run: Run) -> None:
        self._push(run.end, _FINISH, run)

    def push_tick(self, time: float) -> None:
        self._push(time, _TICK, None)

    def _load_direct(self, jobs: list[Job], link: LinkClock | None) -> None:
        """Jobs naming this cluster enter here, through ``link`` if given (GridSim's Workload link)."""
        for job in sorted(jobs, key=lambda j: j.submit):
            arrive = job.submit if link is None else link.send(job.submit, job.in_bytes)
            if arrive > job.submit:
                self._seq += 1
                self._events.append((job.submit, _SUBMIT, self._seq, job))
            self._seq += 1
            self._events.append((arrive, _ARRIVE, self._seq, (job, True)))
        heapq.heapify(self._events)

    def _arrive(self, job: Job, local: bool) -> None:
        time, index = self.now, self.index
        if local and job.submit == time:
            self._rows.append((time, SUBMIT, job.id, index, 0, NO_CPUS, NO_CPUS, None))
        self._rows.append((time, ARRIVE, job.id, index, 0, NO_CPUS, NO_CPUS, None))
        self.execution.arrived(self)
        job = self.policy.admit(job)
        if local:
            self._changes[4].append(job.id)
        reason = self.cluster.fits(job)
        if reason:
            self._rows.append((time, REJECT, job.id, index, 0, NO_CPUS, NO_CPUS, reason))
            self._changes[3].append(job.id)
            return
        self.queue[job.id] = job
        self._queued_work += job.length
        self._changes[0].append(job.id)

    def schedule(self) -> None:
        """Run the policy on the current state and start what it decides."""
        if not self.queue:
            return
        for decision in self.policy.schedule(self.view):
            self._start(*decision)

    def _reject_stuck(self) -> None:
        """Reject the queue head when nothing runs, nothing is due and the policy still left it queued.

        It can never start then (no event will free anything); the jobs behind
        it get another pass. A safety net: admission rejects what cannot fit an
        idle cluster, so only a policy that idles with work left gets here, and
        a job must never silently stay queued forever.
        """
        job = next(iter(self.queue.values()))
        del self.queue[job.id]
        self._queued_work -= job.length
        reason = f"cannot start on idle cluster {self.cluster.name} under policy {self.policy.name}"
        self._rows.append((self.now, REJECT, job.id, self.index, 0, NO_CPUS, NO_CPUS, reason))
        self._changes[3].append(job.id)
        self.schedule()

    def _start(self, job: Job, plan: Plan, chosen: Pes | None = None) -> None:
        """Start ``job`` on ``plan`` now (on the PEs ``chosen`` by the policy, if it says)."""
        del self.queue[job.id]
        self._queued_work -= job.length
        machines, pes = self.resources.allocate(job, plan, chosen)
        speed = (
            float(self.resources.mips[[m for m, _ in plan]].min())
            if len(plan) > 1
            else self.resources.mips[plan[0][0]]
        )
        run = Run(job, self.now, plan, machines, pes, float(speed))
        self._seq += 1
        run.seq = self._seq
        self.running[job.id] = run
        self._rows.append((self.now, START, job.id, self.index, job.cpus, machines, pes, None))
        self._changes[1].append(job.id)
        self.execution.started(self, run)

    def finish(self, run: Run) -> None:
        """End ``run`` now and free what it held."""
        job = run.job
        del self.running[job.id]
        self.resources.release(job, run.plan, run.machines, run.pes)
        self._rows.append((self.now, FINISH, job.id, self.index, job.cpus, run.machines, run.pes, None))
        self._changes[2].append(job.id)

    def _report(self) -> None:
        """Tell the meta-scheduler what changed, one message per scheduling event."""
        arrived, started, finished, rejected, local = self._changes
        if not (arrived or started or finished or rejected):
            return
        status = Status(
            len(self.queue),
            len(self.running),
            self.resources.free_cpus,
            self._queued_work,
            tuple(arrived),
            tuple(started),
            tuple(finished),
            tuple(rejected),
            tuple(local),
        )
        self._changes = ([], [], [], [], [])
        self._msg_seq += 1
        deliver = self.now + self.cluster.link.latency
        self._outbox.append(Message(deliver, self.pid, self._msg_seq, META, STATUS, status))
