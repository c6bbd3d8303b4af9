"""The queued jobs' CPUs and work as numpy columns, in queue order, kept in step with the queue.

A backfilling pass on a deep queue looks at every queued job at every event;
most cannot start (too wide for the free CPUs, or too long for the
reservation's shadow and too wide for its spare CPUs). With these columns a
policy finds the few that could with one mask, and visits only those, in
queue order. Slots are appended as jobs are queued (a requeued job gets a new
slot at the end, as it does in the queue's insertion order) and emptied as
they leave; emptied slots are squeezed out once they are half the columns.

>>> columns = QueueColumns()
>>> columns.append(Job(7, 0.0, 2, 10.0), fastest=100.0)
>>> columns.append(Job(8, 0.0, 4, 5.0), fastest=100.0)
>>> columns.remove(7)
>>> start, cpus, work, fastest = columns.after(None)
>>> [columns.jobs[start + i].id for i in range(cpus.size) if columns.jobs[start + i] is not None]
[8]
"""

from __future__ import annotations

import numpy as np

from .model import Job

EMPTY = np.iinfo(np.int64).max
"""The CPUs of an emptied slot: more than any free count, so no mask ever picks it."""


class QueueColumns:
    """``jobs``, ``cpus``, ``work`` (estimate x bench, MI) and ``fastest`` (MIPS of the fastest machine
    able to run the job) by slot, for the queued jobs in queue order."""

    def __init__(self) -> None:
        self.jobs: list[Job | None] = []
        self.cpus = np.empty(0, dtype=np.int64)
        self.work = np.empty(0)
        self.fastest = np.empty(0)
        self._slot: dict[int, int] = {}
        self._size = 0

    def append(self, job: Job, fastest: float) -> None:
        if self._size == self.cpus.size:
            self._grow()
        i = self._size
        self.jobs.append(job)
        self.cpus[i], self.work[i], self.fastest[i] = job.cpus, job.estimate * job.bench, fastest
        self._slot[job.id] = i
        self._size += 1

    def remove(self, job_id: int) -> None:
        i = self._slot.pop(job_id)
        self.jobs[i] = None
        self.cpus[i] = EMPTY
        if 2 * len(self._slot) < self._size - 16:
            self._squeeze()

    def after(self, job_id: int | None) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """The slots after ``job_id``'s (all, for None): the first one's index in ``jobs``, and views of
        the CPUs, work and fastest columns from there on."""
        start = 0 if job_id is None else self._slot[job_id] + 1
        end = self._size
        return start, self.cpus[start:end], self.work[start:end], self.fastest[start:end]

    def _grow(self) -> None:
        size = max(64, 2 * self.cpus.size)
        self.cpus = np.resize(self.cpus, size)
        self.work = np.resize(self.work, size)
        self.fastest = np.resize(self.fastest, size)

    def _squeeze(self) -> None:
        keep = np.flatnonzero(self.cpus[: self._size] != EMPTY)
        self.jobs = [self.jobs[i] for i in keep.tolist()]
        n = keep.size
        self.cpus[:n], self.work[:n], self.fastest[:n] = self.cpus[keep], self.work[keep], self.fastest[keep]
        self._size = n
        self._slot = {job.id: i for i, job in enumerate(self.jobs)}
