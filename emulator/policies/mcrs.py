"""MCRS (seed 003): the cluster with the least estimated total time to release (TTR) within the deadline.

``TTR(j, c) = in_bytes / bw_c + wait(j, c) + length_j / power_c + out_bytes / bw_c``

- ``bw_c``: the bandwidth of the link to ``c`` (no transfer time when unlimited).
- ``power_c`` (``power``): ``"placed"``, the MIPS of the machines ``j``
  would get on the idle cluster by a first fit (a spread job runs at its
  slowest machine's pace; :meth:`~emulator.partitions.meta.MetaView.speed`); or
  ``"mean"``, the cluster's mean MIPS per CPU.
- ``wait(j, c)``, from the cluster's last status report and the jobs
  dispatched since (the paper: the processing time of the jobs queued before
  ``j`` plus the remaining time of the one running). With ``R`` the
  CPU-seconds the running jobs still needed by their estimates at the report,
  drained since at the reported ``draining_cpus`` (floored at 0), and ``W``
  the CPU x MI of the jobs queued there and in flight to it: ``wait = 0`` when
  nothing is queued and the reported free CPUs hold ``j``; otherwise
  ``(R + W / mips_c) / cpus_c``, the backlog spread over the cluster's CPUs
  (``mips_c`` its mean MIPS per CPU). Everything is by estimate.

Clusters with ``TTR > deadline_j - now`` are dropped; the least TTR wins
(ties: lowest index).

The infeasible-cluster rule, ``on_infeasible``: seed 003's algorithm reads
"Filter out the resource R_i in which TTR_{J_i,R_i} > D_i; Assign job J_i to
resource R_best so that TTR_{J_i,R_best} = Min(TTR_{J_i,R_j})" and does not
say what happens when the filter leaves no cluster. Two readings:

- ``"least_ttr"`` (default): the filter is a preference; with nothing left
  the minimum runs over every cluster that can run the job (the "For each
  filtered resource R_j at which this job can be executed" of the matchmaker
  step), so every job is dispatched and may finish late.
- ``"reject"``: the filter is admission control; the job is rejected at
  once. The experiments read this way: past ``Rjr > 2`` "time is wasted on
  request that cannot be processed and are eventually discarded", and a
  larger deadline "will facilitate the number of jobs to be admitted by the
  system" (Fig. 9), "when the deadline decreases quickly the jobs will be
  prevented from obtaining resources" (Fig. 10).

(The "eventually" could also mean jobs dispatched and dropped later, at
their cluster, once their deadline is out of reach; the emulator's clusters
do not drop jobs, so that third reading is not offered.)
"""

from __future__ import annotations

import numpy as np

from ..core.model import Job, Platform
from .meta_base import Choice, MetaPolicy, Reject, dispatch_to, no_cluster
from .params import Param
from .registry import META

ON_INFEASIBLE = ("least_ttr", "reject")
POWER = ("placed", "mean")


def mean_mips(platform: Platform) -> np.ndarray:
    """Each cluster's mean MIPS per CPU."""
    return np.array([sum(m.cpus * m.mips for m in c.machines) / c.cpus for c in platform.clusters])


@META.register("mcrs", on_infeasible=Param(choices=ON_INFEASIBLE), power=Param(choices=POWER))
class Mcrs(MetaPolicy):
    """Multi Criteria Resource Selection (see the module docstring)."""

    def __init__(
        self,
        *,
        on_infeasible: str = "least_ttr",
        power: str = "placed",
        rng: np.random.Generator | None = None,
        platform: Platform | None = None,
    ) -> None:
        super().__init__(rng=rng)
        self.on_infeasible, self.power = on_infeasible, power
        self.mips = mean_mips(platform) if platform is not None else np.zeros(0)

    def ttr(self, job: Job, view) -> np.ndarray:
        """Estimated TTR of ``job`` on every cluster (inf where it cannot run)."""
        eligible = view.eligible(job)
        with np.errstate(divide="ignore"):
            transfer = (job.in_bytes + job.out_bytes) / view.bandwidth
            power = view.speed(job) if self.power == "placed" else self.mips
            run = np.where(eligible, job.length / power, np.inf)
        return transfer + self.wait(job, view) + run

    def wait(self, job: Job, view) -> np.ndarray:
        """Estimated wait of ``job`` at every cluster (see the module docstring)."""
        drained = view.draining_cpus * np.maximum(view.now - view.report_time, 0.0)
        running = np.maximum(view.running_work - drained, 0.0)
        queued_work = view.queued_cpu_work + view.in_flight_work
        spread = (running + queued_work / self.mips) / view.cpus
        starts_now = (view.queued == 0) & (view.free_cpus >= job.cpus)
        return np.where(starts_now, 0.0, spread)

    def choose(self, job: Job, view) -> Choice:
        ttr = self.ttr(job, view)
        if not np.isfinite(ttr).any():
            return no_cluster(job)
        feasible = ttr <= job.deadline - view.now
        if feasible.any():
            return dispatch_to(int(np.argmin(np.where(feasible, ttr, np.inf))))
        if self.on_infeasible == "reject":
            return Reject(
                f"no cluster can finish job {job.id} by its deadline "
                f"(least estimated TTR {ttr.min():.6g} s, {job.deadline - view.now:.6g} s left)"
            )
        return dispatch_to(int(np.argmin(ttr)))
