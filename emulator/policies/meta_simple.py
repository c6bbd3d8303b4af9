"""The baseline meta policies: round-robin, random, least-load (LARS) and own-site."""

from __future__ import annotations

import numpy as np

from ..core.model import Job
from .meta_base import HOLD, Choice, MetaPolicy, Reject, dispatch_to, no_cluster
from .registry import META


@META.register("round-robin")
class RoundRobin(MetaPolicy):
    """The next eligible cluster after the last one chosen, in cluster order."""

    def __init__(self, *, rng=None) -> None:
        super().__init__(rng=rng)
        self.last = -1

    def choose(self, job: Job, view) -> Choice:
        eligible = view.eligible(job)
        n = eligible.size
        for step in range(1, n + 1):
            c = (self.last + step) % n
            if eligible[c]:
                self.last = c
                return dispatch_to(c)
        return no_cluster(job)


@META.register("random")
class Random(MetaPolicy):
    """A uniformly random eligible cluster (the partition's seeded stream)."""

    def choose(self, job: Job, view) -> Choice:
        candidates = np.flatnonzero(view.eligible(job))
        if candidates.size == 0:
            return no_cluster(job)
        return dispatch_to(int(candidates[self.rng.integers(candidates.size)]))


@META.register("least-load")
class LeastLoad(MetaPolicy):
    """LARS: the eligible cluster with the fewest queued jobs (as last reported, plus jobs in flight).

    Ties go to the lowest cluster index.
    """

    def choose(self, job: Job, view) -> Choice:
        if view.eligible_everywhere(job):  # (no mask to apply: one argmin)
            return dispatch_to(int(view.queued.argmin()))
        load = np.where(view.eligible(job), view.queued, _INELIGIBLE)
        best = int(load.argmin())
        if load[best] == _INELIGIBLE:  # (no queue holds that many jobs: none is eligible)
            return no_cluster(job)
        return dispatch_to(best)


_INELIGIBLE = np.iinfo(np.int64).max
"""Least-load's load of a cluster that cannot take the job (``np.iinfo`` cost more than the choice)."""


@META.register("own-site")
class OwnSite(MetaPolicy):
    """The cluster the job names (a trace's site); rejected when it names none or an unknown one.

    Held while its site is believed down (stress tests: an outage), until the site reports it is up.
    A scenario none of whose jobs names a cluster is refused when it is loaded (``meta.policy``), and
    one where some name none says how many (:func:`emulator.data.scenario._check_own_site`).
    """

    def choose(self, job: Job, view) -> Choice:
        c = view.cluster_index.get(job.site)
        if c is None:
            return Reject(f"job {job.id} names site {job.site!r}, which is not a cluster of this platform")
        if not view.possible(job)[c]:
            reason = view.platform.clusters[c].refusal(job)
            return Reject(f"job {job.id} cannot run on its own site {job.site}: {reason}")
        if view.any_down and view.down[c]:
            return HOLD  # its site is down (an outage, as last reported): wait for it to come back
        return dispatch_to(c)
