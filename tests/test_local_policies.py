"""FCFS and EASY on small scenarios whose schedules are worked out by hand in the comments.

Machines run at 1 MIPS and jobs have ``bench = 1``, so a job lasts its runtime.
Jobs enter the single cluster directly (``site = "c"``), so arrival = submit.
"""

from __future__ import annotations

import pytest

from .conftest import job, machine, one_cluster, run_scenario


def starts(rows: dict) -> dict[int, tuple[float, float]]:
    return {i: (r["start"], r["finish"]) for i, r in rows.items()}


# J1 takes 2 of 4 CPUs for 10 s; J2 needs all 4; J3 (1 CPU, 2 s) arrives at 1.
HEAD_BLOCKS = [job(1, 0, 2, 10), job(2, 0, 4, 5), job(3, 1, 1, 2)]


def test_fcfs_head_blocks_the_queue(tmp_path):
    # J2 waits for J1 (t=10); J3 waits behind J2 although a CPU is free: 15..17.
    rows = run_scenario(tmp_path, one_cluster("fcfs", [machine(4)]), HEAD_BLOCKS, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 15), 3: (15, 17)}


def test_easy_backfills_a_job_that_ends_before_the_reservation(tmp_path):
    # J2 is reserved for t=10; J3 ends at 3 <= 10 on a free CPU, so it starts at once.
    rows = run_scenario(tmp_path, one_cluster("easy", [machine(4)]), HEAD_BLOCKS, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 15), 3: (1, 3)}


def test_easy_never_delays_the_reservation(tmp_path):
    # J3 would run 1..21 on a CPU J2 needs at t=10: it must wait until J2 ends (15).
    # J4 (2..7) ends before the reservation and is backfilled.
    jobs = [job(1, 0, 2, 10), job(2, 0, 4, 5), job(3, 1, 1, 20), job(4, 2, 1, 5)]
    rows = run_scenario(tmp_path, one_cluster("easy", [machine(4)]), jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 15), 3: (15, 35), 4: (2, 7)}


def test_easy_reserves_by_estimate_not_by_actual_runtime(tmp_path):
    # J1 is estimated at 20 but ends at 10. J2's reservation is at 20 (estimate), so J3
    # (estimate 8, 1..9) may backfill; J2 then starts when J1 really ends (10).
    jobs = [job(1, 0, 2, 10, estimate=20), job(2, 0, 4, 5), job(3, 1, 1, 8)]
    rows = run_scenario(tmp_path, one_cluster("easy", [machine(4)]), jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 15), 3: (1, 9)}


LICENSED = [
    job(1, 0, 1, 10, licenses=["matlab"]),
    job(2, 0, 1, 4, licenses=["matlab"]),
    job(3, 0, 2, 3),
]


def test_fcfs_license_blocks_the_head(tmp_path):
    # One matlab copy: J2 waits for J1's copy (t=10); J3 waits behind J2 and then takes
    # machine 1 (machine 0 has one CPU left after J2): 10..13.
    cluster = one_cluster("fcfs", [machine(2, count=2)], licenses={"matlab": 1})
    rows = run_scenario(tmp_path, cluster, LICENSED, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 14), 3: (10, 13)}
    assert rows[3]["machines"] == [1, 1]


def test_easy_backfills_around_a_license_blocked_head(tmp_path):
    # J2 is reserved at t=10 (license). J3 needs no license and ends at 3: backfilled on machine 1.
    cluster = one_cluster("easy", [machine(2, count=2)], licenses={"matlab": 1})
    rows = run_scenario(tmp_path, cluster, LICENSED, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 14), 3: (0, 3)}


def test_easy_long_backfill_uses_only_resources_the_reservation_leaves(tmp_path):
    # J3 runs 0..30, past J2's reservation at 10, but J2 needs one CPU of machine 0 and the
    # copy, and J3 takes machine 1 only: allowed. J4 (no license, 0..50) takes machine 0's
    # other CPU: at t=10 J1's CPU is enough for J2, so J4 is allowed too. J5 (matlab, 1 s)
    # finds no copy: it waits behind J2's reservation and starts when J2 frees it (14).
    jobs = [*LICENSED[:2], job(3, 0, 2, 30), job(4, 0, 1, 50), job(5, 0, 1, 1, licenses=["matlab"])]
    cluster = one_cluster("easy", [machine(2, count=2)], licenses={"matlab": 1})
    rows = run_scenario(tmp_path, cluster, jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 14), 3: (0, 30), 4: (0, 50), 5: (14, 15)}
    assert (rows[3]["machines"], rows[4]["machines"], rows[2]["machines"]) == ([1, 1], [0], [0])


def test_spread_job_takes_cpus_from_several_machines_at_the_slowest_pace(tmp_path):
    # Machines: 2 CPUs at 100, 2 at 200, 2 at 100 MIPS. J1 (1 CPU, 10 s at bench 100) takes
    # machine 0, PE 0: 0..10. J2 (5 CPUs, spread, 10 s at bench 200) takes the 5 free CPUs,
    # lowest machine first; its slowest machine runs 100 MIPS: 10*200/100 = 20 s.
    machines = [machine(2, 100), machine(2, 200), machine(2, 100)]
    jobs = [job(1, 0, 1, 10, bench=100), job(2, 0, 5, 10, bench=200, placement="spread")]
    rows = run_scenario(tmp_path, one_cluster("fcfs", machines), jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (0, 20)}
    assert (rows[2]["machines"], rows[2]["pes"]) == ([0, 1, 1, 2, 2], [1, 0, 1, 0, 1])


def test_single_job_runs_at_its_machine_speed(tmp_path):
    # 1000 MI (10 s at bench 100) on the first machine with 2 free CPUs: the 250-MIPS one: 4 s.
    machines = [machine(1, 100), machine(2, 250)]
    rows = run_scenario(tmp_path, one_cluster("easy", machines), [job(1, 5, 2, 10, bench=100)], site="c")
    assert starts(rows) == {1: (5, 9)}
    assert rows[1]["machines"] == [1, 1]


@pytest.mark.parametrize("policy", ["fcfs", "easy", "gridsim-spaceshared"])
def test_job_larger_than_every_machine_is_rejected_with_a_reason(tmp_path, policy):
    jobs = [job(1, 0, 8, 10), job(2, 0, 1, 10)]
    rows = run_scenario(tmp_path, one_cluster(policy, [machine(4, count=2)]), jobs, site="c")
    if policy == "gridsim-spaceshared":  # GridSim runs an n-PE gridlet on one PE, n times longer
        assert starts(rows) == {1: (0, 81), 2: (0, 11)}
        return
    assert rows[1]["status"] == "rejected"
    assert "needs 8 CPUs on one machine" in rows[1]["reason"] and "has 4" in rows[1]["reason"]
    assert starts(rows)[2] == (0, 10)


def test_job_needing_a_license_the_cluster_lacks_is_rejected(tmp_path):
    rows = run_scenario(
        tmp_path, one_cluster("easy", [machine(4)]), [job(1, 0, 1, 5, licenses=["x"])], site="c"
    )
    assert rows[1]["status"] == "rejected"
    assert "job needs 1 copy of license x; cluster c has 0" in rows[1]["reason"]


def test_license_suitability_restricts_machines(tmp_path):
    # Only machine 1 may run matlab (machine 0 lists no license): the matlab job goes there
    # even though machine 0 is free.
    machines = [machine(2, licenses=[]), machine(2, licenses=["matlab"])]
    rows = run_scenario(
        tmp_path,
        one_cluster("fcfs", machines, licenses={"matlab": 2}),
        [job(1, 0, 1, 5, licenses=["matlab"])],
        site="c",
    )
    assert rows[1]["machines"] == [1]


def test_license_copy_per_machine_is_shared_by_jobs_on_one_machine(tmp_path):
    # One copy counted per machine: J1 and J2 share machine 0 and the single copy; J3 on
    # machine 1 would need a second copy, so it waits for both to end (t=10).
    machines = [machine(2, count=2)]
    jobs = [job(i, 0, 1, 10, licenses=["m"]) for i in (1, 2)] + [job(3, 0, 2, 5, licenses=["m"])]
    cluster = one_cluster("fcfs", machines, licenses={"m": 1}, license_per_machine=True)
    rows = run_scenario(tmp_path, cluster, jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (0, 10), 3: (10, 15)}
