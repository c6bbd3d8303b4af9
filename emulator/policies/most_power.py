"""PARS (seed 003's baseline): the eligible cluster with the most processing power.

``measure = "per-cpu"`` (default): the MIPS the job's CPUs would run at
(:meth:`~emulator.partitions.meta.MetaView.speed`, the machines a first fit takes on the
idle cluster), the paper's ``PP_r`` ("processing power/node", the divisor of
its processing time). ``"total"``: the cluster's CPUs x MIPS summed. Ties go
to the lowest index.

``load``:

- ``load = false`` (default), what seed 003 says PARS is: "Power Aware
  Resource Selection (PARS): Job is scheduled to the resource that has more
  computational power." The choice ignores load and deadlines (a
  single-criterion baseline), so with one fastest cluster every job goes
  there.
- ``load = true`` (an option, not the paper's definition): the power divided
  by ``1 + w_c``, ``w_c`` the jobs waiting at ``c`` (as last reported, plus
  those dispatched since), i.e. LARS's load ("simply ... the number of jobs
  waiting to run"). The paper's PARS never mentions load; the option exists
  to measure how much of a gap to the paper's tables a load-aware baseline
  closes (``docs/reproductions.md``), which is a diagnostic, not a reading.
"""

from __future__ import annotations

import numpy as np

from ..core.model import Job, Platform
from .meta_base import Choice, MetaPolicy, dispatch_to, no_cluster
from .params import Param
from .registry import META

MEASURES = ("per-cpu", "total")


def total_power(platform: Platform) -> np.ndarray:
    """Each cluster's CPUs x MIPS, summed over its machines."""
    return np.array([sum(m.cpus * m.mips for m in c.machines) for c in platform.clusters])


def per_waiting_job(score: np.ndarray, view) -> np.ndarray:
    """``score / (1 + w_c)``: the ``load = true`` reading, ``w_c`` LARS's load (jobs waiting at ``c``)."""
    return score / (1.0 + view.queued)


@META.register("most-power", measure=Param(choices=MEASURES))
class MostPower(MetaPolicy):
    """PARS (see the module docstring)."""

    def __init__(
        self, *, measure: str = "per-cpu", load: bool = False, rng=None, platform: Platform | None = None
    ) -> None:
        super().__init__(rng=rng)
        self.measure, self.load = measure, load
        self.total = total_power(platform) if platform is not None else np.zeros(0)

    def score(self, job: Job, view) -> np.ndarray:
        """Each cluster's power for ``job``, per waiting job when ``load`` (ineligible ones included)."""
        power = view.speed(job) if self.measure == "per-cpu" else self.total
        return per_waiting_job(power, view) if self.load else power

    def choose(self, job: Job, view) -> Choice:
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)
        return dispatch_to(int(np.argmax(np.where(eligible, self.score(job, view), -np.inf))))
