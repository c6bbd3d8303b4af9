"""The conservative coordinator: per-partition safe horizons, one algorithm for every transport.

Each round (DESIGN.md, "Partitions and synchronization"): from every
partition's *promise* (the earliest time its own events could send a message)
and whether a message would make it send (*reacts*), compute each partition's
earliest output time and its horizon over the link graph
(:mod:`emulator.sync.horizons`); deliver to each partition the messages due before
its horizon in ``(time, source, sequence)`` order; let every partition with
work process its events before its own horizon, a share of ``budget`` event
times per call (the partitions called in a round share it). Nothing sent in
a round is due before its receiver's horizon, so no partition receives a
message from its past. A partition that nothing can reach (jobs entering clusters directly, no meta
traffic) has an infinite horizon: it runs to its end in calls of ``budget``
event times, not one round per event. A partition with nothing to do is not
called.

A transport runs ``advance`` on the partitions it hosts. The in-process
transport calls them in a loop; the Ray transport (``actors/``) calls actors
in parallel. Both return the same values, so the trace is the same. A
transport whose hosts queue calls may ask for *pipelined* rounds
(:meth:`_Drive.pipelined`): no barrier, each partition called again as soon
as its horizon passes its last call's end, a window of the least link
latency at a time.

Trace rows: partitions now run ahead of each other, so the sink gets, with
each round's rows, a *watermark*: no partition can still produce a row earlier
than it (its next event, a message pending for it, or one that could still
reach it). The sink writes rows once they are below it. Memory: when the sink
holds more than ``held_rows`` rows (a partition far ahead of the others), only
the partitions at the earliest time are called until it drains, so it holds
at most that plus one round's rows (two when a transport's hosts compute a
round while its predecessor's rows are written); the partitions called in a
round share its event budget (:func:`share`), so a round's rows stay bounded
too.

Termination: some events never end (machine failures and repairs, link
changes: *background* events), so the loop does not wait for the last event.
Each partition says, with every result, whether it still has *foreground*
work (jobs to submit, queued, running or held; events other than background
ones), and the loop stops when no partition has any and no message carrying
a job is pending (status reports only inform: with nothing left to decide,
they change nothing). Background events before that point are processed like
any other. A round in which no partition can advance (virtual time stuck,
e.g. ``time + latency == time`` at huge times) is an error, never a hang.
"""

from __future__ import annotations

import math
import time
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from ..core.messages import Message
from .frontier import Frontier, Stalled  # noqa: F401 (raised by run: coordinator.Stalled)
from .horizons import Links, tail_end

Rows = list[tuple]
"""A call's trace rows, as partitions make them (a Ray reply with many hands them over as columns:
:class:`~emulator.sync.rows.RowBlock`)."""


class Result(NamedTuple):
    """What ``advance`` returns for one partition (in this order, so a plain tuple does too)."""

    outbox: list[Message]
    next_time: float  # its earliest pending event (inf: none)
    rows: Rows
    busy: bool  # foreground work left (module docstring)
    promise: float  # the earliest time its own events could send a message (inf: never)
    reacts: bool  # whether a message arriving could make it send


Results = dict[int, Result]
"""By partition id."""

Calls = dict[int, tuple[float, list[Message]]]
"""By partition id: ``(horizon, inbox)`` of one round's call."""

Released = tuple[float, Results]
"""A round's ``(watermark, results)``, as the sink takes them."""

EVENT_BUDGET = 16384
"""Event times a partition processes per call at most: a free-running cluster's rows stream to the
writer and the progress bar moves, while calls stay few (KTH-SP2 on one cluster: ~8 calls)."""

CALL_SECONDS = 0.5
"""Wall seconds after which a call stops at the end of its current event time, whatever its budget
left: under a slow policy (conservative backfilling on a deep queue) an event budget's worth of event
times took 10 s, and the trace writer, which flushes between calls, wrote nothing meanwhile. Where a
call stops never changes a row (a call's end is not an event), so the clock only paces the calls."""

MIN_BUDGET = 256
"""Event times per partition per call at least, however many partitions a round calls."""


def share(budget: int, calls: int) -> int:
    """Each call's event budget when ``calls`` partitions share a round's ``budget`` (so a round's rows,
    and the writer's memory, stay bounded however many clusters run free at once)."""
    return max(min(budget, MIN_BUDGET), budget // max(calls, 1))


HELD_ROWS = 1 << 18
"""Rows the sink may hold before only the partitions at the earliest time are called (memory bound)."""


class State(NamedTuple):
    """A partition's standing before any round: as in :class:`Result`."""

    next_time: float
    busy: bool
    promise: float
    reacts: bool


class Transport(Protocol):
    compute_seconds: float
    """Partition compute time of the last round (the slowest host's, when hosts run in parallel)."""

    def states(self) -> dict[int, State]:
        """Each partition's :class:`State` before any round."""

    def advance(self, calls: Calls, budget: int) -> Results:
        """Call ``advance(horizon, inbox, budget)`` on each partition in ``calls``; their results by pid."""

    def policy_stats(self) -> dict[int, dict[str, float]]:
        """Scheduler cost of each cluster partition so far (``ClusterPartition.policy_stats``), by pid."""

    def timelines(self) -> dict[int, tuple[float, array]]:
        """By pid: when its foreground work ended, and every event time it processed (the run's tail)."""


@runtime_checkable
class Overlapping(Transport, Protocol):
    """A transport whose hosts compute a round while the driver writes the rows of the round before
    (:meth:`_Drive._advance`): a round is :meth:`start`, then :meth:`finish`, instead of ``advance``.

    The drive modes beyond plain rounds are declared as protocols, each whole (a transport implements
    every member, or the coordinator does not use the mode), never guessed from one attribute."""

    computing: bool
    """Whether hosts beside the driver compute the round :meth:`start` sent (else the driver ran all of
    it, and the rows of the round before wait for the next round)."""

    def start(self, calls: Calls, budget: int) -> None:
        """Send a round's calls; the hosts compute while the driver writes."""

    def finish(self) -> Results:
        """The results of the round :meth:`start` sent."""


@runtime_checkable
class Queueing(Transport, Protocol):
    """A transport whose hosts queue calls and answer each when done, with no barrier between hosts:
    free runs (:meth:`_Drive.free_run`), and pipelined rounds (:meth:`_Drive.pipelined`) once
    :attr:`pipelined` says they pay."""

    pipelined: bool
    """Whether rounds should now be pipelined (their compute pays for the extra calls)."""

    def idle(self, queue: bool = True, rebalance: bool = False) -> set[int]:
        """The partitions whose hosts may take another call (``queue``: also those with calls out but
        room for more; ``rebalance``: the transport may first drain its hosts and regroup them)."""

    def in_flight(self) -> bool:
        """Whether any call is out, not yet collected."""

    def submit(self, calls: Calls, budget: int) -> None:
        """Queue one call on each host owning partitions in ``calls``."""

    def collect(self) -> Results:
        """The results of the first call to answer (a host's oldest)."""


class Sink(Protocol):
    def __call__(self, watermark: float, results: Results) -> int:
        """Take a round's rows; write those below ``watermark``; return how many rows it still holds."""


def partition_state(part) -> State:
    return State(part.next_time, part.busy, part.promise, part.reacts)


class InProcess:
    """Partitions as plain objects in this process.

    ``partition_seconds``: each partition's compute time in the last round, by
    pid. A Ray host reports it so the transport can balance its actors; it is
    wall clock, so it never reaches a result.
    """

    def __init__(self, partitions: list) -> None:
        self.partitions = {p.pid: p for p in partitions}
        self.compute_seconds = 0.0
        self.partition_seconds: dict[int, float] = {}

    def states(self) -> dict[int, State]:
        return {pid: partition_state(p) for pid, p in self.partitions.items()}

    def advance(self, calls: Calls, budget: int = EVENT_BUDGET) -> Results:
        clock = time.perf_counter
        results: Results = {}
        seconds: dict[int, float] = {}
        for pid, (horizon, inbox) in calls.items():
            started = clock()
            results[pid] = self.partitions[pid].advance(horizon, inbox, budget)
            seconds[pid] = clock() - started
        self.partition_seconds = seconds
        self.compute_seconds = sum(seconds.values())
        return results

    def policy_stats(self) -> dict[int, dict[str, float]]:
        return {pid: p.policy_stats() for pid, p in self.partitions.items() if hasattr(p, "policy_stats")}

    def timelines(self) -> dict[int, tuple[float, array]]:
        return {pid: (p.timeline.end, p.timeline.times) for pid, p in self.partitions.items()}


@dataclass
class RunStats:
    """Counts of a run, and where its wall time went (wall-clock: kept out of the trace)."""

    rounds: int = 0
    calls: int = 0
    messages: int = 0
    virtual_time: float = 0.0  # the trace is complete before it (the latest watermark: :meth:`passed`)
    compute_seconds: float = 0.0  # inside partitions (per round: the slowest host)
    barrier_seconds: float = 0.0  # the rest of each round: delivery, calls, gathering
    startup_seconds: float = 0.0  # opening the backend and building the partitions (Ray: its start-up)
    shutdown_seconds: float = 0.0  # closing the backend (Ray: stopping its actors and processes)
    throttled: int = 0  # rounds that called only the laggards (the sink held too many rows)
    barrier_free: int = 0  # of the rounds, one host's call answered with no barrier (free, pipelined)
    partition_seconds: dict[int, float] | None = None  # compute by pid, when the transport measures it
    end_time: float = math.inf  # rows at or after it are past the run's end (``run``'s ``tail``)

    @property
    def barrier_share(self) -> float:
        total = self.compute_seconds + self.barrier_seconds
        return self.barrier_seconds / total if total > 0 else 0.0

    def passed(self, watermark: float) -> None:
        """The sink was handed ``watermark``: the virtual time a progress display shows, whichever way
        the partitions were driven (it never goes back, and a run's last, infinite one is not a time)."""
        if self.virtual_time < watermark < math.inf:
            self.virtual_time = watermark


TICK_SECONDS = 0.25
"""Wall seconds between two ``tick()`` calls (progress displays): rounds may be many and short, or a
few long free-running calls."""


def _throttled(tick: Callable[[], None] | None) -> Callable[[], None]:
    """``tick`` at most every :data:`TICK_SECONDS` (the clock only paces a display, never a result)."""
    if tick is None:
        return lambda: None
    last = [time.perf_counter()]

    def maybe() -> None:
        now = time.perf_counter()
        if now - last[0] >= TICK_SECONDS:
            last[0] = now
            tick()

    return maybe


def run(
    transport: Transport,
    links: Links,
    sink: Sink,
    stats: RunStats | None = None,
    tick: Callable[[], None] | None = None,
    budget: int | None = None,
    held_rows: int = HELD_ROWS,
    tail: bool = False,
) -> RunStats:
    """Drive the partitions until no foreground work is left (module docstring); ``sink`` gets each round.

    ``tail``: background events may follow the foreground's end (failures,
    outages, link changes). The trace keeps those before
    :func:`~emulator.sync.horizons.tail_end`, so partitions that lag are first
    advanced that far; ``stats.end_time`` says where rows stop (inf: no tail).
    """
    stats = RunStats() if stats is None else stats
    started = time.perf_counter()
    grid = Frontier(links, transport.states())
    stats.startup_seconds += time.perf_counter() - started  # (hosts elsewhere build their partitions)
    lookahead = min((lat for into in links.into.values() for _, lat in into), default=math.inf)
    drive = _Drive(
        grid, transport, sink, stats, _throttled(tick), budget or EVENT_BUDGET, held_rows, lookahead
    )
    drive.rounds(lambda: bool(grid.busy or grid.carrying), hold_last=tail)
    if not tail:
        return stats
    last = max((end for end, _ in transport.timelines().values()), default=-math.inf)
    drain = last + lookahead
    drive.rounds(lambda: bool((grid.earliest() < drain).any()), cap=(drain, last))
    stats.end_time = tail_end([times for _, times in transport.timelines().values()], last, lookahead)
    return stats


@dataclass
class _Drive:
    """One run's coordinator: the partitions' standing, the transport, the sink and the budgets."""

    grid: Frontier
    transport: Transport
    sink: Sink
    stats: RunStats
    tick: Callable[[], None]
    budget: int
    held_rows: int
    span: float = math.inf  # the least link latency: a pipelined call's longest window
    held: int = 0  # rows the sink holds

    def rounds(
        self,
        going: Callable[[], bool],
        cap: tuple[float, float] = (math.inf, math.inf),
        hold_last: bool = False,
    ) -> None:
        """Rounds while ``going()``; ``cap``: no horizon past its first item, no watermark past its
        second; ``hold_last``: the last round releases no rows."""
        grid, transport, stats = self.grid, self.transport, self.stats
        clock = time.perf_counter
        until, written = cap
        overlapping = transport if isinstance(transport, Overlapping) else None  # (:meth:`_advance`)
        queueing = transport if isinstance(transport, Queueing) else None
        waiting: list[Released] = []  # rounds' rows not written yet: written while hosts compute
        while going():
            lbts = float(grid.earliest().min(initial=math.inf))
            if lbts == math.inf:
                break
            horizon = np.minimum(grid.horizons(), until)
            if queueing is not None and grid.free(horizon):
                self._release_all(waiting)
                return self.free_run(queueing, going, hold_last)
            if queueing is not None and queueing.pipelined and until == math.inf:
                self._release_all(waiting)
                return self.pipelined(queueing, going, hold_last)
            laggards = None
            if self.held > self.held_rows:
                laggards = grid.laggards()
                stats.throttled += 1
            calls = grid.calls(horizon, laggards)
            if not calls:
                raise grid.stalled(lbts)
            started = clock()
            results, writing = self._advance(calls, share(self.budget, len(calls)), waiting, overlapping)
            compute = transport.compute_seconds  # (hosts beside the driver compute while it writes)
            busy = max(compute, writing) if overlapping else compute + writing
            stats.barrier_seconds += clock() - started - busy
            self._took(results)
            watermark = min(grid.watermark(horizon), written)
            if hold_last and not going():  # rows past the foreground's end wait for the tail's limit
                watermark = -math.inf
            waiting.append((watermark, results))
            if not overlapping:
                self._release_all(waiting)
        self._release_all(waiting)

    def _advance(
        self, calls: Calls, budget: int, waiting: list[Released], overlapping: Overlapping | None
    ) -> tuple[Results, float]:
        """A round's results, the rounds before's rows written meanwhile; and the seconds writing took.

        An :class:`Overlapping` transport (``overlapping``: the transport, else None) computes the round while
        the driver writes: the rows are the driver's largest share of a round,
        and the hosts waited for it. A round needs the standing the rounds
        before left, never their rows written. A round the driver ran alone
        (``computing`` false: the meta partition, in the driver, taking its
        turn) leaves the rows for the next round, in which the hosts compute
        and the driver waits: at most one round more, so the sink's count of
        rows held, which throttles rounds, lags at most two. Otherwise nothing
        overlaps: rows are written as each round ends.
        """
        clock = time.perf_counter
        if overlapping is None:
            started = clock()
            self._release_all(waiting)
            writing = clock() - started
            return self.transport.advance(calls, budget), writing
        overlapping.start(calls, budget)
        started = clock()
        if overlapping.computing or len(waiting) > 1:
            self._release_all(waiting)
        writing = clock() - started
        return overlapping.finish(), writing

    def _release_all(self, waiting: list[Released]) -> None:
        """The rows of the rounds ``waiting``, in their order; none wait after."""
        for watermark, results in waiting:
            self._release(watermark, results)
        waiting.clear()

    def free_run(self, transport: Queueing, going: Callable[[], bool], hold_last: bool) -> None:
        """No partition can ever reach another: each host gets its next call as soon as it answers.

        For :class:`Queueing` transports (hosts that run in parallel, the Ray
        transport's): no barrier at all between them. A partition in flight
        keeps the standing it had when called, a valid lower bound for the
        watermark. Calls advance every partition to the same virtual time
        (:class:`Windows`), so rows wait in the sink only for the other hosts'
        calls, not for the densest partition to catch up with the sparse ones.
        Once windows have a span, ``idle(queue=True)`` also offers hosts with a
        call out, whose next call then waits on the host, not on the driver.
        """
        grid = self.grid
        infinite = np.full(len(grid.pids), math.inf)
        windows = Windows(self.budget, grid)

        def submit(wanted: set[int]) -> None:
            for until, pids in windows.ends(grid.watermark(infinite), wanted):
                calls = grid.calls(np.full(len(grid.pids), until), pids)
                if calls:
                    budget = self.budget if until < math.inf else share(self.budget, len(calls))
                    transport.submit(calls, budget)
                    windows.called(calls)

        while True:
            if going():
                submit(self._wanted(transport.idle(queue=windows.known)))
            if not transport.in_flight():
                if going():
                    raise grid.stalled(grid.watermark(infinite))
                return
            results = transport.collect()
            self._took(results, barrier=False)
            windows.received(results, grid.watermark(infinite))
            if going() and self.held <= self.held_rows:  # it works on while the sink writes
                submit(transport.idle(queue=windows.known))
            self._release(grid.watermark(infinite) if going() or not hold_last else -math.inf, results)

    def pipelined(self, transport: Queueing, going: Callable[[], bool], hold_last: bool) -> None:
        """Rounds without a barrier, for :class:`Queueing` transports (hosts that queue calls).

        Each partition is called again as soon as its horizon reaches past the end of its last call:
        up to the next multiple of the least link latency, no further, so a call answers within one
        window (and the clusters' windows stay abreast). Each host may have calls queued
        (:meth:`~emulator.sync.frontier.Frontier.sent`: a partition with a call out stands where its
        last answer left it, a lower bound). A partition nothing can reach (an infinite horizon)
        takes event budgets, as in a free run. On a meta-scheduled grid the clusters' calls for the
        window ahead are queued while the meta partition, in the driver, runs the window their last
        answers opened: neither waits for the other's turn, nor a host for the slowest one. The
        partitions get the same messages before the same times as in rounds, so the trace is the
        same.
        """
        grid, span = self.grid, self.span
        reached = np.full(len(grid.pids), -math.inf)  # by partition index: where its last call ends

        def submit(horizon: np.ndarray) -> None:
            wanted = self._wanted(transport.idle(queue=True, rebalance=True))
            earliest = grid.earliest()  # (a call's event budget may have stopped it short of its end)
            start = np.where(grid.flying > 0, np.maximum(reached, earliest), earliest)
            ends = np.where(horizon < math.inf, np.minimum(horizon, start + span), horizon)
            ends = np.minimum(np.floor(ends / span) * span, ends)  # (a whole window's end, not past it)
            ends[ends <= start] = -math.inf
            calls = grid.calls(ends, wanted)
            if calls:
                for pid, (end, _) in calls.items():
                    reached[grid.index[pid]] = end
                grid.sent(calls)
                transport.submit(calls, share(self.budget, len(calls)))

        horizon = grid.horizons()  # (from the last answers: the sink's watermark, then the next calls)
        while True:
            if going():
                submit(horizon)
            if not transport.in_flight():
                if going():
                    raise grid.stalled(float(grid.earliest().min(initial=math.inf)))
                return
            results = transport.collect()
            self._took(results, barrier=False)
            horizon = grid.horizons()
            self._release(grid.watermark(horizon) if going() or not hold_last else -math.inf, results)

    def _wanted(self, wanted: set[int]) -> set[int]:
        """The partitions ``wanted`` to call, but only the laggards while the sink holds too many rows."""
        if self.held > self.held_rows:
            self.stats.throttled += 1
            return wanted & self.grid.laggards()
        return wanted

    def _took(self, results: Results, barrier: bool = True) -> None:
        """A call's or a round's results into the standing and the counts."""
        stats = self.stats
        stats.barrier_free += not barrier
        stats.compute_seconds += self.transport.compute_seconds
        _count_partition_seconds(stats, self.transport)
        stats.messages += self.grid.apply(results)
        stats.rounds += 1
        stats.calls += len(results)

    def _release(self, watermark: float, results: Results) -> None:
        self.held = self.sink(watermark, results)
        self.stats.passed(watermark)
        self.tick()


LEAD = 6
"""Windows a free-running partition may be called ahead of the watermark (its rows wait in the sink).
Fewer, and an actor that far ahead waits for the others to move the watermark, with calls queued
(:data:`actors.queued.PIPELINE`) it could run; the sink then holds up to ~100k rows on LCG's 170
sites, under :data:`HELD_ROWS` (docs/performance.md, its history)."""


class Windows:
    """How far in virtual time a free run's calls go: each about ``rows`` rows' worth.

    Each call advances its partitions by one window, from where their last
    call ends (partitions called together stay together: a host's), so a host
    can have its next call queued before it answers. A window spans ``rows``
    over the rate of rows so far (rows received per virtual second up to the
    watermark: an overestimate while some partitions are ahead of it, so a
    window errs short), and no call goes more than :data:`LEAD` windows past
    the watermark: the sink holds what runs ahead. Until the watermark has
    moved the rate is unknown, and calls take event budgets instead (an
    infinite end). Bursts are still bounded by each call's event budget.
    """

    def __init__(self, rows: int, grid: Frontier) -> None:
        self.rows, self.grid = rows, grid
        self.start = grid.watermark(np.full(len(grid.pids), math.inf))
        self.reached = np.full(len(grid.pids), self.start)  # by partition index: where its last call ends
        self.flying = np.zeros(len(grid.pids), dtype=np.int64)  # calls out, by partition index
        self._received = 0  # rows received from the hosts
        self._rate = 0.0  # rows per virtual second, over the run so far

    @property
    def known(self) -> bool:
        """Whether windows have a span yet: until then a host gets its next call only once it answers
        (queued budget calls would run far ahead of the watermark)."""
        return self._rate > 0

    def ends(self, watermark: float, wanted: set[int]) -> list[tuple[float, set[int]]]:
        """The next calls for partitions ``wanted``: ``(end, pids)`` for each set of them whose last
        calls end together, if they have events before it; noted as reached (:meth:`called` counts
        the calls made)."""
        index, earliest = self.grid.index, self.grid.earliest()
        groups: dict[float, list[int]] = {}
        for pid in sorted(wanted):
            groups.setdefault(float(self.reached[index[pid]]), []).append(index[pid])
        span = self.rows / self._rate if self._rate > 0 else math.inf
        calls = []
        for reached, at in groups.items():
            flying = self.flying[at] > 0
            ready = float(earliest[at][~flying].min(initial=math.inf))  # (standing of those in flight: stale)
            base = _window_start(reached, ready, watermark)
            end = min(base + span, watermark + LEAD * span) if span < math.inf else math.inf
            if ready == watermark and end <= ready:  # a span lost to float spacing: the floor still moves
                end = float(np.nextafter(ready, math.inf))
            if ready < end or (flying.any() and end > base):  # events before it, not yet called for
                self.reached[at] = end
                calls.append((end, {self.grid.pids[i] for i in at}))
        return calls

    def called(self, pids) -> None:
        """Calls went out to ``pids``: their standing stays stale until :meth:`received` answers."""
        for pid in pids:
            self.flying[self.grid.index[pid]] += 1

    def received(self, results: Results, watermark: float) -> None:
        """A call's results came in; no partition can still produce a row before ``watermark``."""
        index = self.grid.index
        for pid, result in results.items():
            self.flying[index[pid]] -= 1
            self._received += len(result[2])
        span = watermark - self.start
        if 0 < span < math.inf:
            self._rate = max(self._received, 1) / span


def _window_start(reached: float, ready: float, watermark: float) -> float:
    """Where partitions' next window starts: where their last call ends (``reached``), or where those
    not in flight are (``ready``) if later; after event budgets (``reached`` inf), the watermark."""
    if reached == math.inf:
        return watermark
    return reached if ready == math.inf else max(reached, ready)


def _count_partition_seconds(stats: RunStats, transport: Transport) -> None:
    """Each partition's share of the compute (``--verbose``), where the transport measures it."""
    seconds = getattr(transport, "partition_seconds", None)
    if not seconds:
        return
    if stats.partition_seconds is None:
        stats.partition_seconds = {}
    total = stats.partition_seconds
    for pid, spent in seconds.items():
        total[pid] = total.get(pid, 0.0) + spent
