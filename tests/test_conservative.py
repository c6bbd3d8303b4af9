"""Conservative backfilling on estimates (``conservative``): schedules worked out by hand, the promise
it keeps (a property test), and GridSim's ``ConservativeBackfill`` reproduced with exact estimates.

As in ``test_local_policies``: machines run at 1 MIPS and jobs have ``bench = 1``
unless said otherwise, so a job lasts its runtime (its estimate, by estimate),
and jobs enter the single cluster directly (arrival = submit).
"""

from __future__ import annotations

import csv
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from emulator import run
from emulator.data.scenario import parse
from emulator.policies.conservative import Conservative
from emulator.policies.ordering import ORDERS

from .conftest import SHARED, job, machine, one_cluster, run_scenario, shared_path
from .test_gridsim_parallel import pe_ranges, scenario_from_parallel_reference
from .test_gridsim_reference import scenario_from_reference


def starts(rows: dict) -> dict[int, tuple[float, float]]:
    return {i: (r["start"], r["finish"]) for i, r in sorted(rows.items())}


# One machine of 4 CPUs. J1 (2 CPUs, 0..10) runs; J2 (3 CPUs) must wait for it; J3 needs all 4;
# J4 (1 CPU, 30 s) and J5 (2 CPUs, 9 s) arrive at 1.
PIVOT = [job(1, 0, 2, 10), job(2, 0, 3, 5), job(3, 0, 4, 5), job(4, 1, 1, 30), job(5, 1, 2, 9)]


def test_easy_and_conservative_differ_on_the_second_queued_job(tmp_path):
    # EASY protects J2 only (reserved at 10, leaving 1 CPU spare): J4 runs 1..31 on the spare CPU,
    # J5 finds 1 CPU free and waits; at 15 J3 (all 4) is the head, reserved at 31, and J5 (15..24)
    # ends before it. J3 runs 31..36: J4 delayed it by 16 s.
    rows = run_scenario(tmp_path / "easy", one_cluster("easy", [machine(4)]), PIVOT, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 15), 3: (31, 36), 4: (1, 31), 5: (15, 24)}
    # Conservative reserves every job at 0: J2 10..15, J3 15..20. At 1, J4 (30 s) would overlap
    # J3's reservation wherever it starts before 20: it is reserved 20..50. J5 fits the 2 CPUs
    # free over [1, 10) and starts at once.
    rows = run_scenario(tmp_path / "cons", one_cluster("conservative", [machine(4)]), PIVOT, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 15), 3: (15, 20), 4: (20, 50), 5: (1, 10)}


# Two CPUs. J1 (both CPUs) is estimated at 10 but ends at 4. Reservations at 0: J2 (1 CPU) 10..15,
# J3 (2 CPUs) 15..18; at 1, J4 (1 CPU, 5 s) fits the CPU J2 leaves over [10, 15).
EARLY = [job(1, 0, 2, 4, estimate=10), job(2, 0, 1, 5), job(3, 0, 2, 3), job(4, 1, 1, 5)]


def test_compression_moves_reservations_up_when_a_job_ends_early(tmp_path):
    # At 4 J1 ends, 6 s early. Sweep 1: J2 moves to 4 (4..9); J3 cannot start before 15 (J4 still
    # holds a CPU over [10, 15)); J4 moves to 4 (the other CPU, 4..9). Sweep 2: J3 moves into the
    # room J4 left: 9..12. J2 and J4 start at once.
    rows = run_scenario(tmp_path, one_cluster("conservative", [machine(2)]), EARLY, site="c")
    assert starts(rows) == {1: (0, 4), 2: (4, 9), 3: (9, 12), 4: (4, 9)}


def test_reservations_made_at_arrival_are_the_promises(tmp_path, monkeypatch):
    promised = record_promises(monkeypatch)
    run_scenario(tmp_path, one_cluster("conservative", [machine(2)]), EARLY, site="c")
    assert promised == {1: 0, 2: 10, 3: 15, 4: 10}


# Two CPUs. J1 (both) is estimated at 10 but runs 20; J2 (both, 5 s) arrives at 1 and is reserved
# at 10, J1's estimated end, where nothing happens.
OVERRUN = [job(1, 0, 2, 20, estimate=10), job(2, 1, 2, 5)]


def test_a_reservation_held_up_by_a_job_past_its_estimate_is_made_again(tmp_path):
    # At 20 J1 ends: J2's reservation at 10 has passed; it is made again at 20 and starts then
    # (it was once kept in the past, never started, and rejected as stuck).
    rows = run_scenario(tmp_path, one_cluster("conservative", [machine(2)]), OVERRUN, site="c")
    assert starts(rows) == {1: (0, 20), 2: (20, 25)}


# Two machines of 2 CPUs, one matlab copy (the scenario of test_local_policies' EASY test):
# J1, J2 need the copy; J3 (2 CPUs, 30 s) and J4 (1 CPU, 50 s) need none; J5 needs the copy.
LICENSED = [
    job(1, 0, 1, 10, licenses=["matlab"]),
    job(2, 0, 1, 4, licenses=["matlab"]),
    job(3, 0, 2, 30),
    job(4, 0, 1, 50),
    job(5, 0, 1, 1, licenses=["matlab"]),
]


def test_licenses_and_machines_are_reserved_like_easy(tmp_path):
    # J1 takes machine 0 and the copy (0..10); J2 is reserved at 10 on machine 0 (the copy comes
    # back then). J3 fits machine 1 for 30 s (nothing is reserved there); J4 the other CPU of
    # machine 0 (J2 needs only one of its two at 10). J5 gets the copy after J2: 14..15 on machine 0.
    cluster = one_cluster("conservative", [machine(2, count=2)], licenses={"matlab": 1})
    rows = run_scenario(tmp_path, cluster, LICENSED, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 14), 3: (0, 30), 4: (0, 50), 5: (14, 15)}
    assert [rows[i]["machines"] for i in (1, 2, 3, 4, 5)] == [[0], [0], [1, 1], [0], [0]]


def test_licenses_per_machine_count_a_copy_per_machine(tmp_path):
    # Copies counted per machine, one copy. J1 (1 CPU, 0..10) holds machine 0's copy. J2 (spread,
    # 2 CPUs, 4 s): before 10 first fit spreads it over machines 0 and 1, a copy each, and the pool
    # has none left; at 10 machine 0 alone holds it (one copy): reserved 10..14. J3 (1 CPU, 3 s,
    # no license) fits machine 0's other CPU at once.
    jobs = [
        job(1, 0, 1, 10, licenses=["matlab"]),
        job(2, 0, 2, 4, licenses=["matlab"], placement="spread"),
        job(3, 0, 1, 3),
    ]
    cluster = one_cluster("conservative", [machine(2, count=2)], licenses={"matlab": 1})
    cluster[0]["license_per_machine"] = True
    rows = run_scenario(tmp_path, cluster, jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 14), 3: (0, 3)}
    assert rows[2]["machines"] == [0, 0] and rows[3]["machines"] == [0]


def test_spread_reservation_lasts_its_slowest_machine(tmp_path):
    # Machine 0: 2 CPUs at 1 MIPS; machine 1: 2 CPUs at 2 MIPS. J1 (single, 2 CPUs) takes machine 0,
    # 0..10. J2 (spread, 4 CPUs, 8 s at bench 1) needs both machines: reserved at 10, at the slower
    # one's pace, 10..18. J3 (single, 2 CPUs, 16 MI) fits machine 1 before J2: 8 s, 0..8. J4 (single,
    # 1 CPU, 20 MI) lasts 10 s on machine 1 and 20 s on machine 0: machine 1 is free over [8, 10)
    # only, machine 0 after J2: 18..38.
    machines = [machine(2, 1.0), machine(2, 2.0)]
    jobs = [
        job(1, 0, 2, 10),
        job(2, 0, 4, 8, placement="spread"),
        job(3, 0, 2, 8, bench=2),
        job(4, 0, 1, 20),
    ]
    rows = run_scenario(tmp_path, one_cluster("conservative", machines), jobs, site="c")
    assert starts(rows) == {1: (0, 10), 2: (10, 18), 3: (0, 8), 4: (18, 38)}
    assert (rows[3]["machines"], rows[4]["machines"]) == ([1, 1], [0])


def test_spec_round_trips_and_bad_parameters_are_refused(tmp_path):
    from emulator.policies import LOCAL, PolicyError, PolicySpec

    text = "conservative[half_life=3600.0,order=wfp,rounding=gridsim]"
    assert str(PolicySpec.parse(text)) == text
    assert LOCAL.create(text).order.name == "wfp"
    with pytest.raises(PolicyError, match="rounding 'up'"):
        LOCAL.create("conservative[rounding=up]")
    with pytest.raises(PolicyError, match="order 'edf': expected one of fcfs, sjf"):
        LOCAL.create("conservative[order=edf]")


# -- the promise: never later than the first reservation ------------------------------------------


def record_promises(monkeypatch) -> dict[int, float]:
    """Wrap ``Conservative.schedule`` to collect the first start each job was promised."""
    promised: dict[int, float] = {}
    original = Conservative.schedule

    def schedule(self, view):
        decisions = original(self, view)
        for job_id, start in self.promised.items():
            promised.setdefault(job_id, start)
        for started, _plan in decisions:  # started at once: promised now
            promised.setdefault(started.id, view.now)
        return decisions

    monkeypatch.setattr(Conservative, "schedule", schedule)
    return promised


@st.composite
def scenarios(draw, slack=(0, 0, 1, 5, 30)):
    """Up to 14 jobs on up to 3 machines with one license type; estimates run time + ``slack``."""
    machines = [
        machine(draw(st.integers(1, 4)), draw(st.sampled_from([1.0, 2.0, 3.0])))
        for _ in range(draw(st.integers(1, 3)))
    ]
    copies = draw(st.integers(1, 2))
    jobs = []
    for i in range(draw(st.integers(1, 14))):
        runtime = draw(st.integers(1, 20))
        jobs.append(
            job(
                i + 1,
                draw(st.integers(0, 30)),
                draw(st.integers(1, 4)),
                runtime,
                estimate=max(1, runtime + draw(st.sampled_from(slack))),
                licenses=draw(st.sampled_from([[], [], ["a"], ["a", "a"]])),
                placement=draw(st.sampled_from(["single", "spread"])),
                user=draw(st.integers(0, 2)),
            )
        )
    order = draw(st.sampled_from(ORDERS))
    per_machine = draw(st.booleans())
    return machines, copies, sorted(jobs, key=lambda j: j["submit"]), order, per_machine


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios())
def test_no_job_starts_later_than_its_first_reservation(tmp_path_factory, monkeypatch, scenario):
    """With estimates >= run times, every job starts no later than the first start it was given,
    whatever the order, placement, speeds and licenses; every job that fits finishes."""
    machines, copies, jobs, order, per_machine = scenario
    with monkeypatch.context() as patch:
        promised = record_promises(patch)
        cluster = one_cluster(f"conservative[order={order}]", machines, licenses={"a": copies})
        cluster[0]["license_per_machine"] = per_machine
        rows = run_scenario(tmp_path_factory.mktemp("run"), cluster, jobs, site="c")
    for job_id, row in rows.items():
        if row["status"] == "rejected":
            continue
        assert row["status"] == "finished", row
        assert row["start"] <= promised[job_id] + 1e-9, (job_id, row["start"], promised[job_id])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(scenarios(slack=(-15, -5, -1, 0, 5)))
def test_every_job_that_fits_finishes_when_jobs_outlive_their_estimates(tmp_path_factory, scenario):
    """Jobs running past their estimates put reservations in the past; none is left queued (a job
    rejected only because it can never fit: more CPUs or copies than the cluster has)."""
    machines, copies, jobs, order, per_machine = scenario
    cluster = one_cluster(f"conservative[order={order}]", machines, licenses={"a": copies})
    cluster[0]["license_per_machine"] = per_machine
    rows = run_scenario(tmp_path_factory.mktemp("run"), cluster, jobs, site="c")
    for row in rows.values():
        assert row["status"] in ("finished", "rejected"), row
        assert "idle cluster" not in (row["reason"] or ""), row


# -- GridSim's ConservativeBackfill, with exact estimates and whole seconds ------------------------

PARALLEL = SHARED / "gridsim-ref" / "parallel"
CONSERVATIVE_CASES = sorted(p.stem for p in PARALLEL.glob("h2_cons*.json")) if PARALLEL.exists() else []


@pytest.mark.parametrize("case", CONSERVATIVE_CASES)
def test_gridsims_conservative_rows_reproduced_with_exact_estimates(case, tmp_path):
    """``conservative[rounding=gridsim]`` on GridSim's own ConservativeBackfill run (the KTH-SP2
    slice, run time as the estimate): every start, finish and PE range of GridSim's output.

    It holds exactly: with estimates equal to run times no job ends early, so nothing is ever
    compressed and GridSim's never-moving reservations are the same; both take the earliest slot
    and, on its 1-PE machines, the lowest PEs free throughout it.
    """
    folder = shared_path("gridsim-ref", "parallel")
    ref = json.loads((folder / f"{case}.json").read_text())
    document = scenario_from_parallel_reference(ref, folder)
    document["clusters"][0]["policy"] = "conservative[rounding=gridsim]"
    result = run(parse(document, f"{case}.json"), tmp_path / "run")
    jobs = {row["id"]: row for row in result.jobs.to_pylist()}
    expected = list(csv.DictReader((folder / f"{case}.csv").open()))
    assert len(jobs) == len(expected)
    for row in expected:
        got = jobs[int(row["job_id"])]
        if row["status"] != "Success":  # larger than the resource: refused at arrival by both
            assert got["status"] == "rejected", row["job_id"]
            continue
        assert (got["start"], got["finish"]) == (float(row["start_time"]), float(row["finish_time"]))
        assert pe_ranges(got["machines"], got["pes"], 1) == row["pe_ranges"], row["job_id"]


REFERENCE_CASES = sorted(p.stem for p in (SHARED / "gridsim-ref").glob("*.json")) if SHARED.exists() else []


@pytest.mark.parametrize("case", REFERENCE_CASES)
def test_same_schedule_as_gridsim_conservative_on_the_reference_inputs(case, tmp_path):
    """The other GridSim references (SpaceShared runs) as inputs, each machine of ``n`` PEs split into
    ``n`` machines of one: ``gridsim-conservative`` and ``conservative[rounding=gridsim]`` give the
    same jobs table (status, start, finish, machines, PEs).

    Split, because GridSim books PEs by number (a reservation keeps the lowest PEs free throughout
    its window, :class:`~emulator.core.pe_profile.PeProfile`) while ``conservative`` books CPU counts per
    machine, the cluster giving a job its machines' lowest free PEs when it starts: a window where
    enough CPUs of a machine are free, but not the same PEs throughout, suits ``conservative`` only.
    On the machines as given, ``d_swf_workload_default_io``'s job 17 starts at 49.5 here and at
    54.75 under GridSim. With one PE per machine the two bookings are the same thing (GridSim
    numbers PEs machine by machine, so its schedule is unchanged by the split). Jobs are made
    ``spread``, as ``gridsim-conservative`` admits them (GridSim's parallel package spans a job over
    the resource's PEs); its refusal of license pools does not arise (the references have none).
    """
    folder = shared_path("gridsim-ref")
    ref = json.loads((folder / f"{case}.json").read_text())
    tables = {}
    for policy in ("gridsim-conservative", "conservative[rounding=gridsim]"):
        document = scenario_from_reference(ref, folder)
        cluster = document["clusters"][0]
        cluster["policy"] = policy
        cluster["machines"] = [
            {"count": m["cpus"], "cpus": 1, "mips": m["mips"]} for m in cluster["machines"]
        ]
        workload = document["workload"]
        if workload["source"] == "gridlets":
            workload["gridlets"] = [{**g, "placement": "spread"} for g in workload["gridlets"]]
        else:
            workload["placement"] = "spread"
        result = run(parse(document, f"{case}.json"), tmp_path / policy)
        columns = ("id", "status", "start", "finish", "machines", "pes")
        tables[policy] = [tuple(row[c] for c in columns) for row in result.jobs.to_pylist()]
    assert tables["gridsim-conservative"] == tables["conservative[rounding=gridsim]"]
    assert any(row[1] == "finished" for row in tables["gridsim-conservative"])
