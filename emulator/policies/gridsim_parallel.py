"""GridSim 5.2's parallel package (``gridsim.parallel``): what its two backfilling policies share.

``ParallelResource`` runs multi-PE jobs across PEs under ``AggressiveBackfill``
(EASY, local policy ``gridsim-easy``) or ``ConservativeBackfill``
(``gridsim-conservative``). Both keep a profile of which PEs are free over
time (:class:`~emulator.pe_profile.PeProfile`, GridSim's ``SingleProfile``) and
follow the same rules, read from the sources:

- PEs are numbered across the cluster, machine by machine (machine 0's PEs
  first); a job takes the lowest-numbered PEs free for its whole duration
  (``PERangeList.selectPEs``), and a reservation keeps the PEs it was given,
  so every decision names its PEs (see :meth:`Resources.allocate`);
- every job is planned and run for ``floor(length / rating) + 1`` whole
  seconds at the first machine's PE rating (``forecastExecutionTime``,
  :class:`~emulator.execution.WholeSeconds`). There is no separate estimate:
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

from collections import Counter

import numpy as np

from .. import execution
from ..model import SPREAD, Cluster, Job
from ..pe_profile import PeProfile
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
