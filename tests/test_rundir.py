"""Run directories: one run each, replaced only when asked, a stranded one explained and salvaged."""

from __future__ import annotations

import shutil
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.data import rundir, trace
from emulator.engine import runner
from emulator.sync import sequential

SMALL = ["workload.jobs=120"]


def test_a_second_run_into_a_finished_run_is_refused_and_overwrite_replaces_it(tmp_path, capsys):
    out = tmp_path / "run"
    run(load_scenario("quickstart", SMALL), out)
    with pytest.raises(rundir.RunDirError, match="holds a finished run; pick another --out, or pass"):
        run(load_scenario("quickstart", ["workload.jobs=60"]), out)
    assert (
        main(["run", "quickstart", "--set", "workload.jobs=60", "--out", str(out), "--quiet", "--overwrite"])
        == 0
    )
    assert pa.ipc.open_file(str(out / "jobs.arrow")).read_all().num_rows == 60
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]


def test_overwrite_never_deletes_files_that_are_not_a_runs(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(rundir.RunDirError, match=r"replaces only a run.s files.*notes\.txt"):
        run(load_scenario("quickstart", SMALL), out, overwrite=True)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


def test_of_two_runs_claiming_one_empty_directory_exactly_one_gets_it(tmp_path, monkeypatch):
    out = tmp_path / "run"
    out.mkdir()
    rundir.claim(out)  # the first run's marker, created between the other's emptiness check and its own
    monkeypatch.setattr(Path, "iterdir", lambda self: iter(()))  # the other saw the directory empty
    with pytest.raises(rundir.RunDirError, match="another run is writing into it"):
        rundir.claim(out)


def test_default_directories_are_claimed_by_mkdir(tmp_path):
    first = rundir.default_dir("q", 1, tmp_path)
    second = rundir.default_dir("q", 1, tmp_path)
    assert (first.name, second.name) == ("q-seed1-001", "q-seed1-002")


def killed_copy(tmp_path, rounds_before: int = 40) -> Path:
    """A run stopped mid-way the way ``kill -9`` stops it: its directory copied as it was on disk."""
    copy = tmp_path / "killed"

    @contextmanager
    def backend(scenario):
        transport = sequential.InRounds(runner.build_partitions(scenario))
        advance, calls = transport.advance, [0]

        def copying(*args):
            calls[0] += 1
            if calls[0] == rounds_before:
                shutil.copytree(tmp_path / "run", copy)
            return advance(*args)

        transport.advance = copying
        yield transport

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trace, "FLUSH_SECONDS", 0.0)  # every round's rows are flushed and synced at once
        run(load_scenario("quickstart", ["workload.jobs=300"]), tmp_path / "run", backend=backend)
    return copy


def test_a_killed_runs_rows_are_recovered_and_its_directory_explained(tmp_path, capsys):
    copy = killed_copy(tmp_path)
    assert main(["inspect", str(copy)]) == 2
    assert "has not finished" in capsys.readouterr().err
    assert main(["inspect", "--recover", str(copy)]) == 0
    recovered = pa.ipc.open_file(str(copy / "events.recovered.arrow")).read_all()
    whole = pa.ipc.open_file(str(tmp_path / "run" / "events.arrow")).read_all()
    assert 0 < recovered.num_rows < whole.num_rows
    assert recovered.equals(whole.slice(0, recovered.num_rows))  # the same rows, the first ones
    assert f"{recovered.num_rows:,} rows recovered" in capsys.readouterr().out


def test_a_run_killed_before_its_first_flush_is_explained_not_recovered(tmp_path, capsys):
    stopped = tmp_path / "run"
    stopped.mkdir()
    (stopped / ".running").touch()
    (stopped / "events.arrow.part").touch()  # what a kill -9 in a run's first seconds leaves
    assert main(["inspect", "--recover", str(stopped)]) == 2
    err = capsys.readouterr().err
    assert "events.arrow.part holds no rows: the run was stopped before its first flush" in err
    assert "every 2 s of wall time" in err and err.count("\n") == 1


def test_flushes_by_the_clock_leave_the_final_file_byte_identical(tmp_path, monkeypatch):
    scenario = load_scenario("quickstart", SMALL)
    run(scenario, tmp_path / "even")
    monkeypatch.setattr(trace, "FLUSH_SECONDS", 0.0)
    run(scenario, tmp_path / "flushed")
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "even" / name).read_bytes() == (tmp_path / "flushed" / name).read_bytes()


def test_batches_are_cut_by_rows_or_by_the_machines_and_pes_they_list():
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(trace, "BATCH_WIDTH", 10)
        assert trace.batch_cut(np.array([3, 3, 3, 3, 3]), 4) == 4  # 12 >= 10 at the fourth row
        assert trace.batch_cut(np.array([1, 1, 1, 1, 1]), 4) == 4  # 4 rows first
        assert trace.batch_cut(np.array([1, 1]), 4) is None  # neither yet: wait for more rows
        assert trace.batch_cut(np.array([25, 1]), 4) == 1  # one wide row is a batch of its own


def test_wide_rows_make_smaller_batches_and_clock_flushes_keep_the_bytes(tmp_path, monkeypatch):
    scenario = load_scenario("quickstart", SMALL)
    monkeypatch.setattr(trace, "BATCH_WIDTH", 50)
    run(scenario, tmp_path / "even")
    reader = pa.ipc.open_file(str(tmp_path / "even" / "events.arrow"))
    assert reader.num_record_batches > 3  # cut by the machines and PEs listed, not by 65,536 rows
    monkeypatch.setattr(trace, "FLUSH_SECONDS", 0.0)
    run(scenario, tmp_path / "flushed")
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "even" / name).read_bytes() == (tmp_path / "flushed" / name).read_bytes()


@pytest.mark.parametrize(
    ("name", "made"), [("/tmp/x", "_tmp_x"), ("../x", "_._x"), ("..", "_."), ("a b", "a_b")]
)
def test_a_scenario_name_never_places_output_outside_runs(tmp_path, monkeypatch, name, made):
    monkeypatch.chdir(tmp_path)
    scenario = load_scenario("quickstart", [*SMALL, f"name={name}"])
    out = run(scenario).out_dir
    assert out.resolve().parent == (tmp_path / "runs").resolve() and out.name == f"{made}-seed1-001"
