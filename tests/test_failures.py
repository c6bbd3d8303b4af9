"""Machine failures and repairs, cluster outages, kills at the estimate (``emulator/core/failures.py``).

Hand-checked tiny scenarios with exact times, then termination, determinism,
validation, and a property test (hypothesis) reusing ``test_properties``'s
generators: no CPU is over-allocated, no job runs on a failed machine or a
down cluster, and every job ends exactly once (finished, rejected with a
reason, or killed at its estimate).
"""

from __future__ import annotations

import copy
import math
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import emulator
from emulator.core.config import ScenarioError
from emulator.core.failures import FailureModel, FailureProcess, lost_reason
from emulator.core.messages import Status
from emulator.data.scenario import parse
from emulator.state.meta_view import MetaState, MetaView

from .conftest import indexed
from .test_properties import SETTINGS, fits, grid_scenarios, model, shape

# -- helpers ------------------------------------------------------------------------------------------


def run(raw: dict, out: Path | None = None):
    """Run ``raw``; returns (events as dicts, jobs by id as dicts, summary)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run" if out is None else out
        result = emulator.run(parse(copy.deepcopy(raw), "test.toml"), out)
        with pa.memory_map(str(out / "events.arrow")) as source:
            events = indexed(pa.ipc.open_file(source).read_all())
        jobs = {j["id"]: j for j in result.jobs.to_pylist()}  # (read from the run directory)
    return events, jobs, result.summary


def rows(events: list[dict], *kinds: str) -> list[tuple]:
    """``(time, kind, job, cluster, machines, info)`` of the rows of these kinds (all if none)."""
    return [
        (e["time"], e["kind"], e["job"], e["cluster"], e["machines"], e["info"])
        for e in events
        if not kinds or e["kind"] in kinds
    ]


def job_rows(events: list[dict], jid: int) -> list[tuple]:
    return [(e["time"], e["kind"], e["cluster"], e["machines"], e["info"]) for e in events if e["job"] == jid]


def gl(jid: int, estimate: float, submit: float = 0.0, **more) -> dict:
    return {"id": jid, "submit": submit, "estimate": estimate, **more}


def one_cluster(gridlets: list[dict], stress: dict, policy: str = "fcfs", machines=None) -> dict:
    machines = machines or [{"cpus": 1, "mips": 1.0, "count": 2}]
    return {
        "name": "fail",
        "clusters": [{"name": "c0", "policy": policy, "machines": machines}],
        "workload": {"source": "gridlets", "site": "c0", "gridlets": gridlets},
        "stress": stress,
    }


def failures(*events) -> dict:
    return {"failures": {"model": "list", "events": [list(e) for e in events]}}


# -- machine failures -----------------------------------------------------------------------------------

# Two 1-CPU machines at 1 MIPS. J1 (100 s) runs on m0, J2 (100 s) on m1; m0 fails at 30, is
# repaired at 50. J3 (10 s) arrives at 35: m1 is busy and m0 down, so it waits.


def test_a_failure_kills_a_job_which_restarts_from_zero_when_its_machine_is_repaired():
    jobs = [gl(1, 100.0), gl(2, 100.0), gl(3, 10.0, submit=35.0)]
    events, out, summary = run(one_cluster(jobs, failures(("c0", 0, 30.0, 50.0))))
    assert rows(events, "fail", "repair") == [
        (30.0, "fail", -1, 0, [0], None),
        (50.0, "repair", -1, 0, [0], None),
    ]
    assert job_rows(events, 1) == [
        (0.0, "submit", 0, [], None),
        (0.0, "arrive", 0, [], None),
        (0.0, "start", 0, [0], None),
        (30.0, "kill", 0, [0], "failure"),
        (50.0, "resume", 0, [0], "stop"),  # FCFS: J1 is at the head of the queue again (it was before J3)
        (150.0, "finish", 0, [0], None),
    ]
    assert [(r[0], r[1]) for r in job_rows(events, 3)] == [
        (35.0, "submit"),
        (35.0, "arrive"),
        (100.0, "start"),  # m1 after J2: never m0 while it is down, nor before J1 at the repair
        (110.0, "finish"),
    ]
    j1 = out[1]
    assert (j1["status"], j1["start"], j1["finish"], j1["kills"]) == ("finished", 0.0, 150.0, 1)
    assert (j1["run_time"], j1["wasted_cpu_seconds"]) == (130.0, 30.0)  # 30 s thrown away
    assert summary["grid"]["jobs_killed"] == 1 and summary["clusters"]["c0"]["jobs_killed"] == 1
    assert summary["grid"]["preemptions"] == 0


def test_a_checkpointable_job_restarts_with_its_progress():
    jobs = [gl(1, 100.0, checkpointable=True), gl(2, 100.0)]
    events, out, _ = run(one_cluster(jobs, failures(("c0", 0, 30.0, 50.0))))
    assert job_rows(events, 1)[3:] == [
        (30.0, "kill", 0, [0], "failure"),
        (50.0, "resume", 0, [0], "checkpoint"),
        (120.0, "finish", 0, [0], None),  # 70 s left at the repair
    ]
    assert (out[1]["run_time"], out[1]["wasted_cpu_seconds"]) == (100.0, 0.0)


def test_a_job_needing_a_failed_machine_waits_for_its_repair_and_is_not_rejected():
    # One 2-CPU machine and one 1-CPU machine; the 2-CPU one is down from 0 to 40. J1 (2 CPUs)
    # can run only there: it waits (an impaired cluster never rejects a stuck queue), J2 runs
    # on m1 at once.
    machines = [{"cpus": 2, "mips": 1.0}, {"cpus": 1, "mips": 1.0}]
    jobs = [gl(1, 10.0, cpus=2), gl(2, 5.0)]
    events, out, _ = run(one_cluster(jobs, failures(("c0", 0, 0.0, 40.0)), "easy", machines))
    assert rows(events, "start", "finish") == [
        (0.0, "start", 2, 0, [1], None),
        (5.0, "finish", 2, 0, [1], None),
        (40.0, "start", 1, 0, [0, 0], None),
        (50.0, "finish", 1, 0, [0, 0], None),
    ]
    assert out[1]["status"] == "finished"


# m1 is down during [0, 50): both jobs (10 s each) take turns on m0, under every policy.
NO_START_ON_FAILED = {
    "fcfs": [(1, 0.0, 10.0), (2, 10.0, 20.0)],
    "easy": [(1, 0.0, 10.0), (2, 10.0, 20.0)],
    "flexible": [(1, 0.0, 10.0), (2, 10.0, 20.0)],
    "cs2": [(1, 0.0, 10.0), (2, 10.0, 20.0)],
    "titan": [(1, 0.0, 10.0), (2, 10.0, 20.0)],
    "gridsim-spaceshared": [(1, 0.0, 11.0), (2, 11.0, 22.0)],  # completions at GridSim's ticks
    "gridsim-timeshared": [(1, 0.0, 20.0), (2, 0.0, 20.0)],  # sharing m0's PE: half speed each
}


@pytest.mark.parametrize("policy", sorted(NO_START_ON_FAILED))
def test_no_policy_starts_a_job_on_a_failed_machine(policy):
    jobs = [gl(1, 10.0), gl(2, 10.0)]
    events, _, _ = run(one_cluster(jobs, failures(("c0", 1, 0.0, 50.0)), policy))
    assert all(e["machines"] == [0] for e in events if e["kind"] in ("start", "finish"))
    starts = {e["job"]: e["time"] for e in events if e["kind"] == "start"}
    ends = {e["job"]: e["time"] for e in events if e["kind"] == "finish"}
    assert [(j, starts[j], ends[j]) for j in sorted(starts)] == NO_START_ON_FAILED[policy]


def test_gridsim_spaceshared_keeps_progress_as_gridsim_counts_it():
    # 1 PE at 1 MIPS; J1 (100 MI, checkpointable) is killed at 30.5 with 30.5 MI done, resumes at
    # the repair (40) with 69.5 MI left: GridSim notices the end at 40 + int(69.5 + 1) = 110.
    # J2 (not checkpointable) on the other PE restarts from zero: 40 + int(100 + 1) = 141.
    machines = [{"cpus": 1, "mips": 1.0, "count": 2}]
    jobs = [gl(1, 100.0, checkpointable=True), gl(2, 100.0)]
    stress = failures(("c0", 0, 30.5, 40.0), ("c0", 1, 30.5, 40.0))
    events, out, _ = run(one_cluster(jobs, stress, "gridsim-spaceshared", machines))
    assert [r[1:] for r in rows(events, "kill", "resume")] == [
        ("kill", 1, 0, [0], "failure"),
        ("kill", 2, 0, [1], "failure"),
        ("resume", 1, 0, [0], "checkpoint"),
        ("resume", 2, 0, [1], "stop"),
    ]
    assert (out[1]["finish"], out[2]["finish"]) == (110.0, 141.0)


def test_time_shared_jobs_are_killed_and_never_share_a_failed_machine():
    machines = [{"cpus": 1, "mips": 1.0, "count": 2}]
    jobs = [gl(j, 30.0) for j in (1, 2, 3)]
    events, out, _ = run(one_cluster(jobs, failures(("c0", 1, 10.0, 100.0)), "gridsim-timeshared", machines))
    kills = rows(events, "kill")
    assert kills and all(k[0] == 10.0 and k[4] == [1] for k in kills)
    assert not [
        e for e in events if e["kind"] in ("start", "resume") and 10 <= e["time"] < 100 and 1 in e["machines"]
    ]
    assert all(j["status"] == "finished" for j in out.values())


def test_a_job_killed_too_often_is_lost_with_the_reason():
    jobs = [gl(1, 100.0)]
    stress = {
        "max_kills": 1,
        **failures(("c0", 0, 10.0, 20.0), ("c0", 0, 30.0, 40.0), ("c0", 0, 500.0, 600.0)),
    }
    events, out, summary = run(one_cluster(jobs, stress, machines=[{"cpus": 1, "mips": 1.0}]))
    assert job_rows(events, 1)[2:] == [
        (0.0, "start", 0, [0], None),
        (10.0, "kill", 0, [0], "failure"),
        (20.0, "resume", 0, [0], "stop"),
        (30.0, "kill", 0, [0], "failure"),
        (30.0, "reject", 0, [], lost_reason(2, 1)),
    ]
    assert (out[1]["status"], out[1]["reason"], out[1]["kills"]) == ("rejected", lost_reason(2, 1), 2)
    assert summary["grid"]["jobs_lost"] == 1 and summary["jobs"]["rejected"] == 1
    assert (out[1]["run_time"], out[1]["wasted_cpu_seconds"]) == (20.0, 20.0)  # 0..10 and 20..30, all lost
    assert rows(events)[-1][0] == 30.0  # the later failure (500) never keeps the run alive


def test_max_kills_zero_loses_a_job_at_its_first_kill():
    stress = {"max_kills": 0, **failures(("c0", 0, 10.0, 20.0))}
    _, out, _ = run(one_cluster([gl(1, 100.0)], stress, machines=[{"cpus": 1, "mips": 1.0}]))
    assert out[1]["reason"] == lost_reason(1, 0)


# -- kill at the estimate -----------------------------------------------------------------------------


def test_kill_at_estimate_ends_jobs_that_outlive_their_estimate():
    # One 1-CPU machine per job; J4 waits for J1's CPU (J1 is killed at 10).
    machines = [{"cpus": 1, "mips": 1.0, "count": 3}]
    jobs = [
        gl(1, 10.0, runtime=20.0),  # killed at 10
        gl(2, 10.0, runtime=10.0),  # ends exactly at its estimate: finished
        gl(3, 10.0, runtime=5.0),
        gl(4, 10.0, runtime=1.0),
    ]
    events, out, summary = run(one_cluster(jobs, {"kill_at_estimate": True}, machines=machines))
    assert job_rows(events, 1)[2:] == [(0.0, "start", 0, [0], None), (10.0, "kill", 0, [0], "estimate")]
    assert [(j, out[j]["status"], out[j]["finish"]) for j in (2, 3, 4)] == [
        (2, "finished", 10.0),
        (3, "finished", 5.0),
        (4, "finished", 6.0),  # on J3's CPU, from 5
    ]
    assert (out[1]["status"], out[1]["reason"], out[1]["run_time"]) == (
        "killed",
        "killed at its estimate",
        10.0,
    )
    assert out[1]["wasted_cpu_seconds"] == 10.0 and math.isnan(out[1]["finish"] or math.nan)
    assert summary["jobs"] == {"total": 4, "finished": 3, "rejected": 0, "killed": 1}
    assert (summary["grid"]["jobs_killed_at_estimate"], summary["grid"]["jobs_killed"]) == (1, 1)
    # without it, J1 runs on
    _, out, summary = run(one_cluster(jobs, {"kill_at_estimate": False}, machines=machines))
    assert out[1]["finish"] == 20.0 and "killed" not in summary["jobs"]


def test_a_restarted_job_is_killed_at_its_estimate_from_its_restart():
    # J1 (estimate 10, runtime 15) is killed by a failure at 4, restarts at 6 from zero and is
    # killed at 6 + 10 = 16.
    stress = {"kill_at_estimate": True, **failures(("c0", 0, 4.0, 6.0))}
    events, out, _ = run(
        one_cluster([gl(1, 10.0, runtime=15.0)], stress, machines=[{"cpus": 1, "mips": 1.0}])
    )
    assert [(r[0], r[1], r[4]) for r in job_rows(events, 1)[2:]] == [
        (0.0, "start", None),
        (4.0, "kill", "failure"),
        (6.0, "resume", "stop"),
        (16.0, "kill", "estimate"),
    ]
    assert (out[1]["status"], out[1]["kills"]) == ("killed", 1)


# -- outages ------------------------------------------------------------------------------------------


def outage_grid(queued: str) -> dict:
    """c0, c1: one 1-CPU machine each, latency 1, round-robin. c0 is down during [20, 200).

    J1 -> c0 (runs 1..), J2 -> c1 (1..101), J3 (at 5) -> c0, J4 (at 6) -> c1, J5 (at 19.5) -> c0:
    it arrives at 20.5, after c0 went down and before the meta-scheduler knows (21).
    """
    jobs = [gl(1, 100.0), gl(2, 100.0), gl(3, 10.0, 5.0), gl(4, 10.0, 6.0), gl(5, 10.0, 19.5)]
    return {
        "name": "outage",
        "meta": {"policy": "round-robin"},
        "clusters": [
            {"name": "c0", "machines": [{"cpus": 1, "mips": 1.0}]},
            {"name": "c1", "machines": [{"cpus": 1, "mips": 1.0}]},
        ],
        "workload": {"source": "gridlets", "gridlets": jobs},
        "stress": {"outages": [{"cluster": "c0", "start": 20.0, "end": 200.0, "queued": queued}]},
    }


def test_an_outage_returns_queued_jobs_to_the_meta_scheduler_which_dispatches_them_elsewhere():
    events, out, summary = run(outage_grid("return"))
    assert rows(events, "down", "up", "kill", "return") == [
        (20.0, "down", -1, 0, [], "return"),
        (20.0, "kill", 1, 0, [0], "outage"),
        (20.0, "return", 3, 0, [], "outage"),  # the queue, in order: J3, then the killed J1
        (20.0, "return", 1, 0, [], "outage"),
        (20.5, "return", 5, 0, [], "outage"),  # arrived while c0 was down
        (200.0, "up", -1, 0, [], None),
    ]
    # The meta-scheduler learns at 21 that c0 is down: everything goes to c1 (arriving at 22, 22.5).
    assert [r[:4] for r in rows(events, "dispatch") if r[0] > 20] == [
        (21.0, "dispatch", 3, 1),
        (21.0, "dispatch", 1, 1),
        (21.5, "dispatch", 5, 1),
    ]
    starts = [(r[0], r[2]) for r in rows(events, "start") if r[3] == 1]
    assert starts == [(1.0, 2), (101.0, 4), (111.0, 3), (121.0, 1), (221.0, 5)]
    assert {j: (o["cluster"], o["start"], o["finish"]) for j, o in out.items()} == {
        1: ("c1", 1.0, 221.0),  # its first start was on c0; from zero on c1
        2: ("c1", 1.0, 101.0),
        3: ("c1", 111.0, 121.0),
        4: ("c1", 101.0, 111.0),
        5: ("c1", 221.0, 231.0),
    }
    assert out[1]["kills"] == 1 and out[1]["wasted_cpu_seconds"] == 19.0
    assert (summary["grid"]["jobs_returned"], summary["clusters"]["c0"]["jobs_returned"]) == (3, 3)


def test_an_outage_keeps_queued_jobs_waiting_with_wait():
    events, out, _ = run(outage_grid("wait"))
    assert not rows(events, "return")
    assert {j: (o["cluster"], o["start"], o["finish"]) for j, o in out.items()} == {
        1: ("c0", 1.0, 310.0),  # killed at 20, resumed from zero after J3
        2: ("c1", 1.0, 101.0),
        3: ("c0", 200.0, 210.0),
        4: ("c1", 101.0, 111.0),
        5: ("c0", 310.0, 320.0),  # arrived at 20.5 and waited
    }
    assert job_rows(events, 1)[-2:] == [(210.0, "resume", 0, [0], "stop"), (310.0, "finish", 0, [0], None)]


def test_the_meta_scheduler_holds_jobs_while_every_cluster_able_to_run_them_is_down():
    # One cluster, down during [10, 50), returning its jobs. J1 (started at 1) comes back at 11 and
    # J2 (at 20) is held: both leave when the `up` report arrives (51), and arrive at 52.
    raw = {
        "name": "held",
        "clusters": [{"name": "c0", "machines": [{"cpus": 1, "mips": 1.0}]}],
        "workload": {"source": "gridlets", "gridlets": [gl(1, 100.0), gl(2, 5.0, 20.0)]},
        "stress": {"outages": [{"cluster": "c0", "start": 10.0, "end": 50.0, "queued": "return"}]},
    }
    events, out, _ = run(raw)
    assert [r[:3] for r in rows(events, "dispatch")] == [
        (0.0, "dispatch", 1),
        (51.0, "dispatch", 1),
        (51.0, "dispatch", 2),
    ]
    assert {j: (o["start"], o["finish"]) for j, o in out.items()} == {1: (1.0, 152.0), 2: (152.0, 157.0)}


def test_jobs_entering_a_cluster_directly_wait_through_an_outage_even_with_return():
    stress = {"outages": [{"cluster": "c0", "start": 5.0, "end": 30.0, "queued": "return"}]}
    events, out, _ = run(
        one_cluster([gl(1, 10.0), gl(2, 10.0, 6.0)], stress, machines=[{"cpus": 1, "mips": 1.0}])
    )
    assert not rows(events, "return")
    assert {j: (o["start"], o["finish"]) for j, o in out.items()} == {1: (0.0, 40.0), 2: (40.0, 50.0)}


@pytest.mark.parametrize("policy", sorted(NO_START_ON_FAILED))
def test_every_local_policy_waits_out_an_outage(policy):
    # Four 10 s jobs on two 1-CPU machines; the cluster is down during [5, 20): J1 and J2 (all four
    # when time-shared) are killed at 5, nothing starts before 20, and every job finishes.
    stress = {"outages": [{"cluster": "c0", "start": 5.0, "end": 20.0}]}
    events, out, _ = run(one_cluster([gl(j, 10.0) for j in (1, 2, 3, 4)], stress, policy))
    killed = (1, 2, 3, 4) if policy == "gridsim-timeshared" else (1, 2)
    assert [(r[0], r[2]) for r in rows(events, "kill")] == [(5.0, j) for j in killed]
    assert not [e for e in events if e["kind"] in ("start", "resume") and 5.0 <= e["time"] < 20.0]
    assert all(o["status"] == "finished" for o in out.values())


def test_own_site_holds_a_job_whose_site_is_down():
    raw = outage_grid("return")
    raw["meta"]["policy"] = "own-site"
    raw["workload"]["direct"] = False
    for g in raw["workload"]["gridlets"]:
        g["site"] = "c0"
    _, out, _ = run(raw)
    assert all(o["status"] == "finished" and o["cluster"] == "c0" for o in out.values())
    assert min(o["start"] for j, o in out.items() if j != 1) >= 201.0  # after the `up` report


def test_the_meta_view_learns_of_failures_and_outages_only_from_status_reports():
    raw = outage_grid("wait")
    knowledge = MetaState(parse(raw, "t").platform, np.random.default_rng(0))
    view = MetaView(knowledge)
    job = parse(raw, "t").jobs[0]
    assert view.eligible(job).tolist() == [True, True] and not view.any_down
    knowledge.apply(0, Status(0, 0, 0, 0.0, (), (), (), (), (), 20.0, up_cpus=0, down=True))
    assert view.eligible(job).tolist() == [False, True] and view.possible(job).tolist() == [True, True]
    assert view.up_cpus.tolist() == [0, 1] and view.down.tolist() == [True, False]
    knowledge.apply(0, Status(0, 0, 1, 0.0, (), (), (), (), (), 200.0))  # -1: a cluster that does not report
    assert view.down.tolist() == [True, False]
    knowledge.apply(0, Status(0, 0, 1, 0.0, (), (), (), (), (), 200.0, up_cpus=1, down=False))
    assert view.eligible(job).tolist() == [True, True] and not view.any_down


# -- termination ---------------------------------------------------------------------------------------


def endless(policy: str = "fcfs", seed: int = 3, jobs: int = 30) -> dict:
    """Four 4-CPU machines failing every ~200 s (Weibull), 30 jobs; a second cluster with no job."""
    gridlets = [
        gl(i, 50.0 + i, float(i), runtime=40.0 + 3 * i, cpus=1 + i % 4, checkpointable=i % 2 == 0)
        for i in range(1, jobs + 1)
    ]
    return {
        "name": "endless",
        "seed": seed,
        "clusters": [
            {"name": "c0", "policy": policy, "machines": [{"cpus": 4, "mips": 1.0, "count": 4}]},
            {"name": "idle", "machines": [{"cpus": 4, "mips": 1.0, "count": 4}]},
        ],
        "workload": {"source": "gridlets", "site": "c0", "gridlets": gridlets},
        "stress": {"failures": {"model": "weibull", "mttf": 200.0, "mttr": 30.0, "shape": 0.7}},
    }


@pytest.mark.parametrize("policy", ["fcfs", "easy", "cs2", "cs2[period=5]", "gridsim-spaceshared", "titan"])
def test_a_run_ends_with_its_last_job_although_failures_never_end(policy):
    events, _, summary = run(endless(policy))
    assert summary["jobs"]["total"] == 30 == summary["jobs"]["finished"] + summary["jobs"]["rejected"]
    last = max(e["time"] for e in events if e["job"] >= 0)
    assert max(e["time"] for e in events) < last + 1.0  # background rows only within the last round
    assert rows(events, "fail") and summary["grid"]["jobs_killed"] > 0
    assert any(e["cluster"] == 1 for e in events if e["kind"] == "fail")  # the idle cluster fails too


def test_a_run_without_jobs_ends_at_once():
    raw = endless(jobs=1)
    raw["workload"]["gridlets"] = []
    raw["workload"] = {"source": "gridlets", "gridlets": []}
    events, _, summary = run(raw)
    assert events == [] and summary["run"]["rounds"] == 0


# -- determinism ----------------------------------------------------------------------------------------


def files(out: Path) -> tuple[bytes, bytes]:
    return (out / "events.arrow").read_bytes(), (out / "jobs.arrow").read_bytes()


def test_perturbed_runs_are_identical_on_rerun_and_change_with_the_seed(tmp_path):
    raw = outage_grid("return")
    raw["stress"].update(endless()["stress"], kill_at_estimate=True)
    raw["workload"]["gridlets"] += endless()["workload"]["gridlets"][5:]
    run(raw, tmp_path / "a")
    run(raw, tmp_path / "b")
    assert files(tmp_path / "a") == files(tmp_path / "b")
    raw["seed"] = 2
    run(raw, tmp_path / "c")
    assert files(tmp_path / "a")[0] != files(tmp_path / "c")[0]


def test_a_machines_failures_depend_on_the_seed_alone():
    seq = np.random.SeedSequence(7, spawn_key=(1,))
    model_ = FailureModel("exponential", 100.0, 10.0)
    small, large = FailureProcess(model_, 2, seq), FailureProcess(model_, 5, seq)
    assert [small.first_failure(m) for m in (0, 1)] == [large.first_failure(m) for m in (0, 1)]
    assert small.repair_time(1, 3.0) == large.repair_time(1, 3.0)
    # and on neither the jobs nor the policy: the same fail/repair rows under FCFS and EASY
    fcfs, easy = (run(endless(p))[0] for p in ("fcfs", "easy"))
    end = min(max(e["time"] for e in fcfs), max(e["time"] for e in easy))
    same = [rows([e for e in trace if e["time"] < end - 1], "fail", "repair") for trace in (fcfs, easy)]
    assert same[0] == same[1] and same[0]


def test_weibull_draws_have_the_given_means():
    seq = np.random.SeedSequence(1, spawn_key=(1,))
    process = FailureProcess(FailureModel("weibull", 100.0, 10.0, 0.7), 2000, seq)
    assert np.mean([process.first_failure(m) for m in range(2000)]) == pytest.approx(100.0, rel=0.1)
    assert np.mean([process.repair_time(m, 0.0) for m in range(2000)]) == pytest.approx(10.0, rel=0.1)


def test_scenarios_without_perturbation_run_exactly_as_before(tmp_path):
    base = one_cluster([gl(1, 10.0, runtime=20.0), gl(2, 5.0)], {})
    quiet = copy.deepcopy(base)
    quiet["stress"] = {
        "kill_at_estimate": False,
        "max_kills": 2,
        "failures": {"model": "none"},
        "outages": [],
    }
    assert parse(copy.deepcopy(quiet), "t").failures is None
    del base["stress"]
    run(base, tmp_path / "a")
    run(quiet, tmp_path / "b")
    assert files(tmp_path / "a") == files(tmp_path / "b")


# -- configuration ---------------------------------------------------------------------------------------


def test_failures_from_a_csv_file_equal_the_same_events_listed(tmp_path):
    (tmp_path / "failures.csv").write_text("cluster,machine,fail,repair\n# a comment\nc0,0,30,50\n")
    listed = one_cluster([gl(1, 100.0), gl(2, 100.0)], failures(("c0", 0, 30.0, 50.0)))
    from_file = copy.deepcopy(listed)
    from_file["stress"] = {"failures": {"model": "list", "file": "failures.csv"}}
    scenario = emulator.data.scenario.load_raw(from_file, str(tmp_path / "s.toml"), tmp_path)
    assert scenario.failures == parse(listed, "t").failures
    assert scenario.effective["stress"]["failures"]["file"] == str(tmp_path / "failures.csv")


def test_a_clusters_own_failures_table_overrides_the_grids():
    raw = outage_grid("wait")
    raw["stress"] = {"failures": {"model": "exponential", "mttf": 100.0, "mttr": 10.0}}
    raw["clusters"][1]["failures"] = {"model": "list", "events": [[0, 5.0, 6.0]]}
    got = parse(raw, "t").failures
    assert got.cluster(0).model.model == "exponential"
    assert got.cluster(1).model == FailureModel("list", events=((0, 5.0, 6.0),))


BAD = [
    (
        {"failures": {"model": "gamma"}},
        "key 'stress.failures.model' = 'gamma': expected one of none, exponential",
    ),
    ({"failures": {"model": "exponential", "mttr": 1.0}}, "missing key 'stress.failures.mttf'"),
    ({"failures": {"model": "weibull", "mttf": -1.0, "mttr": 1.0}}, "key 'stress.failures.mttf' = -1.0"),
    (
        {"failures": {"model": "exponential", "mttf": 1.0, "mttr": 1.0, "mtbf": 3}},
        "unknown key 'stress.failures.mtbf'",
    ),
    ({"failures": {"model": "list"}}, "expected either 'events'"),
    ({"failures": {"model": "list", "events": [["c0", 5, 1.0, 2.0]]}}, "machine 5: expected a machine index"),
    (
        {"failures": {"model": "list", "events": [["cx", 0, 1.0, 2.0]]}},
        "cluster 'cx': expected one of the clusters",
    ),
    (
        {"failures": {"model": "list", "events": [["c0", 0, 3.0, 2.0]]}},
        "expected times with 0 <= fail < repair",
    ),
    (
        {"failures": {"model": "list", "events": [["c0", 0, 1.0, 5.0], ["c0", 0, 4.0, 6.0]]}},
        "machine 0 of cluster c0 fails at 4 while down since 1",
    ),
    (
        {"failures": {"model": "list", "events": [["c0", 0, 1.0]]}},
        "expected [cluster, machine, fail, repair]",
    ),
    ({"outages": [{"cluster": "c0", "start": 5.0, "end": 5.0}]}, "key 'stress.outages[0].end' = 5.0"),
    (
        {"outages": [{"cluster": "c0", "start": 5.0, "end": 9.0, "queued": "drop"}]},
        "expected one of wait, return",
    ),
    ({"outages": [{"cluster": "zz", "start": 5.0, "end": 9.0}]}, "key 'stress.outages[0].cluster' = 'zz'"),
    (
        {
            "outages": [
                {"cluster": "c0", "start": 5.0, "end": 9.0},
                {"cluster": "c0", "start": 8.0, "end": 20.0},
            ]
        },
        "stress.outages[1] (cluster 'c0', from 8) overlaps stress.outages[0]",
    ),
    ({"max_kills": -1}, "key 'stress.max_kills' = -1"),
    ({"failure": {"model": "none"}}, "unknown key 'stress.failure'"),
    ({"outages": [{"cluster": "c0", "start": 1.0, "end": 2.0, "queue": "wait"}]}, "outages[0].queue'"),
    ({"kill_at_estimate": "yes"}, "key 'stress.kill_at_estimate' = 'yes': expected bool"),
]


@pytest.mark.parametrize(("stress", "message"), BAD, ids=[m for _, m in BAD])
def test_bad_keys_are_reported_with_file_key_and_expectation(stress, message):
    with pytest.raises(ScenarioError) as err:
        parse(one_cluster([gl(1, 1.0)], stress), "bad.toml")
    assert str(err.value).startswith("bad.toml: ") and message in str(err.value)


def test_a_bad_csv_line_is_named(tmp_path):
    (tmp_path / "f.csv").write_text("cluster,machine,fail,repair\nc0,0,1,2\nc0,zero,3,4\n")
    raw = one_cluster([gl(1, 1.0)], {"failures": {"model": "list", "file": "f.csv"}})
    with pytest.raises(ScenarioError, match=r"f\.csv, line 3: machine 'zero'"):
        emulator.data.scenario.load_raw(raw, "s.toml", tmp_path)


def test_a_policy_whose_jobs_cannot_be_stopped_cannot_have_failures():
    raw = one_cluster([gl(1, 1.0)], failures(("c0", 0, 1.0, 2.0)), "gridsim-easy")
    with pytest.raises(ScenarioError, match=r"cluster c0 runs local policy 'gridsim-easy'.*cannot stop"):
        parse(raw, "t")


# -- properties ------------------------------------------------------------------------------------------


@st.composite
def failure_scenarios(draw) -> dict:
    """``test_properties``'s random grids (fcfs, easy, GridSim space-shared, flexible) with failures."""
    raw = draw(grid_scenarios(policies=("fcfs", "easy", "gridsim-spaceshared", "flexible")))
    clusters = raw["clusters"]
    stress: dict = {"max_kills": draw(st.integers(0, 3)), "kill_at_estimate": draw(st.booleans())}
    if draw(st.booleans()):
        stress["failures"] = {
            "model": draw(st.sampled_from(("exponential", "weibull"))),
            "mttf": draw(st.sampled_from((5.0, 20.0, 60.0))),
            "mttr": draw(st.sampled_from((1.0, 4.0))),
        }
    else:
        events = []
        for c in clusters:
            machines = sum(m.get("count", 1) for m in c["machines"])
            for m in range(machines):
                t = 0.0
                for _ in range(draw(st.integers(0, 2))):
                    t += draw(st.sampled_from((0.0, 0.5, 2.0, 5.0)))
                    up = t + draw(st.sampled_from((0.5, 3.0, 10.0)))
                    events.append([c["name"], m, t, up])
                    t = up
        stress["failures"] = {"model": "list", "events": events}
    stress["outages"] = [
        {
            "cluster": c["name"],
            "start": draw(st.sampled_from((0.0, 2.0, 6.0))),
            "end": draw(st.sampled_from((8.0, 15.0))),
            "queued": draw(st.sampled_from(("wait", "return"))),
        }
        for c in clusters
        if draw(st.integers(0, 2)) == 0
    ]
    raw["stress"] = stress
    return raw


def check_failure_run(raw: dict, events: list[dict], out: dict) -> None:
    """Replay the rows: order, PEs, failed machines and down clusters, and each job's one end."""
    clusters, jobs, _ = model(raw)
    names = [c.name for c in clusters]
    keys = [(e["time"], e["partition"]) for e in events]
    assert keys == sorted(keys), "rows not sorted by (time, partition)"
    failed: set[tuple[int, int]] = set()
    down: set[int] = set()
    held: dict[tuple[int, int, int], int] = {}
    running: dict[int, tuple] = {}
    ended: Counter = Counter()
    for i, e in enumerate(events):
        kind, jid, c, t = e["kind"], e["job"], e["cluster"], e["time"]
        if kind == "fail":
            failed.add((c, e["machines"][0]))
        elif kind == "repair":
            failed.discard((c, e["machines"][0]))
        elif kind == "down":
            down.add(c)
        elif kind == "up":
            down.discard(c)
        elif kind in ("start", "resume"):
            assert c not in down, f"t={t}: job {jid} starts on cluster {c}, which is down"
            cl = clusters[c]
            cpus, _ = shape(cl, jobs[jid])
            assert len(e["machines"]) == cpus and jid not in running, f"t={t}: job {jid} {e}"
            for m, pe in zip(e["machines"], e["pes"], strict=True):
                assert (c, m) not in failed, f"t={t}: job {jid} starts on failed machine {m} of cluster {c}"
                assert (c, m, pe) not in held, f"t={t}: PE {c}/{m}/{pe} held by job {held.get((c, m, pe))}"
                assert pe < cl.machines[m].cpus
                held[(c, m, pe)] = jid
            running[jid] = (c, tuple(e["machines"]), tuple(e["pes"]))
        elif kind in ("finish", "preempt", "kill"):
            where = (c, tuple(e["machines"]), tuple(e["pes"]))
            assert running.pop(jid) == where, f"t={t}: job {jid} {kind}s where it did not run"
            for m, pe in zip(e["machines"], e["pes"], strict=True):
                del held[(c, m, pe)]
            if kind == "kill" and e["info"] == "failure":
                assert any((c, m) in failed for m in e["machines"]), f"t={t}: job {jid} killed, no failure"
            if kind == "kill" and e["info"] == "outage":
                assert c in down, f"t={t}: job {jid} killed by an outage of cluster {c}, which is up"
        if kind == "finish" or kind == "reject" or (kind == "kill" and e["info"] == "estimate"):
            ended[jid] += 1
        if i + 1 == len(events) or events[i + 1]["time"] != t:  # after every row of a time
            on_failed = [(k, j) for k, j in held.items() if k[:2] in failed or k[0] in down]
            assert not on_failed, f"t={t}: jobs run on failed machines or down clusters: {on_failed}"
    assert not running, f"jobs still running at the end: {sorted(running)}"
    assert set(ended) == set(jobs) and set(ended.values()) == {1}, "a job ended twice, or never"
    for jid, job in out.items():
        status = job["status"]
        assert status in ("finished", "rejected", "killed"), (jid, status)
        if status == "killed":
            assert raw["stress"]["kill_at_estimate"], f"job {jid} killed at its estimate"
        if status != "rejected":
            continue
        assert job["reason"], f"job {jid} rejected without a reason"
        if job["reason"].startswith("lost: "):
            assert job["kills"] > raw["stress"]["max_kills"], (jid, job)
            continue
        spec = jobs[jid]
        if job["reason"].startswith("cannot start on idle cluster") and "policy flexible" in job["reason"]:
            continue  # (flexible places fastest machines first: with copies per machine it may never fit)
        if spec.site:
            cl = clusters[names.index(spec.site)]
            can = fits(cl, *shape(cl, spec), spec.licenses)
        else:
            can = any(fits(cl, spec.cpus, spec.placement, spec.licenses) for cl in clusters)
        assert not can, f"job {jid} fits but is rejected: {job['reason']}"


@settings(SETTINGS, max_examples=70)
@given(failure_scenarios())
def test_random_grids_with_failures_keep_every_invariant(raw):
    events, out, summary = run(raw)
    check_failure_run(raw, events, out)
    total = summary["jobs"]
    assert total["total"] == total["finished"] + total["rejected"] + total.get("killed", 0)


def test_an_swf_export_writes_killed_and_lost_jobs_as_failed_with_the_time_they_ran(tmp_path):
    from workloads.export import write_swf

    # m0: J1 is killed at its estimate (10), J4 then runs 12..17; m1: J2 is lost when m1 fails
    # at 30 (max_kills 0); J3 wants 2 CPUs on 1-CPU machines: rejected, it never ran.
    jobs = [gl(1, 10.0, runtime=20.0), gl(2, 100.0), gl(3, 5.0, cpus=2), gl(4, 5.0, submit=12.0)]
    stress = {"kill_at_estimate": True, "max_kills": 0, **failures(("c0", 1, 30.0, 40.0))}
    result = emulator.run(parse(one_cluster(jobs, stress), "test.toml"), tmp_path / "run")
    write_swf(result.jobs, tmp_path / "schedule.swf")
    lines = [ln.split() for ln in (tmp_path / "schedule.swf").read_text().splitlines() if ln[0] != ";"]
    # id, submit, wait, run time, processors, status (1 finished, 0 failed, 5 never ran)
    assert [[float(v) for v in (*r[:5], r[10])] for r in lines] == [
        [1, 0, 0, 10, 1, 0],
        [2, 0, 0, 30, 1, 0],
        [3, 0, -1, -1, -1, 5],
        [4, 12, 0, 5, 1, 1],
    ]
