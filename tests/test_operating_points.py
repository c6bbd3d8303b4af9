"""Operating points of the reproductions: the offered load ``--load`` sets (by hand and on generated
jobs), seed 004's per-round MCP (eq. 7) and MUSCLE collecting batches of a given size."""

import math

import pyarrow as pa
import pytest

from emulator.core.model import Cluster, Link, Machine, Platform
from emulator.data.offered_load import interarrival_for_load, offered_load, pareto_mean
from emulator.data.round_cp import round_mcp_pb
from emulator.data.scenario import load
from workloads import presets

from .conftest import job, machine, run_scenario

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


def test_round_mcp_averages_eq_7_over_rounds_of_batch_jobs():
    # Rounds of 2 jobs in submission order; weights (makespan 1, idle 3, over-deadline 4) / 8.
    # Round 0: A holds j1 (2 CPUs, 0-10, 2 s late): makespan 10, idle 4 x 10 - 20 = 20, over 2:
    #   CP (10 + 60 + 8) / 8 = 9.75; B holds j2 (2 CPUs, 1-5): makespan 4, idle 0: CP 0.5.
    #   MCP (9.75 + 0.5) / 2 = 5.125, PB |9.75 - 0.5| / sqrt(2).
    # Round 1: A holds j3 (4 CPUs, 10-20) and j4 (2 CPUs, 20-22, 1 s late): makespan 12,
    #   idle 48 - 44 = 4, over 1: CP (12 + 12 + 4) / 8 = 3.5 = its MCP; one cluster, no PB.
    platform = Platform(
        (
            Cluster("A", (Machine(4, 1.0),), Link(0.0), policy="titan"),
            Cluster("B", (Machine(2, 1.0),), Link(0.0), policy="titan"),
        )
    )
    jobs = pa.table(
        {
            "submit": [0.0, 1.0, 2.0, 3.0],
            "status": ["finished"] * 4,
            "cluster": ["A", "B", "A", "A"],
            "cpus": [2, 2, 4, 2],
            "start": [0.0, 1.0, 10.0, 20.0],
            "finish": [10.0, 5.0, 20.0, 22.0],
            "deadline": [8.0, math.inf, 30.0, 21.0],
        }
    )
    mcp, pb = round_mcp_pb(jobs, platform, batch=2)
    assert mcp == pytest.approx((5.125 + 3.5) / 2)
    assert pb == pytest.approx(9.25 / math.sqrt(2))


def test_muscle_releases_a_batch_once_it_holds_batch_jobs(tmp_path):
    # One cluster of 2 CPUs, latency 1: jobs wait for a batch of 2 unless the grid is idle.
    # t=0: the grid is idle -> J1 (2 CPUs, 100 s) goes at once. t=5: J2 is held (1 job < batch 2).
    # t=10: J2 and J3 make a batch of 2: both go, arrive at 11, start when J1 ends at 101.
    cluster = {"name": "a", "latency": 1.0, "machines": [machine(1, count=2)]}
    jobs = [job(1, 0, 2, 100, placement="spread"), job(2, 5, 1, 10), job(3, 10, 1, 10)]
    rows = run_scenario(tmp_path, [cluster], jobs, meta="muscle[batch=2]")
    assert [rows[i]["arrive"] for i in (1, 2, 3)] == [1, 11, 11]
    assert [rows[i]["start"] for i in (1, 2, 3)] == [1, 101, 101]
