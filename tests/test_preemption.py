"""Preemption in the engine: suspend/resume, checkpoint/restart, stop/restart, overheads, periods.

A scripted policy (not registered: it replaces the cluster's policy through a
custom backend) returns exactly the decisions a test lists for each scheduling
time, so every expected time below is worked out by hand from the execution
model alone. Unless said otherwise: one cluster "c" of two 2-CPU machines, M0
at 1 MIPS and M1 at 2 MIPS; bench 1, so a job of runtime R holds R MI and
lasts R s on M0, R/2 s on M1. J1 (2 CPUs, 10 s) is submitted at 0, J2 (2 CPUs,
4 s) at 3: its arrival is the event at which J1 is preempted.
"""

from __future__ import annotations

import json
import math
from contextlib import contextmanager

import numpy as np
import pyarrow as pa
import pytest

from emulator.core.messages import DISPATCH, META, Message
from emulator.core.model import Cluster, Job, Link, Machine
from emulator.core.preemption import (
    CHECKPOINT,
    STOP,
    SUSPEND,
    Preempt,
    PreemptionError,
    parse_resume,
    resume_info,
)
from emulator.data.metrics import summarize
from emulator.data.scenario import parse
from emulator.engine import runner
from emulator.partitions.cluster import ClusterPartition
from emulator.policies.local_base import LocalPolicy
from emulator.sync import coordinator

from .conftest import job, machine, one_cluster


class Scripted(LocalPolicy):
    """Decisions by scheduling time: ``{time: [("start", job id, machine) | Preempt, ...]}``."""

    def __init__(self, script: dict, period: float = 0.0) -> None:
        super().__init__()
        self.script, self.period, self.calls = script, period, []

    def schedule(self, view):
        self.calls.append(view.now)
        decisions = []
        for item in self.script.get(view.now, ()):
            if isinstance(item, Preempt):
                decisions.append(item)
            else:
                _, jid, m = item
                job = view.queue[jid] if jid in view.queue else view.running[jid].job  # a migration
                decisions.append((job, ((m, job.cpus),)))
        return decisions


def run_scripted(tmp_path, policy: Scripted, jobs: list[dict], machines=None) -> dict:
    """Run the scenario with ``policy`` in cluster "c"; the run's events, jobs (by id) and summary."""
    machines = machines or [machine(2, 1.0), machine(2, 2.0)]
    raw = {
        "name": "t",
        "clusters": one_cluster("fcfs", machines),
        "workload": {"source": "gridlets", "site": "c", "gridlets": jobs},
    }

    @contextmanager
    def backend(scenario):
        parts = runner.build_partitions(scenario)
        for part in parts[1:]:
            part.policy, part.period = policy, policy.period
        yield coordinator.InProcess(parts)

    result = runner.run(parse(raw, "test"), tmp_path / "run", backend=backend)
    events = pa.ipc.open_file(str(result.out_dir / "events.arrow")).read_all().to_pylist()
    return {
        "events": [(e["time"], e["kind"], e["job"], e["machines"], e["info"]) for e in events],
        "jobs": {r["id"]: r for r in result.jobs.to_pylist()},
        "summary": result.summary,
    }


def rows_of(run: dict, jid: int) -> list[tuple]:
    """The job's start/preempt/resume/finish rows as (time, kind, machines, info)."""
    keep = ("start", "preempt", "resume", "finish")
    return [(t, k, m, i) for t, k, j, m, i in run["events"] if j == jid and k in keep]


J1, J2 = job(1, 0, 2, 10), job(2, 3, 2, 4)
START_J1 = {0.0: [("start", 1, 0)]}


@pytest.mark.parametrize("overhead", [0.0, 2.0])
def test_suspend_resume_keeps_progress_on_its_machine(tmp_path, overhead):
    # J1 runs on M0 0..3 (3 of 10 MI), is suspended; J2 runs on M0 3..7. At 7 J1 resumes on
    # M0 with 7 MI left: ends 7 + overhead + 7 = 14 (16 with 2 s of overhead).
    script = {
        **START_J1,
        3.0: [Preempt(1, SUSPEND, overhead), ("start", 2, 0)],
        7.0: [("start", 1, 0)],
    }
    run = run_scripted(tmp_path, Scripted(script), [J1, J2])
    end = 14.0 + overhead
    assert rows_of(run, 1) == [
        (0.0, "start", [0, 0], None),
        (3.0, "preempt", [0, 0], "suspend"),
        (7.0, "resume", [0, 0], resume_info(SUSPEND, overhead)),
        (end, "finish", [0, 0], None),
    ]
    assert rows_of(run, 2) == [(3.0, "start", [0, 0], None), (7.0, "finish", [0, 0], None)]
    j1 = run["jobs"][1]
    # Ran 3 + (end - 7) s; wasted: the overhead on 2 CPUs. Tw = end - 0 - run time.
    assert (j1["start"], j1["finish"], j1["preemptions"]) == (0.0, end, 1)
    assert j1["run_time"] == 3.0 + end - 7.0
    assert j1["wasted_cpu_seconds"] == 2 * overhead
    grid = run["summary"]["grid"]
    assert (grid["preemptions"], grid["preemptions_per_job"]) == (1, 0.5)
    assert grid["wasted_cpu_seconds"] == 2 * overhead


@pytest.mark.parametrize("overhead", [0.0, 1.0])
def test_checkpoint_moves_a_job_with_its_progress(tmp_path, overhead):
    # J1 (checkpointable) is checkpointed at 3 (3 MI done) and restarted at once on M1, which
    # runs its 7 MI left at 2 MIPS: ends 3 + overhead + 3.5 = 6.5 (7.5 with 1 s of overhead).
    script = {**START_J1, 3.0: [Preempt(1, CHECKPOINT, overhead), ("start", 2, 0), ("start", 1, 1)]}
    run = run_scripted(tmp_path, Scripted(script), [job(1, 0, 2, 10, checkpointable=True), J2])
    assert rows_of(run, 1) == [
        (0.0, "start", [0, 0], None),
        (3.0, "preempt", [0, 0], "checkpoint"),
        (3.0, "resume", [1, 1], resume_info(CHECKPOINT, overhead)),
        (6.5 + overhead, "finish", [1, 1], None),
    ]
    assert run["jobs"][1]["machines"] == [1, 1]  # where it finished
    assert run["jobs"][1]["wasted_cpu_seconds"] == 2 * overhead


@pytest.mark.parametrize("overhead", [0.0, 2.0])
def test_stop_restarts_from_zero(tmp_path, overhead):
    # J1 is stopped at 3 (its 3 s on 2 CPUs are lost) and restarted at 7 on M1 from zero:
    # 10 MI at 2 MIPS, ends 7 + overhead + 5 = 12 (14). Wasted: 6 CPU-s + 2 CPUs x overhead.
    script = {**START_J1, 3.0: [Preempt(1, STOP, overhead), ("start", 2, 0)], 7.0: [("start", 1, 1)]}
    run = run_scripted(tmp_path, Scripted(script), [J1, J2])
    assert rows_of(run, 1)[1:] == [
        (3.0, "preempt", [0, 0], "stop"),
        (7.0, "resume", [1, 1], resume_info(STOP, overhead)),
        (12.0 + overhead, "finish", [1, 1], None),
    ]
    assert run["jobs"][1]["wasted_cpu_seconds"] == 6.0 + 2 * overhead


def test_a_suspended_job_resumes_only_on_its_machine(tmp_path):
    script = {**START_J1, 3.0: [Preempt(1, SUSPEND), ("start", 2, 0)], 7.0: [("start", 1, 1)]}
    with pytest.raises(PreemptionError, match="can resume only there"):
        run_scripted(tmp_path, Scripted(script), [J1, J2])


def test_a_stop_decision_lets_a_suspended_job_restart_elsewhere_from_zero(tmp_path):
    # Suspended at 3 on M0 (3 MI kept); at 7 a stop drops that progress and J1 starts over on M1:
    # 10 MI at 2 MIPS, ends 12. The 3 s it ran on M0 are now wasted (6 CPU-s).
    script = {
        **START_J1,
        3.0: [Preempt(1, SUSPEND), ("start", 2, 0)],
        7.0: [Preempt(1, STOP), ("start", 1, 1)],
    }
    run = run_scripted(tmp_path, Scripted(script), [J1, J2])
    assert rows_of(run, 1)[1:] == [
        (3.0, "preempt", [0, 0], "suspend"),
        (7.0, "resume", [1, 1], "stop"),
        (12.0, "finish", [1, 1], None),
    ]
    assert run["jobs"][1]["wasted_cpu_seconds"] == 6.0


def test_checkpoint_only_for_checkpointable_jobs(tmp_path):
    script = {**START_J1, 3.0: [Preempt(1, CHECKPOINT), ("start", 2, 0)]}
    with pytest.raises(PreemptionError, match="not checkpointable"):
        run_scripted(tmp_path, Scripted(script), [J1, J2])


def test_only_running_jobs_can_be_preempted(tmp_path):
    with pytest.raises(PreemptionError, match="not running"):
        run_scripted(tmp_path, Scripted({0.0: [Preempt(1, SUSPEND)]}), [J1])


def test_freed_cpus_and_copies_are_free_at_once(tmp_path):
    # One copy of L: J1 holds it on M0; J2 needs it too. Preempting J1 at 3 frees M0's CPUs and
    # the copy in the same pass, so J2 can start there at 3 (over-allocation would raise).
    jobs = [job(1, 0, 2, 10, licenses=["L"]), job(2, 3, 2, 4, licenses=["L"])]
    raw_machines = [machine(2, 1.0), machine(2, 2.0)]
    script = {**START_J1, 3.0: [Preempt(1, SUSPEND), ("start", 2, 0)], 7.0: [("start", 1, 0)]}
    policy = Scripted(script)
    run = run_scripted_licensed(tmp_path, policy, jobs, raw_machines, {"L": 1})
    assert [r[:2] for r in rows_of(run, 2)] == [(3.0, "start"), (7.0, "finish")]


def run_scripted_licensed(tmp_path, policy, jobs, machines, licenses) -> dict:
    raw = {
        "name": "t",
        "clusters": one_cluster("fcfs", machines, licenses=licenses, license_per_machine=True),
        "workload": {"source": "gridlets", "site": "c", "gridlets": jobs},
    }

    @contextmanager
    def backend(scenario):
        parts = runner.build_partitions(scenario)
        parts[1].policy = policy
        yield coordinator.InProcess(parts)

    result = runner.run(parse(raw, "test"), tmp_path / "run", backend=backend)
    events = pa.ipc.open_file(str(result.out_dir / "events.arrow")).read_all().to_pylist()
    return {"events": [(e["time"], e["kind"], e["job"], e["machines"], e["info"]) for e in events]}


def test_a_time_driven_policy_plans_at_multiples_of_its_period_while_jobs_wait(tmp_path):
    # period 5: J1 arrives at 0 (a multiple: plans at once) and starts; J2 arrives at 3 and waits
    # for the planning time 5, where it starts on M1 (2 s at 2 MIPS: 5..7). J3 arrives at 11: 15.
    # Nothing is queued between 5 and 11, so no plan runs at 10.
    script = {0.0: [("start", 1, 0)], 5.0: [("start", 2, 1)], 15.0: [("start", 3, 1)]}
    policy = Scripted(script, period=5.0)
    run = run_scripted(tmp_path, policy, [J1, J2, job(3, 11, 1, 1)])
    assert policy.calls == [0.0, 5.0, 15.0]
    assert [r[:2] for r in rows_of(run, 2)] == [(5.0, "start"), (7.0, "finish")]
    assert rows_of(run, 3)[0][:2] == (15.0, "start")


def test_preempt_and_resume_rows_in_events_arrow(tmp_path):
    script = {**START_J1, 3.0: [Preempt(1, SUSPEND, 2.5), ("start", 2, 0)], 7.0: [("start", 1, 0)]}
    run_scripted(tmp_path, Scripted(script), [J1, J2])
    events = pa.ipc.open_file(str(tmp_path / "run" / "events.arrow")).read_all()
    kinds = events.column("kind")
    assert kinds.type == pa.dictionary(pa.int8(), pa.string())
    # Existing codes are stable; newer kinds only ever come after them.
    assert kinds.chunk(0).dictionary.to_pylist()[:8] == [
        "submit",
        "dispatch",
        "arrive",
        "start",
        "finish",
        "reject",
        "preempt",
        "resume",
    ]
    rows = [r for r in events.to_pylist() if r["kind"] in ("preempt", "resume")]
    assert [(r["time"], r["kind"], r["cpus"], r["pes"], r["info"]) for r in rows] == [
        (3.0, "preempt", 2, [0, 1], "suspend"),
        (7.0, "resume", 2, [0, 1], "suspend overhead=2.5"),
    ]
    assert parse_resume(rows[1]["info"]) == (SUSPEND, 2.5)


def test_system_usage_counts_a_preempted_job_as_waiting(tmp_path):
    # J1 is suspended at 3 and J2 runs on M1 (4 MI at 2 MIPS: 3..5); J1 resumes on M0 at 5, ends 12.
    # CPUs in use / min(4, CPUs wanted): [0, 3) 2/2, [3, 5) 2/4 (J1 waits), [5, 12) 2/2.
    # SU = (3 * 1 + 2 * 0.5 + 7 * 1) / 12 = 11/12.
    script = {**START_J1, 3.0: [Preempt(1, SUSPEND), ("start", 2, 1)], 5.0: [("start", 1, 0)]}
    run = run_scripted(tmp_path, Scripted(script), [J1, J2])
    assert rows_of(run, 1)[-1][:2] == (12.0, "finish")
    assert run["summary"]["grid"]["system_usage"] == pytest.approx(11 / 12)


def test_summary_reports_scheduler_cost_outside_the_trace(tmp_path):
    run = run_scripted(tmp_path, Scripted(START_J1), [J1])
    cost = json.loads((tmp_path / "run" / "summary.json").read_text())["scheduler"]
    assert cost["calls"] == 1 and cost["clusters"]["c"]["calls"] == 1
    assert cost["total_seconds"] >= 0 and cost["mean_ms"] is not None
    assert run["summary"]["scheduler"]["calls"] == 1


def test_license_usage_counts_one_copy_per_machine_where_jobs_share_it():
    # A hand-built trace. Copies per machine, 2 copies of L. J1 and J2 (L, 1 CPU each) share M0's
    # copy 0..10; J3 (L) holds M1's 10..20. In use: 1 copy on [0, 10), 1 on [10, 20); wanted
    # min(2, 3 jobs) = 2, then min(2, 1) = 1: LU = (1/2 * 10 + 1/1 * 10) / 20 = 0.75.
    # Counting per job would see 2 copies in use on [0, 10) and LU = 1.
    from emulator.core.model import Cluster, Link, Machine, Platform

    platform = Platform(
        (Cluster("A", (Machine(2, 1.0), Machine(2, 1.0)), Link(1.0), {"L": 2}, license_per_machine=True),)
    )
    jobs = pa.table(
        {
            "id": [1, 2, 3],
            "submit": [0.0, 0.0, 0.0],
            "cpus": pa.array([1, 1, 1], pa.int32()),
            "estimate": [10.0, 10.0, 10.0],
            "bench": [1.0, 1.0, 1.0],
            "licenses": [["L"], ["L"], ["L"]],
            "deadline": pa.array([None, None, None], pa.float64()),
            "status": ["finished"] * 3,
            "cluster": ["A"] * 3,
            "start": [0.0, 0.0, 10.0],
            "finish": [10.0, 10.0, 20.0],
        }
    )
    events = pa.table(
        {
            "time": [0.0, 0.0, 0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 20.0],
            "kind": ["arrive", "arrive", "arrive", "start", "start", "finish", "finish", "start", "finish"],
            "job": [1, 2, 3, 1, 2, 1, 2, 3, 3],
            "cluster": pa.array([0] * 9, pa.int32()),
            "machines": pa.array([[], [], [], [0], [0], [0], [0], [1], [1]], pa.list_(pa.int32())),
        }
    )
    assert summarize(jobs, events, platform)["grid"]["license_usage"] == 0.75


def test_a_preempted_job_keeps_the_priority_the_meta_scheduler_gave_it():
    # J1 arrives dispatched with priority 7 (as two-level or MUSCLE send it) and starts at 0; J2's
    # arrival at 3 is the event at which J1 is preempted for J2: back in the queue it is still priority 7.
    cluster = Cluster("c", (Machine(2, 1.0),), Link(1.0, math.inf))
    part = ClusterPartition(1, cluster, np.random.SeedSequence(1))
    part.policy = Scripted({0.0: [("start", 1, 0)], 3.0: [Preempt(1, STOP), ("start", 2, 0)]})

    def dispatched(jid: int, time: float, priority: float) -> Message:
        return Message(time, META, jid, 1, DISPATCH, (Job(jid, time, 2, 10.0).to_tuple(), priority))

    part.advance(1.0, [dispatched(1, 0.0, 7.0)])
    assert list(part.state.running) == [1] and part.view.priority == {}
    part.advance(4.0, [dispatched(2, 3.0, 2.0)])
    assert list(part.state.running) == [2] and list(part.state.queue) == [1]
    assert part.view.priority == {1: 7.0}
