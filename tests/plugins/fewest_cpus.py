"""Fewest queued CPUs: an out-of-tree meta policy (docs/policies.md).

Each job goes to the eligible cluster whose queue, as last reported, holds the least work per CPU
of the cluster; ties go to the lowest index.
"""

from __future__ import annotations

import numpy as np

from emulator.core.model import Job
from emulator.policies.meta_base import Choice, Dispatch, MetaPolicy, no_cluster
from emulator.state.meta_view import MetaView


class FewestQueuedCpus(MetaPolicy):
    """The eligible cluster with the least queued CPU work per CPU, as last reported."""

    def choose(self, job: Job, view: MetaView) -> Choice:
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)  # a Reject naming what the job needs
        backlog = np.where(eligible, view.queued_cpu_work / view.cpus, np.inf)
        return Dispatch(int(np.argmin(backlog)))
