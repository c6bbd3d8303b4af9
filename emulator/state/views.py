"""What a local policy sees of its cluster: read-only views of a :class:`ClusterState`.

A policy gets a :class:`ClusterView` at each scheduling event and returns
decisions; it cannot change the state it reads. The views are live (they
follow the state without copying it) and cost one indirection per read:
mappings are :class:`types.MappingProxyType`, arrays are read-only numpy
views, and the resources offer every read of
:class:`~emulator.core.resources.Resources` but none of its allocations. Built from
a state alone, so a policy can be tested on a hand-built state:

>>> from emulator.state.cluster_state import ClusterState
>>> from emulator.core.model import Cluster, Job, Link, Machine
>>> from emulator.core.resources import Resources
>>> cluster = Cluster("c", (Machine(4, 100.0),), Link(1.0))
>>> state = ClusterState(cluster, Resources(cluster))
>>> state.enqueue(Job(1, 0.0, 2, 10.0))
>>> view = ClusterView(state)
>>> list(view.queue), view.resources.free_cpus
([1], 4)
>>> view.queue[2] = Job(2, 0.0, 1, 1.0)
Traceback (most recent call last):
TypeError: 'mappingproxy' object does not support item assignment
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np

from ..core.queue_columns import QueueColumns
from ..core.resources import Plan, Resources

if TYPE_CHECKING:  # (only for annotations: views sit below the state they read)
    from .cluster_state import ClusterState


def read_only(array: np.ndarray) -> np.ndarray:
    view = array.view()
    view.flags.writeable = False
    return view


class ResourcesView:
    """A cluster's resources as a policy reads them: free CPUs per machine (live), license copies,
    machine speeds and suitability, and the placement helpers' questions; no allocation.

    ``reservation_memo`` is :func:`emulator.state.placement.reserve`'s cache (its last answer and inputs):
    the one thing a policy's helpers may write here. Resources with more to read (time sharing's
    PE loads) name it in their ``READS``.
    """

    def __init__(self, resources: Resources) -> None:
        self._res = resources
        self.cluster = resources.cluster
        self.per_machine = resources.per_machine
        self.mips = read_only(resources.mips)
        self.capacity = read_only(resources.capacity)
        self.available = read_only(resources.available)
        self.free = resources.free  # (already a read-only view, kept in step)
        self.free_licenses = MappingProxyType(resources.free_licenses)
        self.eligible = resources.eligible
        self.everywhere = resources.everywhere
        self.copies = resources.copies
        self.fastest = resources.fastest
        self.speed = resources.speed
        self.license_need = resources.license_need
        self.licenses_free_for = resources.licenses_free_for
        self.first_free = resources.first_free
        self.reservation_memo: tuple | None = None

    @property
    def free_cpus(self) -> int:
        return self._res.free_cpus

    @property
    def up_cpus(self) -> int:
        """CPUs of the machines that are up (failures and outages take some away)."""
        return self._res.up_cpus

    def __getattr__(self, name: str):
        if name in type(self._res).READS:
            return getattr(self._res, name)
        raise AttributeError(f"a policy's view of the resources has no {name!r} (read-only)")

    def __reduce__(self):
        return ResourcesView, (self._res,)  # (rebuilt on unpickling: proxies do not pickle)


class ClusterView:
    """What a local policy may read of its cluster (see :class:`~emulator.state.cluster_state.ClusterState`
    for what each part holds): ``cluster`` (static), ``resources`` (:class:`ResourcesView`),
    ``queue``, ``running``, ``priority`` and ``preempted`` (read-only mappings), ``columns`` (the
    queue as numpy columns, :meth:`QueueColumns.after`), ``now`` and :meth:`estimated_ends`."""

    def __init__(self, state: ClusterState) -> None:
        self._state = state
        self.cluster = state.cluster
        self.resources = ResourcesView(state.resources)
        self.queue = MappingProxyType(state.queue)
        self.running = MappingProxyType(state.running)
        self.priority = MappingProxyType(state.priority)
        self.preempted = MappingProxyType(state.preempted)

    @property
    def now(self) -> float:
        return self._state.now

    @property
    def columns(self) -> QueueColumns:
        columns = self._state.queue_columns()
        if columns is None:
            raise _not_kept("columns")
        return columns

    def estimated_ends(self) -> list[tuple[float, Plan, tuple[str, ...]]]:
        """Running jobs as ``(estimated end, plan, licenses)``, soonest first (for reservations).

        Kept in order as jobs start and end while jobs wait
        (:meth:`~emulator.state.cluster_state.ClusterState.end_order`), not sorted at each call; a
        copy the caller may extend.
        """
        ends = self._state.end_order()
        if ends is None:
            raise _not_kept("estimated_ends")
        return list(ends.values)

    def __reduce__(self):
        return ClusterView, (self._state,)


def _not_kept(index: str) -> AttributeError:
    return AttributeError(
        f"the cluster's state keeps no {index}: its policy's indexes do not name it "
        "(emulator.policies.local_base.LocalPolicy.indexes)"
    )
