"""The meta-policy interface: jobs to place and the clusters as the meta-scheduler knows them."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import repeat

import numpy as np

from ..core.messages import Status
from ..core.model import Job
from ..state.meta_view import MetaView


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Send the job to cluster ``cluster`` (its index in the platform).

    ``priority`` travels with the job to the cluster (the DISPATCH message),
    where local policies read it as ``view.priority[job.id]``. A plain Python
    number: it crosses process boundaries.
    """

    cluster: int
    priority: float = 0


_DISPATCHES: dict[int, Dispatch] = {}  # by cluster, made as clusters are first chosen


def dispatch_to(cluster: int) -> Dispatch:
    """``Dispatch(cluster)`` with no priority: one shared instance per cluster (a choice is frozen
    data), so a policy choosing for a million jobs does not build a million of them."""
    choice = _DISPATCHES.get(cluster)
    if choice is None:
        choice = _DISPATCHES[cluster] = Dispatch(cluster)
    return choice


@dataclass(frozen=True, slots=True)
class Reject:
    """Reject the job, for ``reason`` (it lands in the trace's reject row)."""

    reason: str


class Hold:
    """Keep the job at the meta-scheduler for now: see :data:`HOLD`, its one instance."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "HOLD"

    def __reduce__(self) -> str:
        return "HOLD"  # (one instance, also after pickling)


HOLD = Hold()
"""Keep the job at the meta-scheduler for now (a policy that collects jobs into batches: MUSCLE).

Held jobs are offered again, first and in submission order, with the jobs
submitted since, at the next time anything reaches the meta-scheduler: a
submission or a status report. A policy that holds must expect one of those
(a cluster still has work, or more jobs are coming): the partition rejects,
with the reason in the trace, jobs held when no event is left that could
wake them, so that a job is never silently dropped.
"""

Choice = Dispatch | Reject | Hold
"""What a meta policy decides for one job."""


class MetaPolicy:
    """Base of meta policies; keyword-only constructor arguments are parameters.

    ``select`` sees only :class:`~emulator.partitions.meta.MetaView`: the static platform
    and what the clusters reported (after the link latency), never live state.
    ``rng`` (the partition's seeded stream) and ``platform`` are passed by the
    engine when a constructor asks for them. A policy that keeps its own
    account of the clusters (what it dispatched, by priority) updates it in
    :meth:`select` from its own choices and in :meth:`observe` from the reports.
    """

    name = "?"

    def __init__(self, *, rng: np.random.Generator | None = None) -> None:
        self.rng = rng

    def observe(self, cluster: int, status: Status) -> None:
        """A status report from ``cluster`` arrived (after the view applied it); default: nothing."""

    def select(self, jobs: list[Job], view: MetaView) -> Iterator[Choice]:
        """One choice per job, in order; jobs submitted at the same time come together.

        The partition applies each choice as it is taken from the iterator, so the
        view already counts the batch's earlier dispatches when the next job is
        chosen. By default :meth:`choose` mapped over the jobs (lazily, for that).
        """
        return map(self.choose, jobs, repeat(view))

    def choose(self, job: Job, view: MetaView) -> Choice:
        raise NotImplementedError


def no_cluster(job: Job) -> Reject:
    return Reject(
        f"no cluster can run job {job.id} ({job.cpus} CPUs, {job.placement}, licenses {list(job.licenses)})"
    )
