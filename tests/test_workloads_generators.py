"""The papers' generators match their configured distributions (large samples, fixed seeds); presets run."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest

from emulator.core.model import Cluster, Link, Machine, Platform
from emulator.data.offered_load import offered_load
from emulator.data.scenario import load
from workloads import presets
from workloads.generators import PLATFORMS, WORKLOADS, cs2, licensed_grid, mcrs, muscle, two_level
from workloads.synthetic import columns

N = 200_000
LICENSES = licensed_grid.license_names(20)


def column(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy(zero_copy_only=False)


def close(value: float, expected: float, rel: float = 0.02) -> bool:
    return abs(value - expected) <= rel * abs(expected)


@pytest.fixture(scope="module")
def two_level_jobs() -> pa.Table:
    return columns(replace(two_level.JOBS, jobs=N), np.random.default_rng(7), LICENSES)


def test_two_level_jobs(two_level_jobs):
    t = two_level_jobs
    gaps = np.diff(column(t, "submit"))
    assert close(gaps.mean(), 10.0) and gaps.min() >= 0 and column(t, "submit")[0] == 0
    estimate = column(t, "estimate")
    assert estimate.min() >= 8000 and estimate.max() <= 10000 and close(estimate.mean(), 9000, 0.005)
    assert np.array_equal(column(t, "runtime"), estimate)
    cpus = column(t, "cpus")
    assert (cpus.min(), cpus.max()) == (4, 32) and close(cpus.mean(), 18.0)
    bench = column(t, "bench")
    assert bench.min() >= 100 and bench.max() <= 500 and close(bench.mean(), 300)
    assert set(t.column("placement").unique().to_pylist()) == {"single"}


def test_two_level_deadlines_licenses_and_users(two_level_jobs):
    t = two_level_jobs
    deadline = t.column("deadline")
    assert close(1 - deadline.null_count / N, 0.7)
    has = pa.compute.is_valid(deadline).to_numpy(zero_copy_only=False)
    margin = column(t, "deadline")[has] - column(t, "submit")[has] - column(t, "estimate")[has]
    assert margin.min() >= 1500 - 1e-6 and margin.max() <= 5500 + 1e-6 and close(margin.mean(), 3500)
    lists = t.column("licenses").to_pylist()
    counts = np.array([len(x) for x in lists])
    assert close((counts > 0).mean(), 0.3)
    assert set(counts[counts > 0]) == {1, 2, 3} and close(counts[counts > 0].mean(), 2.0)
    assert all(x == sorted(set(x)) and set(x) <= set(LICENSES) for x in lists[:5000])
    classes = t.column("user_class").value_counts().to_pylist()
    assert all(close(c["counts"] / N, 1 / 3, 0.03) for c in classes) and len(classes) == 3


def test_cs2_jobs():
    t = columns(replace(cs2.JOBS, jobs=N), np.random.default_rng(3), LICENSES)
    assert close(np.diff(column(t, "submit")).mean(), 6.0)
    assert (column(t, "cpus").min(), column(t, "cpus").max()) == (1, 8)
    assert close(column(t, "checkpointable").mean(), 0.02, 0.1)
    assert close(np.mean([len(x) > 0 for x in t.column("licenses").to_pylist()]), 0.2, 0.03)
    has = pa.compute.is_valid(t.column("deadline")).to_numpy(zero_copy_only=False)
    margin = (column(t, "deadline") - column(t, "submit") - column(t, "estimate"))[has]
    assert margin.min() >= 25 - 1e-6 and margin.max() <= 150 + 1e-6


def grid(*clusters: tuple[int, float]) -> Platform:
    return Platform(
        tuple(
            Cluster(f"c{i}", tuple(Machine(1, mips) for _ in range(n)), Link(1.0))
            for i, (n, mips) in enumerate(clusters)
        )
    )


def test_mcrs_jobs():
    t = mcrs.jobs(replace(mcrs.McrsJobs(), jobs=N), np.random.default_rng(5), grid((8, 300.0)))
    length = column(t, "estimate") * column(t, "bench")
    assert length.min() >= 1e6 and length.max() <= 1e7 and close(length.mean(), 5.5e6)
    assert (column(t, "cpus").min(), column(t, "cpus").max()) == (4, 8)
    for name in ("in_bytes", "out_bytes"):
        values = column(t, name)
        assert values.min() >= 5e6 and values.max() <= 7e6 and close(values.mean(), 6e6)
    slack = column(t, "deadline") - column(t, "submit")
    assert slack.min() >= 10 and slack.max() <= 100 and close(slack.mean(), 55)
    assert set(t.column("placement").unique().to_pylist()) == {"spread"}


def test_muscle_jobs_bounded_pareto_and_deadline_ratios():
    platform = PLATFORMS["muscle"].draw(muscle.MuscleGrid(), np.random.default_rng(0))
    view = grid(*((c["machines"][0]["count"], c["machines"][0]["mips"]) for c in platform))
    t = muscle.jobs(replace(muscle.MuscleJobs(), jobs=N), np.random.default_rng(9), view)
    e = column(t, "estimate")
    assert e.min() >= 5 and e.max() <= 100
    assert close(e.mean(), 5 * 100 / 95 * np.log(20), 0.02)  # bounded Pareto, shape 1
    assert close(np.median(e), 2 * 5 * 100 / 105, 0.02)  # its median: 2 L H / (L + H)
    assert (column(t, "cpus").min(), column(t, "cpus").max()) == (1, 10)
    ratio = (column(t, "deadline") - column(t, "submit")) / e - 1  # C1 (rate 1.0) is the slowest
    assert ratio.min() >= -1e-9 and ratio.max() <= 5 + 1e-9 and close(ratio.mean(), 2.5)
    assert close(np.diff(column(t, "submit")).mean(), 1.5)


class FixedDraws:
    """An rng whose ``random(n)`` returns given numbers: sizes computed by hand from them."""

    def __init__(self, draws: list[float]) -> None:
        self.draws = np.array(draws)

    def random(self, n: int) -> np.ndarray:
        return self.draws[:n]


def test_muscle_log_size_law_by_hand():
    # Sizes 1..3: floor(4 ** u). u = 0 -> 1; 0.5 -> 2; 0.79 -> 2.99 -> 2; 0.8 -> 3.03 -> 3; 0.999 -> 3.
    draws = FixedDraws([0.0, 0.5, 0.79, 0.8, 0.999])
    assert muscle.job_sizes(draws, (1, 3), "log", 5).tolist() == [1, 2, 2, 3, 3]
    # Sizes 2..3: floor(2 * 2 ** u). u = 0.5 -> 2.83 -> 2; 0.6 -> 3.03 -> 3.
    assert muscle.job_sizes(FixedDraws([0.5, 0.6]), (2, 3), "log", 2).tolist() == [2, 3]
    # Mean over 1..3: (1 log 2 + 2 log 3/2 + 3 log 4/3) / log 4 = (4 log 4 - log 24) / log 4.
    assert muscle.size_mean((1, 3), "log") == pytest.approx((4 * np.log(4) - np.log(24)) / np.log(4))
    assert muscle.size_mean((1, 10), "uniform") == 5.5
    with pytest.raises(ValueError, match="size_law"):
        muscle.job_sizes(np.random.default_rng(0), (1, 3), "normal", 1)


def test_muscle_log_sizes_favour_small_jobs_and_set_the_offered_load():
    sizes = muscle.job_sizes(np.random.default_rng(3), (1, 10), "log", N)
    share = np.bincount(sizes, minlength=11)[1:] / N
    expected = np.log(np.arange(2, 12) / np.arange(1, 11)) / np.log(11)  # P(size = k)
    assert np.abs(share - expected).max() < 0.005
    scenario = presets.path("muscle")
    ratio = offered_load(scenario, ['workload.size_law="log"']) / offered_load(scenario)
    assert ratio == pytest.approx(muscle.size_mean((1, 10), "log") / 5.5)


def test_licensed_grid_platforms():
    tables = licensed_grid.clusters(two_level.GRID, np.random.default_rng(1))
    assert [len(t["machines"]) for t in tables] == [120, 60, 30, 15]
    cpus = np.array([m["cpus"] for t in tables for m in t["machines"]])
    mips = np.array([m["mips"] for t in tables for m in t["machines"]])
    assert (cpus.min(), cpus.max()) == (4, 32) and mips.min() >= 100 and mips.max() <= 500
    ratios = [copies / len(t["machines"]) for t in tables for copies in t["licenses"].values()]
    assert len(tables[0]["licenses"]) == 20 and all(0.5 - 0.04 <= r <= 0.7 + 0.04 for r in ratios)
    (cluster,) = licensed_grid.clusters(replace(cs2.GRID, clusters=(2000,)), np.random.default_rng(2))
    able = np.mean([len(m["licenses"]) / 20 for m in cluster["machines"]])
    assert close(able, 0.9, 0.01) and cluster["license_per_machine"] is True


def test_mcrs_and_muscle_platforms():
    tables = mcrs.clusters(replace(mcrs.McrsGrid(), clusters=50), np.random.default_rng(4))
    nodes = [t["machines"][0]["count"] for t in tables]
    assert len(tables) == 50 and min(nodes) >= 4 and max(nodes) <= 12
    assert all(1e5 <= t["bandwidth"] <= 1e6 and 277 <= t["machines"][0]["mips"] <= 577 for t in tables)
    tables = muscle.clusters(muscle.MuscleGrid(), np.random.default_rng(4))
    assert [(t["machines"][0]["count"], t["machines"][0]["mips"]) for t in tables] == [
        (20, 1.0),
        (16, 1.2),
        (12, 1.4),
        (10, 1.6),
    ]


@pytest.mark.parametrize("name", sorted(WORKLOADS))
def test_streams_are_a_function_of_the_seed(name):
    platform = grid((20, 1.0), (16, 1.2))
    spec = replace(WORKLOADS[name].defaults, jobs=2000)
    draw = WORKLOADS[name].draw
    a, b = (draw(spec, np.random.default_rng(11), platform) for _ in range(2))
    assert a.equals(b)
    assert not a.equals(draw(spec, np.random.default_rng(12), platform))


@pytest.mark.parametrize("name", presets.names())
def test_presets_validate_and_run(tmp_path, name):
    from emulator import run

    assert presets.summary(name)
    scenario = load(presets.path(name), ["workload.jobs=200"])
    result = run(scenario, tmp_path / "run")
    assert result.summary["jobs"]["total"] == 200
    generator = {"stress": "two-level"}.get(name, name)  # stress extends two-level
    assert scenario.effective["workload"]["source"] == scenario.effective["platform"]["source"] == generator
    again = load(presets.path(name), ["workload.jobs=200"])
    assert [j.to_tuple() for j in again.jobs] == [j.to_tuple() for j in scenario.jobs]
    assert again.platform == scenario.platform
    other = load(presets.path(name), ["workload.jobs=200"], seed=2)
    assert [j.to_tuple() for j in other.jobs] != [j.to_tuple() for j in scenario.jobs]


def test_presets_cover_the_papers():
    assert presets.names() == ["cs2", "mcrs", "muscle", "stress", "two-level"]
    for name, meta, local in [
        ("two-level", "two-level", "flexible"),
        ("cs2", "least-load", "cs2"),
        ("mcrs", "mcrs", "fcfs"),
        ("muscle", "muscle", "titan"),
    ]:
        scenario = load(name, ["workload.jobs=10"])
        assert (scenario.meta.name, scenario.local[0].name) == (meta, local), name
    with pytest.raises(KeyError, match="no preset 'nope'"):
        presets.path("nope")


def test_preset_names_work_wherever_a_scenario_does():
    scenario = load("cs2", ["workload.jobs=10"])
    assert scenario.source == "preset 'cs2'" and len(scenario.jobs) == 10


def test_preset_parameters_override():
    scenario = load(presets.path("two-level"), ["workload.jobs=300", "workload.mean_interarrival=0"])
    assert {j.submit for j in scenario.jobs} == {0.0}
    small = load(presets.path("two-level"), ["workload.jobs=10", "platform.clusters=[3, 2]"])
    assert [len(c.machines) for c in small.platform.clusters] == [3, 2]
