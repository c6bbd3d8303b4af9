"""Trace rows as columns: one partition call's rows, ready to merge, ship and write without a loop.

Partitions append rows as tuples ``(time, kind, job, cluster, cpus, machines,
pes, info)`` (:mod:`emulator.core.messages`): cheap to make one at a time.
Everything after that handles them by the hundred thousand (LCG-2005-1:
752k rows), so they are turned into columns once, where the partition ran:
in a Ray actor, in parallel with the other actors, or in the writer when
everything runs in one process. The writer then merges, orders, counts and
writes them with numpy and Arrow; the driver of a Ray run had spent more
time on rows, one Python step at a time, than either actor on its clusters.

>>> block = RowBlock.of([(1.0, 3, 7, 0, 2, (0, 1), (0, 0), None), (2.0, 4, 7, 0, 2, (0, 1), (0, 0), None)])
>>> len(block), block.time.tolist(), block.machines.lengths().tolist()
(2, [1.0, 2.0], [2, 2])
>>> block.cut(1, 2).tuples()
[(2.0, 4, 7, 0, 2, (0, 1), (0, 0), None)]
"""

from __future__ import annotations

from itertools import chain, pairwise
from operator import itemgetter

import numpy as np
import pyarrow as pa


class Ragged:
    """A column of variable-length int32 lists (machines, PEs): ``values[offsets[i]:offsets[i + 1]]``.

    Offsets index ``values`` absolutely, so they need not start at 0: a cut shares both arrays
    with the column it came from. (Rebasing each cut's offsets cost the Ray driver a copy of all
    the rows still held at every release: quadratic in a free-running partition's rows.)
    """

    __slots__ = ("offsets", "values")

    def __init__(self, offsets: np.ndarray, values: np.ndarray) -> None:
        self.offsets, self.values = offsets, values

    @classmethod
    def of(cls, lists: list[tuple[int, ...]]) -> Ragged:
        lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        offsets = np.zeros(len(lists) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        values = np.fromiter(chain.from_iterable(lists), dtype=np.int32, count=int(offsets[-1]))
        return cls(offsets, values)

    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def cut(self, start: int, stop: int) -> Ragged:
        """Lists ``start`` to ``stop`` (views: no copy)."""
        return Ragged(self.offsets[start : stop + 1], self.values)

    def compact(self) -> Ragged:
        """The same lists with offsets from 0 and only their own values (what leaves this process)."""
        first, last = int(self.offsets[0]), int(self.offsets[-1])
        if first == 0 and last == len(self.values):
            return self
        return Ragged(self.offsets - first, self.values[first:last])

    def take(self, index: np.ndarray) -> Ragged:
        """The lists at ``index``, in that order (one gather, however many lists)."""
        starts = self.offsets[index]
        lengths = self.offsets[index + 1] - starts
        offsets = np.zeros(len(index) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        gather = np.repeat(starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
        return Ragged(offsets, self.values[gather])

    @staticmethod
    def concat(columns: list[Ragged]) -> Ragged:
        columns = [c.compact() for c in columns]
        shifts = np.cumsum([0] + [int(c.offsets[-1]) for c in columns[:-1]])
        offsets = np.concatenate(
            [columns[0].offsets[:1], *(c.offsets[1:] + s for c, s in zip(columns, shifts, strict=True))]
        )
        return Ragged(offsets, np.concatenate([c.values for c in columns]))

    def lists(self) -> list[tuple[int, ...]]:
        compact = self.compact()
        flat, bounds = compact.values.tolist(), compact.offsets.tolist()
        return [tuple(flat[a:b]) for a, b in pairwise(bounds)]

    def arrow(self) -> pa.ListArray:
        """As ``pa.array(self.lists(), pa.list_(pa.int32()))`` makes it, without the lists."""
        compact = self.compact()
        return pa.ListArray.from_arrays(pa.array(compact.offsets.astype(np.int32)), pa.array(compact.values))


COLUMNS = ("time", "kind", "job", "cluster", "cpus")
DTYPES = (np.float64, np.int8, np.int64, np.int32, np.int32)


class RowBlock:
    """Rows as columns: ``time``, ``kind``, ``job``, ``cluster``, ``cpus`` (numpy), ``machines`` and
    ``pes`` (:class:`Ragged`), ``info`` (an object array of str or None)."""

    __slots__ = (*COLUMNS, "machines", "pes", "info")

    def __init__(
        self, time, kind, job, cluster, cpus, machines: Ragged, pes: Ragged, info: np.ndarray
    ) -> None:
        self.time, self.kind, self.job, self.cluster, self.cpus = time, kind, job, cluster, cpus
        self.machines, self.pes, self.info = machines, pes, info

    @classmethod
    def of(cls, rows: list[tuple]) -> RowBlock:
        """The columns of row tuples, each read by ``map(itemgetter(k), rows)``: a loop in C, where a
        list comprehension per column cost half as much again (a transposing ``zip(*rows)`` would
        make an iterator per row, and on a large run's heap so many objects set off full collections)."""
        n = len(rows)
        numbers = [np.fromiter(map(itemgetter(k), rows), dtype=t, count=n) for k, t in enumerate(DTYPES)]
        machines, pes = (Ragged.of(list(map(itemgetter(k), rows))) for k in (5, 6))
        info = np.empty(n, dtype=object)
        info[:] = list(map(itemgetter(7), rows))
        return cls(*numbers, machines, pes, info)

    def __len__(self) -> int:
        return len(self.time)

    def _columns(self) -> tuple:
        return (self.time, self.kind, self.job, self.cluster, self.cpus)

    def cut(self, start: int, stop: int) -> RowBlock:
        """Rows ``start`` to ``stop`` (views, no copy)."""
        numbers = [column[start:stop] for column in self._columns()]
        machines, pes = self.machines.cut(start, stop), self.pes.cut(start, stop)
        return RowBlock(*numbers, machines, pes, self.info[start:stop])

    def take(self, index: np.ndarray) -> RowBlock:
        numbers = [column[index] for column in self._columns()]
        return RowBlock(*numbers, self.machines.take(index), self.pes.take(index), self.info[index])

    @staticmethod
    def concat(blocks: list[RowBlock]) -> RowBlock:
        if len(blocks) == 1:
            return blocks[0]
        numbers = [np.concatenate(parts) for parts in zip(*(b._columns() for b in blocks), strict=True)]
        machines = Ragged.concat([b.machines for b in blocks])
        pes = Ragged.concat([b.pes for b in blocks])
        return RowBlock(*numbers, machines, pes, np.concatenate([b.info for b in blocks]))

    def tuples(self) -> list[tuple]:
        """The rows as the partitions made them."""
        numbers = [column.tolist() for column in self._columns()]
        return list(zip(*numbers, self.machines.lists(), self.pes.lists(), self.info.tolist(), strict=True))

    def widths(self) -> np.ndarray:
        """Machines + PEs each row lists."""
        return self.machines.lengths() + self.pes.lengths()

    def packed(self) -> tuple:
        """For msgpack: the buffers of the columns, and the info strings."""
        buffers = [c.tobytes() for c in self._columns()]
        machines, pes = self.machines.compact(), self.pes.compact()
        lists = [machines.offsets, machines.values, pes.offsets, pes.values]
        return (*buffers, *(c.tobytes() for c in lists), self.info.tolist())

    @classmethod
    def unpacked(cls, fields: tuple) -> RowBlock:
        numbers = [np.frombuffer(data, dtype=t) for data, t in zip(fields[:5], DTYPES, strict=True)]
        lists = zip(fields[5:9], (np.int64, np.int32) * 2, strict=True)
        m_off, m_val, p_off, p_val = (np.frombuffer(data, dtype=t) for data, t in lists)
        info = np.empty(len(numbers[0]), dtype=object)
        info[:] = fields[9]
        return cls(*numbers, Ragged(m_off, m_val), Ragged(p_off, p_val), info)


def as_block(rows: list[tuple] | RowBlock) -> RowBlock:
    """A partition call's rows as columns (a Ray actor already made them so)."""
    return rows if isinstance(rows, RowBlock) else RowBlock.of(rows)
