"""BARS (seed 003's baseline): the eligible cluster with the most bandwidth to the meta-scheduler.

Ties (e.g. every link unlimited) go to the lowest index.

``load``, as for PARS (:mod:`~emulator.policies.most_power`): ``false``
(default) is what seed 003 says BARS is, "Bandwidth Aware Resource Selection
(BARS): Job is scheduled to the resource that has more bandwidth", blind to
load and deadlines (a single-criterion baseline: every job goes to the
best-connected cluster); ``true``, an option outside the paper's definition,
divides the bandwidth by ``1 + w_c``, ``w_c`` the jobs waiting at ``c``
(LARS's load). An unlimited link stays the best whatever its queue.
"""

from __future__ import annotations

import numpy as np

from ..core.model import Job
from .meta_base import Choice, MetaPolicy, dispatch_to, no_cluster
from .most_power import per_waiting_job
from .registry import META


@META.register("most-bandwidth")
class MostBandwidth(MetaPolicy):
    """BARS (see the module docstring)."""

    def __init__(self, *, load: bool = False, rng=None) -> None:
        super().__init__(rng=rng)
        self.load = load

    def choose(self, job: Job, view) -> Choice:
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)
        bandwidth = per_waiting_job(view.bandwidth, view) if self.load else view.bandwidth
        return dispatch_to(int(np.argmax(np.where(eligible, bandwidth, -np.inf))))
