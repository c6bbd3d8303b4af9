"""Metrics on tiny hand-built traces, every expected value worked out by hand in a comment."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pytest

from emulator.core.model import JOB_INPUTS, Cluster, Link, Machine, Platform
from emulator.data.metrics import METRICS, _groups, is_in, summarize
from emulator.data.trace import EVENT_SCHEMA as EVENTS
from emulator.data.trace import JOB_OUTCOMES

JOBS = pa.schema([*JOB_INPUTS, *JOB_OUTCOMES])
"""``jobs.arrow``'s columns but the preemption ones (the metrics read those only when present)."""

KIND_ORDER = ("submit", "dispatch", "arrive", "reject", "finish", "start")
"""Order of same-time events in the helper's traces (the engine's exact order doesn't matter)."""


def cluster(name: str, cpus: int = 2, licenses: dict[str, int] | None = None) -> Cluster:
    return Cluster(
        name, machines=(Machine(cpus=cpus, mips=100.0),), link=Link(latency=1.0), licenses=licenses or {}
    )


def job(
    id: int, cluster: str | None, arrive=None, start=None, finish=None, *, cpus=1, submit=0.0, **extra
) -> dict:
    """One jobs row; ``start=None`` means rejected (at ``cluster`` if given, else by the meta-scheduler)."""
    done = start is not None
    row = {"id": id, "submit": submit, "cpus": cpus, "estimate": 10.0, "bench": 1.0, "licenses": []}
    row |= {"cluster": cluster, "arrive": arrive, "start": start, "finish": finish}
    row["status"] = "finished" if done else "rejected"
    row["reason"] = None if done else "no fit"
    row["wait"] = start - submit if done else None
    return row | extra


def trace(*rows: dict, platform: Platform) -> tuple[pa.Table, pa.Table]:
    """The jobs table of ``rows`` and the events an engine would write for them."""
    events = []
    for r in rows:
        where = platform.index(r["cluster"]) if r["cluster"] is not None else -1
        events.append((r["submit"], "submit", r["id"], -1))
        if r["arrive"] is not None:
            events.append((r["arrive"], "arrive", r["id"], where))
        if r["start"] is None:
            events.append((r["arrive"] if r["arrive"] is not None else r["submit"], "reject", r["id"], where))
        else:
            events += [(r["start"], "start", r["id"], where), (r["finish"], "finish", r["id"], where)]
    events.sort(key=lambda e: (e[0], KIND_ORDER.index(e[1]), e[2]))
    columns = {name: [r.get(name) for r in rows] for name in JOBS.names}
    event_columns = dict(zip(("time", "kind", "job", "cluster"), zip(*events, strict=True), strict=True))
    event_columns["partition"] = [c + 1 for c in event_columns["cluster"]]
    codes = np.array(event_columns["cluster"], dtype=np.int32)
    names = pa.array([c.name for c in platform.clusters], pa.string())
    event_columns["cluster"] = pa.DictionaryArray.from_arrays(pa.array(codes, mask=codes < 0), names)
    return pa.table(columns, schema=JOBS), pa.table(
        {n: event_columns.get(n, [None] * len(events)) for n in EVENTS.names}, schema=EVENTS
    )


def run(*rows: dict, clusters: tuple[Cluster, ...] = (cluster("A"),)) -> dict:
    platform = Platform(clusters)
    return summarize(*trace(*rows, platform=platform), platform=platform)


def test_two_jobs_on_two_cpus():
    # A has 2 CPUs. Job 1: 1 CPU, runs 0-10. Job 2: 2 CPUs, arrives at 2, waits for job 1, runs 10-20.
    # SU(t) = active / min(2, CPUs in system):
    #   [0, 2)   active 1, in system 1 -> 1/min(2,1) = 1
    #   [2, 10)  active 1, in system 3 -> 1/min(2,3) = 0.5
    #   [10, 20) active 2, in system 2 -> 2/2 = 1
    #   SU = (1*2 + 0.5*8 + 1*10) / 20 = 16/20 = 0.8
    # Utilization: (1*10 + 2*10) CPU-s / (2 CPUs * 20 s) = 0.75.
    # Tw = 0, 10; Te = 10, 10 -> slowdowns 1, 2; bounded the same (Te = 10).
    # CP (weights 1, 3, 4): makespan 20, idle 2 * 20 - 30 = 10 CPU-s, no deadline:
    #   (1 * 20 + 3 * 10 + 4 * 0) / 8 = 6.25; MCP of one cluster is its CP, PB needs two.
    summary = run(job(1, "A", 0.0, 0.0, 10.0), job(2, "A", 2.0, 10.0, 20.0, cpus=2))
    expected = {
        "jobs_finished": 2,
        "mean_wait": 5.0,
        "p50_wait": 0.0,  # nearest rank: the first of the two waits (0, 10), not their midpoint
        "p90_wait": 10.0,
        "p95_wait": 10.0,
        "p99_wait": 10.0,
        "max_wait": 10.0,
        "mean_turnaround": 15.0,
        "mean_slowdown": 1.5,
        "mean_slowdown_no_deadline": 1.5,
        "mean_bounded_slowdown": 1.5,
        "p50_bounded_slowdown": 1.0,
        "p90_bounded_slowdown": 2.0,
        "p95_bounded_slowdown": 2.0,
        "p99_bounded_slowdown": 2.0,
        "late_jobs": 0,
        "late_percent": None,
        "over_deadline": 0.0,
        "makespan": 20.0,
        "throughput": 0.1,
        "system_usage": 0.8,
        "license_usage": None,
        "workload_share": 1.0,
        "utilization": 0.75,
        "mcp": 6.25,
        "pb": None,
        "preemptions": 0,
        "preemptions_per_job": 0.0,
        "wasted_cpu_seconds": 0.0,
        "jobs_killed": 0,
        "jobs_killed_at_estimate": 0,
        "jobs_lost": 0,
        "jobs_returned": 0,
    }
    assert summary == {
        "jobs": {"total": 2, "finished": 2, "rejected": 0},
        "grid": expected,
        "clusters": {"A": expected},
    }
    assert list(summary["grid"]) == list(METRICS)


def test_late_job_and_over_deadline():
    # Job 1 finishes at 20, deadline 15: late by 5. Job 2 finishes at 10, deadline 30: on time.
    # Job 3 has no deadline. late = 1 of 2 deadline jobs = 50 %; over-deadline = 5.
    # Slowdowns: job 1 (0+20)/20 = 1, job 2 (0+10)/10 = 1, job 3 (10+10)/10 = 2 -> mean 4/3;
    # without deadline: job 3 only -> 2.
    summary = run(
        job(1, "A", 0.0, 0.0, 20.0, deadline=15.0),
        job(2, "A", 0.0, 0.0, 10.0, deadline=30.0),
        job(3, "A", 0.0, 10.0, 20.0),
    )["grid"]
    assert (summary["late_jobs"], summary["late_percent"], summary["over_deadline"]) == (1, 50.0, 5.0)
    assert summary["mean_slowdown"] == pytest.approx(4 / 3)
    assert summary["mean_slowdown_no_deadline"] == 2.0


def test_wait_and_bounded_slowdown_percentiles_by_nearest_rank():
    # 20 one-CPU jobs on 20 CPUs, all submitted at 0; job i starts at i (wait i s) and runs 10 s.
    # Nearest rank: the p-th percentile is the ceil(p/100 * 20)-th smallest value:
    #   p50 -> 10th = 10 s, p90 -> 18th = 18 s, p95 -> 19th = 19 s, p99 -> 20th = 20 s.
    # Bounded slowdown (w + 10) / 10: the same ranks, 2.0, 2.8, 2.9, 3.0.
    # Job 21 is rejected: no wait, left out. Cluster B's one job waits 7 s: every percentile is 7.
    rows = [job(i, "A", 0.0, float(i), i + 10.0) for i in range(1, 21)]
    rows += [job(21, None), job(22, "B", 0.0, 7.0, 17.0)]
    summary = run(*rows, clusters=(cluster("A", cpus=20), cluster("B")))
    a, b = summary["clusters"]["A"], summary["clusters"]["B"]
    assert [a[f"p{p}_wait"] for p in (50, 90, 95, 99)] == [10.0, 18.0, 19.0, 20.0]
    assert [a[f"p{p}_bounded_slowdown"] for p in (50, 90, 95, 99)] == pytest.approx([2.0, 2.8, 2.9, 3.0])
    assert [b[f"p{p}_wait"] for p in (50, 90, 95, 99)] == [7.0] * 4
    # The grid's 21 waits 1..20 and 7: the 11th smallest is 10 (7 comes before it), the 19th is 18.
    assert [summary["grid"][f"p{p}_wait"] for p in (50, 90, 95, 99)] == [10.0, 18.0, 19.0, 20.0]
    assert summary["grid"]["p50_wait"] == sorted([*range(1, 21), 7])[10]


def test_percentiles_of_no_finished_job_are_none():
    summary = run(job(1, None))["grid"]
    assert summary["p95_wait"] is None and summary["p99_bounded_slowdown"] is None


def test_bounded_slowdown_with_short_runtimes():
    # Job 1: Tw = 3, Te = 2 -> slowdown 5/2 = 2.5, bounded max(1, 5/10) = 1.
    # Job 2: Tw = 16, Te = 4 -> slowdown 20/4 = 5, bounded max(1, 20/10) = 2.
    summary = run(job(1, "A", 0.0, 3.0, 5.0), job(2, "A", 0.0, 16.0, 20.0))["grid"]
    assert summary["mean_slowdown"] == 3.75
    assert summary["mean_bounded_slowdown"] == 1.5


def test_rejected_job_counts_in_totals_not_in_means():
    # Job 2 is rejected by the meta-scheduler (never reaches A), despite a deadline: not late,
    # not waited on, no workload. Only job 1 (Tw = 4, Te = 6) enters the means.
    summary = run(job(1, "A", 0.0, 4.0, 10.0), job(2, None, deadline=1.0, estimate=99.0))
    assert summary["jobs"] == {"total": 2, "finished": 1, "rejected": 1}
    grid = summary["grid"]
    assert (grid["jobs_finished"], grid["mean_wait"], grid["mean_turnaround"]) == (1, 4.0, 10.0)
    assert (grid["late_jobs"], grid["late_percent"]) == (0, None)
    assert summary["clusters"]["A"]["workload_share"] == 1.0


def test_reject_at_a_cluster_leaves_its_system():
    # Job 2 arrives at A at 0 and is rejected there: it is in A's system for no time, so
    # SU = 1/min(2, 1) = 1 throughout (not 1/min(2, 2) = 0.5). It still counts as A's workload
    # (10 of 20 MI) and in the totals.
    summary = run(job(1, "A", 0.0, 0.0, 10.0), job(2, "A", 0.0))
    assert summary["jobs"] == {"total": 2, "finished": 1, "rejected": 1}
    assert summary["clusters"]["A"]["system_usage"] == 1.0
    assert summary["clusters"]["A"]["workload_share"] == 1.0


def test_license_usage_with_one_copy():
    # A: 2 CPUs, 1 matlab copy. Jobs 1 and 2 need matlab, job 3 none; all arrive at 0.
    # Job 1 runs 0-10, job 3 runs 0-5, job 2 starts at 12 (say the policy held it) and runs to 20.
    # LU(t) = copies in use / min(1, copies wanted):
    #   [0, 10) 1/min(1, 2) = 1;  [10, 12) 0/min(1, 1) = 0;  [12, 20) 1/1 = 1
    #   LU = (10 + 0 + 8) / 20 = 0.9
    # SU(t): [0, 5) 2/min(2,3) = 1; [5, 10) 1/min(2,2) = 0.5; [10, 12) 0/1 = 0; [12, 20) 1/1 = 1
    #   SU = (5 + 2.5 + 0 + 8) / 20 = 0.775
    matlab = {"licenses": ["matlab"]}
    summary = run(
        job(1, "A", 0.0, 0.0, 10.0, **matlab),
        job(2, "A", 0.0, 12.0, 20.0, **matlab),
        job(3, "A", 0.0, 0.0, 5.0),
        clusters=(cluster("A", licenses={"matlab": 1}),),
    )
    assert summary["clusters"]["A"]["license_usage"] == 0.9
    assert summary["clusters"]["A"]["system_usage"] == 0.775
    assert summary["grid"]["license_usage"] == 0.9


def test_workload_share_across_two_clusters():
    # Job 1: 10 s x 1 bench = 10 MI on A; job 2: 15 s x 2 bench = 30 MI on B; job 3 never reached
    # a cluster and does not count. Shares: A 10/40 = 0.25, B 30/40 = 0.75, grid 1.
    # Grid utilization: (2*5 + 4*20) CPU-s / ((2 + 4) CPUs * 20 s) = 90/120 = 0.75.
    summary = run(
        job(1, "A", 0.0, 0.0, 5.0, cpus=2),
        job(2, "B", 0.0, 0.0, 20.0, cpus=4, estimate=15.0, bench=2.0),
        job(3, None, estimate=100.0),
        clusters=(cluster("A"), cluster("B", cpus=4)),
    )
    assert list(summary["clusters"]) == ["A", "B"]
    shares = [summary[k]["workload_share"] for k in ("grid",)] + [
        c["workload_share"] for c in summary["clusters"].values()
    ]
    assert shares == [1.0, 0.25, 0.75]
    assert summary["grid"]["utilization"] == 0.75
    assert summary["clusters"]["A"]["makespan"] == 5.0


def test_grid_system_usage_pools_all_clusters():
    # A (2 CPUs): jobs 1 and 2 (2 CPUs each) run 0-10 and 10-20. B (4 CPUs): job 3 (2 CPUs) runs 0-20.
    # Each cluster alone is at SU 1 (A: 2/min(2,4), then 2/2; B: 2/min(4,2)).
    # The grid as one pool of 6 CPUs: [0, 10) 4/min(6, 6) = 2/3; [10, 20) 4/min(6, 4) = 1
    #   SU = (10 * 2/3 + 10) / 20 = 5/6.
    summary = run(
        job(1, "A", 0.0, 0.0, 10.0, cpus=2),
        job(2, "A", 0.0, 10.0, 20.0, cpus=2),
        job(3, "B", 0.0, 0.0, 20.0, cpus=2),
        clusters=(cluster("A"), cluster("B", cpus=4)),
    )
    assert [c["system_usage"] for c in summary["clusters"].values()] == [1.0, 1.0]
    assert summary["grid"]["system_usage"] == pytest.approx(5 / 6)


def test_summary_is_strict_json_even_when_undefined():
    # Nothing finished: means, makespan, usage and shares are undefined -> None, never NaN.
    summary = run(job(1, None))
    assert summary["grid"]["mean_wait"] is None and summary["grid"]["system_usage"] is None
    assert summary["clusters"]["A"]["workload_share"] is None
    json.dumps(summary, allow_nan=False)
    full = run(job(1, "A", 0.0, 0.0, 0.0), job(2, "A", 0.0, 1.0, 3.0, deadline=2.0))
    assert json.loads(json.dumps(full, allow_nan=False)) == full
    assert full["grid"]["mean_slowdown"] == 1.5  # job 1 (Te = 0) has no slowdown; job 2: 3/2


def test_events_naming_unknown_jobs_are_an_error():
    jobs, events = trace(job(1, "A", 0.0, 0.0, 1.0), platform=Platform((cluster("A"),)))
    with pytest.raises(ValueError, match="not in the jobs table"):
        summarize(jobs.slice(0, 0), events, Platform((cluster("A"),)))


def test_mcp_weights_clusters_by_jobs_and_pb_is_the_spread_of_their_cp():
    # A (2 CPUs, fcfs: the default weights 1, 3, 4): jobs 1, 2 on 1 CPU each, 0-10; job 1 is due
    #   at 8. Makespan 10, idle 0, over-deadline 2: CP = (10 + 0 + 4 * 2) / 8 = 2.25.
    # B (2 CPUs, titan with weights 1, 1, 2): job 3 on 1 CPU, 5-9. Makespan 4, idle 2 * 4 - 4 = 4:
    #   CP = (4 + 4 + 0) / 4 = 2.
    # MCP = (2.25 * 2 + 2 * 1) / 3 = 6.5 / 3; PB = |2.25 - 2| / sqrt(2) (sample deviation of two).
    titan = Cluster(
        "B", (Machine(2, 100.0),), Link(1.0), policy="titan[w_idle=1.0,w_makespan=1.0,w_over=2.0]"
    )
    summary = run(
        job(1, "A", 0.0, 0.0, 10.0, deadline=8.0),
        job(2, "A", 0.0, 0.0, 10.0),
        job(3, "B", 0.0, 5.0, 9.0),
        clusters=(cluster("A"), titan),
    )
    assert [c["mcp"] for c in summary["clusters"].values()] == [2.25, 2.0]
    assert summary["grid"]["mcp"] == pytest.approx(6.5 / 3)
    assert summary["grid"]["pb"] == pytest.approx(0.25 / 2**0.5)
    assert summary["clusters"]["A"]["pb"] is None


def test_the_jobs_sentence_says_how_many_rejections_were_jobs_lost_to_failures():
    from emulator.data.metrics import jobs_sentence

    plain = {"jobs": {"total": 1200, "finished": 1199, "rejected": 1}, "grid": {"jobs_lost": 0}}
    assert jobs_sentence(plain) == "1,200 jobs: 1,199 finished, 1 rejected"
    failing = {"jobs": {"total": 10, "finished": 6, "rejected": 3, "killed": 1}, "grid": {"jobs_lost": 2}}
    assert jobs_sentence(failing) == (
        "10 jobs: 6 finished, 3 rejected (2 of them lost to failures), 1 killed at their estimate"
    )


@pytest.mark.parametrize("count", [3, 40_000])  # 16-bit keys (radix sort) and wider ones
def test_groups_select_what_each_cluster_mask_did(count):
    # The per-cluster metrics take each cluster's rows from one sort: the same rows, in the same
    # order, as the mask ``keys == k`` (so sums agree to the last bit); keys outside 0..count-1
    # (-1: a job that reached no cluster) are in no group.
    keys = np.array([2, -1, 0, 2, count, 1, 0, 2, -1, count + 5])
    order, bounds = _groups(keys, count)
    assert len(bounds) == count + 1
    for k in range(count):
        assert order[bounds[k] : bounds[k + 1]].tolist() == np.flatnonzero(keys == k).tolist()


def test_is_in_on_a_dictionary_column_is_is_in_on_its_strings():
    # The trace's kind column is dictionary-encoded: is_in tests its codes instead of decoding every
    # row. Two chunks with different dictionaries and a null: the mask of the plain strings.
    words = [["start", "finish", None, "arrive"], ["kill", "start", "reject"]]
    chunks = [pa.array(chunk, pa.string()).dictionary_encode() for chunk in words]
    column = pa.chunked_array(chunks)
    plain = pa.chunked_array([pa.array(chunk, pa.string()) for chunk in words])
    for values in [("start",), ("finish", "reject", "kill"), ("nothing",), ()]:
        assert is_in(column, values).tolist() == is_in(plain, values).tolist()
    assert is_in(column, ("start", "kill")).tolist() == [True, False, False, False, True, True, False]


def test_a_runs_summary_reads_only_the_event_columns_the_metrics_use(tmp_path):
    from dataclasses import replace

    from emulator import load_scenario, run
    from emulator.engine.runner import _events_for_metrics

    scenario = load_scenario("quickstart", ["workload.jobs=20"])
    run(scenario, tmp_path / "run")
    events = tmp_path / "run" / "events.arrow"
    assert _events_for_metrics(events, scenario.platform).column_names == [
        "time",
        "kind",
        "job",
        "cluster",
        "info",
    ]
    clusters = scenario.platform.clusters
    shared = Platform((replace(clusters[0], license_per_machine=True), *clusters[1:]))
    assert _events_for_metrics(events, shared).column_names == [
        "time",
        "kind",
        "job",
        "cluster",
        "machines",
        "info",
    ]
