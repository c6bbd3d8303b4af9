"""A cluster's backlog as its status reports give it: work queued, and work the running jobs still need.

Meta policies that estimate a job's wait at a cluster (MCRS) read these
figures from the :class:`~emulator.core.messages.Status` reports, never the
cluster's live state. Everything is by *estimate* (what a scheduler knows):

- ``queued_cpu_work`` = sum over queued jobs of ``cpus * estimate * bench`` (CPU x MI);
- ``running_work(now)`` = sum over running jobs still before their estimated
  end of ``cpus * (estimated_end - now)`` (CPU-seconds); a job running past its
  estimate counts 0 (its end is unknown, and it is overdue);
- ``draining_cpus`` = the CPUs of the jobs counted in ``running_work``: between
  reports, that work drains at most this fast.

Kept incrementally (O(log n) per start, amortized per report) so reporting
stays cheap on large clusters: ``running_work = sum(cpus * end) - now * cpus``
over the counted jobs, and a heap of estimated ends drops overdue ones.
"""

from __future__ import annotations

import heapq

from ..core.model import Job
from ..core.runs import Run


class Backlog:
    """Incremental backlog figures of one cluster (see the module docstring)."""

    __slots__ = ("_counted", "_end_sum", "_ends", "draining_cpus", "queued_cpu_work")

    def __init__(self) -> None:
        self.queued_cpu_work = 0.0
        self.draining_cpus = 0
        self._end_sum = 0.0  # sum of cpus * estimated_end over counted runs
        self._ends: list[tuple[float, int, int]] = []  # (estimated end, job id, cpus), a heap
        self._counted: dict[int, float] = {}  # job id -> the estimated end it is counted with

    def queued(self, job: Job) -> None:
        self.queued_cpu_work += job.cpus * job.length

    def unqueued(self, job: Job) -> None:
        """A queued job left the queue without starting (rejected)."""
        self.queued_cpu_work -= job.cpus * job.length

    def started(self, run: Run) -> None:
        job = run.job
        self.unqueued(job)
        heapq.heappush(self._ends, (run.estimated_end, job.id, job.cpus))
        self._end_sum += job.cpus * run.estimated_end
        self.draining_cpus += job.cpus
        self._counted[job.id] = run.estimated_end

    def finished(self, run: Run) -> None:
        """A job ended; if before its estimated end, it stops counting now."""
        if self._counted.get(run.job.id) == run.estimated_end:
            self._uncount(run.job.id, run.job.cpus, run.estimated_end)

    def running_work(self, now: float) -> float:
        """CPU-seconds the running jobs still need at ``now``, by their estimated ends."""
        ends = self._ends
        while ends and ends[0][0] <= now:
            end, job_id, cpus = heapq.heappop(ends)
            if self._counted.get(job_id) == end:
                self._uncount(job_id, cpus, end)
        if not self._counted:
            self._end_sum = 0.0  # no rounding residue outlives the jobs
            return 0.0
        return max(0.0, self._end_sum - now * self.draining_cpus)

    def _uncount(self, job_id: int, cpus: int, end: float) -> None:
        del self._counted[job_id]
        self._end_sum -= cpus * end
        self.draining_cpus -= cpus
