"""Which PEs are free over time: the availability profile of GridSim's parallel package.

A profile is a step function over time. Row ``k`` says which PEs (numbered
``0 .. size-1`` across the whole cluster) are free from ``times[k]`` until the
next row's time; the last row has every PE free. Allocating PEs over
``[start, end)`` adds a row at ``start`` and one at ``end`` when none is there
(each a copy of the row in force at that time), then marks the PEs busy in the
rows in between, as ``gridsim.parallel.profile.Profile.allocatePERanges`` does.
Rows are never merged; rows before the one in force now are dropped by
:meth:`PeProfile.forget` (``removePastEntries``).

Two questions are asked of it, both answered with the PEs free throughout a
window, the lowest-numbered first (``PERangeList.selectPEs``):

- :meth:`PeProfile.free_until` (for ``checkAvailability``, can a job start now):
  for each PE, the time it is next busy, so that a job of ``d`` seconds may
  start now on the PEs whose time is at least ``now + d``;
- :meth:`PeProfile.earliest` (``findStartTime``): the earliest start, ``now`` or
  a later row's time, at which enough PEs are free for the whole duration.

Rows are a boolean numpy matrix (rows x PEs), so each question costs a few
vectorized passes over the rows that matter, not a loop over PEs.
"""

from __future__ import annotations

import math

import numpy as np


class PeProfile:
    """Free PEs over time (see the module docstring); ``size`` PEs, all free at first.

    ``times``, ``free`` and ``counts`` (free PEs per row) are views of the rows
    in use, ``lo:hi`` of buffers that grow by doubling, so that adding a row
    shifts only the rows after it and dropping past rows moves nothing.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._times = np.full(16, math.inf)
        self._free = np.ones((16, size), dtype=bool)
        self._counts = np.full(16, size, dtype=np.int64)
        self._times[0] = -math.inf
        self._lo, self._hi = 0, 1
        self._views()

    def __getstate__(self) -> dict:
        """Pickle the buffers only: unpickled views would no longer share their memory."""
        return {k: v for k, v in self.__dict__.items() if k not in ("times", "free", "counts")}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views()

    def _views(self) -> None:
        lo, hi = self._lo, self._hi
        self.times, self.free, self.counts = self._times[lo:hi], self._free[lo:hi], self._counts[lo:hi]

    def _row(self, time: float) -> int:
        """The row in force at ``time``: the last whose time is <= ``time``."""
        return int(self.times.searchsorted(time, side="right")) - 1

    def _split(self, time: float) -> int:
        """Index of the row starting at ``time``, inserting a copy of the row then in force if none does."""
        k = self._row(time)
        if self.times[k] == time:
            return k
        if self._hi == self._times.size:
            self._grow()
        hi, at = self._hi, self._lo + k + 1
        for buf in (self._times, self._free, self._counts):
            buf[at : hi + 1] = buf[at - 1 : hi]  # shift the later rows; row k is copied into at
        self._times[at] = time
        self._hi = hi + 1
        self._views()
        return k + 1

    def _grow(self) -> None:
        """Make room for one more row: move the rows in use to the front, doubling the buffers if full."""
        lo, hi = self._lo, self._hi
        rows = hi - lo
        capacity = self._times.size if rows < self._times.size // 2 else 2 * self._times.size
        times = np.full(capacity, math.inf)
        free = np.ones((capacity, self.size), dtype=bool)
        counts = np.full(capacity, self.size, dtype=np.int64)
        times[:rows], free[:rows], counts[:rows] = self._times[lo:hi], self._free[lo:hi], self._counts[lo:hi]
        self._times, self._free, self._counts = times, free, counts
        self._lo, self._hi = 0, rows

    def forget(self, now: float) -> None:
        """Drop the rows that ended before ``now`` (the row in force now stays)."""
        k = self._row(now)
        if k > 0:
            self._lo += k
            self._views()

    def free_now(self, now: float) -> int:
        """How many PEs are free at ``now``."""
        return int(self.counts[self._row(now)])

    def allocate(self, pes: np.ndarray, start: float, end: float) -> None:
        """Mark ``pes`` (indices, each free throughout) busy over ``[start, end)``."""
        first = self._split(start)
        last = self._split(end)
        self.free[first:last, pes] = False
        self.counts[first:last] -= len(pes)

    def free_until(self, now: float) -> np.ndarray:
        """Per PE, the time it is next busy from ``now`` on (``inf``: never; ``<= now``: busy now)."""
        k = self._row(now)
        busy = ~self.free[k:]
        first = busy.argmax(axis=0)
        return np.where(busy[first, np.arange(self.size)], self.times[k:][first], math.inf)

    def earliest(self, count: int, duration: float, now: float) -> tuple[float, np.ndarray]:
        """The earliest start >= ``now`` with ``count`` PEs free for ``duration``, and those PEs.

        Candidates are ``now`` and the later rows' times, in order; a candidate
        fits when the PEs free in every row of ``[start, start + duration)``
        number at least ``count``. Returns the start and the lowest ``count`` of
        them. Rows with too few free PEs rule out every window holding them, which
        leaves few candidates to check PE by PE.
        """
        if count > self.size:
            raise ValueError(f"{count} PEs asked of a profile of {self.size}")
        k = self._row(now)
        times, free = self.times[k:], self.free[k:]
        starts = np.maximum(times, now)
        last = np.searchsorted(times, starts + duration, side="left") - 1  # last row of each window
        rows = np.arange(times.size)
        blocked = np.where(self.counts[k:] < count, rows, times.size)
        next_blocked = np.minimum.accumulate(blocked[::-1])[::-1]
        for a in np.flatnonzero(next_blocked > last).tolist():
            window = free[a : last[a] + 1]
            common = window[0] if window.shape[0] == 1 else np.logical_and.reduce(window, axis=0)
            chosen = np.flatnonzero(common)
            if chosen.size >= count:
                return float(starts[a]), chosen[:count]
        raise AssertionError("the last row of a profile has every PE free")  # pragma: no cover

    @staticmethod
    def lowest_free(until: np.ndarray, count: int, end: float) -> np.ndarray | None:
        """The lowest ``count`` PEs whose ``until`` (see :meth:`free_until`) is at least ``end``, or None."""
        chosen = np.flatnonzero(until >= end)
        return chosen[:count] if chosen.size >= count else None
