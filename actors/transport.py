"""The Ray transport: partitions grouped into actors, one parallel call per actor per round.

The coordinator (:func:`emulator.sync.coordinator.run`) is the in-process one: this
class only answers ``states()`` and ``advance(calls, budget)`` by sending
each actor its partitions' horizons and inboxes as one msgpack batch and
gathering the results. Fault tolerance: every ``checkpoint_every`` rounds each actor's
partitions are snapshotted, and the rounds since are logged; an actor that
dies is recreated from its snapshot, replays the logged rounds (partitions
are deterministic, so they produce what they produced before) and answers the
current round, so the trace is the same as an undisturbed run's.

Balance: a round waits for the slowest actor, so partitions are grouped by
LPT (:mod:`actors.grouping`), first over static weights, then every
``rebalance_every`` rounds over the compute each partition measured, the
recent windows weighing most. When the slowest actor's share would drop by more than
:data:`REBALANCE_GAIN`, the partitions that change actor migrate (the source
actor pickles and drops them, the destination adopts them), then every actor
is snapshotted afresh and the log cleared, so recovery always starts from the
current grouping. Compiled graphs address actors by index, not partitions, so
a migration leaves them valid.

The meta partition runs in the driver (:mod:`actors.driver_host`): on a
meta-scheduled grid every other round holds it alone, a function call there
instead of a Ray call. Once rounds carry enough work (:data:`PIPELINE_FROM`)
they are pipelined instead (:meth:`emulator.sync.coordinator._Drive.pipelined`):
the clusters' next windows are queued on the actors while the driver runs
the meta partition's, through the free runs' ``submit``/``collect``.

Rounds are one call per actor with work: over a direct line (a Unix socket,
:mod:`actors.channel`) to each actor on the driver's node, else a plain Ray
call; or, when asked, one execution of a Ray Compiled Graph
(:mod:`actors.compiled`). A plain call costs about a millisecond, a line a
tenth of that; a compiled graph's channels cost as little but poll, and on a
machine with as many actors as cores the polling takes CPU from the partitions
(bench_ray, case d: 16 clusters under CS 2.0 ran 1.3x faster than in-process
with plain calls and 0.7x with a compiled graph). Either way an actor that
dies is recovered the same way. A compiled round that fails rebuilds every
actor from its snapshot (the live ones may already have run the round) and
recompiles.
"""

from __future__ import annotations

import math
import sys
from array import array
from collections import deque
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import ray
from ray.exceptions import RayActorError, RayError

from emulator.core.messages import META
from emulator.data.scenario import Scenario
from emulator.engine.runner import REBALANCE_EVERY, build_partitions
from emulator.sync.coordinator import Calls, Results, State

from .calls import GONE, HostCalls
from .compiled import compile_rounds
from .driver_host import DriverHost
from .grouping import better_grouping, decayed_loads, group_partitions, owners, static_weights
from .host import PartitionHost
from .packing import pack_calls, unpack_results
from .placement import actor_share, await_started, node_cpus
from .session import ray_session
from .shipping import runtime_env


class HostDied(RuntimeError):
    """An actor died and could not be recovered: names its partitions and the virtual time."""


PIPELINE = 3
"""Calls a host may have queued in a free run: while the driver writes one host's rows, the other
hosts' next calls are already waiting on them (with one, each host idled for the driver's turn: ~0.9 s
of 2.7 s on LCG's 170 sites; three with :data:`emulator.sync.coordinator.LEAD` at 6 windows)."""

PIPELINE_FROM = 2e-3
"""Rounds are pipelined (:meth:`emulator.sync.coordinator._Drive.pipelined`) once a round's compute (its
slowest host's, a moving mean) reaches this many seconds. Pipelining halves each call's window and
triples the driver's turns, which pays only where windows hold work: bench_ray's 128 clusters at 30 s
links (rounds of ~4 ms) ran 5-10% faster pipelined, cases (b)-(d) (1-20 ms) within noise, while 1 s
links (under 0.5 ms) ran 20-50% slower. With the mean's weight at 0.3, or a threshold of 2.5 ms, the
first turned late or the 1 s links turned on a burst."""

PIPELINE_FROM_PLAIN = 20e-3
"""The same over plain Ray calls (an actor on another node; ``--ray-calls plain``), ten times as costly
as a direct line's: pipelined, case (b) ran 0.73x in-process against 0.83x in rounds, (c) 1.30x
against 1.34-1.44x."""

PIPELINE_WEIGHT = 0.1
"""The last round's weight in that moving mean."""

REBALANCE_GAIN = 0.1
"""Migrate only if the slowest actor's load would drop by more than this share: a migration costs a
pickle round trip and a snapshot of every actor."""

REBALANCE_FLOOR = 0.05
"""...and by more than this many seconds per window: on light runs the relative gain is timing
noise, and moving partitions back and forth would cost more than it saves."""

REBALANCE_MEMORY = 0.8
"""How much of a partition's load carries over from one check to the next (:func:`decayed_loads`).
One window's loads are noise: which cluster the next jobs go to, one long plan. Judged window by
window, bench_ray's case (b) migrated 22 partitions for no gain and ran 1.3x slower than with the
static grouping; judged on these loads it keeps the static grouping (already the best split), and a
lopsided grouping still moves by the third check."""


class RayTransport:
    """Partitions of ``scenario`` hosted by Ray actors, ``groups[i]`` in actor ``i`` (until rebalanced).

    ``groups``: non-empty lists covering the pids ``0..n-1`` but those ``in_driver`` (run by a
    :class:`~actors.driver_host.DriverHost` in this process). ``host`` is the
    actors' class, built as ``host(scenario, pids)`` (benchmarks host synthetic
    partitions). ``direct``: calls over direct lines to the actors on the driver's
    node (:mod:`actors.channel`), plain Ray calls to the others. ``compiled``:
    rounds through a compiled graph (``plain_reason`` says why not, when one was
    wanted and could not be built); free runs then take plain Ray calls, and
    rounds are never pipelined (``pipeline_from``: see :attr:`pipelined`).
    ``rebalance_every``: rounds between rebalancing checks (0: never), which
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
        self.groups = groups
        self.owner = owners(groups)
        self.driver = DriverHost(build_partitions(scenario, in_driver)) if in_driver else None
        self.checkpoint_every = checkpoint_every
        self.rebalance_every = rebalance_every
        self.rebalance_gain, self.rebalance_floor = rebalance_gain, rebalance_floor
        self.migrations = 0
        self.compute_seconds = 0.0
        self.partition_seconds: dict[int, float] = {}  # the last round's (or free call's), by pid
        self._pids = len(self.owner) + len(in_driver)
        self._window = [0.0] * self._pids  # compute seconds by pid since the last rebalancing check
        self._loads = [0.0] * self._pids  # by pid, decayed over the checks (REBALANCE_MEMORY)
        self._scenario = ray.put(_for_hosts(scenario))
        self._cpus = actor_share(node_cpus(), len(groups))  # (placement: all fit, on the nodes there are)
        self._actor = ray.remote(host).options(
            num_cpus=self._cpus,
            max_restarts=0,
            runtime_env=runtime_env(scenario),  # (shipping: plug-ins)
        )
        self.hosts = [self._actor.remote(self._scenario, group) for group in groups]
        await_started(self.hosts, groups, self._cpus, "for the run")  # (placement: bounded, says why)
        self._snapshots: list[bytes | None] = [None] * len(groups)
        self._log: list[list[bytes]] = [[] for _ in groups]  # by host: its calls since its snapshot
        self._flying: list[deque] = [deque() for _ in groups]  # by host: (token, call, horizon), oldest 1st
        self._rounds = 0
        self._horizon = math.inf  # the last call answered's earliest horizon (for error messages)
        self._round: tuple = ({}, math.inf, {}, ({}, {}))  # start's: packed, horizon, tokens, the driver's
        self.states()  # every host has built its partitions: start-up, as in one process, not the run's
        self._graph, self.plain_reason = compile_rounds(self.hosts) if compiled else (None, "")
        self._calls = HostCalls.open(self.hosts, direct and not compiled)
        if pipeline_from is None:
            pipeline_from = PIPELINE_FROM if self._calls.kind == "direct" else PIPELINE_FROM_PLAIN
        self.pipeline_from = pipeline_from if self._graph is None else math.inf
        self._round_load = 0.0  # moving mean of a round's compute (PIPELINE_WEIGHT)
        self._answered = 0  # calls answered since the last rebalancing check (pipelined rounds)

    @property
    def computing(self) -> bool:
        """Whether actors compute the round :meth:`start` sent (else the driver ran all of it)."""
        return bool(self._round[0])

    @property
    def pipelined(self) -> bool:
        """Whether rounds should now be pipelined: their compute reached ``pipeline_from`` seconds (0:
        from the start; inf: never; a compiled graph's rounds never are)."""
        return self._round_load >= self.pipeline_from

    @property
    def compiled(self) -> bool:
        """Rounds go through a compiled graph (else one call per actor with work)."""
        return self._graph is not None

    @property
    def calls(self) -> str:
        """How rounds reach the actors: ``direct`` lines, ``plain`` Ray calls (or both, on a multi-node
        cluster: :attr:`actors.calls.HostCalls.kind`), or a ``compiled`` graph."""
        return "compiled" if self.compiled else self._calls.kind

    def states(self) -> dict[int, State]:
        states: dict[int, State] = self.driver.states() if self.driver else {}
        for part in ray.get([host.states.remote() for host in self.hosts]):
            states.update({pid: State(*state) for pid, state in part.items()})
        return states

    def advance(self, calls: Calls, budget: int) -> Results:
        self.start(calls, budget)
        return self.finish()

    def start(self, calls: Calls, budget: int) -> None:
        """Send a round's calls, one batch per host (plain calls: the hosts start at once, while the
        driver writes the last round's rows); :meth:`finish` gathers the results."""
        here, there = self._split(calls)
        packed = self._packed(there, budget)
        horizon = min(h for h, _ in calls.values())  # for error messages: the round's earliest horizon
        tokens = self._send(packed) if self._graph is None else {}
        self._round = (packed, horizon, tokens, self.driver.run(here, budget) if here else ({}, {}))

    def finish(self) -> Results:
        """The results of the round :meth:`start` sent (a dead host is rebuilt and answers it)."""
        packed, horizon, tokens, (results, seconds) = self._round
        if not packed:  # the driver's partitions alone
            replies = iter(())
        elif self._graph is None:
            replies = self._answers(packed, horizon, tokens)
        else:
            replies = iter(self._compiled(packed, horizon).items())
        self.compute_seconds = sum(seconds.values())
        self.partition_seconds = dict(seconds)
        parts = {}
        for h, data in replies:  # each unpacked as it arrives, while the slower hosts compute
            seconds, parts[h] = unpack_results(data)
            self.partition_seconds.update(seconds)
            self.compute_seconds = max(self.compute_seconds, sum(seconds.values()))
            self._weigh(seconds)
        for h in sorted(parts):  # (results in host order, whichever answered first)
            results.update(parts[h])
        self._round_load += PIPELINE_WEIGHT * (self.compute_seconds - self._round_load)
        self._after_round(packed, horizon)
        return results

    def policy_stats(self) -> dict[int, dict[str, float]]:
        """Scheduler cost of every cluster partition, gathered from the hosts."""
        stats: dict[int, dict[str, float]] = self.driver.policy_stats() if self.driver else {}
        for part in ray.get([host.policy_stats.remote() for host in self.hosts]):
            stats.update(part)
        return stats

    def timelines(self) -> dict[int, tuple[float, array]]:
        """Every partition's foreground end and event times, gathered from the hosts (the run's tail)."""
        timelines: dict[int, tuple[float, array]] = self.driver.timelines() if self.driver else {}
        for part in ray.get([host.timelines.remote() for host in self.hosts]):
            timelines.update({pid: (end, array("d", data)) for pid, (end, data) in part.items()})
        return timelines

    def _split(self, calls: Calls) -> tuple[Calls, Calls]:
        """``calls`` for the driver's partitions, and for the actors'."""
        if self.driver is None:
            return {}, calls
        here = self.driver.pids
        return (
            {pid: call for pid, call in calls.items() if pid in here},
            {pid: call for pid, call in calls.items() if pid not in here},
        )

    def _packed(self, calls: Calls, budget: int) -> dict[int, bytes]:
        """``calls`` grouped by the host owning each partition, one packed batch per host."""
        batches: dict[int, Calls] = {}
        for pid, call in calls.items():
            batches.setdefault(self.owner[pid], {})[pid] = call
        return {h: pack_calls(batch, budget) for h, batch in batches.items()}

    def _send(self, calls: dict[int, bytes]) -> dict:
        """One call per host in ``calls`` (a direct line's or Ray's): its token, by host."""
        return {h: self._calls.send(h, data) for h, data in calls.items()}

    def _answers(self, calls: dict[int, bytes], horizon: float, tokens: dict) -> Iterator[tuple[int, bytes]]:
        """``(host, reply)`` to one call per host with work (``tokens``, by host), the first to answer
        first; a dead host is rebuilt and answers the round."""
        waiting = dict(tokens)
        while waiting:
            h = self._calls.first(waiting)
            token = waiting.pop(h)
            try:
                reply = self._calls.answer(h, token)
            except GONE as err:
                reply = self._recover(h, calls[h], horizon, err)
            yield h, reply

    def _compiled(self, calls: dict[int, bytes], horizon: float) -> dict[int, bytes]:
        """One compiled-graph execution; if it fails, every host is rebuilt and the round run again."""
        try:
            return self._graph.call(calls)
        except RayError as err:
            self._restart(horizon, err)
            try:
                if self._graph:
                    return self._graph.call(calls)
                return dict(self._answers(calls, horizon, self._send(calls)))
            except RayError as again:  # (compiled rounds take no lines)
                raise HostDied(
                    f"Ray actors died again while recovering, {_when(horizon)}: {_cause(again)}"
                ) from again

    def _after_round(self, calls: dict[int, bytes], horizon: float) -> None:
        """Log the round; snapshot every host and forget the logs every ``checkpoint_every`` rounds and
        after a migration (a host's logged calls replay only under the grouping they were made for)."""
        self._rounds += 1
        if self.checkpoint_every:
            for h, call in calls.items():
                self._log[h].append(call)
        due = self.rebalance_every and self._rounds % self.rebalance_every == 0
        migrated = due and self._rebalance(horizon)
        if self.checkpoint_every and not migrated and self._rounds % self.checkpoint_every == 0:
            self._checkpoint_all()

    # -- free runs: no partition can reach another, so no host waits for another (coordinator._free_run)

    def idle(self, queue: bool = True, rebalance: bool = False) -> set[int]:
        """The partitions of the hosts that may take another call: none in flight, or (``queue``) fewer
        than :data:`PIPELINE` and no snapshot due (it must follow the calls logged before it, no other).

        ``rebalance`` (pipelined rounds): once ``rebalance_every`` calls have been answered since the
        last check, no host gets another until every one has answered; then the check runs (a
        partition migrates with no call out)."""
        draining = False
        if rebalance and self.rebalance_every and self._answered >= self.rebalance_every:
            draining = any(self._flying)
            if not draining:
                self._answered = 0
                self._rebalance(self._horizon)
        hosts = () if draining else range(len(self.groups))
        idle = {pid for h in hosts if self._open(h, queue) for pid in self.groups[h]}
        return idle | self.driver.pids if self.driver else idle

    def _open(self, h: int, queue: bool) -> bool:
        flying = len(self._flying[h])
        due = self.checkpoint_every and len(self._log[h]) + flying >= self.checkpoint_every
        return flying == 0 or (queue and flying < PIPELINE and not due)

    def in_flight(self) -> bool:
        return any(self._flying) or bool(self.driver and self.driver.done)

    def submit(self, calls: Calls, budget: int) -> None:
        """Queue one call on each host owning partitions in ``calls`` (each :meth:`idle`); :meth:`collect`
        answers. A host runs its calls in order, so the next one waits on it, not on the driver; the
        driver's partitions run at once, their results collected first."""
        here, there = self._split(calls)
        horizon = min((h for h, _ in there.values()), default=math.inf)  # (for error messages)
        for h, packed in self._packed(there, budget).items():
            self._flying[h].append((self._calls.send(h, packed), packed, horizon))
        if here:  # (after the hosts' calls are out: they compute meanwhile)
            self.driver.submit(here, budget)

    def collect(self) -> Results:
        """The results of a host's oldest call, the first to answer (a dead host is rebuilt, answers, and
        is given its other calls again), logged for recovery; a host snapshots itself every
        ``checkpoint_every`` of its calls."""
        if self.driver and self.driver.done:
            results, seconds = self.driver.done.popleft()
            self.compute_seconds, self.partition_seconds = sum(seconds.values()), seconds
            return results
        h = self._calls.first({h: queue[0][0] for h, queue in enumerate(self._flying) if queue})
        token, packed, self._horizon = self._flying[h].popleft()
        try:
            data = self._calls.answer(h, token)
        except GONE as err:
            data = self._recover(h, packed, self._horizon, err)
            self._flying[h] = deque((self._calls.send(h, call), call, at) for _, call, at in self._flying[h])
        if self.checkpoint_every:
            self._log[h].append(packed)
            if len(self._log[h]) >= self.checkpoint_every and not self._flying[h]:
                self._checkpoint(h)
        seconds, results = unpack_results(data)
        self.compute_seconds = sum(seconds.values())
        self.partition_seconds = seconds
        self._answered += 1
        self._weigh(seconds)
        return results

    def _weigh(self, seconds: dict[int, float]) -> None:
        """Each partition's compute in a reply, into the loads the next rebalancing check weighs."""
        if self.rebalance_every:
            for pid, spent in seconds.items():
                self._window[pid] += spent

    def _checkpoint_all(self) -> None:
        for h in range(len(self.hosts)):
            self._checkpoint(h)

    def _checkpoint(self, h: int) -> None:
        """Snapshot host ``h`` and forget its logged calls; a host that died after answering is first
        rebuilt (its last snapshot and logged calls, the one just answered included)."""
        try:
            self._snapshots[h] = ray.get(self.hosts[h].snapshot.remote())
        except RayActorError:
            self._rebuild(h)
            self._snapshots[h] = ray.get(self.hosts[h].snapshot.remote())
        self._log[h] = []

    def _rebalance(self, horizon: float) -> bool:
        """Regroup by LPT on the loads measured so far; migrate if the slowest host gains.

        Which actor runs a partition depends on measured wall clock; what the
        partition computes does not, so the trace is the same whatever moves.
        Returns whether partitions moved.
        """
        self._loads = decayed_loads(self._loads, self._window, REBALANCE_MEMORY)
        self._window = [0.0] * self._pids
        proposed = better_grouping(self._loads, self.groups, self.rebalance_gain, self.rebalance_floor)
        return proposed is not None and self._migrate(proposed, horizon)

    def _migrate(self, groups: list[list[int]], horizon: float) -> bool:
        """Move the partitions whose host changes: the source exports them, the destination adopts them;
        then every host is snapshotted (logged calls replay only under the grouping they were made for).

        The pickled partitions go from actor to actor through the object store,
        not the driver. If an actor dies meanwhile, the others may be half-moved:
        every actor is rebuilt under the old grouping (as after a failed compiled
        round) and the move is dropped. Returns whether partitions moved.
        """
        moves: dict[tuple[int, int], list[int]] = {}
        for dst, group in enumerate(groups):
            for pid in group:
                if self.owner[pid] != dst:
                    moves.setdefault((self.owner[pid], dst), []).append(pid)
        try:
            ray.get(
                [
                    self.hosts[dst].adopt.remote(self.hosts[src].export.remote(pids))
                    for (src, dst), pids in moves.items()
                ]
            )
        except RayActorError as err:
            self._restart(horizon, err)
            return False
        self.groups, self.owner = groups, owners(groups)
        self.migrations += sum(len(pids) for pids in moves.values())
        if self.checkpoint_every:
            self._checkpoint_all()
        return True

    def _recover(self, h: int, call: bytes, horizon: float, err: Exception) -> bytes:
        self._check_recoverable([h], horizon, err)
        self._rebuild(h)
        try:
            return ray.get(self.hosts[h].advance.remote(call))
        except RayActorError as again:
            raise HostDied(
                f"Ray actor hosting partition(s) {self.groups[h]} died again while recovering, "
                f"{_when(horizon)}: {_cause(again)}"
            ) from again

    def _check_recoverable(self, dead: list[int], horizon: float, err: Exception) -> None:
        if not self.checkpoint_every:
            pids = sorted(pid for h in dead for pid in self.groups[h])
            raise HostDied(
                f"Ray actor hosting partition(s) {pids} died in the round {_when(horizon)} "
                f"(checkpoints are off, so the run cannot recover): {_cause(err)}"
            ) from err

    def _restart(self, horizon: float, err: Exception) -> None:
        """Every host rebuilt, and the graph recompiled: after a failure that may have left live hosts
        in an unknown state (a failed compiled round, a failed migration)."""
        compiled = self._graph is not None
        if compiled:
            self._graph.close()
        dead = [h for h, host in enumerate(self.hosts) if not _alive(host)]
        self._check_recoverable(dead, horizon, err)
        for h, host in enumerate(self.hosts):
            if h not in dead:
                ray.kill(host)
            self._rebuild(h)
        if compiled:
            self._graph, self.plain_reason = compile_rounds(self.hosts)

    def _rebuild(self, h: int) -> None:
        """A new actor for host ``h``'s current group at its last snapshot, the logged rounds replayed
        (the old one is killed first: a line that broke may have left it alive)."""
        ray.kill(self.hosts[h])
        host = self._actor.remote(self._scenario, self.groups[h])
        await_started([host], [self.groups[h]], self._cpus, "to replace one that died", len(self.hosts) - 1)
        if self._snapshots[h] is not None:
            ray.get(host.restore.remote(self._snapshots[h]))
        for call in self._log[h]:
            ray.get(host.advance.remote(call))
        self.hosts[h] = host
        self._calls.replace(h, host)

    def close(self) -> None:
        if self._graph is not None:
            self._graph.close()
        self._calls.close()
        for host in self.hosts:
            ray.kill(host)


def _for_hosts(scenario: Scenario) -> Scenario:
    """What the actors build their partitions from: the scenario without the tables only the driver's
    writer reads (``jobs.arrow``'s input and trace columns; tens of MB on LCG-2005-1). Benchmarks
    pass their own scenario-like objects, as they are."""
    return replace(scenario, extra=None, inputs=None) if isinstance(scenario, Scenario) else scenario


def _cause(err: Exception) -> str:
    """Ray's error in one line: its first (the rest is Ray's own diagnosis, for --debug's traceback)."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def _when(horizon: float) -> str:
    """Where in virtual time a failed call was: before its horizon, or running free (no horizon)."""
    return "running free (no horizon)" if horizon == math.inf else f"before virtual time {horizon:g}"


def _alive(host) -> bool:
    try:
        ray.get(host.pid.remote())
    except RayActorError:
        return False
    return True


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
    "REBALANCE_FLOOR",
    "REBALANCE_GAIN",
    "REBALANCE_MEMORY",
    "HostDied",
    "RayBackend",
    "RayTransport",
    "ray_backend",
]
