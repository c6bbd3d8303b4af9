"""The papers' ambiguous formulas as named options (issue 20, item 4): both readings, by hand.

Each option keeps today's behaviour as its default; each test computes both
readings' values by hand and checks that they differ.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from emulator.core.genetic import Waiting, Weights, cost
from emulator.core.model import Job
from emulator.data.metrics import cluster_cp
from emulator.policies import LOCAL, META, PolicyError, PolicySpec
from emulator.policies.mcrs import Mcrs
from emulator.policies.meta_base import Dispatch, Reject
from emulator.policies.titan import cp_weights
from emulator.policies.two_level import TwoLevel

from .conftest import job, machine, run_scenario

# --- (a) MUSCLE/TITAN's CP weight pairing: eq. 1 vs Sec. 5 ----------------------------------------


def test_cp_pairing_maps_the_papers_triple_to_the_terms():
    # (W_o, W_m, W_i) = (4, 3, 1): eq. 1 weighs makespan by W_i = 1 and idle by W_m = 3;
    # Sec. 5 weighs makespan by W_m = 3 and idle by W_i = 1.
    assert cp_weights(1.0, 3.0, 4.0) == Weights(makespan=1.0, idle=3.0, over=4.0)
    assert cp_weights(1.0, 3.0, 4.0, "text") == Weights(makespan=3.0, idle=1.0, over=4.0)
    assert LOCAL.create("titan").weights == Weights(1.0, 3.0, 4.0)
    assert LOCAL.create("titan[pairing=text]").weights == Weights(3.0, 1.0, 4.0)
    assert LOCAL.create("titan[pairing=text,w_over=12.0]").weights == Weights(3.0, 1.0, 12.0)
    with pytest.raises(PolicyError, match="pairing"):
        LOCAL.create("titan[pairing=sec5]")


def test_cp_pairing_in_titans_cost():
    # Two CPUs free at 0. J0: 2 CPUs, 3 s, no deadline; J1: 1 CPU, 1 s, due at 2.
    # Order [J1, J0]: J1 0..1 on one CPU, J0 waits for it (the other CPU idle 0..1) and runs 1..4:
    #   makespan 4, idle 1, over-deadline 0.
    # Order [J0, J1]: J0 0..3 on both CPUs, J1 3..4 (due at 2): makespan 4, idle 0, over-deadline 2.
    jobs = Waiting(np.array([2, 1]), np.array([3.0, 1.0]), np.array([np.inf, 2.0]))
    orders = np.array([[1, 0], [0, 1]])
    eq1 = cost(orders, jobs, np.zeros(2), 0.0, cp_weights(1.0, 3.0, 4.0, "eq1"))
    text = cost(orders, jobs, np.zeros(2), 0.0, cp_weights(1.0, 3.0, 4.0, "text"))
    assert eq1.makespan.tolist() == text.makespan.tolist() == [4.0, 4.0]
    assert eq1.idle.tolist() == [1.0, 0.0]
    assert eq1.over.tolist() == [0.0, 2.0]
    # eq. 1: (1 * 4 + 3 * 1 + 4 * 0) / 8 = 7/8; (1 * 4 + 3 * 0 + 4 * 2) / 8 = 12/8
    assert eq1.cp.tolist() == [0.875, 1.5]
    # Sec. 5: (3 * 4 + 1 * 1 + 0) / 8 = 13/8; (3 * 4 + 0 + 4 * 2) / 8 = 20/8
    assert text.cp.tolist() == [1.625, 2.5]


def test_cp_pairing_in_the_runs_metrics():
    # A 4-CPU cluster: makespan 10, utilization 50% (idle 4 x 10 x 0.5 = 20), over-deadline 2.
    metrics = {"makespan": 10.0, "utilization": 0.5, "over_deadline": 2.0}
    eq1 = cluster_cp(metrics, SimpleNamespace(cpus=4, policy=PolicySpec.parse("titan")))
    text = cluster_cp(metrics, SimpleNamespace(cpus=4, policy=PolicySpec.parse("titan[pairing=text]")))
    assert eq1 == (1 * 10 + 3 * 20 + 4 * 2) / 8 == 9.75
    assert text == (3 * 10 + 1 * 20 + 4 * 2) / 8 == 7.25
    # Fig. 6's (12, 3, 1): eq. 1 (10 + 60 + 24) / 16; Sec. 5 (30 + 20 + 24) / 16
    assert (
        cluster_cp(metrics, SimpleNamespace(cpus=4, policy=PolicySpec.parse("titan[w_over=12.0]"))) == 94 / 16
    )
    fig6_text = SimpleNamespace(cpus=4, policy=PolicySpec.parse("titan[pairing=text,w_over=12.0]"))
    assert cluster_cp(metrics, fig6_text) == 74 / 16


# --- (b) PARS / BARS with a load term or without ------------------------------------------------


def view_of(queued, speed=(100.0, 300.0), bandwidth=(4e5, 1e6)):
    return SimpleNamespace(
        eligible=lambda j: np.array([True, True]),
        speed=lambda j: np.array(speed),
        bandwidth=np.array(bandwidth),
        queued=np.array(queued),
    )


def test_pars_and_bars_load_term_by_direct_call():
    # a: 100 MIPS, 0.4 MB/s, nothing waiting; b: 300 MIPS, 1 MB/s, 3 jobs waiting.
    # Without load: b (300 > 100; 1e6 > 4e5). With it: power 100 / 1 = 100 > 300 / 4 = 75 -> a;
    # bandwidth 4e5 / 1 = 4e5 > 1e6 / 4 = 2.5e5 -> a.
    one, view = Job(1, 0.0, 1, 10.0), view_of([0, 3])
    pars, pars_load = META.create("most-power"), META.create("most-power[load=true]")
    assert pars.score(one, view).tolist() == [100.0, 300.0]
    assert pars_load.score(one, view).tolist() == [100.0, 75.0]
    assert (pars.choose(one, view), pars_load.choose(one, view)) == (Dispatch(1), Dispatch(0))
    bars, bars_load = META.create("most-bandwidth"), META.create("most-bandwidth[load=true]")
    assert (bars.choose(one, view), bars_load.choose(one, view)) == (Dispatch(1), Dispatch(0))
    # One waiting job at b: 300 / 2 = 150 > 100 still b; 1e6 / 2 = 5e5 > 4e5 still b.
    view = view_of([0, 1])
    assert (pars_load.choose(one, view), bars_load.choose(one, view)) == (Dispatch(1), Dispatch(1))


@pytest.mark.parametrize(
    ("meta", "chosen"),
    # Three 1-CPU jobs at t = 0 (latency 1: all still in flight when the next is chosen).
    # a: 100 MIPS, 0.4 MB/s; b: 300 MIPS, 1 MB/s. With the load term, b's score after k jobs
    # sent there is 300 / (1 + k): 300, 150, 100 = a's 100 -> tie, the lowest index (a).
    # Bandwidth: 1e6, 5e5, 3.3e5 < 4e5 -> a.
    [
        ("most-power", ["b", "b", "b"]),
        ("most-power[load=true]", ["b", "b", "a"]),
        ("most-bandwidth", ["b", "b", "b"]),
        ("most-bandwidth[load=true]", ["b", "b", "a"]),
    ],
)
def test_pars_and_bars_load_term_in_a_run(tmp_path, meta, chosen):
    clusters = [
        {"name": "a", "latency": 1.0, "policy": "fcfs", "machines": [machine(1, 100.0)], "bandwidth": 4e5},
        {"name": "b", "latency": 1.0, "policy": "fcfs", "machines": [machine(1, 300.0)], "bandwidth": 1e6},
    ]
    rows = run_scenario(tmp_path, clusters, [job(i, 0, 1, 10) for i in (1, 2, 3)], meta=meta)
    assert [rows[i]["cluster"] for i in (1, 2, 3)] == chosen


# --- (c) MCRS's infeasible-cluster rule -----------------------------------------------------------


def test_mcrs_infeasible_rule_by_direct_call():
    # a: 100 MIPS, 1 MB/s; b: 200 MIPS, 0.1 MB/s; both idle. A 1000 MI job with 1 MB in and out:
    # TTR_a = 1 + 0 + 10 + 1 = 12, TTR_b = 10 + 0 + 5 + 10 = 25.
    zeros = np.zeros(2)
    view = SimpleNamespace(
        eligible=lambda j: np.array([True, True]),
        bandwidth=np.array([1e6, 1e5]),
        speed=lambda j: np.array([100.0, 200.0]),
        now=0.0,
        cpus=np.ones(2),
        free_cpus=np.ones(2),
        queued=np.zeros(2, dtype=int),
        running_work=zeros,
        draining_cpus=zeros,
        report_time=zeros,
        queued_cpu_work=zeros,
        in_flight_work=zeros,
    )
    least, reject = Mcrs(platform=None), Mcrs(on_infeasible="reject", platform=None)
    for policy in (least, reject):
        policy.mips = np.array([100.0, 200.0])
    files = dict(bench=100.0, in_bytes=1e6, out_bytes=1e6)
    late = Job(1, 0.0, 1, 10.0, deadline=11.0, **files)  # 11 s left: both clusters filtered out
    assert least.ttr(late, view).tolist() == [12.0, 25.0]
    assert least.choose(late, view) == Dispatch(0)  # the least TTR anyway
    reason = reject.choose(late, view)
    assert isinstance(reason, Reject) and "least estimated TTR 12 s, 11 s left" in reason.reason
    # 30 s left: both feasible, both readings take a (TTR 12)
    due = Job(2, 0.0, 1, 10.0, deadline=30.0, **files)
    assert least.choose(due, view) == reject.choose(due, view) == Dispatch(0)
    # 20 s left: b (25) is filtered out, a stays: both readings agree again
    assert least.choose(Job(3, 0.0, 1, 10.0, deadline=20.0, **files), view) == Dispatch(0)


# --- (d) the two-level meta-scheduler's priority: mean (seed 001) vs sum (seed 000) --------------


def test_two_level_combine_changes_priorities_and_dispatch():
    # Parts (levels P = 8, licenses + user, |L| = 8): A: 1 license -> ceil(1 x 8 / 8) = 1, gold 8;
    # B: 8 licenses -> 8, silver 4.
    # mean: A (1 + 8) / 2 = 4.5 -> 5 (halves up), B (8 + 4) / 2 = 6.
    # sum: A 9 -> 8 (clipped), B 12 -> 8.
    # Dispatch: A finds both clusters idle -> cluster 0. Under "mean", B (6) finds no job of
    # priority >= 6 at cluster 0 -> cluster 0; under "sum", A already holds level 8 there, and
    # cluster 1 has nothing at >= 8 -> cluster 1.
    a = Job(1, 0.0, 1, 10.0, licenses=("l0",), user_class="gold")
    b = Job(2, 0.0, 1, 10.0, licenses=tuple(f"l{i}" for i in range(8)), user_class="silver")
    view = SimpleNamespace(eligible=lambda j: np.array([True, True]))
    platform = SimpleNamespace(clusters=[None, None])
    chosen = {}
    for combine in ("mean", "sum"):
        policy = TwoLevel(
            combine=combine, heuristics="licenses+user", licenses_total=8, platform=platform, rng=None
        )
        chosen[combine] = [policy.choose(a, view), policy.choose(b, view)]
    assert chosen["mean"] == [Dispatch(0, 5), Dispatch(0, 6)]
    assert chosen["sum"] == [Dispatch(0, 8), Dispatch(1, 8)]


def test_two_level_combine_with_the_deadline_part():
    # The first job's E[margin] is its own margin, 100: u = 200 / 510, bounds 2u, 6u, ..., 254u, 510u;
    # 100 = 255u lies in [S_7, S_8) -> part 8 - 7 = 1; r = 100 / 150 in [1/2, 1) adds 0.
    # Licenses 2 of 8 -> 2; silver -> 4. mean (1 + 2 + 4) / 3 = 2.33 -> 2; sum 7.
    def first(combine):
        policy = TwoLevel(combine=combine, licenses_total=8, platform=SimpleNamespace(clusters=[]))
        return policy.priority(
            Job(1, 0.0, 1, 150.0, deadline=250.0, licenses=("l0", "l1"), user_class="silver")
        )

    assert (first("mean"), first("sum")) == (2, 7)
