"""Hand-built cluster states for policy unit tests: no partition, no events, no files.

A policy's decisions on a state it could meet, in one call (two 2-CPU machines, one job running on
the first until 10, a 4-CPU job queued):

>>> decide("fcfs", [2, 2], running=[(Job(1, 0.0, 2, 10.0), ((0, 2),))], queued=[Job(2, 0.0, 4, 5.0)])
[]
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from emulator.core.model import Cluster, Job, Link, Machine
from emulator.core.resources import Plan
from emulator.core.runs import Run
from emulator.policies import LOCAL
from emulator.policies.local_base import LocalPolicy
from emulator.state.cluster_state import ClusterState
from emulator.state.views import ClusterView


def cluster_state(
    policy: LocalPolicy,
    running: Iterable[tuple[Job, Plan]] = (),
    queued: Iterable[Job] = (),
    now: float = 0.0,
    priority: dict[int, float] | None = None,
) -> ClusterState:
    """``policy``'s cluster with the resources it runs on (time sharing counts PEs its own way),
    ``running`` jobs started at their submit time on their plans, ``queued`` jobs in queue order
    as ``policy`` admits them (with the meta-scheduler's ``priority`` by job id), and the clock at
    ``now``."""
    cluster = policy.cluster
    state = ClusterState(cluster, policy.resources_class(cluster))
    for seq, (job, plan) in enumerate(running, 1):
        machines, pes = state.resources.allocate(job, plan)
        run = Run(job, job.submit, plan, machines, pes, float(cluster.machines[plan[0][0]].mips))
        run.seq = seq
        state.start(run)
        state.expect(run)
    for job in queued:
        state.enqueue(policy.admit(job), (priority or {}).get(job.id, 0.0))
    state.now = now
    return state


def decide(
    spec: str, cpus: Iterable[int], mips: float = 1.0, licenses: dict[str, int] | None = None, **state
) -> list:
    """The decisions the policy ``spec`` (``easy[order=sjf]``) takes on machines of ``cpus`` CPUs at
    ``mips`` with ``licenses`` and the state ``state`` describes (see :func:`cluster_state`):
    ``(job id, plan)`` per start, preemptions as they are."""
    machines = tuple(Machine(n, mips) for n in cpus)
    cluster = Cluster("c", machines, Link(1.0), dict(licenses or {}), spec)
    policy = LOCAL.create(spec, rng=np.random.default_rng(1), cluster=cluster)
    view = ClusterView(cluster_state(policy, **state))
    return [(d[0].id, d[1]) if isinstance(d, tuple) else d for d in policy.schedule(view)]
