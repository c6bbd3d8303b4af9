"""WRAND, weighted random (seed 004's baseline): a random eligible cluster, odds ``m_c * u_c``.

``m_c * u_c`` is the cluster's processing capability, CPUs times service rate:
its CPUs x MIPS summed over its machines (the same for identical CPUs).
Eligible: the cluster can run the job at all (``m_c >= s_j`` for rigid jobs
without licenses). One uniform draw per job from the partition's seeded
stream, mapped through the cumulative weights in cluster order.
"""

from __future__ import annotations

import numpy as np

from ..core.model import Job, Platform
from .meta_base import Choice, MetaPolicy, dispatch_to, no_cluster
from .most_power import total_power
from .registry import META


@META.register("wrand")
class Wrand(MetaPolicy):
    """Weighted random (see the module docstring)."""

    def __init__(self, *, rng=None, platform: Platform | None = None) -> None:
        super().__init__(rng=rng)
        self.weights = total_power(platform) if platform is not None else np.zeros(0)

    def probabilities(self, job: Job, view) -> np.ndarray:
        """The odds of each cluster for ``job`` (0 where it cannot run)."""
        weights = np.where(view.eligible(job), self.weights, 0.0)
        return weights / weights.sum()

    def choose(self, job: Job, view) -> Choice:
        if not view.eligible(job).any():
            return no_cluster(job)
        cumulative = np.cumsum(self.probabilities(job, view))
        c = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
        return dispatch_to(min(c, len(cumulative) - 1))
