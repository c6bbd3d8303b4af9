"""MUSCLE (seed 004): the composition table, its search, the cluster choice, and the policy in a run.

The worked example is the paper's: Table 1 (clusters C1 of 4 CPUs and C2 of 6, service
rate 1; jobs J1-J6), Table 2 (its composition table, m_MAX = 6) and Fig. 3 (how
Algorithm 4 packs the jobs into C1 and C2). Fig. 3 is a picture; what it shows is worked
out step by step in the comments below and matches its caption (two steps in each
cluster) and text ("these jobs have been packed tightly").
"""

from __future__ import annotations

import json
import shlex

import numpy as np
import pytest

from emulator.core.composition import CompositionTable
from emulator.core.config import ScenarioError
from emulator.core.messages import REJECT
from emulator.core.model import Cluster, Job, Link, Machine, Platform
from emulator.partitions.meta import MetaPartition
from emulator.policies.meta_base import HOLD
from emulator.policies.muscle import Batch, Placed, allocate, e_metric

from .conftest import job, machine, run_scenario

# Table 1: J1..J6 (numbered 0..5 here)
SIZES = [2, 1, 4, 3, 1, 2]
EXECUTION = [2.0, 4.0, 4.0, 6.0, 2.0, 4.0]
SLACK = [6.0, 8.0, 14.0, 12.0, 4.0, 8.0]
J1, J2, J3, J4, J5, J6 = range(6)


def names(composition) -> str:
    return " ".join(f"J{j + 1}" for j in composition)


def test_composition_table_of_the_worked_example_is_table_2():
    table = CompositionTable(SIZES, 6)
    rows = [[names(c) for c in table.rows[r]] for r in range(1, 7)]
    assert rows == [
        ["J2", "J5"],
        ["J1", "J5 J2", "J6"],
        ["J2 J1", "J4", "J6 J5"],
        ["J3", "J4 J2", "J6 J1"],
        ["J3 J2", "J4 J1"],
        ["J3 J1", "J6 J4 J2"],
    ]
    assert table.rows[0] == []


def test_algorithm_3_fills_the_spaces_of_fig_3():
    # The four spaces of Fig. 3 in the order Algorithm 4 meets them (see the next test):
    # C2 at t=0, 6 CPUs: row 6, both compositions free, the first -> J3 J1.
    # C1 at t=0, 4 CPUs: row 4, J3 and J6 J1 hold an allocated job, J4 J2 none -> J4 J2.
    # C2 at t=2, CPUs 4-5 (J1 ended): row 2, J1 and J5 J2 allocated, J6 free -> J6.
    # C1 at t=4, CPU 3 (J2 ended): row 1, J2 allocated -> J5.
    table = CompositionTable(SIZES, 6)
    allocated: set[int] = set()
    got = []
    for r in (6, 4, 2, 1):
        chosen = table.fill(r, allocated)
        allocated.update(chosen)
        got.append(names(chosen))
    assert got == ["J3 J1", "J4 J2", "J6", "J5"]
    assert table.fill(6, allocated) == []  # everything is allocated


@pytest.mark.parametrize(
    ("r", "allocated", "expected"),
    [
        # Row 5: J3 J2 and J4 J1 each hold one allocated job; the first is taken and J3 replaced
        # (Algorithm 2) by row 4's composition with the fewest allocated jobs other than J3
        # alone: J6 J1 (J4 J2 holds J4). J2 is free. 2 + 2 + 1 = 5 CPUs.
        (5, {J3, J4}, "J6 J1 J2"),
        # Row 6: J3 J1 (J3 allocated) is taken; J3 -> J6 J1 from row 4, then J1 is already chosen,
        # so it needs a replacement from row 2: J5 J2 (J2 allocated) -> J2 from row 1 is only
        # J5, chosen already, and J5 alone leads back to J2: no replacement, row 6 fails.
        # The r-1 fall-back: row 5, J4 J1 is free.
        (6, {J3, J2}, "J4 J1"),
        # Nothing of size <= 2 is free but J6: rows 2 and 1 are searched from r = 3 down.
        (3, {J1, J2, J4, J5}, "J6"),
        (1, {J2, J5}, ""),
    ],
)
def test_algorithm_2_replaces_allocated_jobs_and_algorithm_3_falls_back(r, allocated, expected):
    assert names(CompositionTable(SIZES, 6).fill(r, allocated)) == expected


def example(clusters=(4, 6)) -> tuple[Batch, np.ndarray, list[np.ndarray], np.ndarray]:
    n, c = len(SIZES), len(clusters)
    batch = Batch(
        np.array(SIZES),
        np.tile(np.array(EXECUTION)[:, None], (1, c)),  # service rate 1 everywhere
        np.tile(np.array(SLACK)[:, None], (1, c)),
        np.ones((n, c), dtype=bool),
    )
    cpus = np.array(clusters)
    return batch, cpus, [np.zeros(m) for m in clusters], np.zeros((c, 4))


def test_algorithm_4_allocates_the_worked_example_as_fig_3():
    # e = p * etSum * sizeSum / (slkSum * m); an empty cluster has e = 0.
    # 1. both empty: a tie, the larger cluster C2 (6 CPUs) goes first: J3 J1 at t=0.
    #    C2: p=2, etSum=6, sizeSum=6, slkSum=20 -> e = 72 / 120 = 0.6.
    # 2. C1 (e=0): J4 J2 at t=0. C1: p=2, etSum=10, sizeSum=4, slkSum=20 -> e = 80 / 80 = 1.
    # 3. C2 (0.6 < 1): earliest space t=2 (J1 ends), CPUs 4-5: J6. C2: e = 3*10*8 / (28*6) = 1.43.
    # 4. C1 (1 < 1.43): earliest space t=4 (J2 ends), CPU 3: J5. All placed.
    batch, cpus, free_at, load = example()
    placed = allocate(batch, cpus, free_at, load, np.random.default_rng(0))
    C1, C2 = 0, 1
    assert placed == [
        Placed(J3, C2, 0.0, (0, 1, 2, 3)),
        Placed(J1, C2, 0.0, (4, 5)),
        Placed(J4, C1, 0.0, (0, 1, 2)),
        Placed(J2, C1, 0.0, (3,)),
        Placed(J6, C2, 2.0, (4, 5)),
        Placed(J5, C1, 4.0, (3,)),
    ]
    # C1 runs J4 on 0-2 until 6, J2 then J5 on CPU 3 until 6; C2 J3 until 4, J1 then J6 until 6.
    assert free_at[C1].tolist() == [6, 6, 6, 6] and free_at[C2].tolist() == [4, 4, 4, 4, 6, 6]
    assert load.tolist() == [[3, 12, 5, 24], [3, 10, 8, 28]]
    assert e_metric(load, cpus) == pytest.approx([3 * 12 * 5 / (24 * 4), 3 * 10 * 8 / (28 * 6)])


def test_e_ties_go_to_the_larger_cluster_then_a_seeded_random_pick():
    assert e_metric(np.array([[0, 0, 0, 0], [1, 2, 2, 0], [1, 4, 4, 4.0]]), np.array([4, 4, 4])).tolist() == [
        0.0,
        np.inf,  # jobs without slack left: the least attractive
        1.0,
    ]
    picks = set()
    for seed in range(20):
        batch, cpus, free_at, load = example(clusters=(6, 6, 4))
        picks.add(allocate(batch, cpus, free_at, load, np.random.default_rng(seed))[0].cluster)
    assert picks == {0, 1}  # never the 4-CPU cluster, both 6-CPU ones


def test_jobs_only_go_where_they_can_run():
    batch, cpus, free_at, load = example()
    batch.eligible[J3, 1] = False  # J3 cannot run on C2 (say, a license it lacks)
    placed = allocate(batch, cpus, free_at, load, np.random.default_rng(0))
    assert {p.job: p.cluster for p in placed}[J3] == 0
    assert sorted(p.job for p in placed) == list(range(6))


# -- the policy in a run ------------------------------------------------------------------------------


def one_cpu_cluster(name: str, cpus: int, **extra) -> dict:
    return {"name": name, "latency": 0.5, "machines": [machine(1, count=cpus)], **extra}


def test_the_worked_example_runs_as_fig_3_under_muscle_and_titan(tmp_path):
    # Table 1's jobs all submitted at t=0 (deadline = arrival + execution + slack), spread over
    # 1-CPU machines. TITAN with a population of one keeps MUSCLE's seed schedule as it is, so
    # the run is Fig. 3 shifted by the link latency (0.5): C2 starts J3 J1 at 0.5 and J6 when J1
    # ends (2.5); C1 starts J4 J2 at 0.5 and J5 when J2 ends (4.5).
    jobs = [
        job(i + 1, 0, SIZES[i], EXECUTION[i], deadline=EXECUTION[i] + SLACK[i], placement="spread")
        for i in range(6)
    ]
    local = {"policy": "titan", "params": {"population": 1}}
    clusters = [one_cpu_cluster("C1", 4, **local), one_cpu_cluster("C2", 6, **local)]
    rows = run_scenario(tmp_path, clusters, jobs, meta="muscle")
    got = {f"J{i}": (rows[i]["cluster"], rows[i]["start"]) for i in rows}
    assert got == {
        "J1": ("C2", 0.5),
        "J2": ("C1", 0.5),
        "J3": ("C2", 0.5),
        "J4": ("C1", 0.5),
        "J5": ("C1", 4.5),
        "J6": ("C2", 2.5),
    }


def test_muscle_collects_jobs_while_every_cluster_is_busy(tmp_path):
    # One cluster of 2 CPUs, latency 1, threshold 50 s of work per CPU.
    # t=0: the grid is idle -> J1 (2 CPUs, 100 s) goes at once, arrives at 1; the cluster reports
    #   it started (report due at 2): 2 CPUs x 100 s left at t=1.
    # t=5: expected makespan (200 - 2 x (5 - 1)) / 2 = 96 > 50: J2 is held.
    # t=60: (200 - 2 x 59) / 2 = 41 <= 50: J2 and J3 go together, in submission order.
    jobs = [job(1, 0, 2, 100, placement="spread"), job(2, 5, 1, 10), job(3, 60, 1, 10)]
    cluster = one_cpu_cluster("a", 2, latency=1.0)
    rows = run_scenario(tmp_path, [cluster], jobs, meta="muscle[threshold=50.0]")
    assert [rows[i]["arrive"] for i in (1, 2, 3)] == [1, 61, 61]
    assert [rows[i]["start"] for i in (1, 2, 3)] == [1, 101, 101]


def test_a_job_held_with_nothing_left_to_wake_it_is_rejected_not_lost():
    class HoldForever:
        name = "hold-forever"

        def observe(self, cluster, status):
            pass

        def select(self, jobs, view):
            return [HOLD] * len(jobs)

    platform = Platform((Cluster("a", (Machine(1, 1.0),), Link(1.0)),))
    part = MetaPartition(platform, "round-robin", np.random.SeedSequence(1), [Job(7, 3.0, 1, 1.0)])
    part.policy = HoldForever()
    _, next_time, rows, *_ = part.advance(10.0, [])
    assert next_time == float("inf")
    assert [(r[0], r[1], r[2]) for r in rows][-1] == (3.0, REJECT, 7)
    assert "held by meta policy hold-forever" in rows[-1][7]


def test_the_guides_muscle_commands_run(tmp_path, capsys):
    # Every `gridemu run --preset muscle` line of the guide, with fewer jobs.
    from pathlib import Path

    from emulator.cli import main

    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    commands = [
        shlex.split(line.split("#")[0])
        for line in readme.replace("\\\n", " ").splitlines()
        if line.startswith("gridemu run --preset muscle")
    ]
    assert len(commands) == 3
    for i, argv in enumerate(commands):
        out = tmp_path / str(i)
        assert main([*argv[1:], "--set", "workload.jobs=60", "--out", str(out), "--quiet"]) == 0
        assert "60 jobs: 60 finished" in capsys.readouterr().out
        assert json.loads((out / "summary.json").read_text())["grid"]["mcp"] > 0


def test_the_platform_gives_each_cluster_its_own_titan_weights():
    from emulator.data.scenario import load
    from workloads import presets

    weights = '["titan[w_over=12.0]", "titan[w_over=8.0]", "titan", "titan[w_over=1.0]"]'
    loaded = load(presets.path("muscle"), ["workload.jobs=10", f"platform.policies={weights}"])
    assert [str(c.policy) for c in loaded.platform.clusters] == json.loads(weights)
    assert [str(spec) for spec in loaded.local] == json.loads(weights)
    with pytest.raises(ScenarioError, match="one entry per cluster"):
        load(presets.path("muscle"), ["workload.jobs=10", 'platform.policies=["titan"]'])
