"""GridSim 5.2 ``ConservativeBackfill`` on a ``ParallelResource``, job for job.

The rules of ``gridsim/parallel/scheduler/ConservativeBackfill.java``:

- on arrival (``gridletSubmit``) a job starts now if enough PEs are free for
  its whole duration given everything running and reserved
  (``startGridlet`` / ``checkAvailability``); otherwise it gets the earliest
  slot and the lowest PEs there (``enqueueGridlet`` / ``findStartTime``).
  Arrivals are taken in arrival order (same-second arrivals in file order);
- reservations never move: they would only be compressed on a cancellation
  (``compressSchedule``), which gridemu has no use for;
- at every time with completions (``updateSchedule``) every waiting job whose
  reserved start has come starts, on its reserved PEs, in arrival order.
  Reserved starts always fall on such a time: the earliest slot of a job is
  now or a time when some PE is freed, i.e. some job's end.
"""

from __future__ import annotations

import heapq

import numpy as np

from .gridsim_parallel import GridSimParallel, Pass
from .local_base import Decision
from .registry import LOCAL


@LOCAL.register("gridsim-conservative")
class GridSimConservative(GridSimParallel):
    """GridSim's conservative backfilling (see the module docstring).

    ``booked`` maps each waiting job's id to its reserved ``(start, PEs)``; every
    waiting job has one, so the jobs without one are the arrivals since the last
    pass (the tail of the queue).
    """

    def __init__(self, *, cluster=None) -> None:
        super().__init__(cluster=cluster)
        self.booked: dict[int, tuple[float, np.ndarray]] = {}
        self._due: list[tuple[float, int, int]] = []  # (reserved start, arrival number, job id)
        self._arrivals = 0

    def schedule(self, view) -> list[Decision]:
        now, profile, queue = view.now, self.profile, view.queue
        profile.forget(now)
        starts: list[Decision] = []
        started = set()
        while self._due and self._due[0][0] <= now:
            _, _, job_id = heapq.heappop(self._due)
            starts.append(self.decision(queue[job_id], self.booked.pop(job_id)[1]))
            started.add(job_id)
        arrived = []
        for job in reversed(queue.values()):
            if job.id in self.booked:
                break
            if job.id not in started:
                arrived.append(job)
        work = Pass(profile, now)
        for job in reversed(arrived):
            seconds = self.seconds(job)
            pes = work.start_now(job.cpus, seconds)
            if pes is not None:
                starts.append(self.decision(job, pes))
                continue
            start, pes = work.book_earliest(job.cpus, seconds)
            self.booked[job.id] = (start, pes)
            self._arrivals += 1
            heapq.heappush(self._due, (start, self._arrivals, job.id))
        return starts
