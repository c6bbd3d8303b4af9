"""Queued calls on Ray: each actor answers its calls in order, and gets its next one as soon as it may.

Free runs (no partition can reach another) and pipelined rounds drive the
actors with no barrier between them: ``submit`` queues one call on each actor
with partitions called, ``collect`` returns the first answer. An actor may
have up to :data:`PIPELINE` calls queued, so while the driver writes one
actor's rows the others' next calls already wait on them. Each actor logs
and snapshots its own calls (:class:`~actors.recovery.Recovery`), a snapshot
once it has no call out; an actor rebuilt after a crash answers its oldest
call and is given its other calls again, in order. The driver's partitions
answer at once, collected before any actor's.
"""

from __future__ import annotations

import math
from collections import deque
from typing import NamedTuple

from emulator.sync.coordinator import Calls

from .calls import GONE
from .driver_host import DriverHost
from .fleet import Fleet
from .packing import Reply, unpack_results
from .rebalancing import Rebalancer
from .recovery import Recovery

PIPELINE = 3
"""Calls an actor may have queued: while the driver writes one actor's rows, the others' next calls
already wait on them (with one, each actor would idle for the driver's turn)."""


class Flying(NamedTuple):
    """A call out to an actor, not answered yet."""

    token: object  # what answers it (:meth:`actors.calls.HostCalls.send`)
    call: bytes  # the packed call: logged, or sent again to a rebuilt actor
    horizon: float  # its earliest horizon (for error messages)


class QueuedCalls:
    """Calls queued on ``fleet``'s actors and run by the ``driver``, each answered on its own.

    >>> queue = QueuedCalls(fleet, recovery, balance, driver)  # doctest: +SKIP
    >>> queue.submit(calls, budget); queue.collect().results    # doctest: +SKIP
    {3: Result(...)}
    """

    def __init__(self, fleet: Fleet, recovery: Recovery, balance: Rebalancer, driver: DriverHost) -> None:
        self.fleet, self.recovery, self.balance, self.driver = fleet, recovery, balance, driver
        self.flying: list[deque[Flying]] = [deque() for _ in fleet.hosts]  # by actor, oldest first
        self.horizon = math.inf  # the last answered call's earliest horizon (for error messages)

    def idle(self, queue: bool = True, rebalance: bool = False) -> set[int]:
        """The partitions of the actors that may take another call: none out, or (``queue``) fewer than
        :data:`PIPELINE` and no snapshot due (it must follow the calls logged before it, no other).

        ``rebalance`` (pipelined rounds): when a rebalancing check is due, no actor gets another call
        until every one has answered; then the check runs (:meth:`Rebalancer.holds`)."""
        draining = rebalance and self.balance.holds(any(self.flying), self.horizon)
        hosts = () if draining else range(len(self.flying))
        idle = {pid for h in hosts if self._open(h, queue) for pid in self.fleet.groups[h]}
        return idle | self.driver.pids

    def _open(self, h: int, queue: bool) -> bool:
        flying = len(self.flying[h])
        return flying == 0 or (queue and flying < PIPELINE and not self.recovery.due(h, flying))

    def in_flight(self) -> bool:
        return any(self.flying) or bool(self.driver.done)

    def submit(self, calls: Calls, budget: int) -> None:
        """Queue one call on each actor owning partitions in ``calls`` (each :meth:`idle`). The driver's
        partitions run at once, after the actors' calls are out (they compute meanwhile)."""
        here, there = self.driver.split(calls)
        horizon = min((h for h, _ in there.values()), default=math.inf)
        for h, packed in self.fleet.batches(there, budget).items():
            self.flying[h].append(Flying(self.fleet.calls.send(h, packed), packed, horizon))
        self.driver.submit(here, budget)

    def collect(self) -> Reply:
        """The reply to an actor's oldest call, the first to answer (a dead actor is rebuilt, answers,
        and is given its other calls again), logged for recovery; an actor is snapshotted every
        ``recovery.every`` of its calls."""
        if self.driver.done:
            return self.driver.done.popleft()
        calls = self.fleet.calls
        h = calls.first({h: queue[0].token for h, queue in enumerate(self.flying) if queue})
        out = self.flying[h].popleft()
        self.horizon = out.horizon
        try:
            data = calls.answer(h, out.token)
        except GONE as err:
            data = self.recovery.recover(h, out.call, out.horizon, err)
            self.flying[h] = deque(f._replace(token=calls.send(h, f.call)) for f in self.flying[h])
        self.recovery.record(h, out.call)
        if not self.flying[h] and self.recovery.due(h):
            self.recovery.checkpoint(h)
        answer = unpack_results(data)
        self.balance.answered += 1
        self.balance.weigh(answer.seconds)
        return answer


__all__ = ["PIPELINE", "Flying", "QueuedCalls"]
