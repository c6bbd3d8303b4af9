"""A cluster partition: its local scheduler, its machines and its event queue.

It receives jobs (dispatched by the meta-scheduler, or entering directly when
they name this cluster), runs its local policy after all events of a time
have been applied, starts what the policy decides, and reports its status to
the meta-scheduler after each scheduling event.
"""

from __future__ import annotations

import heapq
import math
from time import perf_counter

import numpy as np

from .backlog import Backlog
from .execution import Run
from .messages import (
    ARRIVE,
    FINISH,
    META,
    NO_CPUS,
    PREEMPT,
    REJECT,
    RESUME,
    START,
    STATUS,
    SUBMIT,
    Message,
    Status,
)
from .model import Cluster, Job, LinkClock
from .policies import LOCAL
from .policies.registry import PolicySpec
from .preemption import CHECKPOINT, KEEPS_PROGRESS, KINDS, STOP, Held, Preempt, PreemptionError, resume_info
from .resources import Pes, Plan

# Event priorities at equal times: completions and internal events before arrivals (GridSim's order);
# _PLAN marks a planning time of a time-driven policy (``period``), after everything else.
_FINISH, _TICK, _ARRIVE, _SUBMIT, _PLAN = range(5)


class ClusterView:
    """What a local policy may read: the cluster's live state, by reference, not to be mutated.

    ``queue`` maps job id to job in arrival order; ``running`` maps job id to
    :class:`~emulator.execution.Run` in start order; ``priority`` maps a queued
    job's id to the priority the meta-scheduler attached when it dispatched it
    (absent: 0, as for jobs that entered directly); ``preempted`` maps the id of
    a queued job that was preempted to its :class:`~emulator.preemption.Held`
    state (kind, progress kept, machines).
    """

    def __init__(self, part: ClusterPartition) -> None:
        self._part = part
        self.cluster = part.cluster
        self.resources = part.resources
        self.queue = part.queue
        self.running = part.running
        self.priority = part.priority
        self.preempted = part.preempted
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
        self.priority: dict[int, float] = {}
        self.preempted: dict[int, Held] = {}
        self.period = self.policy.period  # > 0: the policy plans at multiples of it only
        self._plan_at = math.inf  # the pending planning time of a time-driven policy
        self.policy_calls = 0
        self.policy_seconds = 0.0  # wall clock inside policy.schedule (scheduler cost; never traced)
        self.policy_max = 0.0
        self.now = 0.0
        self._seq = 0
        self._msg_seq = 0
        self._events: list[tuple] = []
        self._rows: list[tuple] = []
        self._outbox: list[Message] = []
        self._changes: tuple[list[int], ...] = ([], [], [], [], [])
        self._queued_work = 0.0
        self.report = report
        self.backlog = Backlog() if report else None
        self._load_direct(direct, direct_link)
        self.view = ClusterView(self)

    # -- the partition step ---------------------------------------------------------------------

    @property
    def next_time(self) -> float:
        return self._events[0][0] if self._events else math.inf

    def advance(self, horizon: float, inbox: list[Message]) -> tuple[list[Message], float, list[tuple]]:
        """Apply ``inbox``, process every event before ``horizon``; return outbox, next time, rows."""
        for msg in inbox:
            job, priority = msg.payload
            self._push(msg.time, _ARRIVE, (Job.from_tuple(job), False, priority))
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
                elif kind == _SUBMIT:
                    self._rows.append((time, SUBMIT, data.id, self.index, 0, NO_CPUS, NO_CPUS, None))
                # _PLAN only makes this a planning time (see _plan_tick)
            if self.period:
                self._plan_tick()
            else:
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
            self._events.append((arrive, _ARRIVE, self._seq, (job, True, 0)))
        heapq.heapify(self._events)

    def _arrive(self, job: Job, local: bool, priority: float) -> None:
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
        if priority:
            self.priority[job.id] = priority
        self._queued_work += job.length
        if self.backlog is not None:
            self.backlog.queued(job)
        self._changes[0].append(job.id)

    def schedule(self) -> None:
        """Run the policy on the current state and apply its decisions in order (starts, preemptions).

        The wall-clock time spent in the policy is the scheduler cost reported
        in ``summary.json`` (:meth:`policy_stats`); it never reaches the trace.
        """
        if not self.queue:
            return
        clock = perf_counter()
        decisions = self.policy.schedule(self.view)
        spent = perf_counter() - clock
        self.policy_calls += 1
        self.policy_seconds += spent
        if spent > self.policy_max:
            self.policy_max = spent
        for decision in decisions:
            if type(decision) is Preempt:
                self._preempt(*decision)
            else:
                self._start(*decision)

    def _plan_tick(self) -> None:
        """A time-driven policy plans at multiples of ``period`` only, and only while jobs are queued.

        Called after the events of each time: plans if this is a planning time
        (its ``_PLAN`` event was just applied, or the queue just filled at a
        multiple of the period), then makes sure the next one is pending.
        """
        now, period = self.now, self.period
        if now >= self._plan_at or (
            self._plan_at == math.inf and self.queue and math.ceil(now / period) * period == now
        ):
            self._plan_at = math.inf
            self.schedule()
            while self.queue and not self.running and not self._events:
                self._reject_stuck()
        if self.queue and self._plan_at == math.inf:
            k = math.floor(now / period) + 1
            while k * period <= now:  # float rounding
                k += 1
            self._plan_at = k * period
            self._push(self._plan_at, _PLAN, None)

    def policy_stats(self) -> dict[str, float]:
        """Scheduler cost so far: policy calls, wall-clock seconds inside them in total and at most."""
        return {"calls": self.policy_calls, "seconds": self.policy_seconds, "max_seconds": self.policy_max}

    def _reject_stuck(self) -> None:
        """Reject the queue head when nothing runs, nothing is due and the policy still left it queued.

        It can never start then (no event will free anything); the jobs behind
        it get another pass. A safety net: admission rejects what cannot fit an
        idle cluster, so only a policy that idles with work left gets here, and
        a job must never silently stay queued forever.
        """
        job = next(iter(self.queue.values()))
        del self.queue[job.id]
        self.priority.pop(job.id, None)
        self._queued_work -= job.length
        if self.backlog is not None:
            self.backlog.unqueued(job)
        reason = f"cannot start on idle cluster {self.cluster.name} under policy {self.policy.name}"
        self._rows.append((self.now, REJECT, job.id, self.index, 0, NO_CPUS, NO_CPUS, reason))
        self._changes[3].append(job.id)
        self.schedule()

    def _start(self, job: Job, plan: Plan, chosen: Pes | None = None) -> None:
        """Start ``job`` on ``plan`` now (on the PEs ``chosen`` by the policy, if it says).

        A job that was preempted resumes instead (a ``resume`` row): with the
        progress it kept and its overhead, on its machines if it was suspended.
        """
        held = self.preempted.pop(job.id, None) if self.preempted else None
        if held is not None:
            held.check_resume(job.id, plan)
        del self.queue[job.id]
        if self.priority:
            self.priority.pop(job.id, None)
        self._queued_work -= job.length if held is None else held.queued_work
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
        if held is None:
            self._rows.append((self.now, START, job.id, self.index, job.cpus, machines, pes, None))
        else:
            run.resumed(held.done, held.overhead)
            info = resume_info(held.kind, held.overhead)
            self._rows.append((self.now, RESUME, job.id, self.index, job.cpus, machines, pes, info))
        self._changes[1].append(job.id)
        if self.backlog is not None:
            self.backlog.started(run)
        self.execution.started(self, run)

    def finish(self, run: Run) -> None:
        """End ``run`` now and free what it held."""
        job = run.job
        del self.running[job.id]
        self.resources.release(job, run.plan, run.machines, run.pes)
        self._rows.append((self.now, FINISH, job.id, self.index, job.cpus, run.machines, run.pes, None))
        self._changes[2].append(job.id)
        if self.backlog is not None:
            self.backlog.finished(run)

    def _preempt(self, job_id: int, kind: str, overhead: float = 0.0) -> None:
        """Preempt running job ``job_id`` now (:mod:`emulator.preemption`): free its CPUs, requeue it.

        ``stop`` for a job already preempted drops the progress it kept (no trace row).
        """
        run = self.running.get(job_id)
        if run is None:
            held = self.preempted.get(job_id)
            if held is None or kind != STOP:
                raise PreemptionError(
                    f"job {job_id} is not running on cluster {self.cluster.name}"
                    + ("" if held is None else f"; a preempted job can only be stopped, not {kind!r}")
                )
            self._queued_work += self.queue[job_id].length - held.queued_work
            held.drop_progress(self.queue[job_id].length, overhead)
            return
        job = run.job
        if kind not in KINDS:
            raise PreemptionError(f"job {job_id}: preemption kind {kind!r}, expected one of {KINDS}")
        if kind == CHECKPOINT and not job.checkpointable:
            raise PreemptionError(f"job {job_id} is not checkpointable")
        preempted = getattr(self.execution, "preempted", None)
        if preempted is None:
            raise PreemptionError(f"the {type(self.execution).__name__} execution model cannot preempt")
        done = preempted(self, run, kind in KEEPS_PROGRESS)
        self._cancel_finish(run)
        del self.running[job_id]
        self.resources.release(job, run.plan, run.machines, run.pes)
        self._rows.append((self.now, PREEMPT, job_id, self.index, job.cpus, run.machines, run.pes, kind))
        waiting = max(0.0, job.length - done)
        self.preempted[job_id] = Held(kind, done, tuple(m for m, _ in run.plan), overhead, waiting)
        self.queue[job_id] = job
        self._queued_work += waiting
        if self.backlog is not None:
            self.backlog.finished(run)
            self.backlog.queued(job)

    def _cancel_finish(self, run: Run) -> None:
        """Drop the pending completion of ``run`` (linear, but preemptions are rare next to events)."""
        events = self._events
        for i, event in enumerate(events):
            if event[1] != _FINISH or event[3] is not run:
                continue
            events[i] = events[-1]
            events.pop()
            heapq.heapify(events)
            return

    def _report(self) -> None:
        """Tell the meta-scheduler what changed, one message per scheduling event."""
        arrived, started, finished, rejected, local = self._changes
        if not (arrived or started or finished or rejected):
            return
        backlog = self.backlog
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
            self.now,
            backlog.queued_cpu_work,
            backlog.running_work(self.now),
            backlog.draining_cpus,
        )
        self._changes = ([], [], [], [], [])
        self._msg_seq += 1
        deliver = self.now + self.cluster.link.latency
        self._outbox.append(Message(deliver, self.pid, self._msg_seq, META, STATUS, status))
