"""MCRS and its single-criterion baselines (PARS, BARS), and the backlog the clusters report."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from emulator.core.model import Job
from emulator.core.runs import Run
from emulator.policies import META, PolicyError
from emulator.policies.mcrs import Mcrs
from emulator.state.backlog import Backlog

from .conftest import job, machine, run_scenario


def cluster(name: str, cpus: int = 1, mips: float = 1.0, bandwidth: float | None = None, policy="fcfs"):
    table = {"name": name, "latency": 1.0, "policy": policy, "machines": [machine(cpus, mips)]}
    return table | ({} if bandwidth is None else {"bandwidth": bandwidth})


def test_ttr_adds_transfers_wait_and_run_and_the_deadline_filters(tmp_path):
    # a: 100 MIPS, 1 MB/s; b: 200 MIPS, 0.1 MB/s. J1: 1000 MI (estimate 10 at bench 100),
    # 1 MB in, 1 MB out. TTR_a = 1 + 0 + 1000 / 100 + 1 = 12; TTR_b = 10 + 0 + 5 + 10 = 25.
    # Jobs 100 s apart, so each finds the grid idle. J1 (deadline 20 after submit): b is
    # dropped, a wins. J2 (deadline 30): both are left, a wins (least TTR). J3 (deadline 11):
    # none is left -> the least TTR (a) by default.
    clusters = [cluster("a", 1, 100.0, 1e6), cluster("b", 1, 200.0, 1e5)]
    files = {"in_bytes": 1e6, "out_bytes": 1e6, "bench": 100.0}
    jobs = [job(i, t, 1, 10, deadline=t + d, **files) for i, t, d in ((1, 0, 20), (2, 100, 30), (3, 200, 11))]
    rows = run_scenario(tmp_path, clusters, jobs, meta="mcrs")
    assert [rows[i]["cluster"] for i in (1, 2, 3)] == ["a", "a", "a"]
    view = SimpleNamespace(
        eligible=lambda j: np.array([True, True]),
        bandwidth=np.array([1e6, 1e5]),
        speed=lambda j: np.array([100.0, 200.0]),
        now=0.0,
        **idle_backlog(2),
    )
    policy = Mcrs(platform=None)
    policy.mips = np.array([100.0, 200.0])
    one = Job(1, 0.0, 1, 10.0, bench=100.0, in_bytes=1e6, out_bytes=1e6, deadline=20.0)
    assert policy.ttr(one, view).tolist() == [12, 25]


def idle_backlog(n: int, cpus: int = 1) -> dict:
    zeros = np.zeros(n)
    return dict(
        cpus=np.full(n, cpus),
        free_cpus=np.full(n, cpus),
        queued=np.zeros(n, dtype=int),
        running_work=zeros,
        draining_cpus=zeros,
        report_time=zeros,
        queued_cpu_work=zeros,
        in_flight_work=zeros,
    )


def test_wait_estimate_drains_the_running_work_and_spreads_the_queued_work():
    # Reported at t=10: 100 CPU-seconds left on 2 draining CPUs; now 30: 100 - 2 * 20 = 60 left.
    # Queued 1500 CPU x MI reported + 500 in flight = 2000, at 100 MIPS: 20 CPU-seconds.
    # 4 CPUs: (60 + 20) / 4 = 20. The second cluster is idle with 4 free CPUs: 0.
    view = SimpleNamespace(
        now=30.0,
        cpus=np.array([4, 4]),
        free_cpus=np.array([0, 4]),
        queued=np.array([3, 0]),
        running_work=np.array([100.0, 0.0]),
        draining_cpus=np.array([2, 0]),
        report_time=np.array([10.0, 0.0]),
        queued_cpu_work=np.array([1500.0, 0.0]),
        in_flight_work=np.array([500.0, 0.0]),
    )
    policy = Mcrs(platform=None)
    policy.mips = np.array([100.0, 100.0])
    assert policy.wait(Job(1, 30.0, 2, 1.0), view).tolist() == [20, 0]
    # Long after the report the running work is drained to 0 (not negative): (0 + 20) / 4.
    view.now = 500.0
    assert policy.wait(Job(1, 500.0, 2, 1.0), view).tolist() == [5, 0]


def test_mcrs_sees_the_reported_backlog(tmp_path):
    # Two 1-CPU clusters at 1 MIPS, latency 1, jobs of 100 s.
    # J1 at 0: both idle, TTR 100 each -> a (lowest index). It starts at 1 (estimated end 101);
    #   a reports 100 CPU-seconds left at t=1 (delivered at 2).
    # J2 at 10: a: 100 - 9 = 91 left, nothing queued -> wait 91, TTR 191; b: 100 -> b.
    # J3 at 20: a: 81 -> 181; b (J2 started at 11, 100 left then): 91 -> 191 -> a.
    # J4 at 20, deadline 170: a: 81 + J3 in flight (100 CPU x MI / 1 MIPS) = 181 -> 281;
    #   b: 191. Both exceed 150: rejected with on_infeasible = reject, else b (least TTR).
    jobs = [job(1, 0, 1, 100), job(2, 10, 1, 100), job(3, 20, 1, 100), job(4, 20, 1, 100, deadline=170)]
    clusters = [cluster("a"), cluster("b")]
    rows = run_scenario(tmp_path / "reject", clusters, jobs, meta="mcrs[on_infeasible=reject]")
    assert [rows[i]["cluster"] for i in (1, 2, 3)] == ["a", "b", "a"]
    assert rows[4]["status"] == "rejected" and "deadline" in rows[4]["reason"]
    rows = run_scenario(tmp_path / "least", clusters, jobs, meta="mcrs")
    assert [rows[i]["cluster"] for i in (1, 2, 3, 4)] == ["a", "b", "a", "b"]


def test_backlog_counts_running_work_by_estimate():
    backlog = Backlog()
    jobs = [Job(1, 0, 2, 100.0), Job(2, 0, 1, 50.0), Job(3, 0, 4, 10.0, runtime=30.0)]
    for j in jobs:
        backlog.queued(j)
    assert backlog.queued_cpu_work == 2 * 100 + 50 + 4 * 10
    runs = [Run(j, 0.0, ((0, j.cpus),), (), (), 1.0) for j in jobs]  # estimated ends 100, 50, 10
    for run in runs:
        backlog.started(run)
    assert backlog.queued_cpu_work == 0
    # At 5: 2 * 95 + 1 * 45 + 4 * 5 = 255 CPU-seconds on 7 CPUs.
    assert backlog.running_work(5.0) == 255 and backlog.draining_cpus == 7
    backlog.finished(runs[1])  # J2 ends early (at 20): it stops counting
    # At 20: J3 is past its estimated end (10) but still runs: it counts 0. J1: 2 * 80.
    assert backlog.running_work(20.0) == 160 and backlog.draining_cpus == 2
    backlog.finished(runs[2])  # the overdue job ends: already uncounted
    backlog.finished(runs[0])
    assert backlog.running_work(120.0) == 0 and backlog.draining_cpus == 0


@pytest.mark.parametrize(
    ("meta", "chosen"),
    # a: 4 CPUs at 100 MIPS (400 in all), 0.1 MB/s; b: 1 CPU at 300 MIPS, 1 MB/s.
    [
        ("most-power", "b"),  # per CPU: 300 > 100
        ("most-power[measure=total]", "a"),  # 400 > 300
        ("most-bandwidth", "b"),
    ],
)
def test_single_criterion_baselines_send_every_job_to_one_cluster(tmp_path, meta, chosen):
    clusters = [cluster("a", 4, 100.0, 1e5), cluster("b", 1, 300.0, 1e6)]
    rows = run_scenario(tmp_path, clusters, [job(i, i, 1, 10) for i in (1, 2, 3)], meta=meta)
    assert {rows[i]["cluster"] for i in (1, 2, 3)} == {chosen}


def test_baselines_skip_clusters_that_cannot_run_the_job(tmp_path):
    # b is faster and wider, but has 1 CPU: a 2-CPU job goes to a under PARS and BARS.
    clusters = [cluster("a", 4, 100.0, 1e5), cluster("b", 1, 300.0, 1e6)]
    for meta in ("most-power", "most-bandwidth", "mcrs"):
        (tmp_path / meta).mkdir()
        rows = run_scenario(tmp_path / meta, clusters, [job(1, 0, 2, 10)], meta=meta)
        assert rows[1]["cluster"] == "a"


def test_bad_parameters_are_refused():
    with pytest.raises(PolicyError, match="on_infeasible"):
        META.create("mcrs[on_infeasible=wait]")
    with pytest.raises(PolicyError, match="measure"):
        META.create("most-power[measure=peak]")
