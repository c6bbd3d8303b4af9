"""Smallest job first, no backfilling: the worked example of an out-of-tree local policy.

docs/policies.md shows this file; tests/test_plugins.py runs it from a scenario file, from
``gridemu run --set local.policy=tests.plugins.smallest_first:SmallestFirst`` and in a sweep.
"""

from __future__ import annotations

from emulator.policies.local_base import Decision, LocalPolicy
from emulator.state.placement import Scratch
from emulator.state.views import ClusterView


class SmallestFirst(LocalPolicy):
    """Start queued jobs fewest CPUs first (``largest=true``: most first), until one does not fit."""

    def __init__(self, *, largest: bool = False, rng=None, cluster=None) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.largest = largest

    def schedule(self, view: ClusterView) -> list[Decision]:
        sign = -1 if self.largest else 1
        queue = sorted(view.queue.values(), key=lambda job: sign * job.cpus)  # (stable: ties by arrival)
        scratch = Scratch(view.resources)  # free CPUs and licenses as this pass's starts leave them
        starts: list[Decision] = []
        for job in queue:
            plan = scratch.fit(job)
            if plan is None:
                break  # no backfilling: the first job that does not fit blocks the rest
            scratch.take(job, plan)
            starts.append((job, plan))
        return starts
