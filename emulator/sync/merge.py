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
from operator import itemgetter

import numpy as np

from .rows import RowBlock, as_block

Chunk = list[tuple] | RowBlock
"""Rows as a partition call made them (tuples), or as a Ray actor shipped them (columns, when many)."""

_time = itemgetter(0)


class RowMerger:
    """Rows by partition, each partition's in time order; :meth:`release` hands out those below a time.

    Rows come as tuples (from partitions in this process: a few per call, on
    many calls, where columns would cost more to make than they save) or as
    :class:`~emulator.sync.rows.RowBlock` columns (from Ray actors: large
    calls). A release returns tuples when it cut only tuples, else one block.
    """

    def __init__(self) -> None:
        self._chunks: dict[int, list[_Tuples | _Block]] = {}  # by pid, oldest first
        self._low = math.inf  # the earliest row held: most rounds release nothing, at one comparison
        self.held = 0

    def add(self, pid: int, rows: Chunk) -> None:
        if not len(rows):
            return
        chunk = _Block(rows) if isinstance(rows, RowBlock) else _Tuples(rows)
        self._chunks.setdefault(pid, []).append(chunk)
        self.held += len(rows)
        self._low = min(self._low, chunk.first())

    def release(self, watermark: float) -> tuple[Chunk, list[int] | np.ndarray]:
        """The rows earlier than ``watermark``, sorted by ``(time, partition, sequence)``, and their pids."""
        if watermark <= self._low:
            return [], []
        pieces: list[Chunk] = []
        owners: list[int] = []  # each piece's partition
        for pid in sorted(self._chunks):
            for piece in _cut(self._chunks[pid], watermark):
                pieces.append(piece)
                owners.append(pid)
            if not self._chunks[pid]:
                del self._chunks[pid]
        sizes = [len(piece) for piece in pieces]
        self.held -= sum(sizes)
        self._low = min((chunks[0].first() for chunks in self._chunks.values()), default=math.inf)
        if not any(isinstance(piece, RowBlock) for piece in pieces):
            rows = [row for piece in pieces for row in piece]
            pids = [pid for pid, size in zip(owners, sizes, strict=True) for _ in range(size)]
            order = _by_time(rows)
            if order is None:
                return rows, pids
            return [rows[i] for i in order], [pids[i] for i in order]
        block = RowBlock.concat([as_block(piece) for piece in pieces])
        at = np.repeat(np.array(owners, dtype=np.int32), sizes)  # (not a list of a pid per row)
        order = np.argsort(block.time, kind="stable")  # partitions come in increasing pid: ties keep it
        if np.array_equal(order, np.arange(order.size)):
            return block, at
        return block.take(order), at[order]


class _Tuples:
    """A partition call's row tuples, those from ``start`` on still held (a release moves ``start``:
    no row is copied however many releases cut the list)."""

    __slots__ = ("rows", "start")

    def __init__(self, rows: list[tuple]) -> None:
        self.rows, self.start = rows, 0

    def first(self) -> float:
        return self.rows[self.start][0]

    def cut(self, watermark: float) -> tuple[list[tuple], bool]:
        """The rows before ``watermark``, and whether none is left."""
        stop = bisect.bisect_left(self.rows, watermark, lo=self.start, key=_time)
        taken, self.start = self.rows[self.start : stop], stop
        return taken, stop == len(self.rows)


class _Block:
    """A partition call's rows as columns, those not yet released (cuts are views)."""

    __slots__ = ("block",)

    def __init__(self, block: RowBlock) -> None:
        self.block = block

    def first(self) -> float:
        return float(self.block.time[0])

    def cut(self, watermark: float) -> tuple[RowBlock, bool]:
        block = self.block
        stop = int(np.searchsorted(block.time, watermark, side="left"))
        self.block = block.cut(stop, len(block))
        return block.cut(0, stop), stop == len(block)


def _cut(chunks: list[_Tuples | _Block], watermark: float) -> list[Chunk]:
    """The rows of ``chunks`` (one partition's, in order) before ``watermark``, removed from them."""
    taken = []
    while chunks:
        piece, emptied = chunks[0].cut(watermark)
        if len(piece):
            taken.append(piece)
        if not emptied:
            break
        chunks.pop(0)
    return taken


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
