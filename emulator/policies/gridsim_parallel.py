"""GridSim 5.2's parallel package (``gridsim.parallel``): what its two backfilling policies share.

``ParallelResource`` runs multi-PE jobs across PEs under ``AggressiveBackfill``
(EASY, local policy ``gridsim-easy``) or ``ConservativeBackfill``
(``gridsim-conservative``). Both keep a profile of which PEs are free over
time (:class:`~emulator.core.pe_profile.PeProfile`, GridSim's ``SingleProfile``) and
follow the same rules, read from the sources:

- PEs are numbered across the cluster, machine by machine (machine 0's PEs
  first); a job takes the lowest-numbered PEs free for its whole duration
  (``PERangeList.selectPEs``), and a reservation keeps the PEs it was given,
  so every decision names its PEs (see :meth:`Resources.allocate`);
- every job is planned and run for ``floor(length / rating) + 1`` whole
  seconds at the first machine's PE rating (``forecastExecutionTime``,
  :class:`~emulator.state.execution.WholeSeconds`). There is no separate estimate:
  the length is the job's actual one, known to the scheduler;
- a job asking for more PEs than the cluster has fails at submission
  (``gridletSubmit``): :meth:`admit` makes every job ``spread`` over the
  cluster, so the engine rejects exactly those, with the reason in the trace;
- the package has no software licenses: a cluster with a license pool is an error.

Unlike gridemu's own policies these keep state between passes: the profile
(what runs and what is reserved, on which PEs) and the reservations. GridSim
decides a reservation once and keeps it, so it cannot be derived again from
the cluster's state. Jobs end exactly as planned, so the profile never needs
to hear about completions: their PEs are free from their planned end on.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ..core.model import SPREAD, Cluster, Job
from ..core.pe_profile import PeProfile
from ..state import execution
from .local_base import Decision, LocalPolicy
from .registry import PolicyError


class GridSimParallel(LocalPolicy):
    """Base of ``gridsim-easy`` and ``gridsim-conservative``: the profile and the PE bookkeeping."""

    execution = execution.WholeSeconds

    def __init__(self, *, cluster: Cluster | None = None) -> None:
        super().__init__(cluster=cluster)
        if cluster is not None and cluster.licenses:
            raise PolicyError(
                f"local policy {self.name!r} (GridSim's parallel package) has no software licenses; "
                f"cluster {cluster.name} has a license pool: use 'easy' or 'fcfs'"
            )
        machines = () if cluster is None else cluster.machines  # None: a spec being validated
        self.rating = execution.gridsim_rating(cluster) if machines else 1.0
        cpus = np.array([m.cpus for m in machines], dtype=np.int64)
        self._machine = np.repeat(np.arange(cpus.size), cpus)  # global PE -> machine
        self._local = np.arange(int(cpus.sum())) - np.repeat(np.cumsum(cpus) - cpus, cpus)  # -> its PE
        self.profile = PeProfile(int(cpus.sum()))

    def admit(self, job: Job) -> Job:
        """Every job may span the cluster's PEs, as in GridSim (its placement is ignored)."""
        return job if job.placement == SPREAD else job.replace(placement=SPREAD)

    def seconds(self, job: Job) -> int:
        """How long ``job`` runs, planned and actual."""
        return execution.whole_seconds(job.actual_length, self.rating)

    def decision(self, job: Job, pes: np.ndarray) -> Decision:
        """Start ``job`` now on the global PEs ``pes`` (ascending): its plan and the PEs named."""
        plan = tuple(Counter(self._machine[pes].tolist()).items())  # machines ascending, as the PEs
        return job, plan, tuple(self._local[pes].tolist())


class Pass:
    """One scheduling pass over the profile: start jobs now or book them later, PEs lowest first.

    Within a pass PEs only get scarcer, so once ``n`` PEs for ``d`` seconds
    failed, any job wanting at least ``n`` PEs for at least ``d`` fails too
    (remembered in ``failed``); when each PE is next busy (``until``) is
    computed once, when first needed, and kept in step with what the pass books.
    """

    def __init__(self, profile: PeProfile, now: float) -> None:
        self.profile, self.now = profile, now
        self.free = profile.free_now(now)
        self.until: np.ndarray | None = None
        self.failed = np.full(profile.size + 1, math.inf)  # least duration that failed with <= n PEs

    def start_now(self, cpus: int, seconds: int) -> np.ndarray | None:
        """The lowest PEs free for ``seconds`` from now (booked), or None."""
        if cpus > self.free or seconds >= self.failed[cpus]:
            return None
        if self.until is None:
            self.until = self.profile.free_until(self.now)
        pes = self.profile.lowest_free(self.until, cpus, self.now + seconds)
        if pes is None:
            self.failed[cpus:] = np.minimum(self.failed[cpus:], seconds)
            return None
        self.profile.allocate(pes, self.now, self.now + seconds)
        self.until[pes] = -math.inf
        self.free -= cpus
        return pes

    def book_earliest(self, cpus: int, seconds: int) -> tuple[float, np.ndarray]:
        """Reserve the earliest slot (and its lowest PEs) for ``cpus`` PEs during ``seconds``."""
        start, pes = self.profile.earliest(cpus, seconds, self.now)
        self.profile.allocate(pes, start, start + seconds)
        if self.until is not None:
            self.until[pes] = np.minimum(self.until[pes], start)
        return start, pes
