"""jobs.arrow's ``machines``/``pes`` columns: each job's lists gathered in place from the start rows'
parts, exactly as joining the parts and taking each job's row would give them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator.data import trace
from emulator.sync.rows import Ragged

from .test_properties import SETTINGS

lists = st.lists(st.lists(st.integers(0, 2**31 - 1), max_size=6).map(tuple), max_size=8)


@SETTINGS
@given(parts=st.lists(lists, min_size=1, max_size=5), data=st.data(), chunk=st.sampled_from([1, 3, 1 << 16]))
def test_gathered_lists_are_those_of_each_jobs_row(parts, data, chunk):
    flat = [row for part in parts for row in part]
    rows = np.array(
        data.draw(st.lists(st.integers(0, len(flat) - 1), max_size=12)) if flat else [], dtype=np.int64
    )
    raggeds = [Ragged.of(part) for part in parts]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trace, "GATHER_JOBS", chunk)
        column = trace._gather(raggeds, rows)
    assert column.equals(pa.array([list(flat[row]) for row in rows], pa.list_(pa.int32())))
    assert raggeds == []  # every part let go


def test_a_restarted_job_keeps_the_lists_of_its_last_start():
    placements = trace.Placements(3)
    first = Ragged.of([(0, 0), (1,)])
    placements.take(np.array([2, 0]), first, Ragged.of([(4, 5), (6,)]))
    placements.take(np.array([2]), Ragged.of([(7,)]), Ragged.of([(3,)]))
    machines, pes = placements.columns()
    assert machines.to_pylist() == [[1], [], [7]]
    assert pes.to_pylist() == [[6], [], [3]]
