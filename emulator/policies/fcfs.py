"""FCFS: strict arrival order; the queue head blocks everything behind it."""

from __future__ import annotations

from ..placement import Scratch
from .local_base import Decision, LocalPolicy
from .registry import LOCAL


@LOCAL.register("fcfs")
class Fcfs(LocalPolicy):
    """Start queued jobs in arrival order, first fit, until one does not fit."""

    def schedule(self, view) -> list[Decision]:
        if next(iter(view.queue.values())).cpus > view.resources.free_cpus:
            return []  # the head cannot start: nothing can (the common case on a busy cluster)
        scratch = Scratch(view.resources)
        starts: list[Decision] = []
        for job in view.queue.values():
            plan = scratch.fit(job)
            if plan is None:
                break
            scratch.take(job, plan)
            starts.append((job, plan))
        return starts
