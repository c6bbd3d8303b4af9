"""Checkpoints and recovery: an actor that dies is rebuilt, and the trace is as if it had not.

Every ``every`` calls (rounds, or a free run's calls to that actor) each
actor's partitions are snapshotted, and its calls since are logged. An actor
that dies is recreated for its current group from its snapshot, replays its
logged calls (partitions are deterministic, so they produce what they produced
before) and answers the call it died in. A failure that may have left the live
actors in an unknown state (a failed compiled round, a failed migration)
rebuilds every actor the same way. With checkpoints off (``every`` 0) a dead
actor ends the run with :class:`HostDied`, naming its partitions and the
virtual time.
"""

from __future__ import annotations

import math

import ray
from ray.exceptions import RayActorError

from .fleet import Fleet


class HostDied(RuntimeError):
    """An actor died and could not be recovered: names its partitions and the virtual time."""


class Recovery:
    """The snapshots of ``fleet``'s actors and the calls each was sent since its last one.

    >>> recovery = Recovery(fleet, every=1000)              # doctest: +SKIP
    >>> recovery.record(0, packed); recovery.due(0)          # doctest: +SKIP
    False
    >>> reply = recovery.recover(0, packed, horizon, err)  # actor 0 died: rebuilt  # doctest: +SKIP
    """

    def __init__(self, fleet: Fleet, every: int) -> None:
        self.fleet, self.every = fleet, every
        self.snapshots: list[bytes | None] = [None] * len(fleet.hosts)
        self.log: list[list[bytes]] = [[] for _ in fleet.hosts]  # by actor: its calls since its snapshot

    def record(self, h: int, call: bytes) -> None:
        """Actor ``h`` answered ``call``: logged, to replay if it dies before its next snapshot."""
        if self.every:
            self.log[h].append(call)

    def due(self, h: int, flying: int = 0) -> bool:
        """Whether actor ``h``'s snapshot is due once its ``flying`` calls out are answered (and logged)."""
        return bool(self.every) and len(self.log[h]) + flying >= self.every

    def rounds_done(self, rounds: int) -> None:
        """Snapshot every actor every ``every`` rounds (a barrier round: no call is out)."""
        if self.every and rounds % self.every == 0:
            self.checkpoint_all()

    def checkpoint_all(self) -> None:
        for h in range(len(self.fleet.hosts)):
            self.checkpoint(h)

    def checkpoint(self, h: int) -> None:
        """Snapshot actor ``h`` and forget its logged calls; an actor that died after answering is first
        rebuilt (its last snapshot and logged calls, the one just answered included)."""
        try:
            self.snapshots[h] = ray.get(self.fleet.hosts[h].snapshot.remote())
        except RayActorError:
            self.rebuild(h)
            self.snapshots[h] = ray.get(self.fleet.hosts[h].snapshot.remote())
        self.log[h] = []

    def recover(self, h: int, call: bytes, horizon: float, err: Exception) -> bytes:
        """Actor ``h`` died (``err``) before answering ``call``: rebuilt, its answer."""
        self.check_recoverable([h], horizon, err)
        self.rebuild(h)
        try:
            return ray.get(self.fleet.hosts[h].advance.remote(call))
        except RayActorError as again:
            raise HostDied(
                f"Ray actor hosting partition(s) {self.fleet.groups[h]} died again while recovering, "
                f"{when(horizon)}: {cause(again)}"
            ) from again

    def check_recoverable(self, dead: list[int], horizon: float, err: Exception) -> None:
        """:class:`HostDied` for the actors ``dead`` if checkpoints are off."""
        if not self.every:
            pids = sorted(pid for h in dead for pid in self.fleet.groups[h])
            raise HostDied(
                f"Ray actor hosting partition(s) {pids} died in the round {when(horizon)} "
                f"(checkpoints are off, so the run cannot recover): {cause(err)}"
            ) from err

    def restart(self, horizon: float, err: Exception) -> None:
        """Every actor rebuilt, and the graph recompiled: after a failure that may have left live actors
        in an unknown state (a failed compiled round, a failed migration)."""
        fleet = self.fleet
        with fleet.recompiling():
            dead = [h for h in range(len(fleet.hosts)) if not fleet.alive(h)]
            self.check_recoverable(dead, horizon, err)
            for h, host in enumerate(fleet.hosts):
                if h not in dead:
                    ray.kill(host)
                self.rebuild(h)

    def rebuild(self, h: int) -> None:
        """A new actor for actor ``h``'s current group at its last snapshot, the logged calls replayed
        (the old one is killed first: a line that broke may have left it alive)."""
        ray.kill(self.fleet.hosts[h])
        host = self.fleet.spawn(h)
        if self.snapshots[h] is not None:
            ray.get(host.restore.remote(self.snapshots[h]))
        for call in self.log[h]:
            ray.get(host.advance.remote(call))
        self.fleet.replace(h, host)


def cause(err: Exception) -> str:
    """Ray's error in one line: its first (the rest is Ray's own diagnosis, for --debug's traceback)."""
    lines = str(err).strip().splitlines()
    return lines[0] if lines else type(err).__name__


def when(horizon: float) -> str:
    """Where in virtual time a failed call was: before its horizon, or running free (no horizon)."""
    return "running free (no horizon)" if horizon == math.inf else f"before virtual time {horizon:g}"


__all__ = ["HostDied", "Recovery", "cause", "when"]
