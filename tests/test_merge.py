"""The row merger with Ray replies' rows: one block per reply in the trace's order, each partition's
result a share of it, merged with tuples and single partitions' blocks."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from actors import packing
from emulator.sync.coordinator import Result
from emulator.sync.merge import RowMerger, Share, Sorted
from emulator.sync.rows import RowBlock

from .test_horizons import row, rows_by_partition, tuples
from .test_properties import SETTINGS


def reply(rows_by_pid: dict[int, list[tuple]]) -> dict[int, Result]:
    """A host's results with these rows, through an actor's packing (rows as one sorted block)."""
    results = {pid: Result([], math.inf, rows, True, math.inf, False) for pid, rows in rows_by_pid.items()}
    packing.COLUMNS_FROM, was = 1, packing.COLUMNS_FROM
    try:
        return packing.unpack_results(packing.pack_results(results, {pid: 0.0 for pid in results})).results
    finally:
        packing.COLUMNS_FROM = was


def test_a_reply_ships_its_rows_as_one_block_in_trace_order():
    results = reply({3: [row(2.0, 3, 0), row(5.0, 3, 1)], 1: [row(2.0, 1, 0), row(9.0, 1, 1)], 4: []})
    assert [len(r.rows) for r in results.values()] == [2, 2, 0]
    assert all(isinstance(results[pid].rows, Share) for pid in (1, 3)) and results[4].rows == []
    merger = RowMerger()
    for pid, result in results.items():
        merger.add(pid, result.rows)
    assert merger.held == 4  # the block once, however many shares
    released, pids = merger.release(6.0)
    assert isinstance(released, RowBlock) and pids.tolist() == [1, 3, 3]
    assert released.tuples() == [row(2.0, 1, 0), row(2.0, 3, 0), row(5.0, 3, 1)]
    assert merger.held == 1 and merger.release(6.0) == ([], [])
    released, pids = merger.release(math.inf)
    assert released.tuples() == [row(9.0, 1, 1)] and pids.tolist() == [1]


@SETTINGS
@given(rows_by_partition, st.lists(st.integers(0, 25), max_size=6).map(sorted), st.integers(1, 4), st.data())
def test_replies_tuples_and_blocks_merge_in_time_partition_sequence_order(by_pid, marks, chunks, data):
    # Each partition's rows arrive in ``chunks`` calls (a call's last time may be the next one's
    # first), releases in between. In each, the partitions are drawn into hosts: a host with one
    # partition hands tuples or a block, one with several a reply (a block shared by them).
    merger, out = RowMerger(), []
    for k in range(chunks):
        calls = {}
        for pid, times in by_pid.items():
            piece = times[k * len(times) // chunks : (k + 1) * len(times) // chunks]
            calls[pid] = [row(float(t), pid, i) for i, t in enumerate(piece, k * len(times) // chunks)]
        hosts = data.draw(st.lists(st.integers(0, 2), min_size=len(calls), max_size=len(calls)))
        for h in sorted(set(hosts)):
            mine = {pid: rows for (pid, rows), host in zip(calls.items(), hosts, strict=True) if host == h}
            if len(mine) > 1:
                for pid, result in reply(mine).items():
                    merger.add(pid, result.rows)
            else:
                ((pid, rows),) = mine.items()
                merger.add(pid, RowBlock.of(rows) if data.draw(st.booleans()) else rows)
        if k < len(marks):
            later = [t for ts in by_pid.values() for t in ts[(k + 1) * len(ts) // chunks :][:1]]
            floor = float(min([marks[k], *later]))
            released, pids = merger.release(floor)
            rows = tuples(released)
            assert all(r[0] < floor for r in rows) and list(pids) == [r[3] for r in rows]
            out += rows
    out += tuples(merger.release(math.inf)[0])
    keys = sorted((float(t), pid, i) for pid, ts in by_pid.items() for i, t in enumerate(ts))
    assert out == [row(*key) for key in keys] and merger.held == 0


def test_a_share_brings_its_block_once():
    rows = Sorted(RowBlock.of([row(1.0, 2, 0), row(1.0, 5, 0)]), np.array([2, 5], dtype=np.int32))
    shares = Share.of(rows, {2: 1, 5: 1})
    assert shares[5].claim() is rows and shares[2].claim() is None and len(shares[2]) == 1
