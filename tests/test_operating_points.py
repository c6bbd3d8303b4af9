"""The offered load the reproductions' ``--load`` sets: its formula by hand, and on generated jobs."""

import math

import pytest

from emulator.scenario import load
from workloads import presets
from workloads.offered_load import interarrival_for_load, offered_load, pareto_mean

TWO_CLUSTERS = """
name = "hand"
[meta]
policy = "least-load"
[local]
policy = "easy"
[platform]
source = "two-level"
clusters = [2, 1]
cpus = [2, 4]
mips = [100.0, 300.0]
licenses = 0
[workload]
source = "two-level"
jobs = 10
mean_interarrival = 10.0
estimate = [100.0, 300.0]
cpus = [1, 3]
bench = [100.0, 100.0]
license_share = 0.0
"""


def test_offered_load_of_a_hand_computed_setup(tmp_path):
    # Capacity: 3 machines x E[CPUs] 3 x E[MIPS] 200 = 1800 CPU x MIPS.
    # A job: E[CPUs] 2 x E[estimate] 200 s x bench 100 = 40,000 CPU x MI, one every 10 s.
    # Offered load 40,000 / (10 x 1800) = 20/9; load 1 needs one job every 40,000 / 1800 = 22.2 s.
    path = tmp_path / "hand.toml"
    path.write_text(TWO_CLUSTERS)
    assert offered_load(path) == pytest.approx(20 / 9, rel=1e-12)
    assert interarrival_for_load(path, 1.0) == pytest.approx(40_000 / 1800, rel=1e-12)
    assert offered_load(path, ["workload.mean_interarrival=0"]) == math.inf


def test_muscle_load_counts_service_rates_and_the_pareto_mean():
    # Capacity 20 + 16 x 1.2 + 12 x 1.4 + 10 x 1.6 = 72; a job: E[size] 5.5 x E[execution] on C1.
    execution = 5.0 * 100.0 * math.log(20.0) / 95.0
    assert pareto_mean(5.0, 100.0, 1.0) == pytest.approx(execution)
    expected = 5.5 * execution / (1.22 * 72.0)
    stated = offered_load(presets.path("muscle"), ["workload.mean_interarrival=1.22"])
    assert stated == pytest.approx(expected)


def measured_load(scenario, overrides: list[str], seed: int) -> float:
    """Work submitted per second over the drawn platform's capacity, from the generated jobs."""
    loaded = load(scenario, overrides, seed=seed)
    work = sum(j.cpus * j.estimate * j.bench for j in loaded.jobs)
    span = max(j.submit for j in loaded.jobs) - min(j.submit for j in loaded.jobs)
    capacity = sum(m.cpus * m.mips for c in loaded.platform.clusters for m in c.machines)
    return work / (span * capacity)


@pytest.mark.parametrize(
    ("preset", "jobs", "target"), [("two-level", 3000, 1.0), ("cs2", 3000, 0.5), ("muscle", 5000, 0.9)]
)
def test_the_interarrival_for_a_load_gives_that_load_on_generated_jobs(preset, jobs, target):
    scenario = presets.path(preset)
    sets = [f"workload.jobs={jobs}"]
    gap = interarrival_for_load(scenario, target, sets)
    measured = [measured_load(scenario, [*sets, f"workload.mean_interarrival={gap}"], s) for s in (1, 2, 3)]
    assert sum(measured) / len(measured) == pytest.approx(target, rel=0.08)
