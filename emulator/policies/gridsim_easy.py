"""GridSim 5.2 ``AggressiveBackfill`` (EASY) on a ``ParallelResource``, job for job.

The rules of ``gridsim/parallel/scheduler/AggressiveBackfill.java``:

- a backfill pass runs on every arrival (``gridletSubmit``) and at every time
  with completions (``updateSchedule``: finish, drop past profile rows, pass).
  gridemu runs one pass after all events of a time: passes are idempotent
  (the profile already frees a job's PEs at its end, and it only shrinks
  within a time), so one pass decides what GridSim's several do;
- a pass (``backfillGridlets``) first starts the pivot if its reserved time
  has come, then takes every other waiting job in arrival order: it starts
  now if enough PEs are free for its whole duration, given the running jobs
  and the pivot's reservation (``startGridlet`` / ``checkAvailability``);
  otherwise, if there is no pivot, it becomes the pivot with the earliest
  slot and the lowest PEs there (``scheduleGridlet`` / ``findStartTime``);
- one reservation only, never recomputed: it keeps its time and PEs until
  the pivot starts (jobs end exactly as planned, so it never could improve).
"""

from __future__ import annotations

import numpy as np

from ..core.model import Job
from .gridsim_parallel import GridSimParallel, Pass
from .local_base import Decision
from .registry import LOCAL


@LOCAL.register("gridsim-easy")
class GridSimEasy(GridSimParallel):
    """GridSim's EASY backfilling (see the module docstring); ``pivot`` is (job, start, PEs) or None."""

    def __init__(self, *, cluster=None) -> None:
        super().__init__(cluster=cluster)
        self.pivot: tuple[Job, float, np.ndarray] | None = None

    def schedule(self, view) -> list[Decision]:
        now, profile = view.now, self.profile
        profile.forget(now)
        starts: list[Decision] = []
        pivot, self.pivot = self.pivot, None
        skip = -1 if pivot is None else pivot[0].id  # the pivot is not backfilled, started or not
        if pivot is not None and pivot[1] <= now:
            starts.append(self.decision(pivot[0], pivot[2]))
            pivot = None
        work = Pass(profile, now)
        if work.free == 0 and pivot is not None:
            self.pivot = pivot
            return starts  # nothing can start and the pivot is set: the pass changes nothing
        for job in view.queue.values():
            if job.id == skip:
                continue
            if work.free == 0 and pivot is not None:
                break  # no job can start any more, and the pivot is set
            seconds = self.seconds(job)
            pes = work.start_now(job.cpus, seconds)
            if pes is not None:
                starts.append(self.decision(job, pes))
            elif pivot is None:
                start, pes = work.book_earliest(job.cpus, seconds)
                pivot = (job, start, pes)
        self.pivot = pivot
        return starts
