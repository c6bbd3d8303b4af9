"""What the coordinator knows of every partition between rounds, as arrays over the partitions.

Each partition's next event, promise, whether it reacts, its foreground work,
and the messages sent to it and not yet delivered. From these a round takes
its horizons (:mod:`emulator.sync.horizons`), its calls and its watermark; with
hundreds of clusters that is a few numpy operations a round, not loops over
every partition (only the partitions with work are visited).
"""

from __future__ import annotations

import heapq
import math
from collections import deque

import numpy as np

from ..core.messages import STATUS, Message
from .horizons import Links, LinkSolver

INF = math.inf
TIME, DST, KIND = 0, 3, 4
"""Fields of a message: a :class:`~emulator.core.messages.Message`, or (Ray's driver) the plain tuple
it was packed as, which is routed without being rebuilt (:func:`actors.packing.unpack_results`)."""


class Stalled(RuntimeError):
    """Virtual time cannot advance: names the partition and the time."""


class Frontier:
    """The partitions' standing, by index in ``pids`` (sorted partition ids)."""

    def __init__(self, links: Links, states: dict) -> None:
        self.pids = sorted(states)
        self.index = {pid: i for i, pid in enumerate(self.pids)}
        self.solver = LinkSolver(links, self.pids)
        self.next_time = np.array([states[p].next_time for p in self.pids], dtype=float)
        self.promise = np.array([states[p].promise for p in self.pids], dtype=float)
        self.reacts = np.array([states[p].reacts for p in self.pids], dtype=bool)
        self.head = np.full(len(self.pids), INF)  # each partition's earliest pending message
        self.pending: list[list[Message]] = [[] for _ in self.pids]
        self.busy = {pid for pid in self.pids if states[pid].busy}
        self.carrying = 0  # pending messages other than status reports
        self.flying = np.zeros(len(self.pids), dtype=np.int64)  # calls out, not answered (:meth:`sent`)
        self.inbound: list[deque[float]] = [deque() for _ in self.pids]  # their inboxes' first times
        self.flying_head = np.full(len(self.pids), INF)  # the least of those

    def earliest(self) -> np.ndarray:
        """The earliest thing each partition has to do: its next event or its first pending message
        (or delivered in a call still out)."""
        return np.minimum(np.minimum(self.next_time, self.head), self.flying_head)

    def horizons(self) -> np.ndarray:
        """Each partition's horizon: the earliest time a message not yet sent could reach it.

        A partition with a call out is taken as reacting to the messages that call delivered: its
        standing is its last answer's, from before it read them."""
        reacts = self.reacts | (self.flying > 0)
        pending = np.minimum(self.head, self.flying_head)
        base = np.where(reacts, np.minimum(self.promise, pending), self.promise)
        return self.solver.horizons(base, reacts)

    def sent(self, calls: dict) -> None:
        """``calls`` went out and will be answered in the order sent, each partition's: until then its
        standing is its last answer's, still a lower bound, and its inbox's messages count as pending
        (pipelined rounds: :meth:`emulator.sync.coordinator._Drive.pipelined`)."""
        index, inbound, flying, flying_head = self.index, self.inbound, self.flying, self.flying_head
        for pid, (_, inbox) in calls.items():
            i = index[pid]
            first = inbox[0][TIME] if inbox else INF
            inbound[i].append(first)
            flying[i] += 1
            if first < flying_head[i]:
                flying_head[i] = first

    def calls(self, horizon: np.ndarray, only: set[int] | None = None) -> dict:
        """``(horizon, inbox)`` by pid of each partition with work before its horizon (``only``: of those)."""
        calls = {}
        for i in np.flatnonzero((self.next_time < horizon) | (self.head < horizon)).tolist():
            pid = self.pids[i]
            if only is not None and pid not in only:
                continue
            limit, queue, inbox = horizon[i], self.pending[i], []
            while queue and queue[0][TIME] < limit:
                msg = heapq.heappop(queue)
                self.carrying -= msg[KIND] != STATUS
                inbox.append(msg)
            self.head[i] = queue[0][TIME] if queue else INF
            calls[pid] = (float(limit), inbox)
        return calls

    def apply(self, results: dict) -> int:
        """Take a round's results in; return the number of messages sent."""
        sent = 0
        index, pending, head = self.index, self.pending, self.head
        for pid, (outbox, next_time, _, working, promise, reacts) in results.items():
            i = index[pid]
            self.next_time[i], self.promise[i], self.reacts[i] = next_time, promise, reacts
            if self.flying[i]:
                self._answered(i)
            if working:
                self.busy.add(pid)
            else:
                self.busy.discard(pid)
            for msg in outbox:
                j = index[msg[DST]]
                heapq.heappush(pending[j], msg)
                if msg[TIME] < head[j]:
                    head[j] = msg[TIME]
                self.carrying += msg[KIND] != STATUS
            sent += len(outbox)
        return sent

    def _answered(self, i: int) -> None:
        """Partition ``i``'s oldest call out was answered."""
        inbound = self.inbound[i]
        inbound.popleft()
        self.flying[i] -= 1
        self.flying_head[i] = min(inbound, default=INF)

    def free(self, horizon: np.ndarray) -> bool:
        """Nothing can ever reach any partition again (for good: a promise of inf with nothing arriving
        stays so): no message pending, every horizon infinite."""
        return bool(np.isinf(self.head).all() and np.isinf(horizon).all())

    def watermark(self, horizon: np.ndarray) -> float:
        """No partition can produce a row before this: its next event, a pending message, a new one."""
        return float(np.minimum(self.earliest(), horizon).min(initial=INF))

    def laggards(self) -> set[int]:
        """The partitions at the earliest time."""
        earliest = self.earliest()
        return {self.pids[i] for i in np.flatnonzero(earliest == earliest.min(initial=INF)).tolist()}

    def stalled(self, lbts: float) -> Stalled:
        earliest = self.earliest()
        pid = self.pids[int(np.argmin(np.where(np.isnan(earliest), -INF, earliest)))]  # (NaN: that one)
        return Stalled(
            f"virtual time cannot advance past {lbts!r} at partition {pid}: its horizon is no later than "
            "its next event (a link latency too small for times this large?)"
        )
