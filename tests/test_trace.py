"""Trace files: sorted events, complete job rows, and no corrupt file under a final name after a crash."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator import load_scenario, run
from emulator.core.model import Job
from emulator.data import trace
from emulator.data.trace import EVENT_SCHEMA
from emulator.policies.easy import Easy

from .test_properties import SETTINGS


def read(path):
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def test_events_are_sorted_and_jobs_complete(tmp_path):
    result = run(load_scenario("quickstart", ["workload.jobs=300"]), tmp_path / "run")
    events = read(tmp_path / "run" / "events.arrow")
    assert events.schema == EVENT_SCHEMA
    time, part = events.column("time").to_numpy(), events.column("partition").to_numpy()
    order = np.lexsort((part, time))
    assert np.array_equal(order, np.arange(len(order)))
    jobs = result.jobs
    assert jobs.num_rows == 300 and set(jobs.column("status").to_pylist()) == {"finished"}
    wait = np.array(jobs.column("wait").to_pylist())
    assert np.allclose(
        wait, np.array(jobs.column("start").to_pylist()) - np.array(jobs.column("submit").to_pylist())
    )


def test_batches_flush_during_the_run(tmp_path, monkeypatch):
    monkeypatch.setattr("emulator.data.trace.TraceWriter.__init__.__defaults__", (None, 100))
    run(load_scenario("quickstart", ["workload.jobs=300"]), tmp_path / "run")
    with pa.memory_map(str(tmp_path / "run" / "events.arrow")) as source:
        reader = pa.ipc.open_file(source)
        assert reader.num_record_batches > 10
        assert reader.read_all().num_rows == 1500


def test_a_crash_leaves_readable_part_files_and_nothing_under_final_names(tmp_path, monkeypatch):
    calls = {"n": 0}
    original = Easy.schedule

    def failing(self, view):
        calls["n"] += 1
        if calls["n"] == 60:
            raise RuntimeError("policy bug")
        return original(self, view)

    monkeypatch.setattr(Easy, "schedule", failing)
    monkeypatch.setattr("emulator.data.trace.TraceWriter.__init__.__defaults__", (None, 100))
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match="policy bug"):
        run(load_scenario("quickstart", ["workload.jobs=300"]), out)
    assert sorted(p.name for p in out.iterdir()) == [".running", "events.arrow.part", "scenario.toml"]
    partial = read(out / "events.arrow.part")
    assert 0 < partial.num_rows < 1500


def test_partitions_survive_pickling_mid_run():
    """Ray checkpoints pickle partitions: the copy, fed the same inboxes, must return the same results."""

    from emulator.engine.runner import build_partitions
    from emulator.sync import coordinator
    from emulator.sync.horizons import Links

    class Twin(coordinator.InProcess):
        copy: coordinator.InProcess | None = None
        checked = 0

        def advance(self, calls, budget):
            results = super().advance(calls, budget)
            self.rounds = getattr(self, "rounds", 0) + 1
            if self.copy is None and self.rounds == 20:
                self.copy = coordinator.InProcess(pickle.loads(pickle.dumps(list(self.partitions.values()))))
            elif self.copy is not None:
                assert self.copy.advance(calls, budget) == results
                self.checked += 1
            return results

    scenario = load_scenario("quickstart", ["workload.jobs=200"])
    twin = Twin(build_partitions(scenario))
    coordinator.run(twin, Links.of_platform(scenario.platform), lambda w, r: 0)
    assert twin.checked > 50


@SETTINGS
@given(
    st.integers(0, 1 << 40),
    st.floats(0, 1e12),
    st.integers(1, 4096),
    st.floats(1, 1e7),
    st.one_of(st.none(), st.floats(0, 1e7)),
    st.lists(st.sampled_from(["matlab", "ansys"]), max_size=2),
    st.sampled_from([math.inf, 5e5]),
    st.sampled_from(["", "kth"]),
)
def test_a_job_pickles_to_itself(id_, submit, cpus, estimate, runtime, licenses, deadline, site):
    job = Job(id_, submit, cpus, estimate, runtime, licenses=licenses, deadline=deadline, site=site, user=3)
    again = pickle.loads(pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL))
    assert type(again) is Job and again.to_tuple() == job.to_tuple()
    assert [type(v) for v in again.to_tuple()] == [type(v) for v in job.to_tuple()]


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


@SETTINGS
@given(
    st.lists(
        st.tuples(
            st.floats(0, 1e9),
            st.one_of(st.none(), st.floats(0, 1e7)),
            st.one_of(st.none(), st.sampled_from([math.inf, 0.0, 5e5])),
            st.lists(st.sampled_from(["matlab", "ansys"]), max_size=2),
            st.sampled_from(["", "kth"]),
        ),
        min_size=1,
        max_size=40,
    ),
    st.integers(0, 40),
)
def test_a_tables_model_columns_are_written_as_its_jobs_would_be(rows, split):
    """jobs.arrow's inputs come from the scenario's table (model_columns) instead of its Job objects:
    the bytes must be those the objects gave, whatever nulls, infinite deadlines and chunks it has."""
    from workloads.table import from_jobs, job_table, model_columns, to_jobs

    n = len(rows)
    submit, runtime, deadline, licenses, site = zip(*rows, strict=True)
    runtime_column = pa.array(
        np.array([7.0 if r is None else r for r in runtime]), mask=np.array([r is None for r in runtime])
    )  # (7.0 under each null: what is stored there must not matter)
    table = job_table(
        np.arange(n),
        np.array(submit),
        np.ones(n, dtype=np.int32),
        np.full(n, 10.0),
        licenses=pa.array(list(licenses), pa.list_(pa.string())),
        site=pa.array(list(site)),
    )
    table = table.set_column(4, "runtime", runtime_column)
    deadlines = pa.array(list(deadline), pa.float64())
    table = table.set_column(7, "deadline", deadlines)
    table = pa.concat_tables([table.slice(0, min(split, n)), table.slice(min(split, n))])  # two chunks
    assert _ipc_bytes(model_columns(table)) == _ipc_bytes(from_jobs(to_jobs(table)))


@pytest.mark.parametrize(
    ("columns_at", "batch_width"),
    [(1, trace.BATCH_WIDTH), (7, trace.BATCH_WIDTH), (300, trace.BATCH_WIDTH), (1, 40)],
)
def test_the_files_bytes_do_not_depend_on_when_released_rows_become_columns(
    tmp_path, monkeypatch, columns_at, batch_width
):
    # Rounds of a few rows each, PEs listed; batches of 1,000 rows. By default no run of releases
    # becomes columns before its batch is written (COLUMNS_AT is above 1,000); here they do early,
    # unless they list more machines and PEs than a batch may (40: most runs of releases do).
    scenario = load_scenario("stress", ["workload.jobs=300"])
    monkeypatch.setattr(trace.TraceWriter.__init__, "__defaults__", (None, 1000))
    monkeypatch.setattr(trace, "BATCH_WIDTH", batch_width)
    run(scenario, tmp_path / "late")
    monkeypatch.setattr(trace, "COLUMNS_AT", columns_at)
    run(scenario, tmp_path / "early")
    for file in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "early" / file).read_bytes() == (tmp_path / "late" / file).read_bytes()
