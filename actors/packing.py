"""Bytes across process boundaries: a round's inboxes and results, packed with msgpack.

One call per host per round carries all of its messages and trace rows as one
bytes object (never one Ray call, nor one Python object, per message); the
rows as columns.
Unpacking with ``use_list=False`` gives back tuples, exactly the values the
in-process transport passes, so partitions and the trace see no difference.
"""

from __future__ import annotations

import msgpack

from emulator.core.messages import STATUS, Message, Status
from emulator.sync.coordinator import Calls, Result, Results
from emulator.sync.rows import RowBlock


def pack_calls(calls: Calls, budget: int) -> bytes:
    """One host's share of a round: ``(horizon, inbox)`` by pid, and the event budget per call."""
    return msgpack.packb((budget, calls), use_bin_type=True)


def unpack_calls(data: bytes) -> tuple[Calls, int]:
    budget, raw = msgpack.unpackb(data, use_list=False, strict_map_key=False)
    return {pid: (horizon, [as_message(m) for m in msgs]) for pid, (horizon, msgs) in raw.items()}, budget


COLUMNS_FROM = 1024
"""Rows in one reply from which they travel as columns: below it, tuples cost less to pack and unpack
than the columns' fixed costs (a few dozen numpy arrays), and the writer turns them into columns a
batch at a time anyway."""


def pack_results(results: Results, seconds: dict[int, float]) -> bytes:
    """A host's results, with each partition's compute seconds (what rebalancing weighs partitions by).

    Many trace rows go as one :class:`~emulator.sync.rows.RowBlock` of all the partitions' rows,
    each partition's result then giving how many are its: made here, in the actors, in parallel,
    they reach the driver's writer ready to merge and write."""
    if sum(len(r[2]) for r in results.values()) < COLUMNS_FROM:
        return msgpack.packb((seconds, results, None), use_bin_type=True)
    block = RowBlock.of([row for r in results.values() for row in r[2]])
    counts = {pid: (r[0], r[1], len(r[2]), *r[3:]) for pid, r in results.items()}
    return msgpack.packb((seconds, counts, block.packed()), use_bin_type=True)


def unpack_results(data: bytes) -> tuple[dict[int, float], Results]:
    """A host's results as the driver routes them: messages stay the plain tuples they were packed as
    (the frontier reads their fields by position; their receiver rebuilds them), not rebuilt into
    :class:`Message` and :class:`Status` only to be packed again (~290 a round on bench_ray's
    128-cluster grid). Rows shipped as columns come back as views of the one block, by partition."""
    seconds, raw, packed = msgpack.unpackb(data, use_list=False, strict_map_key=False)
    if packed is None:
        return seconds, {pid: Result(*result) for pid, result in raw.items()}
    block, start, results = RowBlock.unpacked(packed), 0, {}
    for pid, (out, t, count, *rest) in raw.items():
        results[pid] = Result(out, t, block.cut(start, start + count), *rest)
        start += count
    return seconds, results


def as_message(fields: tuple) -> Message:
    """A message as its receiver reads it (a :class:`Message`, a status as a :class:`Status`), from the
    plain tuple it travelled as."""
    time, src, seq, dst, kind, payload = fields
    if kind == STATUS:
        payload = Status(*payload)
    return Message(time, src, seq, dst, kind, payload)
