"""FCFS: strict queue order; the queue head blocks everything behind it.

The queue is in arrival order unless ``order`` ranks it otherwise
(:mod:`emulator.policies.ordering`: ``fcfs[order=sjf]`` is shortest job first,
still without backfilling).
"""

from __future__ import annotations

from ..state.placement import Scratch
from .local_base import Decision, LocalPolicy
from .ordering import HALF_LIFE, ORDER_CHECKS, QueueOrder
from .registry import LOCAL


@LOCAL.register("fcfs", **ORDER_CHECKS)
class Fcfs(LocalPolicy):
    """Start queued jobs in queue order (``order``, arrival by default), first fit, until one does not fit."""

    indexes = frozenset()  # (it reads no columns and no estimated ends)

    def __init__(self, *, order: str = "fcfs", half_life: float = HALF_LIFE, rng=None, cluster=None) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.order = QueueOrder(order, half_life)

    def schedule(self, view) -> list[Decision]:
        queue = view.queue.values() if self.order.arrival else self.order.ranked(view)
        if next(iter(queue)).cpus > view.resources.free_cpus:
            return []  # the head cannot start: nothing can (the common case on a busy cluster)
        scratch = Scratch(view.resources)
        starts: list[Decision] = []
        for job in queue:
            plan = scratch.fit(job)
            if plan is None:
                break
            scratch.take(job, plan)
            starts.append((job, plan))
        self.order.started(view, starts)
        return starts
