"""The sequential executor: every partition in this process, one call at a time, no rounds.

In one process the coordinator's rounds cost about as much as the partitions'
own work (LCG-2005-1 meta-scheduled over 170 sites: 266,605 rounds of ~0.05 ms
of partition work each, and as much again in horizons, calls, the standing's
arrays and a sink call per round). Nothing runs beside the driver, so nothing
needs a barrier: this executor calls one partition at a time, earliest first,
and lets each run as far as it safely can.

Order: the clusters wait in a heap keyed by ``(earliest, pid)`` (their next
event or first pending message); the meta partition, the hub of the links'
star, stands beside it. Each step takes the earliest partition and advances
it to its *horizon*: the earliest time a message not yet sent could reach
it, bounded as the coordinator bounds it (:mod:`emulator.sync.horizons`) but
from what is at hand. A cluster hears only from the hub: its horizon is the
hub's earliest output time (its promise; if it reacts, also its first
pending message and the clusters' reports) plus its link. The hub hears
from every cluster, none of which can send before it stands nor, if
clusters react, before the hub's own output has reached one and come back:
its horizon is the earliest cluster plus the shortest link back, or the
hub's output time plus the shortest round trip. Where clusters report after
every event (their promise is their next event) over links of one latency
this is the coordinator's horizon; otherwise it may be earlier, which only
shortens calls.

The hub's turn: a hub that does not react reads status reports that cannot
make it send, so it is called only once the clusters wait for it (they stand
at its promise plus the shortest link out): one call then reads what came
meanwhile, as a round's call did (:meth:`_Sequential._hub_key`).

Messages wait by receiver in heaps keyed ``(time, source, sequence)``, and a
call delivers those due before its horizon in that order, as the coordinator
does. A horizon bounds every message not yet sent, so a partition holds
every message due before a time when it processes that time, and its
arrivals at equal times are pushed in the coordinator's order.

Rows come out of calls a window at a time, partitions ahead of one another;
they gather by partition and reach the sink every :data:`BATCH_ROWS` rows or
:data:`BATCH_SECONDS`, and when a run stops, with a watermark (no partition
stands earlier than the last one called, save the hub, which counts: links
take time), so the writer's per-call costs are paid per batch. Memory: a
cluster is called only when it is the earliest, for at most its share of the
event budget (:func:`~emulator.sync.coordinator.share` over every partition),
so the rows held are at most one call's per partition, and those of the
clusters a waiting hub lets run ahead, unless the sink holds more than
:data:`~emulator.sync.coordinator.HELD_ROWS`. The hub takes the whole budget,
as it does in the rounds that hold it alone: a share stopped it short of its
horizon on a grid with long links, so that it stood behind where the
clusters' reports could let it, and their horizons (its promise plus a link)
with it: each cluster was then called twice as often as in rounds.

Termination is the coordinator's (:func:`emulator.sync.coordinator.run`): steps
go on while a partition is busy or a message carrying a job is pending; with a
``tail``, the partitions that lag are then driven to the tail's limit and
``stats.end_time`` says where rows stop. In :class:`RunStats` a *round* is one
step, one partition call (``rounds == calls``); ``compute_seconds`` is the
time inside the partitions, ``barrier_seconds`` the executor's own (heaps,
messages and the sink).
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable

from ..core.messages import META, STATUS
from . import coordinator
from .coordinator import InProcess, RunStats, Sink, _throttled, share
from .frontier import Stalled
from .horizons import Links, tail_end

INF = math.inf

BATCH_ROWS = 8192
"""Rows gathered before they go to the sink: the writer's per-call costs (its merge, its cuts) are paid
once per batch, not once per step."""

BATCH_SECONDS = 0.25
"""Wall seconds after which the rows gathered go to the sink however few: the writer flushes by its
clock between sink calls (a slow policy's rows still reach the disk every few seconds), and the
progress display moves. Not much less: a batch costs the writer a cut per partition (1,000 of them
on ``bench.py``'s grid1000)."""


class InRounds(InProcess):
    """The in-process transport driven in the coordinator's rounds, not by this executor
    (:func:`driver`): the rounds' trace, to compare with."""


def driver(transport) -> Callable[..., RunStats]:
    """What drives ``transport``: this executor if it is the plain in-process transport; otherwise the
    coordinator's rounds (Ray's actors, hosts that run beside the driver, :class:`InRounds`)."""
    return run if type(transport) is InProcess else coordinator.run


def run(
    transport: InProcess,
    links: Links,
    sink: Sink,
    stats: RunStats | None = None,
    tick: Callable[[], None] | None = None,
    budget: int | None = None,
    tail: bool = False,
) -> RunStats:
    """Drive ``transport``'s partitions as :func:`emulator.sync.coordinator.run` does, to the same trace
    (module docstring); ``sink`` gets the rows in batches. ``links`` must form a star around the meta
    partition (``Links.of_platform``)."""
    stats = RunStats() if stats is None else stats
    lookahead = min((lat for into in links.into.values() for _, lat in into), default=INF)
    budget = budget or coordinator.EVENT_BUDGET
    grid = _Sequential(transport.partitions, links, sink, stats, _throttled(tick), budget)
    started = time.perf_counter()
    try:
        grid.steps(foreground=True)
        if tail:
            last = max((p.timeline.end for p in grid.parts), default=-INF)
            grid.steps(foreground=False, until=last + lookahead, written=last)
            stats.end_time = tail_end([p.timeline.times for p in grid.parts], last, lookahead)
    except BaseException:
        grid.settle()
        raise
    grid.flush()
    stats.calls = stats.rounds
    stats.compute_seconds += sum(grid.seconds)
    stats.barrier_seconds += time.perf_counter() - started - sum(grid.seconds)
    stats.partition_seconds = dict(enumerate(grid.seconds))
    return stats


class _Sequential:
    """One run's partitions (index = pid, 0 the hub), their standing, pending messages and gathered rows."""

    def __init__(self, partitions: dict, links: Links, sink: Sink, stats: RunStats, tick, budget: int):
        if sorted(partitions) != list(range(len(partitions))):
            raise ValueError(f"partitions must be numbered 0..n-1, got {sorted(partitions)}")
        self.parts = parts = [partitions[pid] for pid in range(len(partitions))]
        self.sink, self.stats, self.tick = sink, stats, tick
        self.budgets = [budget] + [share(budget, len(parts))] * (len(parts) - 1)  # (the hub: whole)
        self.from_hub, to_hub = _spokes(links, len(parts))
        self.to_hub = min(to_hub, default=INF)  # the shortest link back
        self.wait = min(self.from_hub, default=INF)  # the shortest link from the hub
        self.round_trip = min((a + b for a, b in zip(self.from_hub, to_hub, strict=True)), default=INF)
        self.promise = [p.promise for p in parts]
        self.reacts = [p.reacts for p in parts]
        self.reacting = sum(self.reacts[1:])  # clusters that react
        self.is_busy = [p.busy for p in parts]
        self.busy = sum(self.is_busy)  # partitions with foreground work
        self.carrying = 0  # pending messages other than status reports
        self.pending: list[list] = [[] for _ in parts]  # by receiver: heaps of messages
        self.earliest = [p.next_time for p in parts]
        self.queued = [t < INF for t in self.earliest]  # whether its entry in ``heap`` is live
        self.heap = [(t, i) for i, t in enumerate(self.earliest) if i and t < INF]  # the clusters
        heapq.heapify(self.heap)
        self.rows: dict[int, list] = {}  # gathered, by partition
        self.gathered = 0
        self.at = -INF  # where the last partition called stood (none stands earlier)
        self.written = INF  # no watermark past it
        self.due = time.perf_counter() + BATCH_SECONDS  # when the rows gathered go to the sink anyway
        self.sinking = False  # inside the sink
        self.held = 0  # rows the sink holds
        self.seconds = [0.0] * len(parts)  # compute, by partition

    def steps(self, foreground: bool, until: float = INF, written: float = INF) -> None:
        """Advance the earliest partition while it stands before ``until`` (no horizon past it) and,
        if ``foreground``, some partition is busy or a message carrying a job pending; no watermark
        past ``written``."""
        parts, pending, seconds, stats = self.parts, self.pending, self.seconds, self.stats
        budgets = self.budgets
        clock = time.perf_counter
        defer = until == INF  # (the tail drives every partition below ``until``)
        self.written = written
        while self.busy or self.carrying or not foreground:
            i, t = self._earliest(defer)
            if t >= until:
                return
            horizon = self._horizon(i, t)
            if horizon > until:
                horizon = until
            if not horizon > t:
                raise Stalled(
                    f"virtual time cannot advance past {t!r} at partition {i}: its horizon is no later "
                    "than its next event (a link latency too small for times this large?)"
                )
            queue = pending[i]
            inbox = self._deliver(i, queue, horizon) if queue and queue[0][0] < horizon else []
            started = clock()
            result = parts[i].advance(horizon, inbox, budgets[i])
            now = clock()
            seconds[i] += now - started
            stats.rounds += 1
            self._apply(i, result)
            self.at = t
            if self.gathered >= BATCH_ROWS or now > self.due:
                self.flush()

    def _earliest(self, defer: bool) -> tuple[int, float]:
        """The partition to call and its time (inf: none has anything to do); ``defer``: the hub's call
        may wait (:meth:`_hub_key`). A cluster's entry stays on top of the heap, marked stale."""
        heap, earliest, queued = self.heap, self.earliest, self.queued
        while heap and not (queued[heap[0][1]] and heap[0][0] == earliest[heap[0][1]]):
            heapq.heappop(heap)  # (stale: its partition was called since, or got an earlier message)
        top = heap[0][0] if heap else INF
        hub = earliest[META]
        if hub <= top and (not defer or self._hub_key() <= top):
            return META, hub
        t, i = heap[0]  # (left on top for the call: :meth:`_apply` replaces it with the cluster's next)
        queued[i] = False
        return i, t

    def _hub_key(self) -> float:
        """When the hub's turn comes: at its earliest; but while it does not react (the status reports
        it reads cannot make it send) only once the clusters wait for it, at its promise plus the
        shortest link out, so one call reads what the clusters reported meanwhile, as a round's call
        would (LCG-2005-1 meta-scheduled: 133k calls instead of 227k). Rows wait in the sink
        meanwhile, so not while it holds more than :data:`~emulator.sync.coordinator.HELD_ROWS`."""
        earliest = self.earliest[META]
        if self.reacts[META] or self.held > coordinator.HELD_ROWS:
            return earliest
        return max(earliest, self.promise[META] + self.wait)

    def _horizon(self, i: int, t: float) -> float:
        """Partition ``i``'s horizon (module docstring), when it stands at ``t``, the earliest of all."""
        if i and not self.reacts[META]:
            return self.promise[META] + self.from_hub[i]
        heap = self.heap
        clusters = t if i else (heap[0][0] if heap else INF)  # where the earliest cluster stands
        hub = self._hub_output(clusters)
        if i:
            return hub + self.from_hub[i]
        answers = hub + self.round_trip if self.reacting else INF
        return min(clusters + self.to_hub, answers)

    def _hub_output(self, clusters: float) -> float:
        """The earliest time the hub could send: its promise; if it reacts, its first pending message
        and a message from a cluster (none stands before ``clusters``) reaching it."""
        promise = self.promise[META]
        if not self.reacts[META]:
            return promise
        pending = self.pending[META]
        return min(promise, pending[0][0] if pending else INF, clusters + self.to_hub)

    def _deliver(self, i: int, queue: list, horizon: float) -> list:
        """The messages of ``queue`` (partition ``i``'s) due before ``horizon``, in ``(time, source,
        sequence)`` order; the first is due."""
        if len(queue) == 1:  # (the common case: handed over whole, no pop)
            msg = queue[0]
            self.carrying -= msg.kind != STATUS
            self.pending[i] = []
            return queue
        inbox = []
        while queue and queue[0][0] < horizon:
            msg = heapq.heappop(queue)
            self.carrying -= msg.kind != STATUS
            inbox.append(msg)
        return inbox

    def _apply(self, i: int, result) -> None:
        """Partition ``i``'s call: its standing, the messages it sent and its rows (gathered)."""
        outbox, next_time, rows, busy, promise, reacts = result
        if reacts != self.reacts[i]:
            self.reacts[i] = reacts
            if i:
                self.reacting += 1 if reacts else -1
        self.promise[i] = promise
        if busy != self.is_busy[i]:
            self.is_busy[i] = busy
            self.busy += 1 if busy else -1
        pending = self.pending[i]
        earliest = self.earliest[i] = min(next_time, pending[0][0]) if pending else next_time
        if i:  # its entry still tops the heap (nothing was pushed since :meth:`_earliest`): one sift
            if earliest < INF:
                heapq.heapreplace(self.heap, (earliest, i))
                self.queued[i] = True
            else:
                heapq.heappop(self.heap)
        if outbox:
            self._route(outbox)
        if rows:
            gathered = self.rows.get(i)
            if gathered is None:
                self.rows[i] = rows  # (the partition handed it over)
            else:
                gathered += rows
            self.gathered += len(rows)

    def _route(self, outbox: list) -> None:
        """Messages into their receivers' heaps; a cluster now earlier takes its new place in the heap."""
        pending, earliest, heap, queued = self.pending, self.earliest, self.heap, self.queued
        carrying = 0
        for msg in outbox:
            t, _, _, j, kind, _ = msg
            heapq.heappush(pending[j], msg)
            carrying += kind != STATUS
            if t < earliest[j]:
                earliest[j] = t
                if j:
                    heapq.heappush(heap, (t, j))
                    queued[j] = True
        self.carrying += carrying
        self.stats.messages += len(outbox)

    def flush(self) -> None:
        """The rows gathered, to the sink with the watermark (the sink reads only a result's rows)."""
        # (plain tuples in Result's order, as partitions return: a batch holds one per cluster, 1,000 on
        # grid1000, and a NamedTuple's own constructor costs five times a tuple's)
        results = {i: ((), INF, rows, False, INF, False) for i, rows in self.rows.items()}
        self.rows = {}
        self.gathered = 0
        watermark = self.watermark
        self.stats.passed(watermark)
        self.sinking = True
        self.held = self.sink(watermark, results)
        self.sinking = False
        self.due = time.perf_counter() + BATCH_SECONDS
        self.tick()

    @property
    def watermark(self) -> float:
        """No partition can still make a row before it: none stands earlier than the last one called
        (nor the hub, which may lag: :meth:`_hub_key`), and what a call sends arrives a latency later."""
        return min(self.at, self.earliest[META], self.written)

    def settle(self) -> None:
        """A run stopped or failed between steps: the rows gathered go to the sink, which keeps those
        below the last step's watermark, as rounds would have (not when the sink itself was stopped:
        its state is half-changed)."""
        if not self.sinking:
            self.flush()


def _spokes(links: Links, n: int) -> tuple[list[float], list[float]]:
    """By partition index: the latency of its link from the hub (the meta partition) and back (inf:
    none). Every link must touch the hub."""
    from_hub, to_hub = [INF] * n, [INF] * n
    for dst, into in links.into.items():
        for src, latency in into:
            if META not in (src, dst):
                raise ValueError(f"link {src} -> {dst}: the sequential executor needs a star around {META}")
            if src == META:
                from_hub[dst] = latency
            else:
                to_hub[src] = latency
    return from_hub, to_hub
