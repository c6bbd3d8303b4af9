"""Free CPUs per machine and free license copies over time: the plan a conservative backfiller keeps.

A step function from ``now`` on. Row ``k`` holds what is free from
``times[k]`` until the next row's time: CPUs per machine (``free``, rows x
machines) and copies per license type (``copies``, rows x licenses). Row 0 is
the cluster as it is now; running jobs give their CPUs and copies back at their
estimated ends, and every reservation is a :class:`Block` taken over
``[start, end)``. Counts per machine, not PE numbers (unlike
:class:`~emulator.pe_profile.PeProfile`, GridSim's): a job needs only enough
free CPUs on its machines when it starts, and the cluster gives it the lowest
free PEs then.

:meth:`CpuProfile.earliest` answers the one question asked: the earliest start
(``now`` or a later row's time, before a bound) at which a job fits on its
machines for its whole estimated duration, and where (first fit over the
window's least free CPUs, :func:`~emulator.placement.first_fit`). Rows that no
window may hold (too few CPUs or copies in the row itself) rule out candidates
in one vectorized pass, as in ``PeProfile.earliest``; the survivors are
checked with a cumulative minimum over their window's rows.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..model import SINGLE, Job
from ..placement import first_fit
from ..resources import Plan


@dataclass(frozen=True)
class Block:
    """A job's reservation: ``plan`` (and ``copies`` per license type) over ``[start, end)``."""

    start: float
    end: float
    plan: Plan
    copies: np.ndarray

    @property
    def machines(self) -> np.ndarray:
        return np.fromiter((m for m, _ in self.plan), np.int64, len(self.plan))

    @property
    def counts(self) -> np.ndarray:
        return np.fromiter((n for _, n in self.plan), np.int64, len(self.plan))


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
        machines, licenses = free_now.size, copies_now.size
        times, where, counts, ltimes, lcounts = [now], [], [], [], []
        for time, plan, copies in releases:
            time = max(time, now)
            for m, n in plan:
                times.append(time)
                where.append(m)
                counts.append(n)
            if copies is not None:
                ltimes.append(time)
                lcounts.append(copies)
        for b in blocks:
            for time, sign in ((b.start, -1), (b.end, 1)):
                for m, n in b.plan:
                    times.append(time)
                    where.append(m)
                    counts.append(sign * n)
                if licenses:
                    ltimes.append(time)
                    lcounts.append(sign * b.copies)
        grid = np.unique(np.array(times, dtype=float))
        delta = np.zeros((grid.size, machines), dtype=np.int64)
        rows = np.searchsorted(grid, np.array(times[1:], dtype=float))
        np.add.at(delta, (rows, np.array(where, dtype=np.int64)), np.array(counts, dtype=np.int64))
        delta[0] += free_now
        self.times = grid
        self.free = np.cumsum(delta, axis=0)
        ldelta = np.zeros((grid.size, licenses), dtype=np.int64)
        if ltimes:
            np.add.at(ldelta, np.searchsorted(grid, np.array(ltimes, dtype=float)), np.array(lcounts))
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
        return k + 1

    def take(self, block: Block, sign: int = -1) -> None:
        """Mark ``block``'s CPUs and copies busy over its span (``sign = 1``: give them back)."""
        a, b = self._row(block.start), self._row(block.end) if math.isfinite(block.end) else self.times.size
        self.free[a:b, block.machines] += sign * block.counts
        if self.copies.shape[1]:
            self.copies[a:b] += sign * block.copies

    def give(self, block: Block) -> None:
        self.take(block, sign=1)

    def earliest(self, demand: Demand, before: float = math.inf) -> Block | None:
        """The earliest block for ``demand`` starting before ``before``, or None."""
        job, times, free = demand.job, self.times, self.free
        count = int(times.searchsorted(before, side="left"))
        if count == 0 or not demand.eligible.any():
            return None
        single = job.placement == SINGLE
        usable = np.where(demand.eligible, free, 0)
        room = usable.max(axis=1) if single else usable.sum(axis=1)
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
