"""What a cluster holds at a time: its queue, its running jobs, their priorities, its resources.

The partition (:mod:`emulator.partitions.cluster`) owns the event loop and changes this
state only through these methods, so the queue's numpy columns, the running
jobs' end order and the queued work always agree with the queue and the
running jobs. Policies read it through :class:`emulator.state.views.ClusterView`;
a test can build one by hand, with no partition, no events and no files:

>>> from emulator.core.model import Cluster, Job, Link, Machine
>>> from emulator.core.resources import Resources
>>> cluster = Cluster("c", (Machine(4, 100.0),), Link(1.0))
>>> state = ClusterState(cluster, Resources(cluster))
>>> state.enqueue(Job(1, 0.0, 2, 10.0))
>>> list(state.queue), state.queued_work
([1], 10.0)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable

from ..core.model import Cluster, Job
from ..core.preemption import Held
from ..core.queue_columns import QueueColumns
from ..core.resources import Plan, Resources
from ..core.runs import Run

INDEXES = frozenset({"columns", "estimated_ends"})
"""What a state can keep besides its queue and running jobs, for policies that read it: the queue as
numpy ``columns`` and the running jobs' ``estimated_ends`` in order (see :class:`ClusterState`)."""


class ClusterState:
    """``queue`` maps job id to job in arrival order (a requeued job goes to the end); ``running``
    maps job id to :class:`~emulator.core.runs.Run` in start order; ``priority`` maps a queued job's
    id to the priority the meta-scheduler gave it (absent: 0); ``preempted`` maps a queued job that
    was preempted to what it kept (:class:`~emulator.core.preemption.Held`). ``now`` is the cluster's
    virtual time; ``queued_work`` the MI the queue still needs (by estimates).

    ``indexes`` (of :data:`INDEXES`) are kept in step too: the running jobs' end order
    (:meth:`end_order`) and the queue's columns (:meth:`queue_columns`). Their upkeep at every
    arrival, start and end cost an eighth of FCFS's event loop on KTH-SP2, so a policy that reads
    neither asks for none (:attr:`~emulator.policies.local_base.LocalPolicy.indexes`), and those
    asked for are built only when first read."""

    def __init__(self, cluster: Cluster, resources: Resources, indexes: frozenset[str] = INDEXES) -> None:
        if not indexes <= INDEXES:
            raise ValueError(
                f"unknown state indexes {sorted(indexes - INDEXES)}; expected some of {sorted(INDEXES)}"
            )
        self.cluster = cluster
        self.resources = resources
        self.now = 0.0
        self.queue: dict[int, Job] = {}
        self._columns_kept = "columns" in indexes
        self.columns: QueueColumns | None = None  # (see queue_columns)
        self.running: dict[int, Run] = {}
        self._ends_kept = "estimated_ends" in indexes
        self.ends: EndOrder | None = None  # (see end_order)
        self.priority: dict[int, float] = {}
        self.preempted: dict[int, Held] = {}
        self.queued_work = 0.0
        self._running_priority: dict[int, float] = {}  # of running jobs, given back if they are requeued

    def enqueue(self, job: Job, priority: float = 0.0) -> None:
        """``job`` joins the queue (``priority``: the meta-scheduler's, if any)."""
        self.queue[job.id] = job
        if self.columns is not None:
            self.columns.append(job, self.resources.fastest(job.licenses))
        if priority:
            self.priority[job.id] = priority
        self.queued_work += job.length

    def requeue(self, job: Job, held: Held) -> None:
        """A running job taken off its CPUs (see :meth:`stop`) waits again, keeping ``held``."""
        self.queue[job.id] = job
        if self.columns is not None:
            self.columns.append(job, self.resources.fastest(job.licenses))
        self.preempted[job.id] = held
        if job.id in self._running_priority:  # the meta-scheduler's priority still holds
            self.priority[job.id] = self._running_priority.pop(job.id)
        self.queued_work += held.queued_work

    def forget_progress(self, job_id: int, overhead: float) -> None:
        """A queued preempted job will restart from zero, anywhere, after ``overhead`` s."""
        held, length = self.preempted[job_id], self.queue[job_id].length
        self.queued_work += length - held.queued_work
        held.drop_progress(length, overhead)

    def dequeue(self, job: Job) -> Held | None:
        """``job`` leaves the queue to start; what it kept if it was preempted (it resumes then)."""
        held = self.preempted.pop(job.id, None) if self.preempted else None
        del self.queue[job.id]
        self._unqueued(job)
        if self.priority and job.id in self.priority:  # kept while it runs, in case it is requeued
            self._running_priority[job.id] = self.priority.pop(job.id)
        self.queued_work -= job.length if held is None else held.queued_work
        return held

    def drop(self, job: Job) -> None:
        """``job`` leaves the queue for good (rejected, lost, or sent back to the meta-scheduler)."""
        del self.queue[job.id]
        self._unqueued(job)
        self.priority.pop(job.id, None)
        held = self.preempted.pop(job.id, None)
        self.queued_work -= job.length if held is None else held.queued_work

    def queue_columns(self) -> QueueColumns | None:
        """The queue as numpy columns (None if this state's indexes leave them out).

        Built from the queue when asked and kept in step until the queue
        empties: EASY reads them on deep queues only (1% of its passes on
        KTH-SP2), and their upkeep at every arrival and start cost more than
        building them at the first deep pass of a busy spell.
        """
        if self.columns is None and self._columns_kept:
            self.columns = QueueColumns()
            for job in self.queue.values():
                self.columns.append(job, self.resources.fastest(job.licenses))
        return self.columns

    def end_order(self) -> EndOrder | None:
        """The running jobs' estimated ends in order (None if this state's indexes leave them out).

        Built from the running jobs when asked and kept in step until the queue
        empties: only a queue head that cannot start reads them (a reservation),
        and on a grid whose clusters start most jobs as they come, keeping them
        at every start and end cost more than sorting the running jobs when one
        waits.
        """
        if self.ends is None and self._ends_kept:
            self.ends = EndOrder(self.running.values())
        return self.ends

    def _unqueued(self, job: Job) -> None:
        if self.queue:
            if self.columns is not None:
                self.columns.remove(job.id)
        else:
            self.columns = self.ends = None  # (built again when next asked for)

    def start(self, run: Run) -> None:
        """``run`` takes its CPUs (its end is known once its execution model saw it: :meth:`expect`)."""
        self.running[run.job.id] = run

    def expect(self, run: Run) -> None:
        """``run``'s estimated end is set: reservations count on it from now on."""
        if self.ends is not None:
            self.ends.add(run)

    def stop(self, run: Run) -> None:
        """``run`` leaves its CPUs early: its job is requeued next (:meth:`requeue`)."""
        del self.running[run.job.id]
        if self.ends is not None:
            self.ends.remove(run)

    def finish(self, run: Run) -> None:
        """``run`` ends for good."""
        self.stop(run)
        if self._running_priority:
            self._running_priority.pop(run.job.id, None)


class EndOrder:
    """The running jobs' ``(estimated end, plan, licenses)`` in ``(estimated end, start sequence)``
    order, kept up to date as they start and end: reservations read it at every scheduling event."""

    def __init__(self, runs: Iterable[Run] = ()) -> None:
        runs = sorted(runs, key=_end_key)
        self._keys: list[tuple[float, int]] = [_end_key(run) for run in runs]
        self.values: list[tuple[float, Plan, tuple[str, ...]]] = [_end_value(run) for run in runs]

    def add(self, run: Run) -> None:
        key = _end_key(run)
        i = bisect.bisect_left(self._keys, key)
        self._keys.insert(i, key)
        self.values.insert(i, _end_value(run))

    def remove(self, run: Run) -> None:
        i = bisect.bisect_left(self._keys, _end_key(run))
        del self._keys[i], self.values[i]


def _end_key(run: Run) -> tuple[float, int]:
    return (run.estimated_end, run.seq)


def _end_value(run: Run) -> tuple[float, Plan, tuple[str, ...]]:
    return (run.estimated_end, run.plan, run.job.licenses)
