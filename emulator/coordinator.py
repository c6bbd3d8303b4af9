"""The conservative barrier coordinator, one algorithm for every transport.

Each round: ``lbts`` = the earliest pending event or undelivered message;
``horizon = lbts + lookahead`` (the least link latency); deliver the messages
due before the horizon in ``(time, source, sequence)`` order; let every
partition with work process its events before the horizon. Nothing sent in a
round is due before its horizon, so no partition receives a message from its
past. A partition with no event before the horizon and an empty inbox would do
nothing, so it is not called: idle stretches cost no rounds and no calls.

A transport runs ``advance`` on the partitions it hosts. The in-process
transport calls them in a loop; the Ray transport (``actors/``) calls actors
in parallel. Both return the same values, so the trace is the same.

Termination: some events never end (machine failures and repairs, link
changes: *background* events), so the loop does not wait for the last event.
Each partition says, with every result, whether it still has *foreground*
work (jobs to submit, queued, running or held; events other than background
ones), and the loop stops when no partition has any and no message carrying
a job is pending (status reports only inform: with nothing left to decide,
they change nothing). Background events before that point are processed like
any other.
"""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .messages import STATUS, Message

Rows = list[tuple]
Results = dict[int, tuple[list[Message], float, Rows, bool]]
"""By partition id: ``advance``'s ``(outbox, next event time, trace rows, busy)``."""


class Transport(Protocol):
    compute_seconds: float
    """Partition compute time of the last round (the slowest host's, when hosts run in parallel)."""

    def next_times(self) -> dict[int, float]:
        """Each partition's first event time before any round."""

    def busy(self) -> dict[int, bool]:
        """Whether each partition has foreground work before any round (see the module docstring)."""

    def advance(self, horizon: float, inboxes: dict[int, list[Message]]) -> Results:
        """Call ``advance(horizon, inbox)`` on each partition in ``inboxes``; their results by pid."""

    def policy_stats(self) -> dict[int, dict[str, float]]:
        """Scheduler cost of each cluster partition so far (``ClusterPartition.policy_stats``), by pid."""


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

    def next_times(self) -> dict[int, float]:
        return {pid: p.next_time for pid, p in self.partitions.items()}

    def busy(self) -> dict[int, bool]:
        return {pid: p.busy for pid, p in self.partitions.items()}

    def advance(self, horizon: float, inboxes: dict[int, list[Message]]) -> Results:
        clock = time.perf_counter
        results: Results = {}
        seconds: dict[int, float] = {}
        for pid, inbox in inboxes.items():
            started = clock()
            results[pid] = self.partitions[pid].advance(horizon, inbox)
            seconds[pid] = clock() - started
        self.partition_seconds = seconds
        self.compute_seconds = sum(seconds.values())
        return results

    def policy_stats(self) -> dict[int, dict[str, float]]:
        return {pid: p.policy_stats() for pid, p in self.partitions.items() if hasattr(p, "policy_stats")}


@dataclass
class RunStats:
    """Counts of a run, and where its wall time went (wall-clock: kept out of the trace)."""

    rounds: int = 0
    calls: int = 0
    messages: int = 0
    virtual_time: float = 0.0  # lbts of the latest round
    compute_seconds: float = 0.0  # inside partitions (per round: the slowest host)
    barrier_seconds: float = 0.0  # the rest of each round: delivery, calls, gathering

    @property
    def barrier_share(self) -> float:
        total = self.compute_seconds + self.barrier_seconds
        return self.barrier_seconds / total if total > 0 else 0.0


TICK_ROUNDS = 512
"""Rounds between two ``tick()`` calls (progress displays)."""


def run(
    transport: Transport,
    lookahead: float,
    sink: Callable[[float, Results], None],
    stats: RunStats | None = None,
    tick: Callable[[], None] | None = None,
) -> RunStats:
    """Drive the partitions until no foreground work is left (module docstring); ``sink`` gets each round.

    The rows a round returns are all later than every earlier round's horizon,
    so the sink can write rows as soon as it has sorted one round's. The order
    of partitions within a round does not matter: partitions share nothing in
    a round, messages are ordered by ``(time, src, seq)`` and rows by
    ``(time, partition)``.
    """
    if not lookahead > 0:
        raise ValueError(f"lookahead must be > 0 (every link needs latency > 0), got {lookahead}")
    next_times = transport.next_times()
    busy = {pid for pid, working in transport.busy().items() if working}
    pending: list[Message] = []
    carrying = 0  # pending messages other than status reports
    stats = RunStats() if stats is None else stats
    clock = time.perf_counter
    while True:
        if not busy and not carrying:
            return stats  # only background events and status reports are left (or nothing)
        lbts = min(next_times.values(), default=math.inf)
        if pending and pending[0].time < lbts:
            lbts = pending[0].time
        if lbts == math.inf:
            return stats
        horizon = lbts + lookahead
        inboxes = {pid: [] for pid, t in next_times.items() if t < horizon}
        while pending and pending[0].time < horizon:
            msg = heapq.heappop(pending)
            if msg.kind != STATUS:
                carrying -= 1
            inboxes.setdefault(msg.dst, []).append(msg)
        started = clock()
        results = transport.advance(horizon, inboxes)
        stats.barrier_seconds += clock() - started - transport.compute_seconds
        stats.compute_seconds += transport.compute_seconds
        for pid, (outbox, next_time, _, working) in results.items():
            next_times[pid] = next_time
            if working:
                busy.add(pid)
            else:
                busy.discard(pid)
            for msg in outbox:
                heapq.heappush(pending, msg)
                if msg.kind != STATUS:
                    carrying += 1
            stats.messages += len(outbox)
        stats.rounds += 1
        stats.calls += len(results)
        stats.virtual_time = lbts
        sink(horizon, results)
        if tick is not None and stats.rounds % TICK_ROUNDS == 0:
            tick()
