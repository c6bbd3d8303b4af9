"""DLL (dynamic least load) and WRAND (weighted random), worked out by hand."""

from __future__ import annotations

import numpy as np
import pytest

from emulator.core.model import Cluster, Job, Link, Machine, Platform
from emulator.policies import META, PolicyError
from emulator.policies.wrand import Wrand
from emulator.state.meta_view import MetaState, MetaView

from .conftest import job, machine, run_scenario


def rigid(id: int, submit: float, cpus: int, runtime: float) -> dict:
    """A rigid parallel job over single-CPU nodes (spread placement)."""
    return job(id, submit, cpus, runtime, placement="spread")


def cluster(name: str, cpus: int, mips: float = 1.0) -> dict:
    return {"name": name, "latency": 1.0, "machines": [machine(1, mips, count=cpus)], "policy": "easy"}


# a: 4 CPUs at 1 MIPS; b: 2 CPUs at 2 MIPS; c: 1 CPU at 1 MIPS. Jobs have bench 1 and spread
# placement (rigid parallel jobs over single-CPU nodes), so e on a cluster = estimate / MIPS.
GRID = [cluster("a", 4), cluster("b", 2, 2.0), cluster("c", 1)]


def test_dll_sends_each_job_to_the_least_loaded_cluster_that_is_big_enough(tmp_path):
    # L_c = sum e_jc * s_j / m_c over the jobs allocated to c and not finished.
    # J1 (2 CPUs, 100): c is too small; a and b at 0 -> a (lowest index): L_a = 100 * 2 / 4 = 50.
    # J2 (1 CPU, 100): a 50, b 0, c 0 -> b; e = 100 / 2 = 50: L_b = 50 * 1 / 2 = 25.
    # J3 (1 CPU, 60): a 50, b 25, c 0 -> c: L_c = 60.
    # J4 (1 CPU, 10): a 50, b 25, c 60 -> b: L_b = 25 + 5 / 2 = 27.5.
    # J5 (1 CPU, 10) at 500: everything has finished and been reported: all 0 -> a
    # (a load that never went down would pick b, 27.5).
    jobs = [
        rigid(1, 0, 2, 100),
        rigid(2, 0, 1, 100),
        rigid(3, 0, 1, 60),
        rigid(4, 0, 1, 10),
        rigid(5, 500, 1, 10),
    ]
    rows = run_scenario(tmp_path, GRID, jobs, meta="dll")
    assert [rows[i]["cluster"] for i in range(1, 6)] == ["a", "b", "c", "b", "a"]


def test_dll_queued_counts_only_jobs_not_yet_started(tmp_path):
    # count = queued: J1..J4 as above. J5 at 0.5: nothing reported yet (latency 1), so
    # a 50, b 27.5, c 60 -> b: L_b = 27.5 + 2.5 = 30. At 1 J1..J4 arrive and start (b runs
    # J2 and J4 on its 2 CPUs); J5 arrives at 1.5 and waits. Reports reach the meta-scheduler
    # at 2: J6 at 5 sees a 0, b 2.5 (J5 still queued), c 0 -> a.
    jobs = [rigid(1, 0, 2, 100), rigid(2, 0, 1, 100), rigid(3, 0, 1, 60), rigid(4, 0, 1, 10)]
    jobs += [rigid(5, 0.5, 1, 10), rigid(6, 5, 1, 10)]
    rows = run_scenario(tmp_path, GRID, jobs, meta="dll[count=queued]")
    assert [rows[i]["cluster"] for i in range(1, 7)] == ["a", "b", "c", "b", "b", "a"]


def platform() -> Platform:
    def make(name: str, cpus: int, mips: float) -> Cluster:
        return Cluster(name, tuple(Machine(1, mips) for _ in range(cpus)), Link(1.0))

    # Processing capability m_c * u_c: a 4 * 1 = 4, b 2 * 3 = 6, c 1 * 2 = 2.
    return Platform((make("a", 4, 1.0), make("b", 2, 3.0), make("c", 1, 2.0)))


def test_wrand_probabilities_are_proportional_to_cpus_times_speed():
    grid = platform()
    view = MetaView(MetaState(grid, np.random.default_rng(0)))
    policy = Wrand(rng=np.random.default_rng(0), platform=grid)
    one = Job(1, 0.0, 1, 10.0, placement="spread")
    two = Job(2, 0.0, 2, 10.0, placement="spread")
    assert policy.probabilities(one, view) == pytest.approx([4 / 12, 6 / 12, 2 / 12])
    assert policy.probabilities(two, view) == pytest.approx([4 / 10, 6 / 10, 0])  # c is too small


@pytest.mark.parametrize(("cpus", "expected"), [(1, [4 / 12, 6 / 12, 2 / 12]), (2, [0.4, 0.6, 0.0])])
def test_wrand_draws_follow_the_probabilities(cpus, expected):
    # 6000 seeded draws: each share within 4 standard deviations of its probability
    # (sd = sqrt(p (1 - p) / n) <= 0.0065), and the same seed gives the same draws.
    grid = platform()
    view = MetaView(MetaState(grid, np.random.default_rng(0)))
    n = 6000
    jobs = [Job(i, 0.0, cpus, 10.0, placement="spread") for i in range(n)]
    policy = Wrand(rng=np.random.default_rng(7), platform=grid)
    draws = np.array([policy.choose(j, view).cluster for j in jobs])
    shares = np.bincount(draws, minlength=3) / n
    sd = np.sqrt(np.array(expected) * (1 - np.array(expected)) / n)
    assert np.all(np.abs(shares - expected) <= 4 * sd + 1e-12)
    again = Wrand(rng=np.random.default_rng(7), platform=grid)
    assert [again.choose(j, view).cluster for j in jobs[:200]] == draws[:200].tolist()


def test_wrand_in_a_run_is_seeded(tmp_path):
    jobs = [rigid(i, i, 1, 1) for i in range(1, 31)]
    picks = []
    for n, seed in enumerate((1, 1, 2)):
        (tmp_path / str(n)).mkdir()
        rows = run_scenario(tmp_path / str(n), GRID, jobs, meta="wrand", seed=seed)
        picks.append([rows[i]["cluster"] for i in range(1, 31)])
    assert picks[0] == picks[1] != picks[2]


def test_bad_parameters_are_refused():
    with pytest.raises(PolicyError, match="count"):
        META.create("dll[count=all]")
