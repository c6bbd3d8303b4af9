"""GridSim 5.2's parallel package: ``gridsim-easy`` (AggressiveBackfill) and ``gridsim-conservative``.

First every row of GridSim's own output (``shared/gridsim-ref/parallel/*.csv``)
reproduced by running the scenario its JSON describes; then small scenarios
worked out by hand. In those, machines have 1 PE of 1 MIPS, so PE numbers are
machine numbers and a gridlet of L MI runs ``floor(L / 1) + 1 = L + 1`` s.
"""

from __future__ import annotations

import csv
import heapq
import json
import tomllib
from pathlib import Path

import numpy as np
import pytest

from emulator import run
from emulator.data.scenario import parse

from .conftest import SHARED, job, machine, one_cluster, run_scenario, shared_path
from .test_pe_profile import NaiveProfile

REFERENCES = SHARED / "gridsim-ref" / "parallel"
CASES = sorted(p.stem for p in REFERENCES.glob("*.json")) if REFERENCES.exists() else []
POLICIES = {"AggressiveBackfill": "gridsim-easy", "ConservativeBackfill": "gridsim-conservative"}


def scenario_from_parallel_reference(ref: dict, folder: Path) -> dict:
    """The gridemu scenario (a TOML document) equivalent to one GridSim parallel-package JSON."""
    resource, workload = ref["resource"], ref["workload"]
    policy = next(name for java, name in POLICIES.items() if java in ref["policy"])
    machines = [
        {"count": resource["machines"], "cpus": resource["pes_per_machine"], "mips": resource["mips_per_pe"]}
    ]
    return {
        "name": ref["scenario"],
        "clusters": [{"name": "Res_0", "policy": policy, "machines": machines}],
        "workload": {
            "source": "swf",
            "path": str(folder / Path(workload["swf_file"]).name),
            "rules": "gridsim",
            "rating": float(workload["rating_mips"]),
            "runtime_field": int(workload["runtime_field"]),
            "site": "Res_0",
        },
    }


def pe_ranges(machines: list[int], pes: list[int], per_machine: int) -> str:
    """GridSim's ``PERangeList.toString`` of a job's PEs (global number = machine x PEs per machine + PE)."""
    ranges: list[list[int]] = []
    for pe in sorted(m * per_machine + p for m, p in zip(machines, pes, strict=True)):
        if ranges and ranges[-1][1] == pe - 1:
            ranges[-1][1] = pe
        else:
            ranges.append([pe, pe])
    return "{" + " ".join(f"[{a}..{b}]" for a, b in ranges) + "}"


@pytest.mark.parametrize("case", CASES)
def test_reference_rows_reproduced(case, tmp_path):
    folder = shared_path("gridsim-ref", "parallel")
    ref = json.loads((folder / f"{case}.json").read_text())
    expected = list(csv.DictReader((folder / f"{case}.csv").open()))
    result = run(parse(scenario_from_parallel_reference(ref, folder), f"{case}.json"), tmp_path / "run")
    jobs = {row["id"]: row for row in result.jobs.to_pylist()}
    assert len(jobs) == len(expected)
    per_machine = ref["resource"]["pes_per_machine"]
    for row in expected:
        got = jobs[int(row["job_id"])]
        if row["status"] != "Success":  # GridSim fails a job larger than the resource at submission
            assert got["status"] == "rejected", row["job_id"]
            continue
        assert got["status"] == "finished", row["job_id"]
        assert got["cpus"] == int(row["procs"])
        assert (got["arrive"], got["start"], got["finish"]) == (
            float(row["submission_time"]),
            float(row["start_time"]),
            float(row["finish_time"]),
        ), row["job_id"]
        assert got["finish"] - got["start"] == int(row["duration_used"])
        assert pe_ranges(got["machines"], got["pes"], per_machine) == row["pe_ranges"], row["job_id"]


def test_the_documented_scenario_reproduces_gridsims_easy_rows(tmp_path):
    # docs/gridsim.md's TOML example, pointed at the shared trace, is the h2_easy reference run.
    folder = shared_path("gridsim-ref", "parallel")
    text = (Path(__file__).resolve().parents[1] / "docs" / "gridsim.md").read_text()
    document = tomllib.loads(text.split("```toml\n", 1)[1].split("```", 1)[0])
    document["workload"]["path"] = str(folder / document["workload"]["path"])
    result = run(parse(document, "docs/gridsim.md"), tmp_path / "run")
    got = {
        r["id"]: (r["start"], r["finish"], pe_ranges(r["machines"], r["pes"], 1))
        for r in result.jobs.to_pylist()
    }
    rows = csv.DictReader((folder / "h2_easy_kth2000_rt4.csv").open())
    assert got == {
        int(r["job_id"]): (float(r["start_time"]), float(r["finish_time"]), r["pe_ranges"]) for r in rows
    }


def test_every_parallel_reference_case_is_covered():
    shared_path("gridsim-ref", "parallel")
    assert {"h2_easy_kth2000_rt4", "h2_cons_kth2000_rt4"} <= set(CASES)


# -- hand-checked scenarios ----------------------------------------------------------------------


def gridlet(id: int, submit: float, pes: int, length: float, **extra) -> dict:
    """A gridlet of ``length`` MI: at 1 MIPS it runs ``length + 1`` s under the parallel package."""
    return job(id, submit, pes, length, placement="spread", **extra)


def run_parallel(tmp_path, policy: str, gridlets: list[dict], pes: int = 4, machines=None) -> dict[int, dict]:
    cluster = one_cluster(policy, machines or [machine(1, 1.0, count=pes)])
    return run_scenario(tmp_path, cluster, gridlets, site="c")


def schedule(rows: dict[int, dict]) -> dict[int, tuple[float, float, list[int]]]:
    """Start, finish and global PEs (machine x PEs per machine + PE; here the machine) of each job."""
    return {i: (r["start"], r["finish"], r["machines"]) for i, r in sorted(rows.items())}


# 4 PEs. J1 takes PEs 0-1 for 10 s; J2 (3 PEs, 5 s) is reserved at 10 on PEs 0-2; J3 (all 4 PEs)
# queues behind it; J4 (1 PE, 30 s) arrives at 1.
PIVOT = [gridlet(1, 0, 2, 9), gridlet(2, 0, 3, 4), gridlet(3, 0, 4, 4), gridlet(4, 1, 1, 29)]
PIVOT_EXPECTED = {
    # EASY protects only the pivot (J2, the first job that could not start). J4 fits on PE 3
    # until 31 (PE 2 is the pivot's from 10), so it starts at once and delays J3, which becomes
    # the pivot at 10 and finds all 4 PEs free only at 31.
    "gridsim-easy": {1: (0, 10, [0, 1]), 2: (10, 15, [0, 1, 2]), 3: (31, 36, [0, 1, 2, 3]), 4: (1, 31, [3])},
    # Conservative reserves every job on arrival: J3 gets 15..20 at t=0 and keeps it; J4 finds
    # no PE free for 30 s from 1 (PE 3 is J3's from 15), and is booked after J3, on PE 0.
    "gridsim-conservative": {
        1: (0, 10, [0, 1]),
        2: (10, 15, [0, 1, 2]),
        3: (15, 20, [0, 1, 2, 3]),
        4: (20, 50, [0]),
    },
}


@pytest.mark.parametrize("policy", sorted(PIVOT_EXPECTED))
def test_easy_protects_the_pivot_only_and_conservative_every_reservation(tmp_path, policy):
    assert schedule(run_parallel(tmp_path, policy, PIVOT)) == PIVOT_EXPECTED[policy]


# J1 holds PE 0 until 10, J2 PE 1 until 20. J3 (3 PEs, 5 s) finds PEs 0, 2, 3 free throughout
# 10..15: the lowest three across two ranges, {[0..0] [2..3]}. J4 (1 PE, 3 s) at 1 fits on PE 2
# before 10 and ends at 4, so it backfills without touching J3's PEs; J3 starts on its reserved PEs.
LOWEST = [gridlet(1, 0, 1, 9), gridlet(2, 0, 1, 19), gridlet(3, 0, 3, 4), gridlet(4, 1, 1, 2)]


@pytest.mark.parametrize("policy", sorted(POLICIES.values()))
def test_lowest_free_pes_across_ranges_and_the_reservation_keeps_them(tmp_path, policy):
    rows = run_parallel(tmp_path, policy, LOWEST)
    assert schedule(rows) == {1: (0, 10, [0]), 2: (0, 20, [1]), 3: (10, 15, [0, 2, 3]), 4: (1, 4, [2])}
    assert pe_ranges(rows[3]["machines"], rows[3]["pes"], 1) == "{[0..0] [2..3]}"


# J1 holds all 4 PEs until 10. J3 and J2 arrive at 10, J3 first in the file: the PEs J1 frees at
# 10 go to J3 at once (completions before arrivals), J2 follows at 15.
SAME_SECOND = [gridlet(1, 0, 4, 9), gridlet(3, 10, 4, 4), gridlet(2, 10, 4, 4)]


@pytest.mark.parametrize("policy", sorted(POLICIES.values()))
def test_same_second_completion_then_arrivals_in_file_order(tmp_path, policy):
    rows = run_parallel(tmp_path, policy, SAME_SECOND)
    assert {i: (r["start"], r["finish"]) for i, r in rows.items()} == {1: (0, 10), 3: (10, 15), 2: (15, 20)}


@pytest.mark.parametrize("policy", sorted(POLICIES.values()))
def test_a_job_larger_than_the_resource_fails_at_arrival(tmp_path, policy):
    # GridSim fails a gridlet asking for more PEs than the resource has; the others run as usual.
    rows = run_parallel(tmp_path, policy, [gridlet(1, 0, 5, 9), gridlet(2, 0, 4, 9)])
    assert rows[1]["status"] == "rejected" and "needs 5 CPUs" in rows[1]["reason"]
    assert (rows[1]["start"], rows[2]["start"], rows[2]["finish"]) == (None, 0, 10)


def test_one_machine_of_four_pes_gives_the_same_pe_numbers(tmp_path):
    # The profile numbers PEs across machines; with one 4-PE machine they are that machine's PEs.
    rows = run_parallel(tmp_path, "gridsim-easy", LOWEST, machines=[machine(4, 1.0)])
    assert {i: r["pes"] for i, r in rows.items()} == {1: [0], 2: [1], 3: [0, 2, 3], 4: [2]}
    assert {m for r in rows.values() for m in r["machines"]} == {0}


def test_a_license_pool_is_refused():
    from emulator.core.model import Cluster, Link, Machine
    from emulator.policies import LOCAL, PolicyError

    cluster = Cluster("c", (Machine(4, 1.0),), Link(1.0), {"matlab": 1})
    with pytest.raises(PolicyError, match="no software licenses"):
        LOCAL.create("gridsim-easy", cluster=cluster)


# -- where gridsim-easy and gridemu's easy differ ------------------------------------------------

# J1 (2 PEs) is estimated at 19 s but runs 9; J2 needs all 4 PEs; J3 (1 PE, 14 s) arrives at 1.
ESTIMATES = [
    job(1, 0, 2, 9, estimate=19, placement="spread"),
    job(2, 0, 4, 4, placement="spread"),
    job(3, 1, 1, 14, placement="spread"),
]
# J1 holds PEs 0-1 of one 4-PE machine; H needs 3 PEs; B (1 PE, long) arrives at 1.
IDENTITY = [job(1, 0, 2, 9), job(2, 0, 3, 4), job(3, 1, 1, 29)]


def test_gridsim_easy_and_easy_differ(tmp_path):
    def both(name, jobs, machines):
        return {
            policy: run_scenario(tmp_path / name / policy, one_cluster(policy, machines), jobs, site="c")
            for policy in ("easy", "gridsim-easy")
        }

    # Estimates vs actual durations, and reservation recomputation. easy plans with estimates:
    # J2 is reserved at 19 (J1's estimated end), so J3 (1..15) backfills; J1 really ends at 9 and
    # the reservation is recomputed, but J3 holds a PE until 15, so J2 runs 15..19.
    # gridsim-easy has no estimate: every job runs length + 1 s (J1 0..10), J2's one reservation
    # is at 10 and never moves, J3 (1..16) would overlap it and waits until J2 ends: 15..30.
    rows = both("estimates", ESTIMATES, [machine(1, 1.0, count=4)])
    assert {i: (r["start"], r["finish"]) for i, r in rows["easy"].items()} == {
        1: (0, 9),
        2: (15, 19),
        3: (1, 15),
    }
    assert {i: (r["start"], r["finish"]) for i, r in rows["gridsim-easy"].items()} == {
        1: (0, 10),
        2: (10, 15),
        3: (15, 30),
    }
    # PE identity vs counts. easy's reservation for H is a count (3 of the machine's 4 CPUs at 9),
    # so B may take any one spare CPU: the lowest free, PE 2; H then gets PEs 0, 1, 3.
    # gridsim-easy books H on PEs 0-2 at 10: B may only use PE 3, and H starts on its PEs.
    rows = both("identity", IDENTITY, [machine(4, 1.0)])
    assert {i: (r["start"], r["pes"]) for i, r in rows["easy"].items()} == {
        1: (0, [0, 1]),
        2: (9, [0, 1, 3]),
        3: (1, [2]),
    }
    assert {i: (r["start"], r["pes"]) for i, r in rows["gridsim-easy"].items()} == {
        1: (0, [0, 1]),
        2: (10, [0, 1, 2]),
        3: (1, [3]),
    }


# -- against a transcription of GridSim's event handling -----------------------------------------


def gridsim_by_events(policy: str, gridlets: list[dict], pes: int, arrivals_first: bool) -> dict:
    """GridSim's schedulers event by event (one pass per arrival, one update per completion time).

    A plain transcription of ``AggressiveBackfill`` / ``ConservativeBackfill``
    on :class:`NaiveProfile`; ``arrivals_first`` picks the order of an arrival and
    an update at the same second (SimJava's), which must not matter.
    """
    profile, waiting, out, pivot = NaiveProfile(pes), [], {}, None
    events = [(g["submit"], 0 if arrivals_first else 1, i, g) for i, g in enumerate(gridlets)]
    seconds = {g["id"]: int(g["runtime"] + 1) for g in gridlets}

    def start_now(g, now):
        pes_now = profile.check_availability(g["cpus"], now, seconds[g["id"]])
        if pes_now is not None:
            profile.allocate(pes_now, now, now + seconds[g["id"]])
            out[g["id"]] = (now, now + seconds[g["id"]], pes_now)
            heapq.heappush(events, (now + seconds[g["id"]], 1 if arrivals_first else 0, -1, None))
        return pes_now is not None

    def reserve(g, now):
        start, chosen = profile.find_start_time(g["cpus"], now, seconds[g["id"]])
        profile.allocate(chosen, start, start + seconds[g["id"]])
        return start, chosen

    def easy_pass(now):
        nonlocal pivot
        if pivot is not None and pivot[1] <= now:
            g, start, chosen = pivot
            waiting.remove(g)
            out[g["id"]] = (start, start + seconds[g["id"]], chosen)
            heapq.heappush(events, (start + seconds[g["id"]], 1 if arrivals_first else 0, -1, None))
            pivot = None
        for g in list(waiting):
            if pivot is not None and g is pivot[0]:
                continue
            if start_now(g, now):
                waiting.remove(g)
            elif pivot is None:
                pivot = (g, *reserve(g, now))

    heapq.heapify(events)
    last_update, booked = -1.0, []
    while events:
        now, _, _, g = heapq.heappop(events)
        if g is not None:  # an arrival
            if policy == "gridsim-easy":
                waiting.append(g)
                easy_pass(now)
            elif not start_now(g, now):
                booked.append((g, *reserve(g, now)))
        elif now > last_update:  # an update (duplicates at one time are ignored)
            last_update = now
            profile.forget(now)
            if policy == "gridsim-easy":
                easy_pass(now)
            else:
                for item in [b for b in booked if b[1] <= now]:
                    booked.remove(item)
                    g, start, chosen = item
                    out[g["id"]] = (start, start + seconds[g["id"]], chosen)
                    heapq.heappush(events, (start + seconds[g["id"]], 1 if arrivals_first else 0, -1, None))
    return out


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("policy", sorted(POLICIES.values()))
def test_same_schedule_as_gridsims_event_by_event_handling(tmp_path, policy, seed):
    rng = np.random.default_rng(seed)
    pes, submit, gridlets = 6, 0, []
    for i in range(60):
        submit += int(rng.choice([0, 0, 1, 3, 7]))  # many same-second arrivals and ends
        gridlets.append(gridlet(i + 1, submit, int(rng.integers(1, pes + 1)), int(rng.integers(1, 25))))
    rows = run_parallel(tmp_path, policy, gridlets, pes=pes)
    got = {i: (r["start"], r["finish"], r["machines"]) for i, r in rows.items()}
    for arrivals_first in (True, False):
        assert got == gridsim_by_events(policy, gridlets, pes, arrivals_first)
