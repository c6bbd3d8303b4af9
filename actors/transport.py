"""The Ray transport: partitions grouped into actors, driven by the coordinator like any transport.

The coordinator (:func:`emulator.sync.coordinator.run`) is the in-process
one: :class:`RayTransport` only answers it, in each of the drive modes it
declares (:class:`~emulator.sync.coordinator.Overlapping` barrier rounds,
:class:`~emulator.sync.coordinator.Queueing` free runs and pipelined rounds),
by composing parts with one job each:

- :class:`~actors.fleet.Fleet`: the actors, which partitions each hosts, and
  how a call reaches them (direct lines, plain Ray calls, a compiled graph);
- :class:`~actors.driver_host.DriverHost`: the partitions the driver runs
  itself (the meta partition);
- :class:`~actors.rounds.BarrierRounds`: a round's calls sent and gathered;
- :class:`~actors.queued.QueuedCalls`: calls queued on the actors, each
  answered on its own;
- :class:`~actors.recovery.Recovery`: snapshots, logged calls, and dead
  actors rebuilt so that the trace is as if they had not died;
- :class:`~actors.rebalancing.Rebalancer`: the measured loads, and
  partitions migrated between actors.

Rounds are pipelined (:meth:`emulator.sync.coordinator._Drive.pipelined`)
once they carry enough work: :attr:`RayTransport.pipelined`.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import ray

from emulator.core.messages import META
from emulator.data.scenario import Scenario
from emulator.engine.runner import REBALANCE_EVERY, build_partitions
from emulator.sync.coordinator import Calls, Overlapping, Queueing, Results, State

from .driver_host import DriverHost
from .fleet import Fleet
from .grouping import group_partitions, static_weights
from .host import PartitionHost
from .packing import Reply
from .queued import QueuedCalls
from .rebalancing import REBALANCE_FLOOR, REBALANCE_GAIN, REBALANCE_MEMORY, Rebalancer
from .recovery import HostDied, Recovery
from .rounds import BarrierRounds
from .session import ray_session

PIPELINE_FROM = 2e-3
"""Rounds are pipelined (:meth:`emulator.sync.coordinator._Drive.pipelined`) once a round's compute (its
slowest host's, a moving mean) reaches this many seconds. Pipelining halves each call's window and
triples the driver's turns, which pays only where windows hold work (docs/performance.md, its history)."""

PIPELINE_FROM_PLAIN = 20e-3
"""The same over plain Ray calls (an actor on another node; ``--ray-calls plain``), ten times as costly
as a direct line's."""

PIPELINE_WEIGHT = 0.1
"""The last round's weight in that moving mean."""


class RayTransport(Overlapping, Queueing):
    """Partitions of ``scenario`` hosted by Ray actors, ``groups[i]`` in actor ``i`` (until rebalanced).

    ``groups``: non-empty lists covering the pids ``0..n-1`` but those ``in_driver`` (run by a
    :class:`~actors.driver_host.DriverHost` in this process). ``host`` is the
    actors' class, built as ``host(scenario, pids)`` (benchmarks host synthetic
    partitions). ``direct``: calls over direct lines to the actors on the driver's
    node (:mod:`actors.channel`), plain Ray calls to the others. ``compiled``:
    rounds through a compiled graph (``plain_reason`` says why not, when one was
    wanted and could not be built); free runs then take plain Ray calls, and
    rounds are never pipelined (``pipeline_from``: see :attr:`pipelined`).
    ``checkpoint_every``: rounds (or an actor's calls) between snapshots (0: none, and a dead actor
    ends the run). ``rebalance_every``: rounds between rebalancing checks (0: never), which
    migrate partitions when the slowest actor gains more than ``rebalance_gain``
    (a share) and ``rebalance_floor`` (seconds); ``migrations`` counts the
    partitions moved.

    >>> transport = RayTransport(scenario, [[0], [1, 2, 3]], rebalance_every=100)  # doctest: +SKIP
    >>> coordinator.run(transport, Links.of_platform(scenario.platform), sink)     # doctest: +SKIP
    >>> transport.groups, transport.migrations                                      # doctest: +SKIP
    ([[0, 3], [1, 2]], 1)
    """

    def __init__(
        self,
        scenario: Scenario,
        groups: list[list[int]],
        checkpoint_every: int = 1000,
        host: type = PartitionHost,
        compiled: bool = False,
        rebalance_every: int = REBALANCE_EVERY,
        rebalance_gain: float = REBALANCE_GAIN,
        rebalance_floor: float = REBALANCE_FLOOR,
        in_driver: Sequence[int] = (),
        direct: bool = True,
        pipeline_from: float | None = None,
    ) -> None:
        self.fleet = Fleet(scenario, groups, host)  # (the actors build their partitions meanwhile)
        self.driver = DriverHost(build_partitions(scenario, in_driver) if in_driver else [])
        self.fleet.connect(compiled, direct)
        self.recovery = Recovery(self.fleet, checkpoint_every)
        pids = len(self.fleet.owner) + len(in_driver)
        self.balance = Rebalancer(
            self.fleet, self.recovery, pids, rebalance_every, rebalance_gain, rebalance_floor
        )
        self.barrier = BarrierRounds(self.fleet, self.recovery, self.balance, self.driver)
        self.queue = QueuedCalls(self.fleet, self.recovery, self.balance, self.driver)
        self.compute_seconds = 0.0  # the last round's or call's (the slowest actor's, in a round)
        self.partition_seconds: dict[int, float] = {}  # the last round's (or call's), by pid
        if pipeline_from is None:
            pipeline_from = PIPELINE_FROM if self.fleet.kind == "direct" else PIPELINE_FROM_PLAIN
        self.pipeline_from = pipeline_from if self.fleet.graph is None else math.inf
        self._round_load = 0.0  # moving mean of a round's compute (PIPELINE_WEIGHT)

    @property
    def groups(self) -> list[list[int]]:
        """The pids each actor hosts, by actor index."""
        return self.fleet.groups

    @property
    def migrations(self) -> int:
        """Partitions moved by rebalancing so far."""
        return self.balance.migrations

    @property
    def computing(self) -> bool:
        """Whether actors compute the round :meth:`start` sent (else the driver ran all of it)."""
        return self.barrier.computing

    @property
    def pipelined(self) -> bool:
        """Whether rounds should now be pipelined: their compute reached ``pipeline_from`` seconds (0:
        from the start; inf: never; a compiled graph's rounds never are)."""
        return self._round_load >= self.pipeline_from

    @property
    def compiled(self) -> bool:
        """Rounds go through a compiled graph (else one call per actor with work)."""
        return self.fleet.graph is not None

    @property
    def calls(self) -> str:
        """How rounds reach the actors: :attr:`actors.fleet.Fleet.kind`."""
        return self.fleet.kind

    @property
    def plain_reason(self) -> str:
        """Why rounds take plain calls though a compiled graph was asked for ("" if it was built)."""
        return self.fleet.plain_reason

    def states(self) -> dict[int, State]:
        states = self.driver.states()
        for part in self.fleet.gather("states"):
            states.update({pid: State(*state) for pid, state in part.items()})
        return states

    def advance(self, calls: Calls, budget: int) -> Results:
        self.start(calls, budget)
        return self.finish()

    def start(self, calls: Calls, budget: int) -> None:
        """Send a round's calls (:meth:`actors.rounds.BarrierRounds.start`); :meth:`finish` gathers."""
        self.barrier.start(calls, budget)

    def finish(self) -> Results:
        """The results of the round :meth:`start` sent (a dead actor is rebuilt and answers it)."""
        answer = self._took(self.barrier.finish())
        self._round_load += PIPELINE_WEIGHT * (answer.compute - self._round_load)
        return answer.results

    def idle(self, queue: bool = True, rebalance: bool = False) -> set[int]:
        return self.queue.idle(queue, rebalance)

    def in_flight(self) -> bool:
        return self.queue.in_flight()

    def submit(self, calls: Calls, budget: int) -> None:
        """Queue one call on each actor owning partitions in ``calls`` (:mod:`actors.queued`)."""
        self.queue.submit(calls, budget)

    def collect(self) -> Results:
        """The results of the first queued call to answer."""
        return self._took(self.queue.collect()).results

    def _took(self, answer: Reply) -> Reply:
        self.compute_seconds, self.partition_seconds = answer.compute, answer.seconds
        return answer

    def policy_stats(self) -> dict[int, dict[str, float]]:
        """Scheduler cost of every cluster partition, gathered from the hosts."""
        stats = self.driver.policy_stats()
        for part in self.fleet.gather("policy_stats"):
            stats.update(part)
        return stats

    def timelines(self) -> dict[int, tuple[float, array]]:
        """Every partition's foreground end and event times, gathered from the hosts (the run's tail)."""
        timelines = self.driver.timelines()
        for part in self.fleet.gather("timelines"):
            timelines.update({pid: (end, array("d", data)) for pid, (end, data) in part.items()})
        return timelines

    def close(self) -> None:
        self.fleet.close()


@dataclass
class RayBackend:
    """A backend for :func:`emulator.engine.runner.run`: partitions in Ray actors (``hosts`` of them).

    ``hosts`` defaults to one per CPU of the Ray cluster, never more than there
    are partitions; partitions start in LPT groups over :func:`static_weights`.
    ``compiled``: barrier rounds through a Ray Compiled Graph (else one call
    per actor). ``meta_in_driver``: the meta partition runs in the driver, not
    in an actor. ``direct``: calls to the actors on the driver's node over
    direct lines (:mod:`actors.channel`), not plain Ray calls. ``pipeline_from``:
    rounds are pipelined once their compute reaches it (seconds; 0: always, inf: never;
    None: :data:`PIPELINE_FROM` over direct lines, :data:`PIPELINE_FROM_PLAIN` else).
    After a run, ``migrations`` counts the partitions that rebalancing moved, and
    ``calls`` says how rounds reached the actors (:attr:`RayTransport.calls`).

    >>> backend = ray_backend(hosts=2, rebalance_every=100)  # doctest: +SKIP
    >>> run(scenario, backend=backend); backend.migrations   # doctest: +SKIP
    3
    """

    address: str | None = None
    hosts: int | None = None
    checkpoint_every: int = 1000
    compiled: bool = False
    rebalance_every: int = REBALANCE_EVERY
    meta_in_driver: bool = True
    direct: bool = True
    pipeline_from: float | None = None
    migrations: int = field(default=0, init=False)
    calls: str = field(default="", init=False)

    @contextmanager
    def __call__(self, scenario: Scenario) -> Iterator[RayTransport]:
        with ray_session(self.address):
            wanted = self.hosts or int(ray.cluster_resources().get("CPU", 1))
            weights = static_weights(scenario)
            in_driver = [META] if self.meta_in_driver and len(weights) > 1 else []
            pids = [pid for pid in range(len(weights)) if pid not in in_driver]
            transport = RayTransport(
                scenario,
                group_partitions(weights, wanted, pids),
                self.checkpoint_every,
                compiled=self.compiled,
                rebalance_every=self.rebalance_every,
                in_driver=in_driver,
                direct=self.direct,
                pipeline_from=self.pipeline_from,
            )
            if transport.plain_reason:
                print(
                    f"gridemu: plain Ray calls (no compiled graph: {transport.plain_reason})", file=sys.stderr
                )
            try:
                yield transport
            finally:
                self.migrations, self.calls = transport.migrations, transport.calls
                transport.close()


ray_backend = RayBackend
"""The name the CLI, the API and the benchmarks open Ray backends by."""


__all__ = [
    "PIPELINE_FROM",
    "PIPELINE_FROM_PLAIN",
    "REBALANCE_FLOOR",
    "REBALANCE_GAIN",
    "REBALANCE_MEMORY",
    "HostDied",
    "RayBackend",
    "RayTransport",
    "ray_backend",
]
