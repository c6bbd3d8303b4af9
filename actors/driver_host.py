"""Partitions the Ray transport runs in the driver itself: the meta partition.

A meta-scheduled grid alternates: the meta partition's horizon waits on the
clusters' reports, theirs on its dispatches, so with dense arrivals every
other round holds the meta partition alone. In an actor each of those rounds
would be a Ray call for one cheap partition: packing, a process hop both
ways, and an idle second actor. In the driver such a round is a function
call, and its messages cross one process boundary instead of two (cluster ->
driver, not cluster -> driver -> actor). The partition computes exactly what
it computes in an actor, so the trace is the same.

Pipelined rounds (:data:`actors.transport.PIPELINE_FROM`) run it beside the
clusters instead: its window while they compute their next.

It never dies apart from the driver, so it needs no snapshot, and it never
migrates: rebalancing groups the actors' partitions only. Without partitions
(the meta partition in an actor) it answers every call with nothing.
"""

from __future__ import annotations

import time
from collections import deque

from emulator.sync.coordinator import Calls, InProcess, State

from .packing import Reply, as_messages, reply


class DriverHost:
    """Partitions run in this process between the actors' calls, answering as a host would.

    A round's share runs at once (:meth:`run`); in a free run each call's
    reply waits in :attr:`done` until collected, oldest first.

    >>> host = DriverHost(build_partitions(scenario, [0]))  # doctest: +SKIP
    >>> host.run({0: (horizon, inbox)}, budget).results  # doctest: +SKIP
    {0: Result(...)}
    """

    def __init__(self, partitions: list) -> None:
        self.local = InProcess(partitions)
        self.pids = frozenset(self.local.partitions)  # (they never migrate)
        self.done: deque[Reply] = deque()
        self.cpu_seconds = 0.0  # the CPU its calls took (benchmarks weigh the driver's share by it)

    def states(self) -> dict[int, State]:
        return self.local.states()

    def split(self, calls: Calls) -> tuple[Calls, Calls]:
        """``calls`` for this host's partitions, and for the others (the actors')."""
        if not self.pids:
            return {}, calls
        here = {pid: call for pid, call in calls.items() if pid in self.pids}
        return here, {pid: call for pid, call in calls.items() if pid not in self.pids}

    def run(self, calls: Calls, budget: int) -> Reply:
        """Advance the partitions called; inboxes hold messages as the driver routes them (tuples)."""
        if not calls:
            return reply({}, {})
        started = time.process_time()
        inboxes = {pid: (horizon, as_messages(inbox)) for pid, (horizon, inbox) in calls.items()}
        results = self.local.advance(inboxes, budget)
        self.cpu_seconds += time.process_time() - started
        return reply(self.local.partition_seconds, results)

    def submit(self, calls: Calls, budget: int) -> None:
        """A free run's call: run now, collected later (a driver's partition never keeps a host waiting)."""
        if calls:
            self.done.append(self.run(calls, budget))

    def policy_stats(self) -> dict[int, dict[str, float]]:
        return self.local.policy_stats()

    def timelines(self):
        return self.local.timelines()


__all__ = ["DriverHost"]
