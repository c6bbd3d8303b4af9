"""BARS (seed 003's baseline): the eligible cluster with the most bandwidth to the meta-scheduler.

Ties (e.g. every link unlimited) go to the lowest index. The choice ignores
load and deadlines (a single-criterion baseline).
"""

from __future__ import annotations

import numpy as np

from ..model import Job
from .meta_base import Choice, MetaPolicy, no_cluster
from .registry import META


@META.register("most-bandwidth")
class MostBandwidth(MetaPolicy):
    """BARS (see the module docstring)."""

    def choose(self, job: Job, view) -> Choice:
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)
        return int(np.argmax(np.where(eligible, view.bandwidth, -np.inf)))
