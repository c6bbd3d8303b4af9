"""PARS (seed 003's baseline): the eligible cluster with the most processing power.

``measure = "per-cpu"`` (default): the MIPS the job's CPUs would run at
(:meth:`~emulator.meta.MetaView.speed`, the machines a first fit takes on the
idle cluster), the paper's ``PP_r`` ("processing power/node", the divisor of
its processing time). ``"total"``: the cluster's CPUs x MIPS summed. Ties go
to the lowest index. The choice ignores load and deadlines (a single-criterion
baseline), so with one fastest cluster every job goes there.
"""

from __future__ import annotations

import numpy as np

from ..model import Job, Platform
from .meta_base import Choice, MetaPolicy, no_cluster
from .registry import META, PolicyError

MEASURES = ("per-cpu", "total")


def total_power(platform: Platform) -> np.ndarray:
    """Each cluster's CPUs x MIPS, summed over its machines."""
    return np.array([sum(m.cpus * m.mips for m in c.machines) for c in platform.clusters])


@META.register("most-power")
class MostPower(MetaPolicy):
    """PARS (see the module docstring)."""

    def __init__(self, *, measure: str = "per-cpu", rng=None, platform: Platform | None = None) -> None:
        super().__init__(rng=rng)
        if measure not in MEASURES:
            raise PolicyError(f"most-power: measure {measure!r}: expected one of {', '.join(MEASURES)}")
        self.measure = measure
        self.total = total_power(platform) if platform is not None else np.zeros(0)

    def choose(self, job: Job, view) -> Choice:
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)
        power = view.speed(job) if self.measure == "per-cpu" else self.total
        return int(np.argmax(np.where(eligible, power, -np.inf)))
