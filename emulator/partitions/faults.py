"""Machine failures, outages and kills at the estimate: a component of the cluster partition.

The faults :mod:`emulator.core.failures` reads from a scenario's ``[stress]`` act on
a cluster's state at background events (a machine fails or is repaired, an
outage starts or ends) and at a job's estimated end (``kill_at_estimate``).
:class:`Faults` keeps what they need between events (failed machines, the
outage in force, each job's kills, the jobs as dispatched for sending back)
and acts through the partition's :class:`FaultHost` services, so the
partition's event loop only hands it its events (:meth:`Faults.apply`).
"""

from __future__ import annotations

import math
from typing import Protocol

import numpy as np

from ..core.failures import ESTIMATE, FAILURE, OUTAGE, RETURN, FailureProcess, Failures, Outage, lost_reason
from ..core.messages import DOWN, FAIL, KILL, NO_CPUS, REJECT, REPAIR, UP
from ..core.model import Cluster, Job
from ..core.preemption import CHECKPOINT, STOP
from ..core.runs import Run
from ..state.cluster_state import ClusterState
from ..state.execution import ExecutionModel
from .event_kinds import DOWN_EVENT, FAIL_EVENT, REPAIR_EVENT, UP_EVENT
from .reporting import Reporter


class FaultHost(Protocol):
    """What faults use of their cluster partition: its state and these services."""

    state: ClusterState
    cluster: Cluster
    reporter: Reporter | None
    execution: ExecutionModel

    def row(self, kind: int, job_id: int, cpus: int, machines, pes, info: str | None) -> None:
        """Write a trace row now."""

    def background_at(self, time: float, kind: int, data) -> None:
        """A background event (it frees nothing by itself: a failure, a repair, an outage's bounds)."""

    def stop(self, run: Run, kind: str, overhead: float, row: int, info: str) -> None:
        """Take ``run`` off its CPUs now and requeue its job, keeping what ``kind`` keeps."""

    def finish(self, run: Run, row: int, info: str | None) -> None:
        """End ``run`` now for good (its pending completion already dropped)."""

    def cancel_finish(self, run: Run) -> None:
        """Drop ``run``'s pending completion (and its kill at the estimate)."""

    def unqueue(self, job: Job) -> None:
        """Take a queued job out of the queue for good."""

    def send_back(self, job: Job) -> None:
        """Return a queued job to the meta-scheduler (a ``return`` row and a message)."""


class Faults:
    """One cluster's failures, outages and kill rules (see the module docstring).

    Without ``[stress]`` failures a cluster keeps the defaults: nothing fails,
    nothing is killed at its estimate, no job is ever sent back.
    """

    def __init__(self) -> None:
        self.kill_at_estimate = False
        self.max_kills = 0
        self.kills: dict[int, int] = {}  # job id -> kills by failures and outages (lost above max_kills)
        self.failed: set[int] = set()  # machines failed by the failure process
        self.down: Outage | None = None  # the outage in force
        self.impaired = False  # a machine or the whole cluster down: a stuck queue may start later
        self.local_ids: set[int] | None = None  # direct-entry jobs, when an outage returns the others
        self.originals: dict[int, Job] = {}  # dispatched jobs the policy rewrote (admit), as they came
        self._process: FailureProcess | None = None

    def setup(
        self, host: FaultHost, failures: Failures, index: int, seed_seq: np.random.SeedSequence
    ) -> None:
        """This cluster's failure process and outages (background events) and the kill rules."""
        self.kill_at_estimate = failures.kill_at_estimate
        self.max_kills = failures.max_kills
        mine = failures.cluster(index)
        if mine.returns:
            self.local_ids = set()
        if not mine.active:
            return
        machines = len(host.cluster.machines)
        if host.reporter is not None:  # (reports say how many CPUs are up once machines can fail)
            host.reporter.up_cpus = host.state.resources.up_cpus
        self._process = FailureProcess(mine.model, machines, seed_seq)
        for m in range(machines):
            time = self._process.first_failure(m)
            if time < math.inf:
                host.background_at(time, FAIL_EVENT, m)
        for outage in mine.outages:
            host.background_at(outage.start, DOWN_EVENT, outage)
            host.background_at(outage.end, UP_EVENT, outage)

    # -- what the partition tells --------------------------------------------------------------------

    def entered(self, job: Job, admitted: Job, local: bool) -> None:
        """``job`` arrived (``local``: it entered here directly) and the policy admitted it as
        ``admitted``: remembered as it came when an outage may send it back."""
        if self.local_ids is None:
            return
        if local:
            self.local_ids.add(admitted.id)
        elif admitted is not job:
            self.originals[admitted.id] = job

    def returns_arrivals(self, local: bool) -> bool:
        """Whether a job arriving now goes straight back (an outage that returns dispatched jobs)."""
        return self.down is not None and not local and self.down.queued == RETURN

    def returned(self, job: Job) -> tuple[Job, int]:
        """A queued job sent back: the job as dispatched and its kills so far, both forgotten here."""
        return self.originals.pop(job.id, job), self.kills.pop(job.id, 0)

    # -- events --------------------------------------------------------------------------------------

    def apply(self, host: FaultHost, kind: int, data) -> None:
        """A failure, repair, outage start or end, now."""
        host.execution.arrived(host)  # progress up to now, for the models that track it
        if kind == FAIL_EVENT:
            self._machine_fails(host, data)
        elif kind == REPAIR_EVENT:
            self._machine_repaired(host, data)
        elif kind == DOWN_EVENT:
            self._cluster_down(host, data)
        else:
            self._cluster_up(host)
        self.impaired = self.down is not None or bool(self.failed)
        if host.reporter is not None:
            host.reporter.faults_changed(host.state.resources.up_cpus)

    def _machine_fails(self, host: FaultHost, m: int) -> None:
        """Machine ``m`` fails now: its jobs are killed and requeued, its CPUs leave the pool."""
        host.row(FAIL, -1, host.cluster.machines[m].cpus, (m,), NO_CPUS, None)
        self.failed.add(m)
        if self.down is None:  # (in an outage, nothing runs and no machine is up anyway)
            runs = [r for r in host.state.running.values() if any(pm == m for pm, _ in r.plan)]
            self._kill_runs(host, runs, FAILURE)
            host.state.resources.fail(m)
            _stopped(host, runs)
        host.background_at(self._process.repair_time(m, host.state.now), REPAIR_EVENT, m)

    def _machine_repaired(self, host: FaultHost, m: int) -> None:
        host.row(REPAIR, -1, host.cluster.machines[m].cpus, (m,), NO_CPUS, None)
        self.failed.discard(m)
        if self.down is None:
            host.state.resources.repair(m)
        time = self._process.next_failure(m, host.state.now)
        if time < math.inf:
            host.background_at(time, FAIL_EVENT, m)

    def _cluster_down(self, host: FaultHost, outage: Outage) -> None:
        """An outage starts: every running job is killed; queued jobs wait, or go back to the meta."""
        state = host.state
        host.row(DOWN, -1, state.resources.up_cpus, NO_CPUS, NO_CPUS, outage.queued)
        self.down = outage
        runs = list(state.running.values())
        self._kill_runs(host, runs, OUTAGE)
        for m in range(len(host.cluster.machines)):
            state.resources.fail(m)
        _stopped(host, runs)
        if outage.queued == RETURN:
            for job in [j for j in state.queue.values() if j.id not in self.local_ids]:
                host.send_back(job)

    def _cluster_up(self, host: FaultHost) -> None:
        self.down = None
        for m in range(len(host.cluster.machines)):
            if m not in self.failed:
                host.state.resources.repair(m)
        host.row(UP, -1, host.state.resources.up_cpus, NO_CPUS, NO_CPUS, None)

    def _kill_runs(self, host: FaultHost, runs: list[Run], why: str) -> None:
        """Kill ``runs`` now (``why``: failure, outage) and requeue them; lose those killed too often."""
        for run in runs:
            job = run.job
            host.stop(run, CHECKPOINT if job.checkpointable else STOP, 0.0, KILL, why)
            kills = self.kills[job.id] = self.kills.get(job.id, 0) + 1
            if kills > self.max_kills:
                self._lose(host, job, kills)

    def _lose(self, host: FaultHost, job: Job, kills: int) -> None:
        """A job killed more than ``max_kills`` times is lost: rejected, with the reason."""
        host.unqueue(job)
        del self.kills[job.id]
        self.originals.pop(job.id, None)
        host.row(REJECT, job.id, 0, NO_CPUS, NO_CPUS, lost_reason(kills, self.max_kills))

    def kill_at_end(self, host: FaultHost, run: Run) -> None:
        """``run`` reached its estimated end still running: killed there, for good (``kill_at_estimate``)."""
        host.execution.arrived(host)  # progress up to now (time sharing may finish it here)
        job = run.job
        if host.state.running.get(job.id) is not run:
            return
        if run.end == math.inf and job.runtime * job.bench - run.done <= 0.0:
            return  # done: its model notices the completion at its next internal event
        host.cancel_finish(run)
        host.finish(run, KILL, ESTIMATE)  # it ends here: the meta-scheduler's accounts drop it
        self.kills.pop(job.id, None)
        self.originals.pop(job.id, None)
        _stopped(host, [run])


def _stopped(host: FaultHost, runs: list) -> None:
    """Runs were taken off now: time sharing forecasts the others again (their shares change)."""
    if runs:
        host.execution.stopped(host)
