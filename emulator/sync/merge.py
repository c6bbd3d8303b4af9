"""Trace rows from partitions that run ahead of each other, released in the trace's order.

Each partition hands over its rows in its own order (time, then its sequence);
partitions no longer move in lockstep, so a row may only be written once no
partition can still produce an earlier one: the coordinator's *watermark*.
Rows below it are released sorted by ``(time, partition, sequence)``: the
order of ``events.arrow``. What stays held is bounded by the coordinator
(:data:`emulator.sync.coordinator.HELD_ROWS`).

>>> merger = RowMerger()
>>> merger.add(2, [(1.0, 0, 20, 1, 0, (), (), None), (5.0, 0, 21, 1, 0, (), (), None)])
>>> merger.add(1, [(1.0, 0, 10, 0, 0, (), (), None)])
>>> rows, pids = merger.release(5.0)
>>> rows.job.tolist(), pids.tolist(), merger.held
([10, 20], [1, 2], 1)
"""

from __future__ import annotations

import math

import numpy as np

from .rows import EMPTY, RowBlock, as_block


class RowMerger:
    """Rows by partition, each partition's in time order; :meth:`release` hands out those below a time.

    Rows come and go as :class:`~emulator.sync.rows.RowBlock` columns: a
    release cuts each partition's blocks with a binary search, and orders
    what it cut with one stable sort, whatever the number of rows.
    """

    def __init__(self) -> None:
        self._blocks: dict[int, list[RowBlock]] = {}  # by pid, oldest first
        self._low = math.inf  # the earliest row held: most rounds release nothing, at one comparison
        self.held = 0

    def add(self, pid: int, rows: list[tuple] | RowBlock) -> None:
        block = as_block(rows)
        if not len(block):
            return
        self._blocks.setdefault(pid, []).append(block)
        self.held += len(block)
        self._low = min(self._low, float(block.time[0]))

    def release(self, watermark: float) -> tuple[RowBlock, np.ndarray]:
        """The rows earlier than ``watermark``, sorted by ``(time, partition, sequence)``, and their pids."""
        if watermark <= self._low:
            return EMPTY, np.zeros(0, dtype=np.int32)
        cut: list[RowBlock] = []
        counts: list[tuple[int, int]] = []
        for pid in sorted(self._blocks):
            taken = self._cut(self._blocks[pid], watermark)
            if taken:
                cut += taken
                counts.append((pid, sum(map(len, taken))))
            if not self._blocks[pid]:
                del self._blocks[pid]
        rows = RowBlock.concat(cut) if cut else EMPTY
        pids = np.repeat(np.array([p for p, _ in counts], dtype=np.int32), [n for _, n in counts])
        self.held -= len(rows)
        self._low = min((float(blocks[0].time[0]) for blocks in self._blocks.values()), default=math.inf)
        if len(rows) > 1:
            order = np.argsort(rows.time, kind="stable")  # partitions come in increasing pid: ties keep it
            if not np.array_equal(order, np.arange(order.size)):
                rows, pids = rows.take(order), pids[order]
        return rows, pids

    @staticmethod
    def _cut(blocks: list[RowBlock], watermark: float) -> list[RowBlock]:
        """The rows of ``blocks`` (one partition's, in order) before ``watermark``, removed from them."""
        taken = []
        while blocks:
            block = blocks[0]
            stop = int(np.searchsorted(block.time, watermark, side="left"))
            if stop == len(block):
                taken.append(blocks.pop(0))
                continue
            if stop:
                taken.append(block.cut(0, stop))
                blocks[0] = block.cut(stop, len(block))
            break
        return taken
