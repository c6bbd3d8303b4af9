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

from ..core.failures import OUTAGE, Failures
from ..core.messages import (
    ARRIVE,
    FINISH,
    LINK,
    META,
    NO_CPUS,
    PREEMPT,
    REJECT,
    RESUME,
    RETURN_JOB,
    START,
    STATUS,
    SUBMIT,
    Message,
)
from ..core.messages import RETURN as RETURN_ROW
from ..core.model import Cluster, Job, Link, LinkClock
from ..core.preemption import (
    CHECKPOINT,
    KEEPS_PROGRESS,
    KINDS,
    STOP,
    Held,
    Preempt,
    PreemptionError,
    resume_info,
)
from ..core.resources import OverAllocation, Pes, Plan
from ..core.runs import Run
from ..policies import LOCAL
from ..policies.errors import DecisionError
from ..state.cluster_state import ClusterState
from ..state.views import ClusterView
from ..sync import coordinator
from ..sync.coordinator import EVENT_BUDGET
from ..sync.horizons import Timeline
from .event_kinds import (
    ARRIVE_EVENT,
    DOWN_EVENT,
    FAIL_EVENT,
    FINISH_EVENT,
    KILL_EVENT,
    LINK_CHANGE_EVENT,
    PLAN_EVENT,
    REPAIR_EVENT,
    REPORT_DUE_EVENT,
    SUBMIT_EVENT,
    TICK_EVENT,
    UP_EVENT,
)
from .faults import Faults
from .reporting import Reporter

_JOBS_CHANGED = (
    True  # data of a REPORT_DUE_EVENT marker that keeps the run alive (see busy; pickles as itself)
)


class ClusterPartition:
    """One cluster of the grid as a partition: ``advance(horizon, inbox)`` per barrier round."""

    def __init__(
        self,
        pid: int,
        cluster: Cluster,
        seed_seq: np.random.SeedSequence,
        direct: list[Job] = (),
        direct_link: LinkClock | None = None,
        report: bool = True,
        status_period: float = 0.0,
        failures: Failures | None = None,
    ) -> None:
        self.pid = pid
        self.index = pid - 1
        self.cluster = cluster
        self.rng = np.random.default_rng(seed_seq)
        self.policy = LOCAL.create(cluster.policy, rng=self.rng, cluster=cluster)
        self.execution = self.policy.execution()
        self.state = ClusterState(cluster, self.policy.resources_class(cluster), self.policy.indexes)
        self.period = self.policy.period  # > 0: the policy plans at multiples of it only
        self._plan_at = math.inf  # the pending planning time of a time-driven policy
        self.policy_calls = 0
        self.policy_seconds = 0.0  # wall clock inside policy.schedule (scheduler cost; never traced)
        self.policy_max = 0.0
        self._seq = 0
        self._msg_seq = 0
        self._events: list[tuple] = []
        self._feed: list[tuple] = []  # direct entries not yet in _events, last first (see _load_direct)
        self._fed: tuple | None = None  # the one of them in _events
        self._rows: list[tuple] = []
        self._outbox: list[Message] = []
        self.reporter = Reporter(cluster.link, status_period, bool(cluster.link_changes)) if report else None
        self.status_period = status_period  # > 0: report only at its multiples (stress: stale information)
        self._report_at = math.inf  # the pending report time (status_period)
        # Events that free nothing by themselves (stress markers; failures, repairs and outages, whose
        # repairs and ends free CPUs only while the cluster is impaired): see _reject_stuck.
        self._markers = 0
        # Foreground work beyond the queue and the running jobs (``busy``, the coordinator's termination):
        # jobs on their way in (pending arrivals), and reports due that carry a job's change. Every other
        # event is background (failures, repairs, outages, link changes, any new perturbation's) or belongs
        # to a running job (completions, ticks, kills at the estimate).
        self._incoming = 0
        self._reports = 0
        self.faults = Faults()
        self._load_direct(direct, direct_link)
        for time, link in cluster.link_changes:
            self._marker_at(time, LINK_CHANGE_EVENT, link)
        if failures is not None:
            self.faults.setup(self, failures, self.index, seed_seq)
        self.view = ClusterView(self.state)
        self.timeline = Timeline(self.busy)

    # -- the partition step ------------------------------------------------------------------------

    @property
    def next_time(self) -> float:
        return self._events[0][0] if self._events else math.inf

    @property
    def busy(self) -> bool:
        """Foreground work left: jobs queued (or running), or events other than background ones."""
        return bool(self.state.queue or self.state.running or self._incoming or self._reports)

    @property
    def promise(self) -> float:
        """The earliest time this cluster's own events could send a message (the coordinator's horizons).

        A reporting cluster may report after any event: its next one, or with a
        ``status_period`` the first report time at or after it (unless outages
        send jobs back, which they do at once). A cluster that
        never reports (every job entered directly) sends nothing: it can send a
        job back only if it was dispatched to it, and none ever is.
        """
        if self.reporter is None:
            return math.inf
        if self.status_period and self.faults.local_ids is None:  # (an outage may send jobs back at any time)
            return report_time(self.next_time, self.status_period)
        return self.next_time

    @property
    def reacts(self) -> bool:
        """A job arriving makes a reporting cluster report on it (or send it back, in an outage)."""
        return self.reporter is not None

    def advance(
        self, horizon: float, inbox: list[Message], budget: int = EVENT_BUDGET
    ) -> tuple[list[Message], float, list[tuple], bool, float, bool]:
        """Apply ``inbox``, process the events before ``horizon`` (at most ``budget`` times of them).

        Returns outbox, next time, rows, busy, promise, reacts
        (:class:`emulator.sync.coordinator.Result`).
        """
        for msg in inbox:
            payload = msg.payload
            job = Job.from_tuple(payload[0])
            if len(payload) > 2:  # a job an outage sent back carries its kills so far
                self.faults.kills[job.id] = payload[2]
            self._push(msg.time, ARRIVE_EVENT, (job, False, payload[1]))
        if inbox:
            self._incoming += len(inbox)
            self.timeline.woken()
        events, state, step = self._events, self.state, self.timeline.step
        reports = self.reporter is not None
        deadline = perf_counter() + coordinator.CALL_SECONDS
        while events and events[0][0] < horizon and budget > 0:
            budget -= 1
            state.now = time = events[0][0]
            if events[0][1] >= REPORT_DUE_EVENT:  # only stress markers at this time: no scheduling pass
                self._quiet_time(time)
                step(time, self.busy)
                continue
            while events and events[0][0] == time:
                _, kind, _, data = self._pop()
                HANDLERS[kind](self, kind, data)
            if self.period:
                self._plan_tick()
            elif state.queue:  # (a pass over an empty queue decides nothing)
                self._pass()
            if reports:
                self._report()
            step(time, self.busy)
            if perf_counter() > deadline:  # a slow policy: the writer flushes between calls
                break
        out, rows = self._outbox, self._rows
        self._outbox, self._rows = [], []
        return out, self.next_time, rows, self.busy, self.promise, self.reacts

    # -- event handlers (HANDLERS: one per event kind) ---------------------------------------------

    def _on_finish(self, kind: int, run: Run) -> None:
        self.finish(run)

    def _on_tick(self, kind: int, data: None) -> None:
        self.execution.tick(self)

    def _on_arrive(self, kind: int, arrival: tuple) -> None:
        self._incoming -= 1
        self._arrive(*arrival)

    def _on_submit(self, kind: int, job: Job) -> None:
        """A direct job submitted now that reaches the cluster later (over the workload's link)."""
        self.row(SUBMIT, job.id, 0, NO_CPUS, NO_CPUS, None)

    def _on_plan(self, kind: int, data: None) -> None:
        """Nothing to apply: the event only makes now a planning time (see :meth:`_plan_tick`)."""

    # -- events ------------------------------------------------------------------------------------

    def _push(self, time: float, kind: int, data) -> None:
        self._seq += 1
        heapq.heappush(self._events, (time, kind, self._seq, data))

    def _pop(self) -> tuple:
        """The next event (time, kind, sequence, data); the next direct entry enters if it was one."""
        event = heapq.heappop(self._events)
        if event is self._fed:
            self._feed_next()
        return event

    def _feed_next(self) -> None:
        feed = self._feed
        self._fed = feed.pop() if feed else None
        if self._fed is not None:
            heapq.heappush(self._events, self._fed)

    def push_finish(self, run: Run) -> None:
        self._push(run.end, FINISH_EVENT, run)

    def push_tick(self, time: float) -> None:
        self._push(time, TICK_EVENT, None)

    def _load_direct(self, jobs: list[Job], link: LinkClock | None) -> None:
        """Jobs naming this cluster enter here, through ``link`` if given (GridSim's Workload link).

        Their events wait in ``_feed``, sorted, and enter the event heap one at a time (:meth:`_pop`):
        the heap holds the earliest, so events come out in the same order, and it stays the size of
        the running jobs instead of the whole trace (a pop from a heap of 28,000 entries cost three
        times one from a heap of 100).
        """
        feed = self._feed
        for job in sorted(jobs, key=lambda j: j.submit):
            arrive = job.submit if link is None else link.send(job.submit, job.in_bytes)
            if arrive > job.submit:
                self._seq += 1
                feed.append((job.submit, SUBMIT_EVENT, self._seq, job))
            self._seq += 1
            feed.append((arrive, ARRIVE_EVENT, self._seq, (job, True, 0)))
        feed.sort(reverse=True)  # (sequence numbers are unique: the data is never compared)
        self._incoming += len(jobs)
        self._feed_next()

    def _arrive(self, job: Job, local: bool, priority: float) -> None:
        time, index = self.state.now, self.index
        if local and job.submit == time:
            self._rows.append((time, SUBMIT, job.id, index, 0, NO_CPUS, NO_CPUS, None))
        self._rows.append((time, ARRIVE, job.id, index, 0, NO_CPUS, NO_CPUS, None))
        self.execution.arrived(self)
        job, arrived = self.policy.admit(job), job
        reporter = self.reporter
        if local and reporter is not None:
            reporter.entered(job)
        self.faults.entered(arrived, job, local)  # (an outage may send it back as it came)
        reason = self.cluster.refusal(job)
        if reason is not None:
            self._rows.append((time, REJECT, job.id, index, 0, NO_CPUS, NO_CPUS, reason))
            if reporter is not None:
                reporter.refused(job)
            return
        self.state.enqueue(job, priority)
        if reporter is not None:
            reporter.queued(job)
        if self.faults.returns_arrivals(local):
            self.send_back(job)

    def _pass(self) -> None:
        """A scheduling pass; then, while the queue is stuck (nothing runs, no event can free
        anything: see :meth:`_reject_stuck`), its head is rejected and the rest get another pass."""
        self.schedule()
        state = self.state
        while state.queue and not state.running and len(self._events) == self._markers:
            if self.faults.impaired:  # a repair, or the outage's end, will free something
                break
            self._reject_stuck()

    def schedule(self) -> None:
        """Run the policy on the current state and apply its decisions in order (starts, preemptions).

        The wall-clock time spent in the policy is the scheduler cost reported
        in ``summary.json`` (:meth:`policy_stats`); it never reaches the trace.
        """
        if not self.state.queue:
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

    def _bad(self, what: str) -> DecisionError:
        """A decision of the policy that cannot be applied: named with the policy, cluster and time."""
        return DecisionError(
            f"policy {self.policy.name} on cluster {self.cluster.name} at time {self.state.now:g}: {what}"
        )

    def _plan_tick(self) -> None:
        """A time-driven policy plans at multiples of ``period`` only, and only while jobs are queued.

        Called after the events of each time: plans if this is a planning time
        (its ``PLAN_EVENT`` event was just applied, or the queue just filled at a
        multiple of the period), then makes sure the next one is pending.
        """
        now, period, queue = self.state.now, self.period, self.state.queue
        if now >= self._plan_at or (
            self._plan_at == math.inf and queue and math.ceil(now / period) * period == now
        ):
            self._plan_at = math.inf
            self._pass()
        if queue and self._plan_at == math.inf:
            k = math.floor(now / period) + 1
            while k * period <= now:  # float rounding
                k += 1
            self._plan_at = k * period
            self._push(self._plan_at, PLAN_EVENT, None)

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
        job = next(iter(self.state.queue.values()))
        reason = f"cannot start on idle cluster {self.cluster.name} under policy {self.policy.name}"
        self.unqueue(job)
        self._rows.append((self.state.now, REJECT, job.id, self.index, 0, NO_CPUS, NO_CPUS, reason))
        self.schedule()

    def _start(self, job: Job, plan: Plan, chosen: Pes | None = None) -> None:
        """Start ``job`` on ``plan`` now (on the PEs ``chosen`` by the policy, if it says).

        A job that was preempted resumes instead (a ``resume`` row): with the
        progress it kept and its overhead, on its machines if it was suspended.
        """
        state = self.state
        if job.id not in state.queue:
            raise self._bad(f"cannot start job {job.id}: it is not queued")
        held = state.dequeue(job)
        if held is not None:
            held.check_resume(job.id, plan)
        try:
            machines, pes = state.resources.allocate(job, plan, chosen)
        except (OverAllocation, LookupError, TypeError, ValueError) as err:
            raise self._bad(f"cannot start {state.resources.unfit(job, plan) or err}") from err
        if len(pes) != job.cpus:
            raise self._bad(
                f"cannot start job {job.id}: plan {plan!r} gives {len(pes)} CPUs, it asks {job.cpus}"
            )
        now = state.now
        run = Run(job, now, plan, machines, pes, state.resources.speed(plan))
        self._seq += 1
        run.seq = self._seq
        state.start(run)
        if held is None:
            self._rows.append((now, START, job.id, self.index, job.cpus, machines, pes, None))
        else:
            run.resumed(held.done, held.overhead)
            info = resume_info(held.kind, held.overhead)
            self._rows.append((now, RESUME, job.id, self.index, job.cpus, machines, pes, info))
        if self.reporter is not None:
            self.reporter.started(run)
        self.execution.started(self, run)  # (an exact-time model may set the estimated end here)
        state.expect(run)
        if self.faults.kill_at_estimate and run.end > run.estimated_end:
            self._push(run.estimated_end, KILL_EVENT, run)

    def finish(self, run: Run, row: int = FINISH, info: str | None = None) -> None:
        """End ``run`` now and free what it held (a ``finish`` row, or a ``kill`` at its estimate)."""
        job, state = run.job, self.state
        state.finish(run)
        state.resources.release(job, run.plan, run.machines, run.pes)
        self._rows.append((state.now, row, job.id, self.index, job.cpus, run.machines, run.pes, info))
        if self.reporter is not None:
            self.reporter.finished(run)

    def _preempt(self, job_id: int, kind: str, overhead: float = 0.0) -> None:
        """Preempt running job ``job_id`` now (:mod:`emulator.core.preemption`): free its CPUs, requeue it.

        ``stop`` for a job already preempted drops the progress it kept (no trace row).
        """
        run = self.state.running.get(job_id)
        if run is None:
            held = self.state.preempted.get(job_id)
            if held is None or kind != STOP:
                raise PreemptionError(
                    f"job {job_id} is not running on cluster {self.cluster.name}"
                    + ("" if held is None else f"; a preempted job can only be stopped, not {kind!r}")
                )
            self.state.forget_progress(job_id, overhead)
            return
        if kind not in KINDS:
            raise PreemptionError(f"job {job_id}: preemption kind {kind!r}, expected one of {KINDS}")
        if kind == CHECKPOINT and not run.job.checkpointable:
            raise PreemptionError(f"job {job_id} is not checkpointable")
        self.stop(run, kind, overhead, PREEMPT, kind)

    def stop(self, run: Run, kind: str, overhead: float, row: int, info: str) -> None:
        """Take ``run`` off its CPUs now and requeue its job, keeping what ``kind`` keeps.

        A preemption (a ``preempt`` row) or a kill by a failure or an outage (a
        ``kill`` row): the same requeueing, so a killed job restarts as a preempted
        one resumes (from zero after ``stop``, from its progress after ``checkpoint``).
        """
        job, state = run.job, self.state
        done = self.execution.preempted(self, run, kind in KEEPS_PROGRESS)
        self.cancel_finish(run)
        state.stop(run)
        state.resources.release(job, run.plan, run.machines, run.pes)
        self._rows.append((state.now, row, job.id, self.index, job.cpus, run.machines, run.pes, info))
        waiting = max(0.0, job.length - done)
        state.requeue(job, Held(kind, done, tuple(m for m, _ in run.plan), overhead, waiting))
        if self.reporter is not None:
            self.reporter.requeued(run)

    def cancel_finish(self, run: Run) -> None:
        """Drop the pending completion of ``run``, and its kill at its estimate if any.

        Linear, but preemptions and kills are rare next to events.
        """
        events = self._events
        if self.faults.kill_at_estimate:
            kept = [e for e in events if e[3] is not run or (e[1] != FINISH_EVENT and e[1] != KILL_EVENT)]
            if len(kept) < len(events):
                events[:] = kept
                heapq.heapify(events)
            return
        for i, event in enumerate(events):
            if event[1] != FINISH_EVENT or event[3] is not run:
                continue
            events[i] = events[-1]
            events.pop()
            heapq.heapify(events)
            return

    # -- faults (emulator/partitions/faults.py): the services they use -----------------------------

    def _perturbation(self, kind: int, data) -> None:
        """A fault's event now: a kill at an estimate, or a failure, repair or outage bound."""
        if kind == KILL_EVENT:
            self.faults.kill_at_end(self, data)
            return
        self._markers -= 1
        self.faults.apply(self, kind, data)

    def row(self, kind: int, job_id: int, cpus: int, machines, pes, info: str | None) -> None:
        self._rows.append((self.state.now, kind, job_id, self.index, cpus, machines, pes, info))

    def background_at(self, time: float, kind: int, data) -> None:
        self._markers += 1
        self._push(time, kind, data)

    def unqueue(self, job: Job) -> None:
        """Take a queued job out of the queue for good (lost, or sent back)."""
        self.state.drop(job)
        if self.reporter is not None:
            self.reporter.left(job)  # without finishing: the meta-scheduler's accounts drop it

    def send_back(self, job: Job) -> None:
        """Return a queued job to the meta-scheduler (an outage): a ``return`` row and a message.

        It restarts from zero wherever it goes next (a checkpoint stays here); its
        kills travel with it.
        """
        self.unqueue(job)
        self.row(RETURN_ROW, job.id, 0, NO_CPUS, NO_CPUS, OUTAGE)
        original, kills = self.faults.returned(job)
        self._msg_seq += 1
        deliver = self.state.now + self.reporter.link.latency
        payload = (original.to_tuple(), kills)
        self._outbox.append(Message(deliver, self.pid, self._msg_seq, META, RETURN_JOB, payload))

    # -- stress: stale information and link changes (emulator/core/links.py) -----------------------

    def _marker_at(self, time: float, kind: int, data) -> None:
        self._markers += 1
        if data is _JOBS_CHANGED:
            self._reports += 1
        self._push(time, kind, data)

    def _quiet_time(self, time: float) -> None:
        """A time with stress markers only: apply them and report, without a scheduling pass."""
        events = self._events
        while events and events[0][0] == time:
            _, kind, _, data = self._pop()
            self._marker(kind, data)
        if self.reporter is not None:
            self._report()

    def _marker(self, kind: int, data: Link | None) -> None:
        """Apply a stress marker: a link change now (a ``link`` row; the next report says it)."""
        self._markers -= 1
        if data is _JOBS_CHANGED:
            self._reports -= 1
        if kind == LINK_CHANGE_EVENT:
            if self.reporter is not None:
                self.reporter.link_changed(data)
            info = f"latency={data.latency:g} bandwidth={data.bandwidth:g}"
            self._rows.append((self.state.now, LINK, -1, self.index, 0, NO_CPUS, NO_CPUS, info))
        # REPORT_DUE_EVENT only makes this a report time (see _report_due)

    def _report_due(self) -> bool:
        """With a status period: whether now is a report time (a multiple of it); else make one pending."""
        now, at = self.state.now, self._report_at
        if now >= at:  # its marker was applied at this time
            self._report_at = math.inf
            return True
        if at == math.inf:
            at = report_time(now, self.status_period)
            if at == now:
                return True
            self._report_at = at
            # A report of jobs' changes keeps the run alive; one of news only (failures, links) does not.
            jobs_changed = self.reporter.changes.of_jobs()
            self._marker_at(self._report_at, REPORT_DUE_EVENT, _JOBS_CHANGED if jobs_changed else None)
        return False

    def _report(self) -> None:
        """Tell the meta-scheduler what changed: after each scheduling event, or at multiples of
        ``status_period`` (one report carrying every change since the last)."""
        reporter = self.reporter
        if not reporter.pending or (self.status_period and not self._report_due()):
            return
        deliver, status = reporter.report(self.state, self.faults.down is not None)
        self._msg_seq += 1
        self._outbox.append(Message(deliver, self.pid, self._msg_seq, META, STATUS, status))


def report_time(time: float, period: float) -> float:
    """The first multiple of ``period`` at or after ``time`` (exactly as reports compute it)."""
    if time == math.inf:
        return time
    k = math.ceil(time / period)
    while k * period < time:  # float rounding
        k += 1
    while k > 0 and (k - 1) * period >= time:
        k -= 1
    return k * period


HANDLERS = {
    FINISH_EVENT: ClusterPartition._on_finish,
    TICK_EVENT: ClusterPartition._on_tick,
    KILL_EVENT: ClusterPartition._perturbation,
    REPAIR_EVENT: ClusterPartition._perturbation,
    UP_EVENT: ClusterPartition._perturbation,
    FAIL_EVENT: ClusterPartition._perturbation,
    DOWN_EVENT: ClusterPartition._perturbation,
    ARRIVE_EVENT: ClusterPartition._on_arrive,
    SUBMIT_EVENT: ClusterPartition._on_submit,
    PLAN_EVENT: ClusterPartition._on_plan,
    REPORT_DUE_EVENT: ClusterPartition._marker,
    LINK_CHANGE_EVENT: ClusterPartition._marker,
}
"""What each kind of event does (:mod:`~emulator.partitions.event_kinds`: kinds are also priorities)."""
