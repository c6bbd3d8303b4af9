"""The meta-policy interface: jobs to place and the clusters as the meta-scheduler knows them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from ..model import Job

if TYPE_CHECKING:
    from ..meta import MetaView

Choice = int | str
"""A cluster index, or a rejection reason."""


class MetaPolicy:
    """Base of meta policies; keyword-only constructor arguments are parameters.

    ``select`` sees only :class:`~emulator.meta.MetaView`: the static platform
    and what the clusters reported (after the link latency), never live state.
    """

    name = "?"

    def __init__(self, *, rng: np.random.Generator | None = None) -> None:
        self.rng = rng

    def select(self, jobs: list[Job], view: MetaView) -> Iterator[Choice]:
        """One choice per job, in order; jobs submitted at the same time come together.

        The partition applies each choice as it is yielded, so the view already
        counts the batch's earlier dispatches when the next job is chosen.
        """
        for job in jobs:
            yield self.choose(job, view)

    def choose(self, job: Job, view: MetaView) -> Choice:
        raise NotImplementedError


def no_cluster(job: Job) -> str:
    return (
        f"no cluster can run job {job.id} ({job.cpus} CPUs, {job.placement}, licenses {list(job.licenses)})"
    )
