"""``--verbose``: rounds, work per round and each partition's share, by name."""

from __future__ import annotations

from emulator.sync.coordinator import RunStats
from emulator.sync.timing import format_timing


def test_the_report_names_partitions_by_share():
    stats = RunStats(rounds=4, calls=6, compute_seconds=0.2, barrier_seconds=0.2, startup_seconds=1.5)
    stats.partition_seconds, stats.shutdown_seconds = {0: 0.05, 1: 0.15}, 0.25
    assert format_timing(stats, ["alpha"]).splitlines() == [
        "4 rounds, 6 partition calls, 0 messages; start-up 1.500 s, shut-down 0.250 s",
        "per round: compute 50.000 ms, barrier 50.000 ms (50% of round time)",
        "compute by partition: alpha 75.0%, meta 25.0%",
    ]


def test_beyond_eight_partitions_the_rest_are_summed():
    stats = RunStats(rounds=1, calls=10, compute_seconds=1.0, throttled=2)
    stats.partition_seconds = {pid: 0.1 for pid in range(10)}
    lines = format_timing(stats, [f"c{i}" for i in range(9)]).splitlines()
    assert lines[2] == "2 round(s) called only the laggards: the writer held too many rows"
    assert lines[3].endswith("c6 10.0%, 2 others 20.0%")
    assert lines[3].startswith("compute by partition: meta 10.0%, c0 10.0%")


def test_rounds_with_no_barrier_are_counted_apart():
    stats = RunStats(rounds=30, calls=40, barrier_free=25)
    assert (
        format_timing(stats, [])
        .splitlines()[0]
        .startswith("30 rounds (25 of them one host's call, no barrier), 40 partition calls")
    )
