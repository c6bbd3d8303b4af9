"""A cluster's queue as numpy columns, kept in step with ``view.queue`` at each scheduling event.

Policies that rank the whole queue at every event (Flexible backfilling) need
the queued jobs' attributes as arrays; rebuilding them from the queue's ``Job``
objects each time would cost a Python step per job per event. The table
appends the jobs that arrived since the last event (the queue is a dict in
arrival order, so they are its tail), and the policy tells it which jobs it
started. Anything else (the partition rejecting a job the policy left queued)
shows as a count mismatch and triggers a rebuild.
"""

from __future__ import annotations

import math

import numpy as np

from ..core.model import SINGLE, Job

_FLOATS = ("submit", "estimate", "bench", "deadline", "ms_priority")


class QueueTable:
    """Columns of the queued jobs: one row per job, rows in arrival order, dead rows masked.

    ``rows()`` gives the live rows; columns (``id``, ``cpus``, ``single``,
    ``submit``, ``estimate``, ``bench``, ``deadline`` (inf: none),
    ``ms_priority`` (the meta-scheduler's), ``licenses`` (copies per license
    type, in ``license_names`` order) and ``jobs`` (the ``Job`` objects) are
    indexed by row.
    """

    def __init__(self, license_names: list[str], capacity: int = 64) -> None:
        self.license_names = list(license_names)
        self._license_index = {name: i for i, name in enumerate(self.license_names)}
        self.jobs: list[Job | None] = []
        self.row: dict[int, int] = {}
        self.count = 0  # live rows
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        self.capacity = capacity
        self.id = np.zeros(capacity, dtype=np.int64)
        self.cpus = np.zeros(capacity, dtype=np.int64)
        self.single = np.zeros(capacity, dtype=bool)
        for name in _FLOATS:
            setattr(self, name, np.zeros(capacity))
        self.licenses = np.zeros((capacity, len(self.license_names)), dtype=np.int32)
        self.alive = np.zeros(capacity, dtype=bool)

    def rows(self) -> np.ndarray:
        """The live rows, in arrival order."""
        return np.flatnonzero(self.alive[: len(self.jobs)])

    def sync(self, queue: dict[int, Job], priority: dict[int, float]) -> None:
        """Catch up with ``queue`` (arrival order) and the meta priorities ``priority``."""
        new = []
        for job_id in reversed(queue):
            if job_id in self.row:
                break
            new.append(queue[job_id])
        if self.count + len(new) != len(queue):
            self._rebuild(queue, priority)
            return
        for job in reversed(new):
            self._append(job, priority.get(job.id, 0))

    def remove(self, job_ids) -> None:
        """These jobs left the queue (the policy started them)."""
        for job_id in job_ids:
            r = self.row.pop(job_id)
            self.alive[r] = False
            self.jobs[r] = None
            self.count -= 1

    def _append(self, job: Job, ms_priority: float) -> None:
        r = len(self.jobs)
        if r == self.capacity:
            self._compact(grow=2 * self.count >= self.capacity)
            r = len(self.jobs)
        self.jobs.append(job)
        self.row[job.id] = r
        self.id[r] = job.id
        self.cpus[r] = job.cpus
        self.single[r] = job.placement == SINGLE
        self.submit[r] = job.submit
        self.estimate[r] = job.estimate
        self.bench[r] = job.bench
        self.deadline[r] = job.deadline if math.isfinite(job.deadline) else math.inf
        self.ms_priority[r] = ms_priority
        self.licenses[r] = 0
        for lic in job.licenses:
            i = self._license_index.get(lic)
            if i is not None:  # a license the cluster lacks never reaches the queue (admission)
                self.licenses[r, i] += 1
        self.alive[r] = True
        self.count += 1

    def _compact(self, grow: bool) -> None:
        """Drop dead rows (and double the capacity if the live ones fill half of it)."""
        live = self.rows()
        old = {name: getattr(self, name)[live] for name in ("id", "cpus", "single", *_FLOATS, "licenses")}
        jobs = [self.jobs[r] for r in live.tolist()]
        self._allocate(self.capacity * (2 if grow else 1))
        n = len(jobs)
        for name, values in old.items():
            getattr(self, name)[:n] = values
        self.alive[:n] = True
        self.jobs = jobs
        self.row = {job.id: r for r, job in enumerate(jobs)}

    def _rebuild(self, queue: dict[int, Job], priority: dict[int, float]) -> None:
        self.jobs, self.row, self.count = [], {}, 0
        self._allocate(max(64, 2 * len(queue)))
        for job in queue.values():
            self._append(job, priority.get(job.id, 0))
