"""Bytes across process boundaries: a round's inboxes and results, packed with msgpack.

One call per host per round carries all of its messages and trace rows as one
bytes object (never one Ray call, nor one Python object, per message); the
rows as columns.
Unpacking with ``use_list=False`` gives back tuples, exactly the values the
in-process transport passes, so partitions and the trace see no difference.
"""

from __future__ import annotations

from typing import NamedTuple

import msgpack
import numpy as np

from emulator.core.messages import STATUS, Message, Status
from emulator.sync.coordinator import Calls, Result, Results
from emulator.sync.merge import Share, Sorted
from emulator.sync.rows import RowBlock


def pack_calls(calls: Calls, budget: int) -> bytes:
    """One host's share of a round: ``(horizon, inbox)`` by pid, and the event budget per call."""
    return msgpack.packb((budget, calls), use_bin_type=True)


def unpack_calls(data: bytes) -> tuple[Calls, int]:
    budget, raw = msgpack.unpackb(data, use_list=False, strict_map_key=False)
    return {pid: (horizon, as_messages(msgs)) for pid, (horizon, msgs) in raw.items()}, budget


COLUMNS_FROM = 1024
"""Rows in one reply from which they travel as columns: below it, tuples cost less to pack and unpack
than the columns' fixed costs (a few dozen numpy arrays), and the writer turns them into columns a
batch at a time anyway."""


class Reply(NamedTuple):
    """A host's answer to a call (or the answers of a round, gathered): what the driver routes and
    measures."""

    seconds: dict[int, float]
    """Each partition's compute seconds (wall clock: what rebalancing weighs partitions by)."""
    results: Results
    """By pid."""
    compute: float
    """The call's compute seconds (a round's: its slowest host's)."""


def reply(seconds: dict[int, float], results: Results) -> Reply:
    """One host's :class:`Reply`: its compute, the sum of its partitions'."""
    return Reply(seconds, results, sum(seconds.values()))


def pack_results(results: Results, seconds: dict[int, float]) -> bytes:
    """A host's results, with each partition's compute seconds (what rebalancing weighs partitions by).

    Many trace rows go as one :class:`~emulator.sync.rows.RowBlock` of all the partitions' rows in
    the trace's order (time, partition, sequence), with each row's partition, each partition's
    result then giving how many are its: sorted here, in the actors, in parallel, they reach the
    driver's writer ready to merge with the other hosts' and write."""
    if sum(len(rows) for _, _, rows, _, _, _ in results.values()) < COLUMNS_FROM:
        return msgpack.packb((seconds, results, None, None), use_bin_type=True)
    pids = sorted(results)
    block = RowBlock.of([row for pid in pids for row in results[pid][2]])
    owners = np.repeat(np.array(pids, dtype=np.int32), [len(results[pid][2]) for pid in pids])
    order = np.argsort(block.time, kind="stable")  # (partitions in increasing pid: ties keep it)
    if not np.array_equal(order, np.arange(order.size)):
        block, owners = block.take(order), owners[order]
    counts = {
        pid: (outbox, next_time, len(rows), busy, promise, reacts)
        for pid, (outbox, next_time, rows, busy, promise, reacts) in results.items()
    }
    return msgpack.packb((seconds, counts, block.packed(), owners.tobytes()), use_bin_type=True)


def unpack_results(data: bytes) -> Reply:
    """A host's results as the driver routes them: messages stay the plain tuples they were packed as
    (the frontier reads their fields by position; their receiver rebuilds them), not rebuilt into
    :class:`Message` and :class:`Status` only to be packed again. Rows shipped as columns come back
    as one :class:`~emulator.sync.merge.Sorted` block, each partition's result holding its
    :class:`~emulator.sync.merge.Share` of it (none, without rows)."""
    seconds, raw, packed, owners = msgpack.unpackb(data, use_list=False, strict_map_key=False)
    if packed is None:
        return reply(seconds, {pid: Result(*result) for pid, result in raw.items()})
    rows = Sorted(RowBlock.unpacked(packed), np.frombuffer(owners, dtype=np.int32))
    shares = Share.of(rows, {pid: result[2] for pid, result in raw.items() if result[2]})
    results = {
        pid: Result(outbox, next_time, shares.get(pid, []), busy, promise, reacts)
        for pid, (outbox, next_time, _, busy, promise, reacts) in raw.items()
    }
    return reply(seconds, results)


def as_messages(inbox: tuple) -> list[Message]:
    """The messages of ``inbox`` as their receiver reads them (each a :class:`Message`, a status payload
    a :class:`Status`), from the plain tuples they travelled as, in one loop: the meta partition's
    inbox holds a status report for every event in every cluster. The tuples are made directly as the
    named tuples (``tuple.__new__``, what ``_make`` does without its check of the length, which
    packing kept).

    >>> as_messages([(1.0, 2, 0, 0, 9, (7,))])[0].payload
    (7,)
    """
    new = tuple.__new__
    return [
        new(Message, (time, src, seq, dst, kind, new(Status, payload) if kind == STATUS else payload))
        for time, src, seq, dst, kind, payload in inbox
    ]
