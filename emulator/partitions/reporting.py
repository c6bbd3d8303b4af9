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

    def take(self) -> tuple[tuple[int, ...], ...]:
        """The ids listed, as ``(arrived, started, finished, rejected, local)`` tuples; none are left.

        The lists are emptied, not replaced: a report after every event made five new ones each time.
        """
        lists = (self.arrived, self.started, self.finished, self.rejected, self.local)
        taken = tuple(map(tuple, lists))
        for ids in lists:
            ids.clear()
        return taken


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
        self.pending = False  # anything to tell: a change listed, or a link change, failure, repair or outage
        self._due = -math.inf  # the last report's delivery: reports stay in order when latency drops

    # -- what happened --------------------------------------------------------------------------

    def entered(self, job: Job) -> None:
        """``job`` entered directly (it may still be refused)."""
        self.changes.local.append(job.id)
        self.pending = True

    def refused(self, job: Job) -> None:
        """``job`` can never run here: rejected as it arrived."""
        self.changes.rejected.append(job.id)
        self.pending = True

    def queued(self, job: Job) -> None:
        self.changes.arrived.append(job.id)
        self.pending = True
        self.backlog.queued(job)

    def started(self, run: Run) -> None:
        self.changes.started.append(run.job.id)
        self.pending = True
        self.backlog.started(run)

    def finished(self, run: Run) -> None:
        self.changes.finished.append(run.job.id)
        self.pending = True
        self.backlog.finished(run)

    def requeued(self, run: Run) -> None:
        """``run`` was taken off its CPUs and its job queued again (no change the accounts see)."""
        self.backlog.finished(run)
        self.backlog.queued(run.job)

    def left(self, job: Job) -> None:
        """A queued job left for good without finishing (rejected when stuck, lost, sent back)."""
        self.backlog.unqueued(job)
        self.changes.rejected.append(job.id)
        self.pending = True

    def link_changed(self, link: Link) -> None:
        self.link = link
        self._link_report = (link.latency, link.bandwidth)
        self.pending = True

    def faults_changed(self, up_cpus: int) -> None:
        """A failure, repair or outage: ``up_cpus`` CPUs are up now."""
        self.up_cpus = up_cpus
        self.pending = True

    # -- reports --------------------------------------------------------------------------------

    def report(self, state: ClusterState, down: bool) -> tuple[float, Status]:
        """The report of everything pending, as of ``state.now`` (``down``: in an outage), and when it
        arrives: after the link's latency, never before an earlier one (latency may drop).

        Made after every scheduling event of a reporting cluster (grid1000: two per job), so the
        :class:`Status` is built by ``tuple.__new__``, what its own constructor calls, without
        that constructor's Python frame of 17 arguments.
        """
        backlog, now = self.backlog, state.now
        latency, bandwidth = self._link_report
        self.pending = False
        status = tuple.__new__(
            Status,
            (
                len(state.queue),
                len(state.running),
                state.resources.free_cpus,
                state.queued_work,
                *self.changes.take(),
                now,
                backlog.queued_cpu_work,
                backlog.running_work(now),
                backlog.draining_cpus,
                latency,
                bandwidth,
                self.up_cpus,
                down,
            ),
        )
        self._due = due = max(now + self.link.latency, self._due)
        return due, status
