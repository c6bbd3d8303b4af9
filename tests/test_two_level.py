"""The two-level Meta-Scheduler: priority heuristics and Load/Ordering dispatch, worked out by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from emulator.core.model import Job
from emulator.policies import META, PolicyError
from emulator.policies.two_level import (
    TwoLevel,
    deadline_part,
    interval_bounds,
    licenses_part,
)

from .conftest import job, machine, run_scenario


def test_interval_bounds_grow_exponentially_up_to_twice_the_mean_margin():
    # P = 8: sum_{k=1..8} 2^k = 510; E[margin] = 2550 -> u = 5100 / 510 = 10;
    # S_k = S_{k-1} + 10 * 2^k: 20, 60, 140, 300, 620, 1260, 2540, 5100 (= 2 E[margin]).
    assert interval_bounds(2550.0, 8) == [20, 60, 140, 300, 620, 1260, 2540, 5100]
    # P = 2: u = 2E / (2 + 4); S_1 = 2u, S_2 = 6u = 2E.
    assert interval_bounds(30.0, 2) == [20, 60]


# (margin, estimate, part) with E[margin] = 2550, P = 8 (bounds above).
# r = margin / estimate in [1/2, 1) adds nothing, so the first rows show the interval alone.
DEADLINE_PARTS = [
    (10, 15, 8),  # [0, 20) -> P - 0; r = 0.67
    (20, 30, 7),  # [20, 60) -> P - 1
    (300, 400, 4),  # [300, 620) -> P - 4; r = 0.75
    (5099, 6000, 1),  # [2540, 5100) -> P - 7
    (5100, 6000, 0),  # at 2 E[margin]: beyond the last interval
    (9000, 10000, 0),  # beyond 2 E[margin]
    (300, 100, 1),  # r = 3 >= 1: 4 - floor(3)
    (300, 50, 0),  # r = 6: 4 - 6 < 0 -> 0
    (300, 1000, 5),  # r = 0.3 in [1/4, 1/2): w = 1 -> 4 + 1
    (300, 2400, 6),  # r = 0.125 in [1/8, 1/4): w = 2 -> 4 + 2
    (20, 100, 8),  # r = 0.2: w = 2 -> 7 + 2 = 9, clipped to P
    (0, 100, 8),  # r = 0: the highest interval plus everything, clipped
    (-5, 100, 0),  # negative margin: hopeless
    (math.inf, 100, 0),  # no deadline
]


@pytest.mark.parametrize(("margin", "estimate", "part"), DEADLINE_PARTS)
def test_deadline_part(margin, estimate, part):
    assert deadline_part(margin, estimate, 2550.0, 8) == part


@pytest.mark.parametrize(
    ("copies", "part"),
    # |L| = 20, P = 8: sub-intervals of 2.5 licenses, closed on the right: ceil(n * 8 / 20).
    [(0, 0), (1, 1), (2, 1), (3, 2), (5, 2), (6, 3), (20, 8), (25, 8)],
)
def test_licenses_part(copies, part):
    assert licenses_part(copies, 20, 8) == part


def two_level(**params) -> TwoLevel:
    return TwoLevel(licenses_total=20, rng=np.random.default_rng(1), **params)


def with_margin(id: int, margin: float, estimate: float, **extra) -> Job:
    return Job(id, 0.0, 4, estimate, deadline=estimate + margin, **extra)


def test_the_margin_window_uses_the_jobs_seen_before():
    policy = two_level(heuristics="deadline")
    # J1: no earlier job, E = its own margin 2550: 2550 in [2540, 5100) -> 1 (r = 0.85).
    assert policy.priority(with_margin(1, 2550, 3000)) == 1
    # J2: E = 2550 (J1): 300 in [300, 620) -> 4 (r = 0.75).
    assert policy.priority(with_margin(2, 300, 400)) == 4
    # J3: E = (2550 + 300) / 2 = 1425, u = 2850 / 510: S_3 = 14u = 78.2, S_4 = 30u = 167.6;
    # 100 in [S_3, S_4) -> 8 - 3 = 5 (with E = 2550 it would be [60, 140) -> 6).
    assert policy.priority(with_margin(3, 100, 150)) == 5
    # A job without a deadline scores 0 and does not enter the window.
    assert policy.priority(Job(4, 0.0, 4, 100.0)) == 0
    assert list(policy.margins) == [2550, 300, 100]


def test_a_window_of_one_keeps_only_the_last_margin():
    policy = two_level(heuristics="deadline", window=1)
    policy.priority(with_margin(1, 2550, 3000))
    policy.priority(with_margin(2, 300, 400))
    # E = 300, u = 600 / 510: S_5 = 62u = 72.9, S_6 = 126u = 148.2; 100 -> 8 - 5 = 3.
    assert policy.priority(with_margin(3, 100, 150)) == 3


LICENSES3 = ("lic01", "lic02", "lic03")


@pytest.mark.parametrize(
    ("params", "user_class", "licenses", "priority"),
    # Each job is the policy's first: E = its own margin 300, so 300 lies in [S_7, S_8) =
    # [298.8, 600) -> deadline part 1 (r = 300 / 400 adds 0). Licenses: 3 of |L| = 20 -> 2.
    # User: gold 8, silver 4, regular 0.
    [
        ({}, "gold", LICENSES3, 4),  # mean (1 + 2 + 8) / 3 = 3.67 -> 4
        ({}, "silver", (), 2),  # (1 + 0 + 4) / 3 = 1.67 -> 2
        ({}, "regular", (), 0),  # 1 / 3 -> 0
        ({"combine": "sum"}, "gold", LICENSES3, 8),  # 11, clipped to P
        ({"combine": "sum"}, "silver", (), 5),
        ({"heuristics": "deadline+user"}, "silver", LICENSES3, 3),  # (1 + 4) / 2 = 2.5: halves round up
        ({"heuristics": "licenses"}, "gold", LICENSES3, 2),
        ({"heuristics": "none"}, "gold", LICENSES3, 0),  # the paper's "no heuristics" case
        ({"user_silver": 0.25}, "silver", (), 1),  # (1 + 0 + 2) / 3 = 1
    ],
)
def test_priority_combines_the_parts(params, user_class, licenses, priority):
    job = with_margin(1, 300, 400, user_class=user_class, licenses=licenses)
    assert two_level(**params).priority(job) == priority


def test_bad_parameters_are_refused():
    with pytest.raises(PolicyError, match="heuristics"):
        two_level(heuristics="deadline+speed")
    with pytest.raises(PolicyError, match="combine 'max'"):  # declared: checked as a spec is built
        META.create("two-level[combine=max]")


def dispatcher(load: list[list[float]], count: list[list[int]], seed: int = 1) -> TwoLevel:
    """A policy whose Load and Ordering arrays (clusters x priorities 0..2) are set by hand."""
    policy = TwoLevel(levels=2, rng=np.random.default_rng(seed))
    policy.load, policy.count = np.array(load, dtype=float), np.array(count)
    return policy


ALL = np.array([True, True, True])


@pytest.mark.parametrize(
    ("load", "count", "p", "eligible", "chosen"),
    [
        # Priority 2: clusters 1 and 2 hold nothing at >= 2: the first of them (1) wins, even
        # though cluster 1 holds more work at lower priorities.
        ([[0, 0, 5], [9, 9, 0], [0, 0, 0]], [[0, 0, 1], [1, 1, 0], [0, 0, 0]], 2, ALL, 1),
        # Priority 0: cluster 2 holds nothing at all (idle at >= 0); 0 and 1 hold jobs.
        ([[0, 0, 5], [9, 9, 0], [0, 0, 0]], [[0, 0, 1], [1, 1, 0], [0, 0, 0]], 0, ALL, 2),
        # Priority 1, nobody idle: Load_c[1] = 5, 9, 7 -> the least, cluster 0.
        ([[0, 0, 5], [0, 9, 0], [0, 7, 0]], [[0, 0, 1], [0, 1, 0], [0, 1, 0]], 1, ALL, 0),
        # ... unless cluster 0 cannot run the job: then 2 (7 < 9).
        (
            [[0, 0, 5], [0, 9, 0], [0, 7, 0]],
            [[0, 0, 1], [0, 1, 0], [0, 1, 0]],
            1,
            ~np.eye(3, dtype=bool)[0],
            2,
        ),
        # Load tie (Load_c[1] = 6 for 0 and 2): Ordering, Order_c[1] = 1 vs 3 -> cluster 0.
        ([[0, 0, 6], [0, 9, 0], [0, 3, 3]], [[0, 0, 1], [0, 1, 0], [0, 2, 1]], 1, ALL, 0),
        # Order_c[1] = 3 for cluster 0 now (three smaller jobs): cluster 2 (2 jobs) wins.
        ([[0, 0, 6], [0, 9, 0], [0, 3, 3]], [[0, 2, 1], [0, 1, 0], [0, 1, 1]], 1, ALL, 2),
    ],
)
def test_load_then_ordering(load, count, p, eligible, chosen):
    assert dispatcher(load, count).dispatch(p, eligible) == chosen


def test_load_and_order_ties_are_broken_by_the_seeded_stream():
    # Clusters 0 and 2 tie on Load (4) and Order (1) at priority 1; cluster 1 has more.
    load, count = [[0, 4, 0], [0, 5, 0], [0, 4, 0]], [[0, 1, 0], [0, 1, 0], [0, 1, 0]]
    picks = [dispatcher(load, count, seed).dispatch(1, ALL) for seed in range(40)]
    assert set(picks) == {0, 2}
    assert picks == [dispatcher(load, count, seed).dispatch(1, ALL) for seed in range(40)]


def cluster(name: str) -> dict:
    return {"name": name, "latency": 1.0, "policy": "flexible[priority=ms]", "machines": [machine(1)]}


def test_priorities_travel_to_the_clusters_and_started_jobs_leave_the_load(tmp_path):
    # heuristics = user: regular 0, gold 8. Two 1-CPU clusters, latency 1, jobs of `estimate` s.
    # t=0: J1 (regular, 100) -> a (nothing queued anywhere: the first idle cluster).
    #      J2 (regular, 60)  -> b (a holds J1 at >= 0, b nothing).
    #      J3 (gold, 10)     -> a (nothing at >= 8 anywhere: the first idle, a).
    #      J4 (regular, 30)  -> Load_c[0]: a = 110, b = 60 -> b.
    # At a, J1 and J3 arrive at 1; Flexible backfilling with the MS priority starts J3 first
    # (1..11), then J1 (11..111). At b: J2 1..61, J4 61..91.
    # t=20: J5 (regular, 5). a reported J3 started (at 1) and J1 started (at 11), b that J2
    # started: the meta-scheduler knows a holds nothing queued, b holds J4 -> a is idle at
    # >= 0 -> a (counting started jobs, Load would say b: 90 < 110). J5 waits for J1: 111..116.
    jobs = [
        job(1, 0, 1, 100),
        job(2, 0, 1, 60),
        job(3, 0, 1, 10, user_class="gold"),
        job(4, 0, 1, 30),
        job(5, 20, 1, 5),
    ]
    rows = run_scenario(tmp_path, [cluster("a"), cluster("b")], jobs, meta="two-level[heuristics=user]")
    assert [rows[i]["cluster"] for i in range(1, 6)] == ["a", "b", "a", "b", "a"]
    assert [rows[i]["start"] for i in range(1, 6)] == [11, 1, 1, 61, 111]


def test_the_guides_two_level_commands_run(tmp_path, capsys):
    # The guide's three cases of the two-level experiment, with fewer jobs; the priority
    # reaches the clusters (MS case) and the policies named are the ones that ran.
    import json
    import shlex
    from pathlib import Path

    from emulator.cli import main

    readme = (Path(__file__).resolve().parents[1] / "docs" / "guide.md").read_text()
    commands = [
        shlex.split(line)
        for line in readme.splitlines()
        if line.startswith("gridemu run --preset two-level --set 'meta")
    ]
    assert len(commands) == 3
    for i, argv in enumerate(commands):
        out = tmp_path / str(i)
        assert main([*argv[1:], "--set", "workload.jobs=80", "--out", str(out), "--quiet"]) == 0
        assert "80 jobs: 80 finished" in capsys.readouterr().out
        effective = (out / "scenario.toml").read_text()
        for setting in (argv[5], argv[7]):  # meta.policy="...", local.policy="..."
            name = setting.split("=", 1)[1].strip('"').split("[")[0]
            assert f'policy = "{name}' in effective
        assert json.loads((out / "summary.json").read_text())["jobs"]["finished"] == 80
