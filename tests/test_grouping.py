"""Which actor hosts which partition: LPT groups, keeping partitions in place, when to migrate."""

from __future__ import annotations

from actors.grouping import better_grouping, group_partitions, keep_in_place, static_weights
from emulator import load_scenario


def test_partitions_are_grouped_by_longest_processing_time_first():
    # Heaviest first, each to the least loaded host (ties: fewer partitions, lower index): 8 | 4, 4 | ...
    assert group_partitions([0, 8, 4, 4, 3, 3, 2], 2) == [[1, 4, 6], [0, 2, 3, 5]]
    assert group_partitions([0, 1, 1], 8) == [[1], [2], [0]]
    assert group_partitions([0.0] * 4, 3) == [[0, 3], [1], [2]]  # nothing measured: still no empty host
    quickstart = load_scenario("quickstart")
    assert static_weights(quickstart) == [0.0, 256.0, 48.0, 64.0]  # meta, then each cluster's CPUs
    assert group_partitions(static_weights(quickstart), 2) == [[1], [0, 2, 3]]


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
