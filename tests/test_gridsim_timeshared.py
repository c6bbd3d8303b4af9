"""GridSim 5.2 ``TimeShared`` (local policy ``gridsim-timeshared``): hand-computed scenarios.

Rules (``gridsim/TimeShared.java``, see :mod:`emulator.state.timeshared`): every
gridlet runs from its arrival; with n gridlets on P PEs, k = n // P, r = n % P,
the first (P - r) * k in arrival order get MIPS / k and the rest
MIPS / (k + 1) (each the whole MIPS when n < P); progress is added at every
arrival and internal event with the shares of the gridlets present before
it; after that update every gridlet with nothing left finishes; each arrival
and each internal event schedules one internal event at now + the least
``max(1, remaining / share)``, and outdated events still fire.
"""

from __future__ import annotations

import numpy as np
import pytest

from emulator import run
from emulator.core.model import Cluster, Job, Link, Machine
from emulator.data.scenario import parse
from emulator.policies import LOCAL
from emulator.state.timeshared import SharedResources, mi_shares


def run_timeshared(tmp_path, machines, gridlets, licenses=None) -> dict[int, dict]:
    """One cluster ``R`` of ``(cpus, mips)`` machines; gridlets ``(length MI, PEs, submit[, licenses])``."""
    cluster = {
        "name": "R",
        "machines": [{"cpus": cpus, "mips": mips} for cpus, mips in machines],
        "policy": "gridsim-timeshared",
        "licenses": licenses or {},
    }
    rows = []
    for i, (length, pes, submit, *lic) in enumerate(gridlets, 1):
        rows.append(
            {"id": i, "length": length, "cpus": pes, "submit": submit, "licenses": lic[0] if lic else []}
        )
    scenario = {
        "name": "timeshared",
        "clusters": [cluster],
        "workload": {"source": "gridlets", "gridlets": rows, "site": "R"},
    }
    result = run(parse(scenario, "timeshared test"), tmp_path / "run")
    jobs = {row["id"]: row for row in result.jobs.to_pylist()}
    for row in jobs.values():
        assert row["status"] == "finished"
        if not licenses:
            assert row["start"] == row["arrive"]  # no queue: a gridlet runs from its arrival
    return jobs


def finishes(jobs: dict[int, dict]) -> dict[int, float]:
    return {i: row["finish"] for i, row in sorted(jobs.items())}


def where(jobs: dict[int, dict]) -> dict[int, tuple[int, int]]:
    return {i: (row["machines"][0], row["pes"][0]) for i, row in sorted(jobs.items())}


# -- the share formula ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "pes", "expected"),
    [
        (3, 4, (100.0, 100.0, 3)),  # n < P: a PE each
        (4, 4, (100.0, 50.0, 4)),  # n = P: k = 1, r = 0, all 4 get MIPS / 1
        (6, 4, (100.0, 50.0, 2)),  # k = 1, r = 2: (4 - 2) * 1 = 2 alone on a PE, 4 in pairs
        (9, 4, (50.0, 100.0 / 3, 6)),  # k = 2, r = 1: (4 - 1) * 2 = 6 get 1/2, 3 get 1/3
        (3, 2, (100.0, 50.0, 1)),  # GridSim's own example: PE 0 runs gridlet 0, PE 1 gridlets 1 and 2
        (1, 1, (100.0, 50.0, 1)),  # k = 1: the min share exists but nobody gets it
    ],
)
def test_share_formula(n, pes, expected):
    high, low, count = mi_shares(100.0, n, pes)
    assert (high, low, count) == expected
    assert count * high + (n - count) * low == pytest.approx(100.0 * min(n, pes))  # every PE busy


# -- whole runs ------------------------------------------------------------------------------------


def test_three_gridlets_on_two_pes(tmp_path):
    # 2 PEs at 100 MIPS, three 1000 MI gridlets at t=0. Arrival forecasts: n=1 -> 10; n=2 -> 10;
    # n=3 (k=1, r=1, 1 gets 100, 2 get 50) -> min(10, 20, 20) = 10: one event at 10.
    # t=10: g1 1000 done, g2 = g3 = 500; g1 finishes. n=2: 100 each, 500 left -> event at 15.
    # t=15: g2, g3 done.
    jobs = run_timeshared(tmp_path, [(2, 100)], [(1000, 1, 0.0)] * 3)
    assert finishes(jobs) == {1: 10.0, 2: 15.0, 3: 15.0}
    assert where(jobs) == {1: (0, 0), 2: (0, 1), 3: (0, 0)}  # least-loaded PE at the start
    assert all(row["wait"] == 0.0 for row in jobs.values())


def test_later_arrival_reshares(tmp_path):
    # As above, plus g4 (1000 MI) at t=4. Event at 10 pending (from t=0).
    # t=4: update with n=3 for 4 s: g1 400, g2 200, g3 200. Add g4: n=4 (k=2, r=0): 50 each;
    #      forecasts 600/50=12, 800/50=16, 16, 1000/50=20 -> event at 16.
    # t=10 (outdated event, still an update): +300 each: 700, 500, 500, 300 -> forecast 300/50=6 -> 16.
    # t=16: +300 each: g1 1000 done (finishes); g2 800, g3 800, g4 600. n=3: g2 gets 100, g3 and g4 50:
    #      forecasts 2, 4, 8 -> event at 18.
    # t=18: g2 +200 = 1000 done; g3 900, g4 700. n=2: 100 each -> 100/100 = 1 -> event at 19.
    # t=19: g3 done; g4 800. n=1 -> 2 -> event at 21. t=21: g4 done.
    jobs = run_timeshared(tmp_path, [(2, 100)], [(1000, 1, 0.0)] * 3 + [(1000, 1, 4.0)])
    assert finishes(jobs) == {1: 16.0, 2: 18.0, 3: 19.0, 4: 21.0}
    assert jobs[4]["start"] == 4.0


def test_different_lengths_and_list_order(tmp_path):
    # 2 PEs at 100 MIPS; g1 300, g2 600, g3 900 MI at t=0. n=3 after all arrivals: g1 100, g2 and g3 50
    # (the share goes by list position, not by length). Arrival forecasts: 3; 3; min(3, 12, 18) -> 3.
    # t=3: g1 300 done; g2 150, g3 150. n=2: 100 each -> 450/100 = 4.5 -> event at 7.5.
    # t=7.5: g2 600 done; g3 600. n=1 -> 3 -> 10.5.
    jobs = run_timeshared(tmp_path, [(2, 100)], [(300, 1, 0.0), (600, 1, 0.0), (900, 1, 0.0)])
    assert finishes(jobs) == {1: 3.0, 2: 7.5, 3: 10.5}


def test_multi_pe_gridlet_runs_on_one_pe_with_n_times_the_length(tmp_path):
    # 2 PEs at 100 MIPS. g1 asks 3 PEs of 200 MI -> 1 PE of 600 MI; g2 300 MI. n=2 <= P: 100 each.
    # Forecasts: after g1 -> 6 (event at 6); after g2 -> min(6, 3) = 3 (event at 3).
    # t=3: g2 300 done; g1 300 -> 300/100 = 3 -> event at 6. t=6: g1 done.
    jobs = run_timeshared(tmp_path, [(2, 100)], [(200, 3, 0.0), (300, 1, 0.0)])
    assert finishes(jobs) == {1: 6.0, 2: 3.0}
    assert where(jobs) == {1: (0, 0), 2: (0, 1)}
    assert len(jobs[1]["pes"]) == 1


def test_one_second_floor_and_finish_at_an_arrival(tmp_path):
    # 1 PE at 100 MIPS. g1 50 MI at t=0: 0.5 s raised to 1 s -> event at 1 (alone, it finishes at 1).
    # g2 at 0.75: the submission updates first (+75: g1 has nothing left) and finishes g1 at 0.75,
    # before its event; then g2 alone: 1000/100 -> event at 10.75. t=1: +25 -> 975/100 -> 10.75.
    jobs = run_timeshared(tmp_path / "a", [(1, 100)], [(50, 1, 0.0)])
    assert finishes(jobs) == {1: 1.0}
    jobs = run_timeshared(tmp_path / "b", [(1, 100)], [(50, 1, 0.0), (1000, 1, 0.75)])
    assert finishes(jobs) == {1: 0.75, 2: 10.75}


def test_machine_zero_rating_for_every_gridlet(tmp_path):
    # Machine 0: 1 PE at 100 MIPS, machine 1: 1 PE at 400 MIPS. TimeShared uses machine 0's PE rating
    # for every share and counts P = 2 PEs: both 1000 MI gridlets get 100 MIPS and end at 10.
    jobs = run_timeshared(tmp_path, [(1, 100), (1, 400)], [(1000, 1, 0.0), (1000, 1, 0.0)])
    assert finishes(jobs) == {1: 10.0, 2: 10.0}
    assert where(jobs) == {1: (0, 0), 2: (1, 0)}


def test_float_noise_of_outdated_events(tmp_path):
    # 1 PE at 100 MIPS, three 100 MI gridlets at t=0. Arrival forecasts: n=1 -> 1; n=2 -> 2;
    # n=3 -> 100 / (100/3) = 3.0: events at 1, 2, 3.
    # t=1: each +100/3; forecast (100 - 100/3) / (100/3) = 1.9999999999999996 -> event at
    #      2.9999999999999996 (GridSim's float noise, kept: the time is now + delay).
    # t=2: each +100/3 again; forecast 0.99... raised to 1 -> event at 3.
    # t=2.9999999999999996: each + 100 * 0.9999999999999996 / 3, which reaches 100.0 exactly: all finish.
    s = 100.0 / 3
    early = 1.0 + (100.0 - s) / s
    assert early < 3.0
    assert s + s + 100.0 * (early - 2.0) / 3 >= 100.0
    jobs = run_timeshared(tmp_path, [(1, 100)], [(100, 1, 0.0)] * 3)
    assert finishes(jobs) == {1: early, 2: early, 3: early}


def test_a_gridlet_waits_only_for_license_copies(tmp_path):
    # 2 PEs at 100 MIPS, one copy of L. g1 (L, 1000 MI) runs alone: event at 10, finishes at 10.
    # g2 (L, 500 MI) waits for the copy, starts at 10 on the least-loaded PE (PE 0), ends at 15.
    gridlets = [(1000, 1, 0.0, ["L"]), (500, 1, 0.0, ["L"])]
    jobs = run_timeshared(tmp_path, [(2, 100)], gridlets, licenses={"L": 1})
    assert (jobs[1]["start"], jobs[1]["finish"]) == (0.0, 10.0)
    assert (jobs[2]["start"], jobs[2]["finish"]) == (10.0, 15.0)
    assert where(jobs) == {1: (0, 0), 2: (0, 0)}


# -- the pieces --------------------------------------------------------------------------------------


def test_policy_is_registered():
    policy = LOCAL.create("gridsim-timeshared")
    assert policy.execution.__name__ == "GridSimTimeShared"
    assert policy.resources_class is SharedResources
    job = policy.admit(Job(1, 0.0, 4, 250.0))
    assert (job.cpus, job.length) == (1, 1000.0)


def test_shared_resources_oversubscribe_and_count_idle_pes():
    cluster = Cluster("R", (Machine(2, 100.0), Machine(1, 100.0)), Link(0.0))
    res = SharedResources(cluster)
    jobs = [Job(i, 0.0, 1, 10.0) for i in range(5)]
    took = [res.allocate(job, ((0, 1),)) for job in jobs[:3]]
    assert took == [((0,), (0,)), ((0,), (1,)), ((0,), (0,))]  # idle PEs first, then the least loaded
    assert res.free.tolist() == [0, 1] and res.free_cpus == 1
    assert res.pe_loads() == [[2, 1], [0]]
    res.release(jobs[0], ((0, 1),), *took[0])  # PE 0 still runs job 2: not idle
    assert res.free.tolist() == [0, 1] and res.free_cpus == 1
    res.release(jobs[1], ((0, 1),), *took[1])  # PE 1 idle again
    assert res.free.tolist() == [1, 1] and res.free_cpus == 2
    assert res.allocate(jobs[3], ((0, 1),)) == ((0,), (1,))
    assert np.array_equal(res.capacity, [2, 1])
