"""Stress tests: stale information (``status_period``) and link degradation (``[[stress.links]]``).

Tiny hand-checked scenarios with exact times: 1-MIPS machines (a job runs
its runtime), links of known latency and bandwidth.
"""

from __future__ import annotations

import copy

import pyarrow as pa
import pytest

from emulator import run
from emulator.core.config import ScenarioError
from emulator.core.messages import META, STATUS
from emulator.core.model import Link
from emulator.data.scenario import parse
from emulator.engine.runner import build_partitions
from emulator.sync import coordinator
from emulator.sync.horizons import Links

from .conftest import indexed, job, machine


def cluster(name: str, cpus: int = 1, latency: float = 1.0, **extra) -> dict:
    return {"name": name, "latency": latency, "machines": [machine(cpus)], **extra}


def scenario(
    clusters: list[dict], jobs: list[dict], meta: str = "least-load", stress=None, **workload
) -> dict:
    raw = {
        "name": "t",
        "seed": 1,
        "meta": {"policy": meta},
        "clusters": clusters,
        "workload": {"source": "gridlets", "gridlets": jobs, **workload},
    }
    if stress is not None:
        raw["stress"] = stress
    return raw


def run_raw(tmp_path, raw: dict, name: str = "run"):
    """Each job's row of ``jobs.arrow`` by id, and the event rows in trace order."""
    result = run(parse(copy.deepcopy(raw), "test scenario"), tmp_path / name)
    with pa.memory_map(str(tmp_path / name / "events.arrow")) as source:
        events = indexed(pa.ipc.open_file(source).read_all())
    return {row["id"]: row for row in result.jobs.to_pylist()}, events


def status_messages(raw: dict) -> list[tuple[int, float, float]]:
    """Every status report as (cluster index, send time, delivery time), in sending order per cluster."""
    scenario = parse(copy.deepcopy(raw), "test scenario")
    sent = []

    def sink(watermark, results):
        for _, result in sorted(results.items()):
            outbox = result[0]
            sent.extend((m.src - 1, m.payload.time, m.time, m.payload) for m in outbox if m.kind == STATUS)
        return 0

    links = Links.of_platform(scenario.platform)
    coordinator.run(coordinator.InProcess(build_partitions(scenario)), links, sink)
    sent.sort(key=lambda m: m[0])  # each cluster's in sending order (clusters may run ahead of each other)
    assert all(m[2] > m[1] for m in sent)
    return sent


def link_rows(events: list[dict]) -> list[tuple]:
    return [(e["time"], e["cluster"], e["info"]) for e in events if e["kind"] == "link"]


# -- stale information ----------------------------------------------------------------------------


def stale_least_load(period: float) -> dict:
    # Two 1-CPU clusters, latency 1. Two local jobs enter a at t=2 (one runs, one queues there);
    # J3 comes through the meta-scheduler at t=5, J4 at 300.
    jobs = [job(1, 2, 1, 100, site="a"), job(2, 2, 1, 100, site="a"), job(3, 5, 1, 10), job(4, 300, 1, 1)]
    return scenario([cluster("a"), cluster("b")], jobs, stress={"status_period": period})


def test_without_a_status_period_least_load_knows_the_busy_cluster(tmp_path):
    # a reports at 2 (L1 running, L2 queued), known at 3: J3 at 5 goes to idle b.
    rows, _ = run_raw(tmp_path, stale_least_load(0.0))
    assert (rows[3]["cluster"], rows[3]["arrive"], rows[3]["start"]) == ("b", 6, 6)


def test_with_a_status_period_least_load_sends_a_job_to_a_cluster_it_does_not_know_is_busy(tmp_path):
    # a's changes of t=2 are reported at 60 only (known at 61): at 5 both clusters look empty, tie -> a.
    # J3 arrives at a at 6 and waits for L1 (ends 102) and L2 (ends 202).
    rows, events = run_raw(tmp_path, stale_least_load(60.0))
    dispatch = [(e["time"], e["cluster"]) for e in events if e["kind"] == "dispatch"]
    assert dispatch == [(5, 0), (300, 0)]
    assert (rows[3]["cluster"], rows[3]["arrive"], rows[3]["start"], rows[3]["finish"]) == ("a", 6, 202, 212)
    # Reports: one per period with changes, carrying all of them; b never changes, so it never reports.
    # J4 (300-302) is reported at 360: a report of job changes is sent even when nothing else is left.
    sent = status_messages(stale_least_load(60.0))
    assert [(c, t, due) for c, t, due, _ in sent] == [
        (0, 60, 61),
        (0, 120, 121),
        (0, 240, 241),
        (0, 360, 361),
    ]
    first, second, third, _ = (s[3] for s in sent)
    assert (first.arrived, first.started, first.local) == ((1, 2, 3), (1,), (1, 2))
    assert (first.queued, first.running) == (2, 1)
    assert (second.finished, second.started, second.queued) == ((1,), (2,), 1)
    assert (third.finished, third.started, third.queued, third.running) == ((2, 3), (3,), 0, 0)


def test_a_change_at_a_multiple_of_the_period_is_reported_at_once(tmp_path):
    jobs = [job(1, 60, 1, 10, site="a"), job(2, 0, 1, 1), job(3, 200, 1, 1)]
    sent = status_messages(scenario([cluster("a")], jobs, stress={"status_period": 60.0}))
    # J2 arrives at 1 and ends at 2: reported at 60, with L1's arrival and start at 60; L1 ends at 70,
    # reported at 120; J3 (200-202) at 240.
    assert [(t, s.arrived, s.finished) for _, t, _, s in sent] == [
        (60, (2, 1), (2,)),
        (120, (), (1,)),
        (240, (3,), (3,)),
    ]


@pytest.mark.parametrize("meta", ["least-load", "mcrs", "muscle", "two-level", "dll", "most-bandwidth"])
def test_every_job_ends_under_stale_views_and_changing_links(tmp_path, meta):
    raw = {
        "name": "stale",
        "seed": 4,
        "meta": {"policy": meta},
        "clusters": [
            cluster("a", cpus=4, latency=0.5, bandwidth=1e6, licenses={"lic": 2}),
            cluster("b", cpus=2, latency=2.0, bandwidth=2e5, licenses={"lic": 1}),
        ],
        "workload": {
            "source": "synthetic",
            "jobs": 60,
            "mean_interarrival": 3.0,
            "cpus": [1, 2],
            "in_bytes": [0.0, 1e6],
            "license_share": 0.3,
            "deadline_share": 0.5,
        },
        "stress": {
            "status_period": 25.0,
            "links": [
                {"cluster": "a", "time": 40.0, "bandwidth": 1e4, "latency": 3.0},
                {"cluster": "b", "time": 60.0, "latency": 0.25},
                {"cluster": "a", "time": 120.0, "bandwidth": 1e6},
            ],
        },
    }
    rows, events = run_raw(tmp_path, raw)
    assert len(rows) == 60 and all(r["status"] in ("finished", "rejected") for r in rows.values())
    assert all(r["reason"] for r in rows.values() if r["status"] == "rejected")
    times = [e["time"] for e in events]
    assert times == sorted(times)


# -- link changes ---------------------------------------------------------------------------------


def test_a_latency_change_changes_arrival_times_and_the_reports_latency(tmp_path):
    jobs = [job(1, 0, 1, 1), job(2, 9.5, 1, 1), job(3, 10, 1, 1)]
    stress = {"links": [{"cluster": "a", "time": 10.0, "latency": 5.0}]}
    raw = scenario([cluster("a", cpus=2)], jobs, stress=stress)
    rows, events = run_raw(tmp_path, raw)
    assert [rows[i]["arrive"] for i in (1, 2, 3)] == [1, 10.5, 15]
    assert link_rows(events) == [(10, 0, "latency=5 bandwidth=inf")]
    # The change itself is reported at 10 (with the new latency), then each event as usual.
    sent = status_messages(raw)
    assert [(t, due) for _, t, due, _ in sent] == [
        (1, 2),
        (2, 3),
        (10, 15),
        (10.5, 15.5),
        (11.5, 16.5),
        (15, 20),
        (16, 21),
    ]
    assert [(s.latency, s.bandwidth) for *_, s in sent][1:3] == [(1, float("inf")), (5, float("inf"))]


def test_reports_never_overtake_each_other_when_latency_drops():
    jobs = [job(1, 0, 1, 4, site="a")]
    stress = {"links": [{"cluster": "a", "time": 2.0, "latency": 1.0}]}
    raw = scenario([cluster("a", latency=10.0), cluster("b")], [*jobs, job(2, 50, 1, 1)], stress=stress)
    sent = status_messages(raw)
    # Reports at 0 (due 10), 2 (the change: 3, held back to 10), 4 (finish: 5, held back to 10).
    assert [(c, t, due) for c, t, due, _ in sent][:3] == [(0, 0, 10), (0, 2, 10), (0, 4, 10)]


def test_a_bandwidth_change_changes_transfer_times_and_a_transfer_keeps_the_bandwidth_it_started_with(
    tmp_path,
):
    # Latency 0.5; 1 MB/s, then 100 kB/s from t=10. Transfers on the link are serialized.
    # J1 (0, 2 MB): 0-2, arrives 2.5. J3 (9, 2 MB): 9-11 at the old bandwidth, arrives 11.5.
    # J4 (9.5, 1 MB) waits for J3, starts at 11 at the new bandwidth: 11-21, arrives 21.5.
    # J2 (10, 1 MB) waits for J4: 21-31, arrives 31.5.
    jobs = [
        job(1, 0, 1, 1, in_bytes=2e6),
        job(2, 10, 1, 1, in_bytes=1e6),
        job(3, 9, 1, 1, in_bytes=2e6),
        job(4, 9.5, 1, 1, in_bytes=1e6),
    ]
    stress = {"links": [{"cluster": "a", "time": 10.0, "bandwidth": 1e5}]}
    rows, events = run_raw(
        tmp_path, scenario([cluster("a", cpus=4, latency=0.5, bandwidth=1e6)], jobs, stress=stress)
    )
    assert [rows[i]["arrive"] for i in (1, 3, 4, 2)] == [2.5, 11.5, 21.5, 31.5]
    assert link_rows(events) == [(10, 0, "latency=0.5 bandwidth=100000")]


def degrading(meta: str, period: float) -> dict:
    # a has the faster link until t=10, when it drops to 100 kB/s; b stays at 500 kB/s. 8 CPUs each:
    # nobody waits. Jobs carry 1 MB in.
    jobs = [job(i, t, 1, 1, in_bytes=1e6) for i, t in enumerate((0, 10.5, 12, 30, 62), 1)]
    clusters = [cluster("a", cpus=8, bandwidth=1e6), cluster("b", cpus=8, bandwidth=5e5)]
    stress = {"status_period": period, "links": [{"cluster": "a", "time": 10.0, "bandwidth": 1e5}]}
    return scenario(clusters, jobs, meta=meta, stress=stress)


@pytest.mark.parametrize("meta", ["most-bandwidth", "mcrs"])
def test_bandwidth_policies_switch_once_the_degraded_link_is_reported_and_not_before(tmp_path, meta):
    # The change is reported at 10 and known at 11: J2 (10.5) still goes to a, J3 (12) on to b.
    rows, _ = run_raw(tmp_path, degrading(meta, 0.0))
    assert [rows[i]["cluster"] for i in range(1, 6)] == ["a", "a", "b", "b", "b"]
    assert rows[2]["arrive"] == 10.5 + 10 + 1  # sent after the change: the new bandwidth
    # Reported every 60 s: known at 61 only, so J3 (12) and J4 (30) still go to the degraded a.
    rows, _ = run_raw(tmp_path, degrading(meta, 60.0), "stale")
    assert [rows[i]["cluster"] for i in range(1, 6)] == ["a", "a", "a", "a", "b"]


def test_the_lookahead_is_the_least_latency_at_any_time(tmp_path):
    raw = scenario(
        [cluster("a", latency=2.0), cluster("b", latency=3.0)],
        [job(i, t, 1, 1) for i, t in enumerate((0, 49, 50.2, 51, 80), 1)],
        meta="round-robin",
        stress={"links": [{"cluster": "b", "time": 50.0, "latency": 0.5}]},
    )
    assert parse(copy.deepcopy(raw), "t").platform.lookahead == 0.5
    rows, events = run_raw(tmp_path, raw)
    assert [(rows[i]["cluster"], rows[i]["arrive"]) for i in range(1, 6)] == [
        ("a", 2),
        ("b", 52),
        ("a", 52.2),
        ("b", 51.5),
        ("a", 82),
    ]
    times = [e["time"] for e in events]
    assert times == sorted(times)


def test_link_changes_are_recorded_in_the_platform():
    raw = scenario(
        [cluster("a", bandwidth=1e6), cluster("b")],
        [job(1, 0, 1, 1)],
        stress={
            "links": [
                {"cluster": "a", "time": 20.0, "latency": 3.0},
                {"cluster": "a", "time": 10.0, "baud_rate": 8e3},
            ]
        },
    )
    a, b = parse(raw, "t").platform.clusters
    assert a.link_changes == ((10.0, Link(1.0, 1e3)), (20.0, Link(3.0, 1e3)))
    assert b.link_changes == ()


# -- unchanged runs, determinism ------------------------------------------------------------------


def test_a_zero_status_period_changes_nothing(tmp_path):
    raw = scenario([cluster("a"), cluster("b")], [job(i, i, 1, 3) for i in range(1, 9)])
    run_raw(tmp_path, raw, "plain")
    run_raw(tmp_path, {**raw, "stress": {"status_period": 0.0, "links": []}}, "zero")
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "zero" / name).read_bytes()


def test_perturbed_runs_are_deterministic(tmp_path):
    raw = scenario(
        [cluster("a", cpus=2, bandwidth=1e6), cluster("b", cpus=3, latency=0.7, bandwidth=4e5)],
        [job(i, 1.5 * i, 1 + i % 2, 5 + i % 7, in_bytes=1e5 * (i % 5)) for i in range(1, 40)],
        meta="mcrs",
        stress={
            "status_period": 7.5,
            "links": [
                {"cluster": "a", "time": 20.0, "bandwidth": 5e4},
                {"cluster": "b", "time": 30.0, "latency": 0.2},
            ],
        },
    )
    run_raw(tmp_path, raw, "one")
    run_raw(tmp_path, raw, "two")
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()


def test_link_changes_after_the_last_job_do_not_keep_the_run_alive(tmp_path):
    stress = {"links": [{"cluster": "a", "time": 1e6, "latency": 2.0}]}
    _, events = run_raw(tmp_path, scenario([cluster("a")], [job(1, 0, 1, 1)], stress=stress))
    assert link_rows(events) == []


# -- validation -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stress", "message"),
    [
        ({"status_period": -1.0}, r"key 'stress.status_period' = -1.0: expected a number >= 0"),
        (
            {"links": [{"cluster": "zz", "time": 1.0, "latency": 1.0}]},
            r"'stress.links\[0\].cluster' = 'zz': expected one of the clusters: a, b",
        ),
        (
            {"links": [{"cluster": "a", "time": 1.0}]},
            r"stress.links\[0\]: expected a new 'latency' and/or 'bandwidth'",
        ),
        (
            {"links": [{"cluster": "a", "time": 1.0, "latency": 0.0}]},
            r"'stress.links\[0\].latency' = 0.0: expected a finite number >= 1e-06",
        ),
        (
            {"links": [{"cluster": "a", "time": -1.0, "latency": 1.0}]},
            r"'stress.links\[0\].time' = -1.0: expected a number >= 0",
        ),
        ({"links": [{"cluster": "a", "latency": 1.0}]}, r"missing key 'stress.links\[0\].time'"),
        (
            {"links": [{"cluster": "a", "time": 1.0, "latency": 1.0, "bandwidht": 1.0}]},
            r"unknown key 'stress.links\[0\].bandwidht'",
        ),
        (
            {"links": [{"cluster": "a", "time": 1.0, "bandwidth": 1.0, "baud_rate": 8.0}]},
            r"'stress.links\[0\].baud_rate' = 8.0: expected either bandwidth or baud_rate",
        ),
        (
            {
                "links": [
                    {"cluster": "b", "time": 1.0, "latency": 1.0},
                    {"cluster": "b", "time": 1.0, "latency": 2.0},
                ]
            },
            r"stress.links\[1\] changes the link of cluster 'b' at time 1, as stress.links\[0\] does",
        ),
    ],
)
def test_invalid_stress_link_keys_are_reported_with_file_key_and_expectation(stress, message):
    raw = scenario([cluster("a"), cluster("b")], [job(1, 0, 1, 1)], stress=stress)
    with pytest.raises(ScenarioError, match=r"^my\.toml: .*" + message):
        parse(raw, "my.toml")


def test_meta_knows_only_the_scenario_link_until_a_report_says_otherwise():
    from emulator.partitions.meta import MetaPartition

    raw = degrading("most-bandwidth", 0.0)
    s = parse(raw, "t")
    meta = next(p for p in build_partitions(s, [META]) if isinstance(p, MetaPartition))
    assert list(meta.view.bandwidth) == [1e6, 5e5] and list(meta.view.latency) == [1.0, 1.0]


def test_the_documented_example_is_a_valid_stress_table():
    import re
    import tomllib
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "docs" / "stress.md").read_text()
    section = text.split("## Link degradation and stale information", 1)[1]
    example = tomllib.loads(re.search(r"```toml\n(.*?)```", section, re.S).group(1))
    raw = scenario([cluster("c0"), cluster("c1", bandwidth=1e6)], [job(1, 0, 1, 1)], stress=example["stress"])
    s = parse(raw, "docs/stress.md")
    assert s.status_period == 60.0
    assert s.platform.clusters[1].link_changes == ((1000.0, Link(5.0, 1e5)),)
