"""Rebalancing: partitions migrate between actors when the measured compute says the slowest would gain.

A round waits for the slowest actor, so partitions start in LPT groups over
static weights (:mod:`actors.grouping`) and, every ``every`` rounds (or calls
answered, in pipelined rounds), are regrouped by LPT over the compute each
partition measured, the recent windows weighing most (:data:`REBALANCE_MEMORY`).
When the slowest actor's share would drop by more than :data:`REBALANCE_GAIN`
and :data:`REBALANCE_FLOOR`, the partitions that change actor migrate (the
source actor pickles and drops them, the destination adopts them), then every
actor is snapshotted afresh, so recovery always starts from the current
grouping. Which actor runs a partition depends on measured wall clock; what
the partition computes does not, so the trace is the same whatever moves.
"""

from __future__ import annotations

import ray
from ray.exceptions import RayActorError

from .fleet import Fleet
from .grouping import better_grouping, decayed_loads
from .recovery import Recovery

REBALANCE_GAIN = 0.1
"""Migrate only if the slowest actor's load would drop by more than this share: a migration costs a
pickle round trip and a snapshot of every actor."""

REBALANCE_FLOOR = 0.05
"""...and by more than this many seconds per window: on light runs the relative gain is timing
noise, and moving partitions back and forth would cost more than it saves."""

REBALANCE_MEMORY = 0.8
"""How much of a partition's load carries over from one check to the next (:func:`decayed_loads`).
One window's loads are noise (which cluster the next jobs go to, one long plan): judged on these
loads, a grouping already balanced stays, and a lopsided one still moves by the third check."""


class Rebalancer:
    """Weighs the compute each partition of ``pids`` measured, and migrates ``fleet``'s partitions.

    ``every``: rounds (or calls answered) between checks (0: never); ``gain`` and ``floor``: what the
    slowest actor must gain for partitions to move (:func:`~actors.grouping.better_grouping`);
    ``migrations`` counts the partitions moved.

    >>> balance = Rebalancer(fleet, recovery, pids=4, every=100)  # doctest: +SKIP
    >>> balance.weigh({1: 0.25, 2: 0.01}); balance.check(horizon)  # doctest: +SKIP
    False
    """

    def __init__(
        self,
        fleet: Fleet,
        recovery: Recovery,
        pids: int,
        every: int,
        gain: float = REBALANCE_GAIN,
        floor: float = REBALANCE_FLOOR,
    ) -> None:
        self.fleet, self.recovery = fleet, recovery
        self.every, self.gain, self.floor = every, gain, floor
        self.migrations = 0
        self.answered = 0  # calls answered since the last check (pipelined rounds)
        self.window = [0.0] * pids  # compute seconds by pid since the last check
        self.loads = [0.0] * pids  # by pid, decayed over the checks (REBALANCE_MEMORY)

    def weigh(self, seconds: dict[int, float]) -> None:
        """Each partition's compute in a reply, into the loads the next check weighs."""
        if self.every:
            for pid, spent in seconds.items():
                self.window[pid] += spent

    def rounds_done(self, rounds: int, horizon: float) -> bool:
        """The check, every ``every`` barrier rounds; returns whether partitions moved."""
        return bool(self.every) and rounds % self.every == 0 and self.check(horizon)

    def holds(self, flying: bool, horizon: float) -> bool:
        """Pipelined rounds: once ``every`` calls have been answered since the last check, whether the
        actors must drain first (calls are ``flying``: none gets another); when none is, the check runs
        (a partition migrates with no call out)."""
        if not self.every or self.answered < self.every:
            return False
        if flying:
            return True
        self.answered = 0
        self.check(horizon)
        return False

    def check(self, horizon: float) -> bool:
        """Regroup by LPT on the loads measured so far; migrate if the slowest actor gains. Returns
        whether partitions moved."""
        self.loads = decayed_loads(self.loads, self.window, REBALANCE_MEMORY)
        self.window = [0.0] * len(self.window)
        proposed = better_grouping(self.loads, self.fleet.groups, self.gain, self.floor)
        return proposed is not None and self.migrate(proposed, horizon)

    def migrate(self, groups: list[list[int]], horizon: float) -> bool:
        """Move the partitions whose actor changes: the source exports them, the destination adopts
        them; then every actor is snapshotted (logged calls replay only under the grouping they were
        made for).

        The pickled partitions go from actor to actor through the object store,
        not the driver. If an actor dies meanwhile, the others may be half-moved:
        every actor is rebuilt under the old grouping (as after a failed compiled
        round) and the move is dropped. Returns whether partitions moved.
        """
        fleet = self.fleet
        moves = moved(fleet.owner, groups)
        try:
            ray.get(
                [
                    fleet.hosts[dst].adopt.remote(fleet.hosts[src].export.remote(pids))
                    for (src, dst), pids in moves.items()
                ]
            )
        except RayActorError as err:
            self.recovery.restart(horizon, err)
            return False
        fleet.regroup(groups)
        self.migrations += sum(len(pids) for pids in moves.values())
        if self.recovery.every:
            self.recovery.checkpoint_all()
        return True


def moved(owner: dict[int, int], groups: list[list[int]]) -> dict[tuple[int, int], list[int]]:
    """The partitions that change actor from ``owner`` to ``groups``, by ``(source, destination)``.

    >>> moved({1: 0, 2: 0, 3: 1}, [[1], [2, 3]])
    {(0, 1): [2]}
    """
    moves: dict[tuple[int, int], list[int]] = {}
    for dst, group in enumerate(groups):
        for pid in group:
            if owner[pid] != dst:
                moves.setdefault((owner[pid], dst), []).append(pid)
    return moves


__all__ = ["REBALANCE_FLOOR", "REBALANCE_GAIN", "REBALANCE_MEMORY", "Rebalancer", "moved"]
