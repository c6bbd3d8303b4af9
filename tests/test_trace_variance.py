"""Variance on a trace: seeds as replicates (``[workload] resample``, ``estimate_noise``), the
``[metrics]`` options (bounded-slowdown threshold, warm-up and cool-down), and the sweep's warning
when a varied key changes nothing."""

from __future__ import annotations

import pyarrow as pa
import pytest

from emulator import run
from emulator.core.config import ScenarioError
from emulator.data.scenario import parse
from emulator.engine.sweep import inert_keys, mean_ci

from .conftest import job, machine, one_cluster

# Six jobs, one every 10 s from 0 to 50: (id, submit, run time, CPUs, requested time, user).
JOBS = [(1, 0, 5, 1, 20, 1), (2, 10, 6, 2, 20, 2), (3, 20, 7, 1, 20, 3)]
JOBS += [(4, 30, 8, 2, 20, 4), (5, 40, 9, 1, 20, 5), (6, 50, 10, 2, 20, 6)]


def write_swf(path):
    lines = ["; MaxProcs: 4"]
    for i, submit, runtime, cpus, requested, user in JOBS:
        fields = [i, submit, 0, runtime, cpus, -1, -1, cpus, requested, -1, 1, user, -1, -1, -1, -1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")
    return path


def trace_run(tmp_path, seed=1, **workload) -> dict[int, dict]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    raw = {
        "name": "t",
        "seed": seed,
        "clusters": one_cluster("easy", [machine(4)]),
        "workload": {"source": "swf", "path": str(write_swf(tmp_path / "t.swf")), "site": "c", **workload},
    }
    result = run(parse(raw, "test scenario"), tmp_path / f"run-{seed}")
    return {row["id"]: row for row in result.jobs.to_pylist()}


@pytest.mark.parametrize(("seed", "ids"), [(1, [3, 4]), (2, [5, 6]), (3, [1, 2]), (4, [3, 4])])
def test_each_seed_runs_its_window_of_the_trace(tmp_path, seed, ids):
    # Submit span 0..50 in three spans of 16.7 s: [0, 16.7) holds jobs 1, 2; [16.7, 33.3) jobs 3,
    # 4; [33.3, 50] jobs 5, 6 (the last job in the last span). Seed s runs span s mod 3.
    rows = trace_run(tmp_path, seed, resample="window", windows=3)
    assert sorted(rows) == ids
    assert all(rows[i]["submit"] == JOBS[i - 1][1] for i in ids)


def test_bootstrap_keeps_the_arrivals_and_redraws_the_jobs(tmp_path):
    first, again, other = (
        trace_run(tmp_path / str(k), seed, resample="bootstrap") for k, seed in enumerate((1, 1, 2))
    )
    assert first == again  # a seed is one replicate
    assert first != other
    pairs = {(runtime, cpus) for _, _, runtime, cpus, _, _ in JOBS}
    for rows in (first, other):
        assert [(i, r["submit"]) for i, r in sorted(rows.items())] == [(j[0], j[1]) for j in JOBS]
        assert {(r["runtime"], r["cpus"]) for r in rows.values()} <= pairs
        assert all(r["status"] == "finished" for r in rows.values())


def test_estimate_noise_moves_estimates_and_nothing_else(tmp_path):
    plain = trace_run(tmp_path / "a")
    noisy = trace_run(tmp_path / "b", estimate_noise=0.5)
    assert [r["runtime"] for r in plain.values()] == [r["runtime"] for r in noisy.values()]
    estimates = [r["estimate"] for r in noisy.values()]
    assert all(e >= 1.0 for e in estimates) and estimates != [20.0] * 6
    assert noisy == trace_run(tmp_path / "c", estimate_noise=0.5)


def test_windows_without_window_resampling_is_an_unknown_key(tmp_path):
    with pytest.raises(ScenarioError, match=r"unknown key 'workload\.windows'"):
        trace_run(tmp_path, windows=3)
    with pytest.raises(ScenarioError, match=r"'workload\.resample' = 'months'"):
        trace_run(tmp_path, resample="months")


# One CPU. J1 runs 0..5; J2 (5 s) arrives at 0 and waits 5 s: (5 + 5) / max(5, bound).
def test_bounded_slowdown_threshold_and_warmup_are_scenario_keys(tmp_path):
    jobs = [job(1, 0, 1, 5), job(2, 0, 1, 5), job(3, 100, 1, 20)]

    def grid(**metrics):
        raw = {"name": "t", "clusters": one_cluster("fcfs", [machine(1)]), "metrics": metrics}
        raw["workload"] = {"source": "gridlets", "gridlets": jobs, "site": "c"}
        out = tmp_path / str(len(list(tmp_path.iterdir())))
        return run(parse(raw, "test scenario"), out).summary

    # bsld: J1 1, J2 10/10 = 1, J3 1 (bound 10); bound 2: J2 10/5 = 2, mean (1 + 2 + 1) / 3.
    assert grid()["grid"]["mean_bounded_slowdown"] == 1.0
    assert grid(bsld_threshold=2)["grid"]["mean_bounded_slowdown"] == pytest.approx(4 / 3)
    # A warm-up of 50 s leaves out J1 and J2 (submitted at 0): the metrics are J3's alone.
    summary = grid(warmup=50)
    assert summary["jobs"] == {"total": 3, "finished": 3, "rejected": 0, "measured": 1}
    assert summary["grid"]["mean_wait"] == 0.0 and summary["grid"]["jobs_finished"] == 1
    assert grid(cooldown=50)["grid"]["mean_wait"] == 2.5  # J1 and J2: (0 + 5) / 2
    with pytest.raises(ScenarioError, match=r"'metrics\.bsld_threshold' = 0"):
        grid(bsld_threshold=0)


def test_a_varied_key_that_changes_nothing_is_found():
    rows = pa.table(
        {
            "point": [0, 1, 2, 3],
            "seed": [1, 2, 1, 2],
            "local.policy": ["easy", "easy", "fcfs", "fcfs"],
            "status": ["ok"] * 4,
            "mean_wait": [5.0, 5.0, 9.0, 9.0],
        }
    )
    assert inert_keys(rows, ["seed", "local.policy"]) == ["seed"]
    moved = rows.set_column(4, "mean_wait", pa.array([5.0, 6.0, 9.0, 9.0]))
    assert inert_keys(moved, ["seed", "local.policy"]) == []  # seeds moved one policy's result


def test_identical_runs_have_no_spread():
    assert mean_ci([0.1 + 0.2] * 3) == (0.1 + 0.2, 0.0)
