"""Sweeps: parsing --vary, the cross product, confidence intervals, and a whole sweep with a failing point."""

from __future__ import annotations

import math
import tempfile

import pyarrow as pa
import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.core.config import ScenarioError
from emulator.engine.sweep import Point, mean_ci, parse_vary, points


def test_vary_lists_ranges_and_toml_values():
    assert parse_vary(["meta.policy=least-load,random", "seed=1..3", "workload.mean_interarrival=2.5,5"]) == [
        ("meta.policy", ["least-load", "random"]),
        ("seed", [1, 2, 3]),
        ("workload.mean_interarrival", [2.5, 5]),
    ]


@pytest.mark.parametrize("bad", ["seed", "seed=", "seed=a..b", "seed=3..1"])
def test_bad_vary_is_an_error(bad):
    with pytest.raises(ScenarioError, match="--vary"):
        parse_vary([bad])


def test_points_are_the_cross_product_in_order():
    todo = points([("a", [1, 2]), ("seed", [7, 8])], ["workload.jobs=5"])
    assert [p.values for p in todo] == [
        {"a": 1, "seed": 7},
        {"a": 1, "seed": 8},
        {"a": 2, "seed": 7},
        {"a": 2, "seed": 8},
    ]
    assert todo[1].overrides() == (8, ["workload.jobs=5", "a=1"])
    assert Point(0, {"meta.policy": "random"}).overrides() == (None, ['meta.policy="random"'])


def test_mean_and_95_percent_interval():
    # values 1, 2, 3: mean 2, sample sd 1, t(2) = 4.303: half-width 4.303 / sqrt(3)
    mean, half = mean_ci([1.0, 2.0, 3.0])
    assert mean == 2.0 and math.isclose(half, 4.303 / math.sqrt(3))
    assert mean_ci([5.0]) == (5.0, 0.0) and mean_ci([]) is None


def sweep_argv(out, *more: str) -> list[str]:
    fixed = ["--workers", "2", "--set", "workload.jobs=60"]
    return ["sweep", "quickstart", "--quiet", "--out", str(out), *fixed, *more]


VARY = ["--vary", "meta.policy=least-load,random", "--vary", "seed=1..2"]


def test_every_point_is_checked_before_any_runs(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(sweep_argv(out, "--vary", "meta.policy=least-load,nope", "--vary", "seed=1..2")) == 2
    assert "sweep point point-002 {'meta.policy': 'nope', 'seed': 1}" in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())  # nothing ran


def test_a_sweep_writes_every_point_and_a_failing_point_leaves_the_others(tmp_path, capsys, monkeypatch):
    from emulator.engine import sweep

    real = sweep.run_point

    def flaky(scenario, point, scratch):  # runs in the point's own process
        if point.index == 2:
            raise SystemExit(3)  # the process dies without an answer
        return real(scenario, point, scratch)

    monkeypatch.setattr("emulator.engine.sweep_pool.run_point", flaky)
    out = tmp_path / "sweep"
    code = main(sweep_argv(out, *VARY))
    assert code == 1
    captured = capsys.readouterr()
    assert "3 of 4 runs done" in captured.out and "died (exit code 3)" in captured.err
    rows = pa.ipc.open_file(str(out / "sweep.arrow")).read_all().to_pylist()
    assert [(r["point"], r["meta.policy"], r["seed"], r["status"]) for r in rows] == [
        (0, "least-load", 1, "ok"),
        (1, "least-load", 2, "ok"),
        (2, "random", 1, "failed"),
        (3, "random", 2, "ok"),
    ]
    assert sorted(p.name for p in out.iterdir()) == [
        "point-000",
        "point-001",
        "point-003",
        "sweep.arrow",
        "sweep.csv",
        "sweep.json",  # the sweep's definition: --resume needs no repeat of it
    ]
    # a point's run is the run of its scenario: byte for byte
    direct = run(load_scenario("quickstart", ["workload.jobs=60"], seed=2), tmp_path / "direct")
    assert (out / "point-001" / "events.arrow").read_bytes() == (direct.out_dir / "events.arrow").read_bytes()
    assert rows[1]["jobs_finished"] == 60 and rows[2]["error"].startswith("WorkerDied")
    # --resume runs only what did not finish
    monkeypatch.setattr("emulator.engine.sweep_pool.run_point", real)
    assert (
        main([*sweep_argv(out, "--vary", "meta.policy=least-load,random", "--vary", "seed=1..2"), "--resume"])
        == 0
    )
    assert "4 of 4 runs done" in capsys.readouterr().out
    assert (out / "point-002" / "summary.json").is_file()


def test_a_point_over_its_timeout_is_stopped_and_marked(tmp_path, capsys, monkeypatch):
    import time as clock

    def slow(scenario, point, scratch):
        clock.sleep(60)

    monkeypatch.setattr("emulator.engine.sweep_pool.run_point", slow)
    monkeypatch.setattr("emulator.engine.sweep_pool.POLL_SECONDS", 0.05)
    out = tmp_path / "sweep"
    assert main(sweep_argv(out, "--vary", "seed=1..2", "--point-timeout", "0.3")) == 1
    rows = pa.ipc.open_file(str(out / "sweep.arrow")).read_all().to_pylist()
    assert [r["status"] for r in rows] == ["timeout", "timeout"]
    assert "still running after --point-timeout 0.3 s" in rows[0]["error"]


def test_points_killed_mid_run_leave_no_scratch_folder(tmp_path, monkeypatch):
    # Killed at their timeout mid-run (20,000 jobs take ~15 s), their run directories (scenario.toml,
    # a lock, the trace so far) were left in the temporary folder.
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setattr("emulator.engine.sweep_pool.POLL_SECONDS", 0.05)
    out = tmp_path / "sweep"
    long = ["--set", "workload.jobs=20000"]
    assert main(sweep_argv(out, "--vary", "seed=1..3", "--point-timeout", "1.5", *long)) == 1
    rows = pa.ipc.open_file(str(out / "sweep.arrow")).read_all().to_pylist()
    assert [r["status"] for r in rows] == ["timeout"] * 3
    assert list(scratch.iterdir()) == []
