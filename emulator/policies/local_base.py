"""The local-policy interface: a read-only cluster view in, decisions (starts, preemptions) out."""

from __future__ import annotations

import numpy as np

from ..core.model import Cluster, Job
from ..core.resources import Pes, Plan, Resources
from ..state.cluster_state import INDEXES
from ..state.execution import Exact
from ..state.views import ClusterView

Decision = tuple[Job, Plan] | tuple[Job, Plan, Pes]
"""Start ``job`` now on ``plan``; a third item names the PEs it takes (see :meth:`Resources.allocate`).

Without it each machine's lowest free PEs are taken. Policies that book PEs
ahead (GridSim's parallel package: a reservation keeps its PEs) name them.
Starting a queued job that was preempted resumes it. A policy may also return
:class:`~emulator.core.preemption.Preempt` decisions; the partition applies the
list in order, so preemptions come before the starts that use what they free.
"""


class LocalPolicy:
    """Base of local policies. Subclasses set ``name`` (by registering) and override :meth:`schedule`.

    Keyword-only constructor arguments are the policy's parameters (settable
    from the scenario file); ``rng`` (the partition's seeded stream) and
    ``cluster`` (the static description) are passed by the engine when asked for.
    """

    name = "?"
    execution: type = Exact
    """The execution model (see :mod:`emulator.state.execution`) this policy's jobs run under."""
    resources_class: type = Resources
    """How the cluster's CPUs are shared: space-shared (one job per PE) unless a policy says otherwise."""
    period: float = 0.0
    """Seconds between planning times of a time-driven policy; 0: plan at every scheduling event."""
    indexes: frozenset[str] = INDEXES
    """What the policy reads of the view beyond the queue, the running jobs and the resources: ``columns``,
    ``estimated_ends`` (:data:`~emulator.state.cluster_state.INDEXES`). The cluster's state keeps only
    these up to date; a policy that reads neither says so, and its cluster spares their upkeep."""

    def __init__(self, *, rng: np.random.Generator | None = None, cluster: Cluster | None = None) -> None:
        self.rng = rng
        self.cluster = cluster

    def admit(self, job: Job) -> Job:
        """The job as this policy runs it (GridSim rewrites multi-PE gridlets); default unchanged."""
        return job

    def schedule(self, view: ClusterView) -> list[Decision]:
        """Jobs to start now and where, given the cluster's state; must not mutate ``view``."""
        raise NotImplementedError
