"""What a meta policy sees of the grid: :class:`MetaView`, below the policies that read it.

The meta-scheduler partition (:mod:`emulator.partitions.meta`) keeps a
:class:`MetaState` and updates it from the clusters' status messages and its
own dispatches; a meta policy reads it through a :class:`MetaView`, whose
arrays are read-only views of the state's (live: they follow it without
copies) and whose ``in_flight`` mappings are proxies. A policy can be tested
on a state built by hand, with no partition:

>>> from emulator.core.model import Cluster, Job, Link, Machine, Platform
>>> grid = Platform((Cluster("a", (Machine(4, 100.0),), Link(1.0)),))
>>> state = MetaState(grid, np.random.default_rng(0))
>>> view = MetaView(state)
>>> state.sent(0, Job(1, 0.0, 2, 10.0))
>>> view.queued.tolist(), view.in_flight_work.tolist()
([1], [20.0])
>>> view.free_cpus[0] = 0
Traceback (most recent call last):
ValueError: assignment destination is read-only
"""

from __future__ import annotations

from types import MappingProxyType

import numpy as np

from ..core.messages import Status
from ..core.model import SINGLE, Job, Platform
from .views import read_only


class MetaState:
    """The meta-scheduler's knowledge of the grid, which its partition updates (policies read it
    through a :class:`MetaView`). Arrays are indexed by cluster and only ever updated in place.

    Static: ``platform``, ``cpus`` (CPUs per cluster); ``bandwidth`` (bytes/s)
    and ``latency`` (s) of each cluster's link, as the scenario gives them, then
    as the cluster last reported them when its link changes (stress tests:
    never the link's live state). From the last :class:`Status` of each cluster (as of
    ``report_time``): ``reported_queued``, ``running``, ``free_cpus``,
    ``queued_work`` (MI), ``queued_cpu_work`` (CPU x MI), ``running_work``
    (CPU-seconds left by estimate) and ``draining_cpus`` (see
    :mod:`emulator.state.backlog`). Its own dispatches not yet acknowledged:
    ``in_flight`` (job id -> CPU x MI, per cluster) and ``in_flight_work``.
    Failures and outages (stress tests), as last reported: ``up_cpus`` (CPUs of
    the machines up) and ``down`` (in an outage); :meth:`eligible` leaves out the
    clusters believed down, so no policy sends a job there.
    """

    def __init__(self, platform: Platform, rng: np.random.Generator) -> None:
        self.platform = platform
        self.rng = rng
        self.now = 0.0
        clusters = platform.clusters
        n = len(clusters)
        self.cluster_index = {c.name: i for i, c in enumerate(clusters)}
        self.cpus = np.array([c.cpus for c in clusters], dtype=np.int64)
        self.bandwidth = np.array([c.link.bandwidth for c in clusters], dtype=float)
        self.latency = np.array([c.link.latency for c in clusters], dtype=float)
        self.reported_queued = np.zeros(n, dtype=np.int64)
        self.running = np.zeros(n, dtype=np.int64)
        self.free_cpus = self.cpus.copy()
        self.queued_work = np.zeros(n)
        self.queued_cpu_work = np.zeros(n)
        self.running_work = np.zeros(n)
        self.draining_cpus = np.zeros(n, dtype=np.int64)
        self.report_time = np.zeros(n)
        self.in_flight: list[dict[int, float]] = [{} for _ in range(n)]
        self._queued = np.zeros(n, dtype=np.int64)  # reported_queued + len(in_flight), kept as they change
        self.in_flight_work = np.zeros(n)
        self.up_cpus = self.cpus.copy()
        self.down = np.zeros(n, dtype=bool)
        self.any_down = False
        self._up = ~self.down
        self._eligible: dict[tuple, np.ndarray] = {}
        self._everywhere: dict[tuple, bool] = {}
        self._speed: dict[tuple, np.ndarray] = {}

    @property
    def queued(self) -> np.ndarray:
        """Jobs believed queued at each cluster: last report plus dispatches not yet reported (read-only,
        kept up to date: a least-load choice over 1,000 clusters read it once per job)."""
        return read_only(self._queued)  # (a view made here: a stored one would unpickle as a copy)

    def speed(self, job: Job) -> np.ndarray:
        """MIPS per CPU ``job`` would run at on each cluster, as placed on the idle cluster (0: cannot).

        The machines a first fit in machine order takes (what ``fcfs`` and
        ``easy`` do); a spread job runs at the pace of the slowest of them.
        Cached per job shape; read-only.
        """
        key = (job.cpus, job.placement, job.licenses)
        speed = self._speed.get(key)
        if speed is None:
            speed = np.array([_idle_speed(c, job) for c in self.platform.clusters])
            speed.flags.writeable = False
            self._speed[key] = speed
        return speed

    def sent(self, c: int, job: Job) -> None:
        """The partition dispatched ``job`` to cluster ``c`` (in flight until the cluster reports it)."""
        work = job.cpus * job.length
        self.in_flight[c][job.id] = work
        self._queued[c] = self.reported_queued[c] + len(self.in_flight[c])
        self.in_flight_work[c] += work

    def idle(self) -> bool:
        """Nothing queued or running anywhere, as last reported, and nothing in flight."""
        return not (self.reported_queued.any() or self.running.any() or any(self.in_flight))

    def eligible(self, job: Job) -> np.ndarray:
        """Clusters that can run ``job``: :meth:`possible` ones not believed down (an outage)."""
        mask = self.possible(job)
        return mask & self._up if self.any_down else mask

    def eligible_everywhere(self, job: Job) -> bool:
        """Whether every cluster is :meth:`eligible` for ``job`` (the common case, where a policy
        need not mask the clusters). Cached per job shape."""
        if self.any_down:
            return False
        key = (job.cpus, job.placement, job.licenses)
        everywhere = self._everywhere.get(key)
        if everywhere is None:
            everywhere = self._everywhere[key] = bool(self.possible(job).all())
        return everywhere

    def possible(self, job: Job) -> np.ndarray:
        """Clusters whose hardware and licenses can ever run ``job`` (cached per job shape)."""
        key = (job.cpus, job.placement, job.licenses)
        mask = self._eligible.get(key)
        if mask is None:
            mask = np.array([c.refusal(job) is None for c in self.platform.clusters], dtype=bool)
            mask.flags.writeable = False
            self._eligible[key] = mask
        return mask

    def apply(self, c: int, status: Status) -> None:
        self.reported_queued[c] = status.queued
        self.running[c] = status.running
        self.free_cpus[c] = status.free_cpus
        self.queued_work[c] = status.queued_work
        self.queued_cpu_work[c] = status.queued_cpu_work
        self.running_work[c] = status.running_work
        self.draining_cpus[c] = status.draining_cpus
        self.report_time[c] = status.time
        if status.latency:  # a cluster whose link changes reports it
            self.latency[c] = status.latency
            self.bandwidth[c] = status.bandwidth
        if status.up_cpus >= 0:  # a cluster whose machines can fail, or which can go down, reports it
            self.up_cpus[c] = status.up_cpus
            if status.down != self.down[c]:
                self.down[c] = status.down
                self._up = ~self.down
                self.any_down = bool(self.down.any())
        flying = self.in_flight[c]
        if flying:
            for ids in (status.arrived, status.rejected):
                for job_id in ids:
                    work = flying.pop(job_id, None)
                    if work is not None:
                        self.in_flight_work[c] -= work
            if not flying:
                self.in_flight_work[c] = 0.0  # no rounding residue
        self._queued[c] = status.queued + len(flying)


def _idle_speed(cluster, job: Job) -> float:
    """MIPS per CPU of the machines a first fit would give ``job`` on ``cluster`` when idle (0: none)."""
    if cluster.refusal(job) is not None:
        return 0.0
    able = [m for m in cluster.machines if m.can_run(job.licenses)]
    if job.placement == SINGLE:
        return next(m.mips for m in able if m.cpus >= job.cpus)
    speeds, cpus = [], 0
    for m in able:
        speeds.append(m.mips)
        cpus += m.cpus
        if cpus >= job.cpus:
            break
    return min(speeds)


_ARRAYS = (
    "cpus",
    "bandwidth",
    "latency",
    "reported_queued",
    "running",
    "free_cpus",
    "queued_work",
    "queued_cpu_work",
    "running_work",
    "draining_cpus",
    "report_time",
    "in_flight_work",
    "up_cpus",
    "down",
)
"""The :class:`MetaState` arrays a :class:`MetaView` offers, read-only."""


class MetaView:
    """What a meta policy may read of a :class:`MetaState` (see its docstring for every field):
    the arrays (``queued`` too) as read-only views, ``in_flight`` as mapping proxies, ``now`` and
    ``any_down`` as they stand, and the state's questions (``speed``, ``possible``, ``eligible``,
    ``eligible_everywhere``, ``idle``). Nothing here changes the state."""

    def __init__(self, state: MetaState) -> None:
        self._state = state
        self.platform = state.platform
        self.rng = state.rng
        self.cluster_index = MappingProxyType(state.cluster_index)
        for name in _ARRAYS:
            setattr(self, name, read_only(getattr(state, name)))
        self.queued = state.queued  # (a view, which unpickles as a copy: __reduce__ makes a new one)
        self.in_flight = tuple(MappingProxyType(flying) for flying in state.in_flight)
        self.speed = state.speed
        self.possible = state.possible
        self.eligible = state.eligible
        self.eligible_everywhere = state.eligible_everywhere
        self.idle = state.idle

    @property
    def now(self) -> float:
        return self._state.now

    @property
    def any_down(self) -> bool:
        return self._state.any_down

    def __reduce__(self):
        return MetaView, (self._state,)
