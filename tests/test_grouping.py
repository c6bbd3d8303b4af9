"""Which actor hosts which partition: LPT groups, keeping partitions in place, when to migrate."""

from __future__ import annotations

import itertools
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from actors import grouping
from actors.grouping import (
    better_grouping,
    decayed_loads,
    group_partitions,
    keep_in_place,
    projected_speedup,
    round_work,
    static_weights,
    two_actor_ceilings,
)
from emulator import load_scenario
from emulator.data.scenario import parse


def test_partitions_are_grouped_by_longest_processing_time_first():
    # Heaviest first, each to the least loaded host (ties: fewer partitions, lower index): 8 | 4, 4 | ...
    assert group_partitions([0, 8, 4, 4, 3, 3, 2], 2) == [[1, 4, 6], [0, 2, 3, 5]]
    assert group_partitions([0, 1, 1], 8) == [[1], [2], [0]]
    assert group_partitions([0.0] * 4, 3) == [[0, 3], [1], [2]]  # nothing measured: still no empty host
    quickstart = load_scenario("quickstart")  # 3,000 jobs through the meta-scheduler, 256 + 48 + 64 CPUs
    shares = [0.0, *(3000 * cpus / 368 for cpus in (256, 48, 64))]  # meta, then by each cluster's CPUs
    assert static_weights(quickstart) == pytest.approx(shares)
    assert group_partitions(static_weights(quickstart), 2) == [[1], [0, 2, 3]]


def test_jobs_entering_a_cluster_directly_weigh_on_it_alone():
    machines = [{"count": 4, "cpus": 2, "mips": 100}]
    raw = {
        "clusters": [{"name": "big", "machines": machines * 8}, {"name": "busy", "machines": machines}],
        "workload": {"source": "synthetic", "jobs": 50, "site": "busy"},
    }
    assert static_weights(parse(raw, "direct")) == [0.0, 0.0, 50.0]  # not by CPUs: big is idle


def test_a_regrouping_keeps_partitions_on_the_host_that_holds_most_of_their_group():
    owner = {0: 0, 1: 0, 2: 1, 3: 0}
    assert keep_in_place([[2, 3], [0, 1]], owner) == [[0, 1], [2, 3]]
    owner = {0: 2, 1: 2, 2: 0, 3: 1, 4: 1}
    assert keep_in_place([[4], [0, 1], [2, 3]], owner) == [[2, 3], [4], [0, 1]]


def test_a_better_grouping_must_beat_the_slowest_host_by_a_share_and_a_floor():
    # Measured: the meta partition 0 s, clusters 3, 1, 1 s, all clusters on host 1 (load 5 s).
    # LPT: [1] | [0, 2, 3], slowest 3 s: a 2 s saving, 40% of 5 s.
    lopsided = [[0], [1, 2, 3]]
    weights = [0.0, 3.0, 1.0, 1.0]
    assert better_grouping(weights, lopsided, gain=0.1, floor=0.5) == [[1], [0, 2, 3]]
    assert better_grouping(weights, lopsided, gain=0.5, floor=0.5) is None  # 40% is not enough
    assert better_grouping(weights, lopsided, gain=0.1, floor=2.0) is None  # 2 s is not more than 2 s
    assert better_grouping(weights, [[1], [0, 2, 3]], gain=0.0, floor=0.0) is None  # already the best


def _best_splits(work: np.ndarray) -> tuple[float, float]:
    """Every split of the pids in two, listed with itertools: the ceilings' definition, spelled out."""
    pids = range(work.shape[1])
    sides = [
        (list(first), [p for p in pids if p not in first])
        for k in range(work.shape[1] + 1)
        for first in itertools.combinations(pids, k)
    ]
    busier = [np.maximum(work[:, a].sum(axis=1), work[:, b].sum(axis=1)) for a, b in sides]
    whole_run = min(b.sum() for b in busier)
    each_round = np.min(busier, axis=0).sum()
    return work.sum() / whole_run, work.sum() / each_round


def test_two_actor_ceilings_by_hand():
    # Round 1: partitions 1, 2, 3 take 2, 1, 1 s; round 2: partitions 2, 3 take 2 s each. 8 s in one process.
    # Kept for the run, {1, 2} | {0, 3} costs 3 + 2 = 5 s (1.6x); split per round, 2 + 2 = 4 s (2x).
    work = round_work([{1: 2.0, 2: 1.0, 3: 1.0}, {2: 2.0, 3: 2.0}])
    assert two_actor_ceilings(work) == (1.6, 2.0)
    assert two_actor_ceilings(round_work([{0: 1.0}, {0: 3.0}])) == (1.0, 1.0)  # one partition: no split helps
    assert two_actor_ceilings(np.zeros((3, 4))) == (1.0, 1.0)  # nothing measured


def test_projected_speedup_by_hand():
    # Four partitions of 1 s in each of 10 rounds: 40 s in one process. Four actors: 1 s a round plus
    # a 0.5 s barrier -> 15 s (2.67x); two actors: 2 + 0.5 -> 25 s (1.6x); with 0.1 s of coordinator
    # work a round on both sides: (40 + 1) / (25 + 1).
    work = np.ones((10, 4))
    assert projected_speedup(work, 4, 0.5) == pytest.approx(40 / 15)
    assert projected_speedup(work, 2, 0.5) == pytest.approx(1.6)
    assert projected_speedup(work, 2, 0.5, overhead=0.1) == pytest.approx(41 / 26)
    one_at_a_time = np.eye(4)  # each round one partition's work: actors only add their barrier
    assert projected_speedup(one_at_a_time, 4, 0.0) == pytest.approx(1.0)
    # A meta partition (0) taking turns with three clusters, 1 s each: rounds [1, 0, 0, 0] and [0, 1, 1, 1],
    # 5 of each, 20 s in one process. In an actor, 2 actors: 1 + 0.5, then 2 + 0.5 (LPT puts two clusters
    # together) -> 20 s; in the driver the meta's rounds pay no barrier: 1, then 2 + 0.5 -> 17.5 s.
    turns = np.array([[1.0, 0, 0, 0], [0, 1.0, 1.0, 1.0]] * 5)
    assert projected_speedup(turns, 2, 0.5) == pytest.approx(20 / 20)
    assert projected_speedup(turns, 2, 0.5, in_driver=[0]) == pytest.approx(20 / 17.5)


def test_projected_speedup_counts_the_drivers_turn_and_its_cores():
    # The meta partition (0, in the driver) taking turns with three clusters, 1 s each, as above; the
    # driver's own work (replies, rows) 2 s, spread over the clusters' rounds: 0.4 s after each.
    # Rounds: the meta's 1 s alone, then the clusters' 2 + 0.5 and the driver's 0.4 -> 5 x 3.9 s.
    turns = np.array([[1.0, 0, 0, 0], [0, 1.0, 1.0, 1.0]] * 5)
    assert projected_speedup(turns, 2, 0.5, in_driver=[0], driver=2.0) == pytest.approx(20 / 19.5)
    # Pipelined, each turn of the driver runs beside the actors' next round: the clusters' 2.5 s rounds
    # hide the meta's 1 s turns, the driver's 0.4 s turns after them show -> 5 x 2.5 + 5 x 0.4 s.
    pipelined = projected_speedup(turns, 2, 0.5, in_driver=[0], driver=2.0, pipelined=True)
    assert pipelined == pytest.approx(20 / 14.5)
    # Four busy partitions on 2 actors and a driver doing half their work again: 60 s of CPU on 2
    # cores is 30 s, longer than the overlapped path's 22 s.
    work = np.ones((10, 4))
    assert projected_speedup(work, 2, 0.0, driver=20.0, pipelined=True) == pytest.approx(40 / 30)
    assert projected_speedup(work, 2, 0.0, driver=20.0) == pytest.approx(40 / 40)


@settings(max_examples=60, deadline=None)
@given(
    work=hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 6), st.integers(2, 6)),
        elements=st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]),
    ),
    chunk=st.sampled_from([1, 3, 4096]),
)
def test_two_actor_ceilings_are_the_best_of_every_split(work, chunk):
    assume(work.sum() > 0)
    # Splits scored a few at a time or all at once: the same bests.
    with patch.object(grouping, "SPLITS_CHUNK", chunk):
        assert two_actor_ceilings(work) == pytest.approx(_best_splits(work))


def test_one_noisy_window_moves_nothing_a_lasting_imbalance_does():
    groups = [[0, 1, 2], [3, 4]]  # the meta partition and four clusters, 2 s of work per actor per window
    steady, skewed = [0.0, 1.0, 1.0, 1.0, 1.0], [0.0, 1.4, 1.4, 0.6, 0.6]
    loads = [0.0] * 5
    for _ in range(10):
        loads = decayed_loads(loads, steady, memory=0.8)
        assert better_grouping(loads, groups, gain=0.1, floor=0.05) is None
    # Judged on the skewed window alone, actor 0 (2.8 s) would move a cluster: 2.0 s | 2.0 s.
    assert better_grouping(skewed, groups, gain=0.1, floor=0.05) == [[0, 1, 3], [2, 4]]
    # Decayed, one such window makes it 1.99 s against 1.83 s after a move: 8%, not worth one.
    loads = decayed_loads(loads, skewed, memory=0.8)
    assert better_grouping(loads, groups, gain=0.1, floor=0.05) is None
    # If the skew lasts, the next window moves the cluster.
    loads = decayed_loads(loads, skewed, memory=0.8)
    assert better_grouping(loads, groups, gain=0.1, floor=0.05) == [[0, 1, 3], [2, 4]]
