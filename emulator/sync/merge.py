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


class Sorted:
    """Rows of several partitions as one block in the trace's order (time, partition, sequence), and
    each row's partition: how a Ray host's reply carries its partitions' rows, ready to merge."""

    __slots__ = ("block", "pids")

    def __init__(self, block: RowBlock, pids: np.ndarray) -> None:
        self.block, self.pids = block, pids

    def __len__(self) -> int:
        return len(self.pids)


class Share:
    """One partition's rows in a :class:`Sorted` block it shares with the other partitions of its reply:
    ``len`` is its own rows'; the first share of a block that :meth:`RowMerger.add` takes brings the
    whole block, the others nothing more.

    >>> rows = Sorted(RowBlock.of([(1.0, 0, 5, 0, 1, (), (), None), (2.0, 0, 6, 1, 1, (), (), None)]),
    ...               np.array([1, 2], dtype=np.int32))
    >>> shares = Share.of(rows, {1: 1, 2: 1})
    >>> [len(share) for share in shares.values()], shares[1].claim() is rows, shares[2].claim()
    ([1, 1], True, None)
    """

    __slots__ = ("_box", "count")

    def __init__(self, count: int, box: list[Sorted | None]) -> None:
        self.count, self._box = count, box

    @classmethod
    def of(cls, rows: Sorted, counts: dict[int, int]) -> dict[int, Share]:
        """Each partition's share of ``rows``, by pid (``counts``: how many of the rows are its)."""
        box: list[Sorted | None] = [rows]
        return {pid: cls(count, box) for pid, count in counts.items()}

    def __len__(self) -> int:
        return self.count

    def claim(self) -> Sorted | None:
        """The block, for the first share to ask; None after."""
        rows, self._box[0] = self._box[0], None
        return rows


Chunk = list[tuple] | RowBlock | Share
"""Rows as a partition call made them (tuples), or as a Ray actor shipped them (columns, when many:
one partition's, or a share of its host's reply)."""

_time = itemgetter(0)


class RowMerger:
    """Rows by partition, each partition's in time order; :meth:`release` hands out those below a time.

    Rows come as tuples (from partitions in this process: a few per call, on
    many calls, where columns would cost more to make than they save), as
    :class:`~emulator.sync.rows.RowBlock` columns, or as a :class:`Share` of a
    host's reply (Ray actors: large calls): a reply's rows are held as one
    block, whatever the partitions in it. A release returns tuples when it cut
    only tuples, else one block.
    """

    def __init__(self) -> None:
        self._chunks: dict[int, list[_Tuples | _Block]] = {}  # by pid, oldest first
        self._sorted: list[_Sorted] = []  # replies' blocks, oldest first
        self._low = math.inf  # the earliest row held: most rounds release nothing, at one comparison
        self._arrivals = 0  # chunks added so far: each one's number
        self.held = 0

    def add(self, pid: int, rows: Chunk) -> None:
        if not len(rows):
            return
        self._arrivals += 1
        if isinstance(rows, Share):
            whole = rows.claim()
            if whole is None:  # (another share brought the block)
                return
            chunk = _Sorted(whole, self._arrivals)
            self._sorted.append(chunk)
            rows = whole
        else:
            chunk = (
                _Block(rows, self._arrivals) if isinstance(rows, RowBlock) else _Tuples(rows, self._arrivals)
            )
            self._chunks.setdefault(pid, []).append(chunk)
        self.held += len(rows)
        self._low = min(self._low, chunk.first())

    def release(self, watermark: float) -> tuple[Chunk, list[int] | np.ndarray]:
        """The rows earlier than ``watermark``, sorted by ``(time, partition, sequence)``, and their pids."""
        if watermark <= self._low:
            return [], []
        pieces: list[Chunk] = []
        owners: list[int] = []  # each piece's partition
        arrivals: list[int] = []  # each piece's chunk's number
        for pid in sorted(self._chunks):
            for piece, arrival in _cut(self._chunks[pid], watermark):
                pieces.append(piece)
                owners.append(pid)
                arrivals.append(arrival)
            if not self._chunks[pid]:
                del self._chunks[pid]
        merged = [(chunk.arrival, *chunk.cut(watermark)) for chunk in self._sorted]
        self._sorted = [chunk for chunk in self._sorted if len(chunk.rows)]
        merged = [(arrival, block, pids) for arrival, block, pids in merged if len(pids)]
        sizes = [len(piece) for piece in pieces]
        self.held -= sum(sizes) + sum(len(pids) for _, _, pids in merged)
        lows = [chunks[0].first() for chunks in self._chunks.values()]
        self._low = min(lows + [chunk.first() for chunk in self._sorted], default=math.inf)
        if not merged and not any(isinstance(piece, RowBlock) for piece in pieces):
            rows = [row for piece in pieces for row in piece]
            pids = [pid for pid, size in zip(owners, sizes, strict=True) for _ in range(size)]
            order = _by_time(rows)
            if order is None:
                return rows, pids
            return [rows[i] for i in order], [pids[i] for i in order]
        return _merge(pieces, owners, sizes, arrivals, merged)


def _merge(
    pieces: list[Chunk],
    owners: list[int],
    sizes: list[int],
    arrivals: list[int],
    merged: list[tuple[int, RowBlock, np.ndarray]],
) -> tuple[RowBlock, np.ndarray]:
    """Released pieces of partitions' chunks (``owners``) and of replies' blocks (``merged``, if any), as one
    block in the trace's order, and each row's pid. Pieces are joined in the order their chunks came,
    so one partition's rows at one time keep their sequence through the stable sort by time, then
    partition. A lone piece (one partition's, or one reply's) is in order already."""
    parts = [
        (arrival, as_block(piece), np.full(size, pid, dtype=np.int32))
        for piece, pid, size, arrival in zip(pieces, owners, sizes, arrivals, strict=True)
    ]
    parts += merged
    if len(parts) == 1:
        return parts[0][1], parts[0][2]
    parts.sort(key=itemgetter(0))
    block = RowBlock.concat([block for _, block, _ in parts])
    at = np.concatenate([pids for _, _, pids in parts])
    order = np.lexsort((at, block.time))  # (stable)
    if np.array_equal(order, np.arange(order.size)):
        return block, at
    return block.take(order), at[order]


class _Tuples:
    """A partition call's row tuples, those from ``start`` on still held (a release moves ``start``:
    no row is copied however many releases cut the list)."""

    __slots__ = ("arrival", "rows", "start")

    def __init__(self, rows: list[tuple], arrival: int) -> None:
        self.rows, self.start, self.arrival = rows, 0, arrival

    def first(self) -> float:
        return self.rows[self.start][0]

    def cut(self, watermark: float) -> tuple[list[tuple], bool]:
        """The rows before ``watermark``, and whether none is left."""
        stop = bisect.bisect_left(self.rows, watermark, lo=self.start, key=_time)
        taken, self.start = self.rows[self.start : stop], stop
        return taken, stop == len(self.rows)


class _Block:
    """A partition call's rows as columns, those not yet released (cuts are views)."""

    __slots__ = ("arrival", "block")

    def __init__(self, block: RowBlock, arrival: int) -> None:
        self.block, self.arrival = block, arrival

    def first(self) -> float:
        return float(self.block.time[0])

    def cut(self, watermark: float) -> tuple[RowBlock, bool]:
        block = self.block
        stop = int(np.searchsorted(block.time, watermark, side="left"))
        self.block = block.cut(stop, len(block))
        return block.cut(0, stop), stop == len(block)


class _Sorted:
    """A reply's rows, in the trace's order, those not yet released (cuts are views)."""

    __slots__ = ("arrival", "block", "rows")

    def __init__(self, rows: Sorted, arrival: int) -> None:
        self.block, self.rows, self.arrival = rows.block, rows.pids, arrival

    def first(self) -> float:
        return float(self.block.time[0])

    def cut(self, watermark: float) -> tuple[RowBlock, np.ndarray]:
        """The rows before ``watermark`` and their pids."""
        block, pids = self.block, self.rows
        stop = int(np.searchsorted(block.time, watermark, side="left"))
        self.block, self.rows = block.cut(stop, len(block)), pids[stop:]
        return block.cut(0, stop), pids[:stop]


def _cut(chunks: list[_Tuples | _Block], watermark: float) -> list[tuple[Chunk, int]]:
    """The rows of ``chunks`` (one partition's, in order) before ``watermark``, removed from them, each
    piece with its chunk's number."""
    taken = []
    while chunks:
        piece, emptied = chunks[0].cut(watermark)
        if len(piece):
            taken.append((piece, chunks[0].arrival))
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
