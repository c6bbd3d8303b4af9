"""Flexible backfilling: the LS heuristics, the priority order, the reservation and fastest placement.

Machines run at 1 MIPS and jobs have ``bench = 1`` unless said otherwise, so a
job lasts its runtime. Jobs enter the single cluster directly (``site = "c"``)
unless they go through the meta-scheduler.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from emulator.core.model import Job
from emulator.policies import LOCAL, PolicyError
from emulator.policies.flexible import ls_priority
from emulator.policies.queue_table import QueueTable

from .conftest import job, machine, one_cluster, run_scenario

ONLY = dict(w_aging=0.0, deadline_min=1.0, deadline_max=15.0, k=2.0, w_licenses=0.0, w_wait=0.0)


def ls(estimate, deadline=math.inf, submit=0.0, now=0.0, licenses=None, copies=(), **weights):
    n = len(estimate)
    lic = np.zeros((n, len(copies)), dtype=np.int32) if licenses is None else np.array(licenses)
    return ls_priority(
        now,
        np.broadcast_to(np.asarray(submit, dtype=float), n),
        np.asarray(estimate, dtype=float),
        np.ones(n),
        np.broadcast_to(np.asarray(deadline, dtype=float), n),
        lic,
        np.asarray(copies, dtype=float),
        1.0,
        **(ONLY | weights),
    )


@pytest.mark.parametrize(
    ("estimate", "deadline", "score"),
    # now = 0, bench = bench_max: nxt = estimate = 10, ext = 10, t = deadline - 2 * 10.
    [
        (10, 100, 1.0),  # t = 80 >= ext: far from the deadline -> min
        (10, 25, 4.5),  # t = 5 < ext = 10 <= 25: slope (15 - 1) / (25 - 5) = 0.7 -> 1 + 0.7 * 5
        (10, 10, 15.0),  # ext = deadline: the top of the ramp, max
        (10, 9, 1.0),  # ext > deadline: it cannot make it any more -> min
        (10, math.inf, 0.0),  # no deadline
    ],
)
def test_deadline_score_on_each_branch(estimate, deadline, score):
    assert ls([estimate], deadline) == pytest.approx([score])


def test_deadline_uses_the_fastest_machine_and_the_current_time():
    # bench 100, bench_max 400: nxt = 40 * 100 / 400 = 10; now = 5: ext = 15, t = 30 - 20 = 10
    # -> 1 + 14 / 20 * (15 - 10) = 4.5.
    score = ls_priority(
        5.0, np.zeros(1), np.array([40.0]), np.array([100.0]), np.array([30.0]), np.zeros((1, 0)),
        np.zeros(0), 400.0, **ONLY,
    )  # fmt: skip
    assert score == pytest.approx([4.5])


def test_aging_and_wait_minimization():
    # Aging 0.5 * (100 - submit): 50 and 20. Wait minimization 8 * min(estimate) / estimate:
    # 8 * 10 / 10 = 8 and 8 * 10 / 40 = 2.
    aging = ls([10, 40], submit=[0, 60], now=100, w_aging=0.5)
    assert aging == pytest.approx([50, 20])
    assert ls([10, 40], w_wait=8.0) == pytest.approx([8, 2])


def test_licenses_favour_jobs_asking_for_critical_licenses():
    # Copies A = 1, B = 4, C = 2. J1 asks A, B; J2 asks A; J3 asks B, C.
    # Jobs asking: A 2, B 2, C 1 -> rho = 2 (critical), 0.5, 0.5; d = |{B, C}| = 2.
    # J1: 5 * (0.5 + 2 * 2) = 22.5; J2: 5 * (2 * 2) = 20; J3: 5 * (0.5 + 0.5) = 5.
    licenses = [[1, 1, 0], [1, 0, 0], [0, 1, 1]]
    score = ls([10, 10, 10], licenses=licenses, copies=(1, 4, 2), w_licenses=5.0)
    assert score == pytest.approx([22.5, 20, 5])


def test_no_critical_license_counts_rho_once():
    # One job asking A (2 copies): rho = 0.5, not critical -> 5 * 0.5.
    assert ls([10], licenses=[[1]], copies=(2,), w_licenses=5.0) == pytest.approx([2.5])


def starts(rows: dict) -> dict[int, float]:
    return {i: r["start"] for i, r in rows.items()}


def test_ls_priority_orders_the_queue_and_the_reservation_goes_to_the_first_blocked_job(tmp_path):
    # Wait minimization only (the shortest estimate first). J1 holds the 4 CPUs until 100.
    # At 1: J2 (4 CPUs, 300), J3 (2 CPUs, 50), J4 (2 CPUs, 600). Priorities 8 * 50 / e:
    # J3 8, J2 1.33, J4 0.67. At 100: J3 starts (100..150); J2 cannot (2 CPUs free): reserved
    # at 150 with nothing spare, so J4 (ends 700) cannot backfill; J2 150..450, J4 at 450.
    # EASY (arrival order) would start J2 at 100 instead.
    policy = "flexible[w_aging=0.0,w_licenses=0.0,w_wait=8.0,deadline_min=0.0]"
    jobs = [job(1, 0, 4, 100), job(2, 1, 4, 300), job(3, 1, 2, 50), job(4, 1, 2, 600)]
    rows = run_scenario(tmp_path, one_cluster(policy, [machine(4)]), jobs, site="c")
    assert starts(rows) == {1: 0, 2: 150, 3: 100, 4: 450}


def test_ms_priority_with_a_backfill(tmp_path):
    # The meta-scheduler's priority (user classes: gold 8, silver 4, regular 0), through the
    # meta link (latency 1). J1 (regular, all 4 CPUs) arrives at 1 and runs 1..101.
    # J2 silver (4 CPUs, 300), J3 regular (2, 600), J4 regular (2, 40), J5 gold (2, 50) arrive
    # at 3. At 101 the order is J5, J2, J3, J4 (J3 before J4: same priority, lower id).
    # J5 starts (101..151); J2 cannot: reserved at 151, nothing spare; J3 would end at 701:
    # no; J4 ends at 141 <= 151: backfilled at 101. J2 151..451; J3 at 451.
    cluster = {"name": "c", "latency": 1.0, "policy": "flexible[priority=ms]", "machines": [machine(4)]}
    jobs = [
        job(1, 0, 4, 100),
        job(2, 2, 4, 300, user_class="silver"),
        job(3, 2, 2, 600),
        job(4, 2, 2, 40),
        job(5, 2, 2, 50, user_class="gold"),
    ]
    rows = run_scenario(tmp_path, [cluster], jobs, meta="two-level[heuristics=user]")
    assert starts(rows) == {1: 1, 2: 151, 3: 451, 4: 101, 5: 101}


def test_jobs_start_on_the_fastest_eligible_machine(tmp_path):
    # Machines 0 (1 MIPS, the only one running matlab), 1 and 2 (3 MIPS), 2 CPUs each.
    # J4 asks matlab (1 copy): the Licenses heuristic ranks it first (rho = 1 -> 5), and only
    # machine 0 is eligible: 0..30. J1 -> machine 1 (the fastest, lower id), J2 -> machine 2,
    # both 30 * 1 / 3 = 10 s; J3 waits and takes machine 1 at 10 (1 and 2 both free).
    machines = [
        machine(2, 1.0, licenses=["matlab"]),
        machine(2, 3.0, licenses=[]),
        machine(2, 3.0, licenses=[]),
    ]
    jobs = [job(i, 0, 2, 30) for i in (1, 2, 3)] + [job(4, 0, 2, 30, licenses=["matlab"])]
    rows = run_scenario(tmp_path, one_cluster("flexible", machines, {"matlab": 1}), jobs, site="c")
    assert {i: rows[i]["machines"][0] for i in rows} == {1: 1, 2: 2, 3: 1, 4: 0}
    assert {i: (rows[i]["start"], rows[i]["finish"]) for i in rows} == {
        1: (0, 10),
        2: (0, 10),
        3: (10, 20),
        4: (0, 30),
    }


def test_machine_order_index_places_like_easy(tmp_path):
    machines = [machine(2, 1.0), machine(2, 3.0)]
    rows = run_scenario(
        tmp_path, one_cluster("flexible[machine_order=index]", machines), [job(1, 0, 2, 30)], site="c"
    )
    assert rows[1]["machines"] == [0, 0]


def test_bad_parameters_are_refused():
    with pytest.raises(PolicyError, match="priority"):
        LOCAL.create("flexible[priority=fifo]")
    with pytest.raises(PolicyError, match="machine_order"):
        LOCAL.create("flexible[machine_order=slowest]")


def test_queue_table_follows_the_queue():
    table = QueueTable(["a", "b"], capacity=4)
    queue = {i: Job(i, float(i), 1, 10.0, licenses=("b",) if i % 2 else ()) for i in range(1, 4)}
    table.sync(queue, {2: 7})
    assert table.id[table.rows()].tolist() == [1, 2, 3]
    assert table.ms_priority[table.rows()].tolist() == [0, 7, 0]
    assert table.licenses[table.rows()].tolist() == [[0, 1], [0, 0], [0, 1]]
    del queue[2]
    table.remove([2])
    for i in range(4, 9):  # past the capacity: compacts, then grows
        queue[i] = Job(i, float(i), 1, 10.0)
    table.sync(queue, {})
    assert table.id[table.rows()].tolist() == [1, 3, 4, 5, 6, 7, 8]
    del queue[1]  # left the queue without the table being told (a rejection): rebuilt
    queue[9] = Job(9, 9.0, 1, 10.0)
    table.sync(queue, {})
    assert table.id[table.rows()].tolist() == [3, 4, 5, 6, 7, 8, 9]
    assert [table.jobs[r].id for r in table.rows()] == [3, 4, 5, 6, 7, 8, 9]
