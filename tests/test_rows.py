"""Trace rows as columns: every operation gives what the same operation on row tuples gives.

``RowBlock`` replaces per-row Python work in the writer and on the way from
Ray actors to it; ``Outcomes.record`` takes whole batches at once when no row
depends on the one before. Each is checked here against the plain version on
random rows: lists of tuples, and ``Outcomes._record_rows`` row by row.
"""

from __future__ import annotations

from contextlib import contextmanager
from unittest.mock import patch

import msgpack
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors import packing
from emulator import load_scenario, run
from emulator.core.messages import ARRIVE, DISPATCHED, FINISH, REJECT, START, SUBMIT
from emulator.core.model import Job
from emulator.data.trace import Outcomes
from emulator.engine.runner import build_partitions
from emulator.sync import coordinator
from emulator.sync.rows import RowBlock

from .test_properties import SETTINGS

lists = st.lists(st.integers(0, 1 << 20), max_size=4).map(tuple)
rows_strategy = st.lists(
    st.tuples(
        st.floats(0, 1e9, allow_nan=False),
        st.integers(0, 14),
        st.integers(-1, 1 << 40),
        st.integers(-1, 300),
        st.integers(0, 4096),
        lists,
        lists,
        st.one_of(st.none(), st.text(max_size=5)),
    ),
    max_size=40,
)


@SETTINGS
@given(rows_strategy, st.data())
def test_a_block_keeps_its_rows_through_cuts_takes_joins_and_packing(rows, data):
    block = RowBlock.of(rows)
    assert len(block) == len(rows) and block.tuples() == rows
    assert block.widths().tolist() == [len(r[5]) + len(r[6]) for r in rows]
    start = data.draw(st.integers(0, len(rows)))
    stop = data.draw(st.integers(start, len(rows)))
    assert block.cut(start, stop).tuples() == rows[start:stop]
    index = data.draw(st.lists(st.integers(0, max(len(rows) - 1, 0)), max_size=20 if rows else 0))
    assert block.take(np.array(index, dtype=np.int64)).tuples() == [rows[i] for i in index]
    joined = RowBlock.concat([block.cut(0, start), block.cut(start, stop), block.cut(stop, len(rows))])
    assert joined.tuples() == rows
    shipped = msgpack.unpackb(msgpack.packb(block.packed(), use_bin_type=True), use_list=False)
    assert RowBlock.unpacked(shipped).tuples() == rows


@SETTINGS
@given(st.lists(lists, max_size=30), st.integers(0, 30))
def test_a_ragged_column_makes_the_arrow_lists_the_tuples_make(listed, start):
    column = RowBlock.of([(0.0, 0, 0, 0, 0, m, (), None) for m in listed]).machines.cut(
        min(start, len(listed)), len(listed)
    )
    expected = pa.array(listed[min(start, len(listed)) :], pa.list_(pa.int32()))
    assert column.arrow().equals(expected)


MOVES = [SUBMIT, DISPATCHED, ARRIVE, START, FINISH, REJECT]
EVENTS = st.lists(st.tuples(st.integers(0, 5), st.sampled_from(MOVES), st.integers(0, 3)), max_size=40)


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 5), st.sampled_from(MOVES), st.integers(0, 3)), max_size=40), st.data()
)
def test_outcomes_by_column_are_the_outcomes_row_by_row(events, data):
    jobs = [Job(100 - i, float(i), 1, 10.0) for i in range(6)]  # ids not in position order
    rows = [
        (float(t), kind, jobs[j].id, cluster, 2, (cluster, 9), (0, 1), "no room" if kind == REJECT else None)
        for t, (j, kind, cluster) in enumerate(events)
    ]
    batches = sorted(data.draw(st.lists(st.integers(0, len(rows)), max_size=4)))
    by_column, by_row = Outcomes(jobs, PLATFORM), Outcomes(jobs, PLATFORM)
    for start, stop in zip([0, *batches], [*batches, len(rows)], strict=True):
        by_column.record(RowBlock.of(rows[start:stop]))
        by_row._record_rows(rows[start:stop])
    for name in ("cluster", "arrive", "start", "finish", "wasted"):
        np.testing.assert_array_equal(getattr(by_column, name), getattr(by_row, name))
    assert by_column.reason == by_row.reason
    for mine, theirs in zip(by_column.placed.columns(), by_row.placed.columns(), strict=True):
        assert mine.to_pylist() == theirs.to_pylist()


class _Platform:
    clusters = ()


PLATFORM = _Platform()


class Shipped(coordinator.InProcess):
    """The in-process transport whose calls and results go through a Ray actor's packing and back,
    rows as columns whenever a call has any (an actor ships them so from ``COLUMNS_FROM`` rows on)."""

    def advance(self, calls, budget=coordinator.EVENT_BUDGET):
        results = super().advance(*packing.unpack_calls(packing.pack_calls(calls, budget)))
        with patch.object(packing, "COLUMNS_FROM", 1):
            return packing.unpack_results(packing.pack_results(results, self.partition_seconds))[1]


@pytest.mark.parametrize(
    "name, overrides",
    [
        ("quickstart", ["workload.jobs=300"]),
        ("stress", ["workload.jobs=300"]),  # failures, outages, kills: outcomes row by row
        ("cs2", ["workload.jobs=200"]),  # preemptions and resumptions
    ],
)
def test_rows_shipped_as_columns_give_the_same_files(name, overrides, tmp_path):
    scenario = load_scenario(name, overrides)

    @contextmanager
    def shipped(scenario):
        yield Shipped(build_partitions(scenario))

    run(scenario, tmp_path / "shipped", backend=shipped)
    run(scenario, tmp_path / "plain")
    for file in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "shipped" / file).read_bytes() == (tmp_path / "plain" / file).read_bytes()
