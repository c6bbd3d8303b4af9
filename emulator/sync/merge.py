"""Trace rows from partitions that run ahead of each other, released in the trace's order.

Each partition hands over its rows in its own order (time, then its sequence);
partitions no longer move in lockstep, so a row may only be written once no
partition can still produce an earlier one: the coordinator's *watermark*.
Rows below it are released sorted by ``(time, partition, sequence)``: the
order of ``events.arrow``. What stays held is bounded by the coordinator
(:data:`emulator.sync.coordinator.HELD_ROWS`).

>>> merger = RowMerger()
>>> merger.add(2, [(1.0, "b"), (5.0, "c")])
>>> merger.add(1, [(1.0, "a")])
>>> merger.release(5.0)
([(1.0, 'a'), (1.0, 'b')], [1, 2])
>>> merger.held
1
"""

from __future__ import annotations

import bisect
import math

import numpy as np


class RowMerger:
    """Rows by partition, each partition's in time order; :meth:`release` hands out those below a time."""

    def __init__(self) -> None:
        self._rows: dict[int, list[tuple]] = {}
        self._times: dict[int, list[float]] = {}
        self._start: dict[int, int] = {}  # released rows at the head of each list, dropped in bulk
        self._low = math.inf  # the earliest row held: most rounds release nothing, at one comparison
        self.held = 0

    def add(self, pid: int, rows: list[tuple]) -> None:
        if not rows:
            return
        if pid not in self._rows:
            self._rows[pid], self._times[pid], self._start[pid] = [], [], 0
        self._rows[pid].extend(rows)
        self._times[pid].extend(row[0] for row in rows)
        self.held += len(rows)
        self._low = min(self._low, rows[0][0])

    def release(self, watermark: float) -> tuple[list[tuple], list[int]]:
        """The rows earlier than ``watermark``, sorted by ``(time, partition, sequence)``, and their pids."""
        rows: list[tuple] = []
        pids: list[int] = []
        if watermark <= self._low:
            return rows, pids
        for pid in sorted(self._rows):
            times, start = self._times[pid], self._start[pid]
            cut = bisect.bisect_left(times, watermark, lo=start)
            if cut == start:
                continue
            rows.extend(self._rows[pid][start:cut])
            pids.extend([pid] * (cut - start))
            self._drop(pid, cut)
        self.held -= len(rows)
        self._low = min((self._times[p][self._start[p]] for p in self._rows), default=math.inf)
        if len(rows) > 1:
            order = _by_time(rows)
            if order is not None:
                rows = [rows[i] for i in order]
                pids = [pids[i] for i in order]
        return rows, pids

    def _drop(self, pid: int, cut: int) -> None:
        """Forget ``pid``'s rows before ``cut``: at once when none are left, else when they are half."""
        if cut == len(self._times[pid]):
            del self._rows[pid], self._times[pid], self._start[pid]
        elif 2 * cut > len(self._times[pid]):  # amortized: each row is copied at most once more
            self._rows[pid], self._times[pid] = self._rows[pid][cut:], self._times[pid][cut:]
            self._start[pid] = 0
        else:
            self._start[pid] = cut


SMALL = 256
"""Below this many rows a Python sort beats numpy's set-up cost."""


def _by_time(rows: list[tuple]) -> list[int] | np.ndarray | None:
    """A stable order of ``rows`` by time (None: already in order). Rows come partition by partition in
    increasing pid, each partition's in its sequence, so a stable sort on time gives
    ``(time, partition, sequence)``."""
    if len(rows) < SMALL:
        order = sorted(range(len(rows)), key=lambda i: rows[i][0])
        return None if all(i == k for k, i in enumerate(order)) else order
    times = np.fromiter((r[0] for r in rows), dtype=float, count=len(rows))
    order = np.argsort(times, kind="stable")
    return None if np.array_equal(order, np.arange(order.size)) else order
