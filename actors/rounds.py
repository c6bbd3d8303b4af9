"""Barrier rounds on Ray: one call per actor with work, sent by ``start``, gathered by ``finish``.

Between the two the actors compute while the driver writes the rows of the
round before, and runs its own partitions' share (:class:`~actors.driver_host.
DriverHost`). Each reply is unpacked as it arrives, while the slower actors
still compute. A round goes over the actors' calls (direct lines or plain
Ray calls) or, when asked, as one execution of a compiled graph; either way
an actor that dies is rebuilt (:class:`~actors.recovery.Recovery`) and
answers the round. A compiled round that fails cannot tell which replies are
good: every actor is rebuilt and the round run again.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

from ray.exceptions import RayError

from emulator.sync.coordinator import Calls

from .calls import GONE
from .driver_host import DriverHost
from .fleet import Fleet
from .packing import Reply, reply, unpack_results
from .rebalancing import Rebalancer
from .recovery import HostDied, Recovery, cause, when


class Round(NamedTuple):
    """A round :meth:`BarrierRounds.start` sent."""

    batches: dict[int, bytes]  # by actor: its packed calls
    horizon: float  # the round's earliest horizon (for error messages)
    tokens: dict[int, object]  # by actor: its call's token (none for a compiled graph)
    here: Reply  # the driver's share, run at once


class BarrierRounds:
    """Rounds over ``fleet``'s actors and the ``driver``'s partitions; ``count`` counts them.

    After each round the calls are logged and, when due, partitions migrate (``balance``) or every
    actor is snapshotted (``recovery``).

    >>> rounds = BarrierRounds(fleet, recovery, balance, driver)  # doctest: +SKIP
    >>> rounds.start(calls, budget); rounds.finish().results      # doctest: +SKIP
    {1: Result(...), 2: Result(...)}
    """

    def __init__(self, fleet: Fleet, recovery: Recovery, balance: Rebalancer, driver: DriverHost) -> None:
        self.fleet, self.recovery, self.balance, self.driver = fleet, recovery, balance, driver
        self.count = 0
        self._round = Round({}, math.inf, {}, reply({}, {}))

    @property
    def computing(self) -> bool:
        """Whether actors compute the round :meth:`start` sent (else the driver ran all of it)."""
        return bool(self._round.batches)

    def start(self, calls: Calls, budget: int) -> None:
        """Send a round's calls, one batch per actor (not through a compiled graph: the actors start at
        once), and run the driver's share."""
        here, there = self.driver.split(calls)
        batches = self.fleet.batches(there, budget)
        horizon = min(h for h, _ in calls.values())
        tokens = self._send(batches) if self.fleet.graph is None else {}
        self._round = Round(batches, horizon, tokens, self.driver.run(here, budget))

    def finish(self) -> Reply:
        """The round's results, in actor order whichever answered first; its compute is the slowest
        actor's (or the driver's)."""
        batches, horizon, tokens, here = self._round
        if not batches:  # the driver's partitions alone
            replies: Iterator[tuple[int, bytes]] = iter(())
        elif self.fleet.graph is None:
            replies = self._answers(batches, horizon, tokens)
        else:
            replies = iter(self._compiled(batches, horizon).items())
        seconds, results, compute = dict(here.seconds), here.results, here.compute
        parts = {}
        for h, data in replies:
            answer = unpack_results(data)
            parts[h] = answer.results
            seconds.update(answer.seconds)
            compute = max(compute, answer.compute)
            self.balance.weigh(answer.seconds)
        for h in sorted(parts):
            results.update(parts[h])
        self._done(batches, horizon)
        return Reply(seconds, results, compute)

    def _send(self, batches: dict[int, bytes]) -> dict[int, object]:
        """One call per actor in ``batches`` (a direct line's or Ray's): its token, by actor."""
        return {h: self.fleet.calls.send(h, data) for h, data in batches.items()}

    def _answers(
        self, batches: dict[int, bytes], horizon: float, tokens: dict[int, object]
    ) -> Iterator[tuple[int, bytes]]:
        """``(actor, reply)`` to one call per actor (``tokens``), the first to answer first; a dead
        actor is rebuilt and answers the round."""
        calls, waiting = self.fleet.calls, dict(tokens)
        while waiting:
            h = calls.first(waiting)
            token = waiting.pop(h)
            try:
                data = calls.answer(h, token)
            except GONE as err:
                data = self.recovery.recover(h, batches[h], horizon, err)
            yield h, data

    def _compiled(self, batches: dict[int, bytes], horizon: float) -> dict[int, bytes]:
        """One compiled-graph execution; if it fails, every actor is rebuilt and the round run again."""
        try:
            return self.fleet.graph.call(batches)
        except RayError as err:
            self.recovery.restart(horizon, err)
            try:
                if self.fleet.graph:
                    return self.fleet.graph.call(batches)
                return dict(self._answers(batches, horizon, self._send(batches)))
            except RayError as again:  # (compiled rounds take no lines)
                raise HostDied(
                    f"Ray actors died again while recovering, {when(horizon)}: {cause(again)}"
                ) from again

    def _done(self, batches: dict[int, bytes], horizon: float) -> None:
        """Log the round; migrate partitions, or snapshot every actor, when due (after a migration every
        actor is snapshotted already)."""
        self.count += 1
        for h, call in batches.items():
            self.recovery.record(h, call)
        if not self.balance.rounds_done(self.count, horizon):
            self.recovery.rounds_done(self.count)


__all__ = ["BarrierRounds", "Round"]
