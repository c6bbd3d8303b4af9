"""A host process for a group of partitions: the body of one Ray actor.

It wraps the in-process transport, so an actor runs its partitions exactly as
``gridemu run --backend inproc`` does; only the bytes in and out differ.
"""

from __future__ import annotations

import os
import pickle

import ray

from emulator.core.heap import collect_rarely, freeze
from emulator.data.scenario import Scenario
from emulator.engine.runner import build_partitions
from emulator.sync.coordinator import InProcess, State

from .channel import serve
from .packing import pack_results, unpack_calls


class PartitionHost:
    """Builds the partitions ``pids`` of ``scenario`` and advances them one round per call.

    >>> host = PartitionHost(scenario, [0, 1])        # doctest: +SKIP
    >>> results = host.advance(pack_calls({0: (horizon, []), 1: (horizon, [])}, budget))  # doctest: +SKIP
    """

    def __init__(self, scenario: Scenario, pids: list[int]) -> None:
        self.local = InProcess(build_partitions(scenario, pids))
        freeze()  # this process hosts one run: its partitions stay out of the collector's scans
        collect_rarely()

    def states(self) -> dict[int, State]:
        return self.local.states()

    def advance(self, data: bytes) -> bytes:
        """One round's calls (:func:`~actors.packing.pack_calls`), answered as packed results."""
        calls, budget = unpack_calls(data)
        results = self.local.advance(calls, budget)
        return pack_results(results, self.local.partition_seconds)

    def line(self, node: str, secret: bytes, driver: int) -> tuple[str, int] | None:
        """A direct line for this host's calls (:mod:`actors.channel`), if it runs on the driver's
        ``node`` and can serve one (Unix sockets exist here; the socket's path fits: a long TMPDIR
        can make it too long): the path of the socket to connect to, and this process's id. Only the
        process ``driver`` proving it knows the run's ``secret`` gets the line. The driver then calls
        no other method while a call on the line is out: one thread at a time touches the partitions."""
        if ray.get_runtime_context().get_node_id() != node:
            return None
        try:
            return serve(self.advance, secret, driver), os.getpid()
        except (OSError, AttributeError):  # (AttributeError: no socket.AF_UNIX on this platform)
            return None

    def advance_batch(self, batches: dict[int, bytes], h: int) -> bytes | None:
        """The compiled-graph form of :meth:`advance`: this host's (index ``h``) batch, if it has one."""
        data = batches.get(h)
        return None if data is None else self.advance(data)

    def policy_stats(self) -> dict[int, dict[str, float]]:
        """Scheduler cost of this host's cluster partitions (wall clock; never in the trace)."""
        return self.local.policy_stats()

    def timelines(self) -> dict[int, tuple[float, bytes]]:
        """Each partition's foreground end and event times (as the bytes of an ``array('d')``)."""
        return {pid: (end, times.tobytes()) for pid, (end, times) in self.local.timelines().items()}

    def snapshot(self) -> bytes:
        """The partitions' whole state, to rebuild this host after a crash."""
        return pickle.dumps(self.local.partitions, protocol=pickle.HIGHEST_PROTOCOL)

    def restore(self, data: bytes) -> None:
        self.local.partitions = pickle.loads(data)

    def export(self, pids: list[int]) -> bytes:
        """Partitions ``pids``, pickled and dropped from this host: they move to another (rebalancing).

        >>> host.adopt(other.export([3, 5]))             # doctest: +SKIP
        """
        leaving = {pid: self.local.partitions.pop(pid) for pid in pids}
        return pickle.dumps(leaving, protocol=pickle.HIGHEST_PROTOCOL)

    def adopt(self, data: bytes) -> None:
        """Host the partitions another host exported, from the state they had there."""
        self.local.partitions.update(pickle.loads(data))

    def pid(self) -> int:
        """The OS process id (tests kill hosts to check recovery)."""
        return os.getpid()
