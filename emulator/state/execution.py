"""Execution models: how running jobs progress and when their end is noticed.

A local policy decides *what starts where*; its execution model decides *when
it ends*. gridemu's own policies use :class:`Exact` (a job ends when its
actual length is done at its speed). GridSim's SpaceShared policy only notices
completions at its internal events, so the GridSim-compatible policies bring
their own model (:class:`GridSimSpaceShared`, and the time-shared one);
GridSim's parallel package runs every job for whole seconds
(:class:`WholeSeconds`).
"""

from __future__ import annotations

from typing import Protocol

from ..core.model import Cluster
from ..core.preemption import PreemptionError
from ..core.runs import Run
from .cluster_state import ClusterState


class Host(Protocol):
    """What an execution model may use of its cluster: the state (its running jobs, in start order,
    whose progress a model may update; the time), and the partition's four services."""

    state: ClusterState

    def finish(self, run: Run) -> None:
        """End ``run`` now (a ``finish`` row) and free what it held."""

    def schedule(self) -> None:
        """Run the local policy now (resources were freed)."""

    def push_finish(self, run: Run) -> None:
        """Make ``run`` end at ``run.end``."""

    def push_tick(self, time: float) -> None:
        """Call the model's :meth:`ExecutionModel.tick` at ``time``."""


class ExecutionModel:
    """The hooks a cluster calls, all at its current time. A model that cannot preempt (the
    whole-seconds one) or whose end times do not depend on the other runs keeps the defaults."""

    def started(self, part: Host, run: Run) -> None:
        """``run`` just started (or resumed): set its end, or schedule the tick that will notice it."""
        raise NotImplementedError

    def arrived(self, part: Host) -> None:
        """A job arrived (or a perturbation is applied): bring progress up to now."""

    def tick(self, part: Host) -> None:
        """An internal event this model asked for (:meth:`Host.push_tick`)."""
        raise AssertionError(f"the {type(self).__name__} model schedules no ticks")

    def preempted(self, part: Host, run: Run, keep: bool) -> float:
        """``run`` is taken off now: the MI its job keeps (all it executed, or 0 when ``keep`` is false)."""
        raise PreemptionError(f"the {type(self).__name__} execution model cannot preempt")

    @classmethod
    def can_preempt(cls) -> bool:
        """Whether runs can be taken off early (preemptions, failures, outages): :meth:`preempted`."""
        return cls.preempted is not ExecutionModel.preempted

    def stopped(self, part: Host) -> None:
        """Runs were taken off now: models whose runs share CPUs forecast the others again."""


class Exact(ExecutionModel):
    """Each job ends exactly when its actual length is executed: ``start + runtime*bench/speed``."""

    def started(self, part: Host, run: Run) -> None:
        # A resumed run first pays its overhead, then executes what is left (done = 0, overhead = 0
        # for a first start: the same end, bit for bit, as start + length / speed).
        run.end = run.start + run.overhead + (run.job.runtime * run.job.bench - run.done) / run.speed
        part.push_finish(run)

    def preempted(self, part: Host, run: Run, keep: bool) -> float:
        """``run`` is preempted now: the MI its job keeps (all it executed, or 0 when progress is lost)."""
        return run.progress(part.state.now) if keep else 0.0


HOUR = 3600.0


class GridSimSpaceShared(ExecutionModel):
    """GridSim 5.2 ``SpaceShared`` timing, as GRIDSIM.md states it.

    Completions are noticed only at internal events ("ticks"): one at
    ``start + int(max(1, length/MIPS) + 1)`` per started gridlet, and, after
    every tick that leaves anything running, another an hour later. Ticks at
    equal times are one tick (GridSim processes duplicates, but they change
    nothing). At a tick, progress is accumulated the way GridSim does
    (``MIPS * elapsed`` added at every update, updates at arrivals and ticks)
    and gridlets whose remaining length reached 0 finish in start order, each
    freeing its PE and letting the policy start the queue head.
    """

    def __init__(self) -> None:
        self.last_update = 0.0
        self.ticks: set[float] = set()

    def _schedule_tick(self, part: Host, time: float) -> None:
        if time not in self.ticks:
            self.ticks.add(time)
            part.push_tick(time)

    def _update(self, part: Host) -> None:
        span = part.state.now - self.last_update
        if span <= 0.0:
            return
        self.last_update = part.state.now
        for run in part.state.running.values():
            run.done = min(run.done + run.speed * span, run.job.runtime * run.job.bench)

    def started(self, part: Host, run: Run) -> None:
        remaining = run.job.runtime * run.job.bench - run.done
        self._schedule_tick(part, run.start + int(max(1.0, remaining / run.speed) + 1))

    def arrived(self, part: Host) -> None:
        self._update(part)

    def preempted(self, part: Host, run: Run, keep: bool) -> float:
        """``run`` is stopped now (a failure, an outage): the MI it keeps, as GridSim counts progress.

        Its pending tick stays: a tick with nothing done changes nothing.
        """
        self._update(part)
        return run.done if keep else 0.0

    def tick(self, part: Host) -> None:
        self.ticks.discard(part.state.now)
        if not part.state.running:
            return
        self._update(part)
        for run in list(part.state.running.values()):
            if run.job.runtime * run.job.bench - run.done <= 0.0:
                part.finish(run)
                part.schedule()
        if part.state.running:
            self._schedule_tick(part, part.state.now + HOUR)


def gridsim_rating(cluster: Cluster) -> float:
    """The MIPS GridSim's parallel package times every job at: the first machine's PE rating.

    (``ResourceDynamics.getMIPSRatingOfOnePE``; the package requires homogeneous machines.)
    """
    return float(cluster.machines[0].mips)


def whole_seconds(length: float, rating: float) -> int:
    """GridSim parallel's ``forecastExecutionTime``: ``max(1, int(length / rating + 1))`` seconds.

    >>> whole_seconds(347_700, 100), whole_seconds(1, 100)
    (3478, 1)
    """
    return max(1, int(length / rating + 1))


class WholeSeconds(ExecutionModel):
    """GridSim's parallel package: a job runs :func:`whole_seconds` of its length, as planned.

    ``AggressiveBackfill`` and ``ConservativeBackfill`` plan each job for
    ``floor(length / rating) + 1`` seconds at the cluster's one rating and end it
    exactly then (its internal event); there is no separate estimate, so the
    policy's plan and this model agree to the second.
    """

    def __init__(self) -> None:
        self.rating = 0.0

    def started(self, part: Host, run: Run) -> None:
        if not self.rating:
            self.rating = gridsim_rating(part.state.cluster)
        run.end = run.estimated_end = run.start + whole_seconds(run.job.actual_length, self.rating)
        part.push_finish(run)
