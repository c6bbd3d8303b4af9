"""What a cluster tells the meta-scheduler: a component of the cluster partition.

The partition tells its :class:`Reporter` every change as it happens (a job
queued, started, finished, gone; a link change; failures). The reporter keeps
what the next report must say, the backlog behind the meta-scheduler's wait
estimates (:mod:`emulator.state.backlog`) and the link reports travel on, and makes
the :class:`~emulator.core.messages.Status` when the partition reports: after each
scheduling event, or only at multiples of ``status_period`` (stress: stale
information). A cluster whose jobs all enter directly never reports and has
no reporter.
"""

from __future__ import annotations

import math

from ..core.messages import Status
from ..core.model import Job, Link
from ..core.runs import Run
from ..state.backlog import Backlog
from ..state.cluster_state import ClusterState


class Changes:
    """The job ids whose state changed since the last report, which the next one carries."""

    __slots__ = ("arrived", "finished", "local", "rejected", "started")

    def __init__(self) -> None:
        self.arrived: list[int] = []  # queued here
        self.started: list[int] = []
        self.finished: list[int] = []  # and killed at their estimate
        self.rejected: list[int] = []  # and every other way of leaving for good (lost, sent back)
        self.local: list[int] = []  # entered directly (not dispatched)

    def of_jobs(self) -> bool:
        """Whether a job arrived, started or left (direct entries alone change no account)."""
        return bool(self.arrived or self.started or self.finished or self.rejected)


class Reporter:
    """A reporting cluster's side of its link to the meta-scheduler (see the module docstring).

    ``link`` is the link in force now (a stress test may change it). Reports
    carry the link's latency and bandwidth only when it can change, and the
    CPUs up only when machines can fail or the cluster go down (``up_cpus``,
    -1 otherwise).
    """

    def __init__(self, link: Link, status_period: float = 0.0, link_changes: bool = False) -> None:
        self.link = link
        self.status_period = status_period  # > 0: report only at its multiples
        self.changes = Changes()
        self.backlog = Backlog()
        self.up_cpus = -1
        self._link_report = (link.latency, link.bandwidth) if link_changes else (0.0, 0.0)
        self._news = False  # a link change, failure, repair or outage not told yet
        self._due = -math.inf  # the last report's delivery: reports stay in order when latency drops

    # -- what happened --------------------------------------------------------------------------

    def entered(self, job: Job) -> None:
        """``job`` entered directly (it may still be refused)."""
        self.changes.local.append(job.id)

    def refused(self, job: Job) -> None:
        """``job`` can never run here: rejected as it arrived."""
        self.changes.rejected.append(job.id)

    def queued(self, job: Job) -> None:
        self.changes.arrived.append(job.id)
        self.backlog.queued(job)

    def started(self, run: Run) -> None:
        self.changes.started.append(run.job.id)
        self.backlog.started(run)

    def finished(self, run: Run) -> None:
        self.changes.finished.append(run.job.id)
        self.backlog.finished(run)

    def requeued(self, run: Run) -> None:
        """``run`` was taken off its CPUs and its job queued again (no change the accounts see)."""
        self.backlog.finished(run)
        self.backlog.queued(run.job)

    def left(self, job: Job) -> None:
        """A queued job left for good without finishing (rejected when stuck, lost, sent back)."""
        self.backlog.unqueued(job)
        self.changes.rejected.append(job.id)

    def link_changed(self, link: Link) -> None:
        self.link = link
        self._link_report = (link.latency, link.bandwidth)
        self._news = True

    def faults_changed(self, up_cpus: int) -> None:
        """A failure, repair or outage: ``up_cpus`` CPUs are up now."""
        self.up_cpus = up_cpus
        self._news = True

    # -- reports --------------------------------------------------------------------------------

    @property
    def pending(self) -> bool:
        """Whether there is anything to tell."""
        changes = self.changes
        return changes.of_jobs() or bool(changes.local) or self._news

    def status(self, state: ClusterState, down: bool) -> Status:
        """The report of everything pending, as of ``state.now`` (``down``: in an outage)."""
        changes, backlog, now = self.changes, self.backlog, state.now
        latency, bandwidth = self._link_report
        status = Status(
            queued=len(state.queue),
            running=len(state.running),
            free_cpus=state.resources.free_cpus,
            queued_work=state.queued_work,
            arrived=tuple(changes.arrived),
            started=tuple(changes.started),
            finished=tuple(changes.finished),
            rejected=tuple(changes.rejected),
            local=tuple(changes.local),
            time=now,
            queued_cpu_work=backlog.queued_cpu_work,
            running_work=backlog.running_work(now),
            draining_cpus=backlog.draining_cpus,
            latency=latency,
            bandwidth=bandwidth,
            up_cpus=self.up_cpus,
            down=down,
        )
        self.changes = Changes()
        self._news = False
        return status

    def delivery(self, now: float) -> float:
        """When a report sent ``now`` arrives: after the link's latency, never before an earlier one."""
        self._due = max(now + self.link.latency, self._due)
        return self._due
