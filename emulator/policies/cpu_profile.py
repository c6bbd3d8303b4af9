"""Free CPUs per machine and free license copies over time: the plan a conservative backfiller keeps.

A step function from ``now`` on. Row ``k`` holds what is free from
``times[k]`` until the next row's time: CPUs per machine (``free``, rows x
machines) and copies per license type (``copies``, rows x licenses). Row 0 is
the cluster as it is now; running jobs give their CPUs and copies back at their
estimated ends, and every reservation is a :class:`Block` taken over
``[start, end)``. Counts per machine, not PE numbers (unlike
:class:`~emulator.core.pe_profile.PeProfile`, GridSim's): a job needs only enough
free CPUs on its machines when it starts, and the cluster gives it the lowest
free PEs then.

:meth:`CpuProfile.earliest` answers the one question asked: the earliest start
(``now`` or a later row's time, before a bound) at which a job fits on its
machines for its whole estimated duration, and where (first fit over the
window's least free CPUs, :func:`~emulator.state.placement.first_fit`). Rows that no
window may hold (too few CPUs or copies in the row itself) rule out candidates
in one vectorized pass, as in ``PeProfile.earliest``; the survivors are
checked with a cumulative minimum over their window's rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..core.model import SINGLE, Job
from ..core.resources import Plan
from ..state.placement import first_fit


@dataclass(frozen=True)
class Block:
    """A job's reservation: ``plan`` (and ``copies`` per license type) over ``[start, end)``."""

    start: float
    end: float
    plan: Plan
    copies: np.ndarray

    @cached_property
    def machines(self) -> np.ndarray:
        return np.fromiter((m for m, _ in self.plan), np.int64, len(self.plan))

    @cached_property
    def counts(self) -> np.ndarray:
        return np.fromiter((n for _, n in self.plan), np.int64, len(self.plan))

    @cached_property
    def cpus(self) -> int:
        return int(self.counts.sum())


@dataclass(frozen=True)
class Demand:
    """What a job asks of the profile: ``seconds`` it would last on each machine (so a plan lasts its
    slowest machine's), copies per license type (``per_machine``: that many on each machine of its
    plan), the machines able to run it, and the machine preference ``order`` (None: by index)."""

    job: Job
    seconds: np.ndarray
    copies: np.ndarray
    per_machine: bool
    eligible: np.ndarray
    order: np.ndarray | None = None

    def copies_for(self, plan: Plan) -> np.ndarray:
        return self.copies * len(plan) if self.per_machine else self.copies


class CpuProfile:
    """Free CPUs per machine and copies per license over time (see the module docstring).

    ``free_now``/``copies_now``: what is free now; ``releases``: ``(time, plan,
    copies vector)`` given back at ``time`` (clamped to ``now``: a job past its
    estimate may end at any moment); ``blocks``: reservations taken.
    """

    def __init__(self, now: float, free_now: np.ndarray, copies_now: np.ndarray, releases, blocks) -> None:
        blocks = list(blocks)
        changes = [_release(now, time, plan) for time, plan, _ in releases]
        changes += [(np.full(b.machines.size, b.start), b.machines, -b.counts) for b in blocks]
        changes += [(np.full(b.machines.size, b.end), b.machines, b.counts) for b in blocks]
        times, where, counts = (np.concatenate([c[k] for c in changes] or [np.empty(0)]) for k in range(3))
        grid = np.unique(np.concatenate(([now], times)))
        delta = np.zeros((grid.size, free_now.size), dtype=np.int64)
        np.add.at(delta, (grid.searchsorted(times), where.astype(np.int64)), counts.astype(np.int64))
        delta[0] += free_now
        self.times = grid
        self.free = np.cumsum(delta, axis=0)
        self.total = self.free.sum(axis=1)
        ltimes = [max(time, now) for time, _, copies in releases if copies is not None]
        lcounts = [copies for _, _, copies in releases if copies is not None]
        if copies_now.size:
            for b in blocks:
                ltimes += [b.start, b.end]
                lcounts += [-b.copies, b.copies]
        ldelta = np.zeros((grid.size, copies_now.size), dtype=np.int64)
        if ltimes:
            np.add.at(ldelta, grid.searchsorted(np.array(ltimes, dtype=float)), np.array(lcounts))
        ldelta[0] += copies_now
        self.copies = np.cumsum(ldelta, axis=0)

    def _row(self, time: float) -> int:
        """Index of the row starting at ``time``, inserting a copy of the row then in force if none does."""
        k = int(self.times.searchsorted(time, side="right")) - 1
        if self.times[k] == time:
            return k
        self.times = np.insert(self.times, k + 1, time)
        self.free = np.insert(self.free, k + 1, self.free[k], axis=0)
        self.copies = np.insert(self.copies, k + 1, self.copies[k], axis=0)
        self.total = np.insert(self.total, k + 1, self.total[k])
        return k + 1

    def take(self, block: Block, sign: int = -1) -> None:
        """Mark ``block``'s CPUs and copies busy over its span (``sign = 1``: give them back)."""
        a, b = self._row(block.start), self._row(block.end) if math.isfinite(block.end) else self.times.size
        self.free[a:b, block.machines] += sign * block.counts
        self.total[a:b] += sign * block.cpus
        if self.copies.shape[1]:
            self.copies[a:b] += sign * block.copies

    def give(self, block: Block) -> None:
        self.take(block, sign=1)

    def movable(self, blocks: list[Block], shortest: np.ndarray) -> np.ndarray:
        """Which of ``blocks`` might fit earlier: a necessary condition, for all of them at once.

        Block ``j`` (``shortest[j]``: a lower bound of its duration) can start at a row before its
        own only if, with its own CPUs given back, every row of that shortest window holds its CPUs
        in all (over every machine, a bound of what its machines hold). Compression asks this of
        every reservation at every early end; the few that pass are placed in earnest
        (:meth:`earliest`), so the queue is checked in a few array operations, not job by job.
        """
        times, rows = self.times, self.times.size
        starts = np.array([b.start for b in blocks])
        cpus = np.array([b.cpus for b in blocks], dtype=np.int64)
        own = np.zeros((len(blocks), rows + 1), dtype=np.int64)
        js = np.arange(len(blocks))
        own[js, times.searchsorted(starts)] += cpus
        own[js, times.searchsorted(np.array([b.end for b in blocks]))] -= cpus
        room = self.total + np.cumsum(own, axis=1)[:, :rows]
        blocked = np.where(room < cpus[:, None], np.arange(rows), rows)
        next_bad = np.minimum.accumulate(blocked[:, ::-1], axis=1)[:, ::-1]
        last = times.searchsorted(times + shortest[:, None], side="left") - 1
        last = np.maximum(last, np.arange(rows))
        return ((times < starts[:, None]) & (next_bad > last)).any(axis=1)

    def earliest(self, demand: Demand, before: float = math.inf) -> Block | None:
        """The earliest block for ``demand`` starting before ``before``, or None."""
        job, times, free = demand.job, self.times, self.free
        count = int(times.searchsorted(before, side="left"))
        if count == 0 or not demand.eligible.any():
            return None
        single = job.placement == SINGLE
        if single:
            room = np.where(demand.eligible, free, 0).max(axis=1)
        elif demand.eligible.all():
            room = self.total
        else:
            room = np.where(demand.eligible, free, 0).sum(axis=1)
        bad = room < job.cpus
        if demand.copies.size:
            bad |= (self.copies < demand.copies).any(axis=1)
        starts = times[:count]
        shortest = float(demand.seconds[demand.eligible].min())
        last = times.searchsorted(starts + shortest, side="left") - 1  # last row of each shortest window
        last = np.maximum(last, np.arange(count))  # a window holds its first row (even a zero-length one)
        blocked = np.where(bad, np.arange(times.size), times.size)
        next_bad = np.minimum.accumulate(blocked[::-1])[::-1]
        fit = self._single if single else self._spread
        for a in np.flatnonzero(next_bad[:count] > last).tolist():
            block = fit(demand, a)
            if block is not None:
                return block
        return None

    def _single(self, demand: Demand, a: int) -> Block | None:
        """All CPUs on one machine: the first machine (in preference order) free over its own window."""
        start, times = float(self.times[a]), self.times
        lasts = np.maximum(times.searchsorted(start + demand.seconds, side="left") - 1, a)
        top = int(lasts[demand.eligible].max())
        least = np.minimum.accumulate(self.free[a : top + 1], axis=0)
        lasts = np.minimum(lasts, top) - a
        window = least[lasts, np.arange(lasts.size)]
        ok = demand.eligible & (window >= demand.job.cpus)
        if demand.copies.size:
            copies = np.minimum.accumulate(self.copies[a : top + 1], axis=0)[lasts]
            ok &= (copies >= demand.copies).all(axis=1)
        hits = np.flatnonzero(ok) if demand.order is None else demand.order[ok[demand.order]]
        if not hits.size:
            return None
        m = int(hits[0])
        return Block(start, start + float(demand.seconds[m]), ((m, demand.job.cpus),), demand.copies)

    def _spread(self, demand: Demand, a: int) -> Block | None:
        """CPUs from several machines, first fit over the window's least free CPUs. The window is the
        plan's duration, which its slowest machine sets: widened and placed again until it holds."""
        start, times, seconds = float(self.times[a]), self.times, demand.seconds
        span = float(seconds[demand.eligible].min())
        while True:
            last = max(int(times.searchsorted(start + span, side="left")) - 1, a)
            window = self.free[a : last + 1].min(axis=0)
            plan = first_fit(demand.job, window, demand.eligible, demand.order)
            if plan is None:
                return None
            needed = max(float(seconds[m]) for m, _ in plan)
            if needed <= span:
                break
            span = needed
        copies = demand.copies_for(plan)
        if copies.size:
            last = max(int(times.searchsorted(start + needed, side="left")) - 1, a)
            if (self.copies[a : last + 1].min(axis=0) < copies).any():
                return None
        return Block(start, start + needed, plan, copies)


def _release(now: float, time: float, plan: Plan) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A running job's CPUs given back at its estimated end (``now`` at the latest: past its estimate,
    it may end at any moment), as ``(times, machines, counts)``."""
    machines = np.fromiter((m for m, _ in plan), np.int64, len(plan))
    counts = np.fromiter((n for _, n in plan), np.int64, len(plan))
    return np.full(machines.size, max(time, now)), machines, counts
