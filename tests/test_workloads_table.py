"""workloads.table: jobs tables made into Job objects, and strings built from codes."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from workloads import table
from workloads.table import job_table, labels, to_jobs


def _table(n: int, in_bytes: list[float] | None = None) -> pa.Table:
    ids = np.arange(1, n + 1)
    return job_table(ids, ids * 10.0, np.ones(n, int), ids * 100.0, ids * 50.0, in_bytes=in_bytes or 0.0)


def test_jobs_are_made_a_block_of_rows_at_a_time_as_in_one_pass(monkeypatch):
    whole = [job.to_tuple() for job in to_jobs(_table(10))]
    monkeypatch.setattr(table, "JOBS_AT_ONCE", 3)
    blocks = to_jobs(_table(10))
    assert [job.to_tuple() for job in blocks] == whole
    assert [job.id for job in blocks] == list(range(1, 11))
    assert blocks[9].submit == 100.0 and blocks[9].runtime == 500.0


def test_a_column_of_one_value_holds_one_object_for_all_its_jobs():
    jobs = to_jobs(_table(4))
    assert all(job.deadline == math.inf and job.in_bytes == 0.0 for job in jobs)
    assert jobs[0].deadline is jobs[3].deadline
    assert jobs[0].in_bytes is jobs[3].in_bytes
    assert jobs[0].submit is not jobs[3].submit  # (values that differ stay each their own)


def test_zero_and_negative_zero_are_not_one_value():
    jobs = to_jobs(_table(2, in_bytes=[0.0, -0.0]))
    assert [math.copysign(1.0, job.in_bytes) for job in jobs] == [1.0, -1.0]


def test_labels_are_strings_by_code_and_null_below_zero():
    column = labels(np.array([1, -1, 0, 1]), ["a", "b"])
    assert column.type == pa.string()
    assert column.to_pylist() == ["b", None, "a", "b"]
    assert labels(np.array([0, 0]), ("x",)).null_count == 0
