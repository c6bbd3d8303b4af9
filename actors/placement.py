"""Where the actors fit: the CPUs each asks for, and a bounded wait for them to start.

Ray queues an actor that no node has room for and says nothing: a run that
asked for more than the cluster holds, or that lost a node with every other
CPU taken, would wait for ever. So each actor asks for a share of a CPU that
lets all of them fit on the nodes there are (:func:`actor_share`), and the
driver waits for actors to start only while a node has room for them or they
are still starting (:func:`await_started`); else the run ends, in one line
saying what was missing (:class:`Unplaced`, exit status 4).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import ray
from ray._private import state

GRACE_SECONDS = 5.0
"""How long actors may wait with no node having room for them before the run gives up: a dead
actor's CPU is given back to its node a moment after it is killed."""

START_SECONDS = 120.0
"""How long the wait may go without one more actor starting although a node has room (a slow worker
start, a runtime environment set up on a new node) before the run gives up."""

POLL_SECONDS = 0.5
"""How often the wait looks at the nodes' free resources."""


class Unplaced(RuntimeError):
    """Actors that Ray could not start: which partitions they host, what they need, what is free."""


RESOURCE_UNIT = 1e-4
"""Ray counts resources in ten-thousandths: a share is rounded down to them, so that ``n`` shares fit
in what ``n`` shares were computed to fit in (Ray would round 2/3 up, and three would not fit in 2)."""


def _units(share: float) -> float:
    return round(math.floor(share / RESOURCE_UNIT + 1e-9) * RESOURCE_UNIT, 4)


SLACK = 1e-6
"""Below Ray's unit: what resource counts read back as floats may be off by."""


def actor_share(node_cpus: Sequence[float], actors: int) -> float:
    """The CPUs each of ``actors`` actors asks for, at most 1, so that all fit on nodes of
    ``node_cpus`` CPUs each (a node holds ``floor(cpus / share)`` of them), in Ray's units.

    >>> actor_share([1, 1, 1], 3), actor_share([1, 1, 1], 4), actor_share([4], 8), actor_share([2, 1], 5)
    (1.0, 0.5, 0.5, 0.5)
    """
    candidates = sorted(
        {_units(min(1.0, cpus / k)) for cpus in node_cpus if cpus > 0 for k in range(1, actors + 1)} - {0.0}
    )
    for share in reversed(candidates):
        if sum(math.floor(cpus / share + 1e-9) for cpus in node_cpus) >= actors:
            return share
    return candidates[0] if candidates else 1.0


def node_cpus() -> list[float]:
    """Each live node's CPUs (none for a node that has none)."""
    return [resources.get("CPU", 0.0) for resources in state.total_resources_per_node().values()]


def await_started(
    hosts: Sequence, groups: Sequence[Sequence[int]], cpus: float, what: str, holding: int = 0
) -> None:
    """Return once every actor of ``hosts`` (hosting ``groups``) has started; raise :class:`Unplaced`
    if for :data:`GRACE_SECONDS` some had surely been given no node while no node had ``cpus`` CPUs
    free, or none of them started for :data:`START_SECONDS`. ``holding``: the run's other actors, each
    holding ``cpus``. ``what`` says in the error what the actors were for (e.g. ``"for the run"``).
    The waiting actors are killed before it is raised.

    Ray tells no actor waiting for a node from one starting on a node (which
    holds its CPUs already): the CPUs in use tell, less the run's own. Other
    work on the cluster can only make the wait longer, up to :data:`START_SECONDS`.

    >>> await_started(hosts, [[1, 2], [3]], 1.0, "for the run")  # doctest: +SKIP
    """
    waiting = {host.pid.remote(): i for i, host in enumerate(hosts)}
    start = roomless = progress = time.monotonic()
    while waiting:
        done, _ = ray.wait(list(waiting), num_returns=len(waiting), timeout=POLL_SECONDS)
        for ref in done:
            del waiting[ref]
        if not waiting:
            return
        now = time.monotonic()
        progress = now if done else progress
        free, used = _cpus_by_node()
        starting = used / cpus - holding - (len(hosts) - len(waiting))  # at most this many have a node
        placed = len(waiting) <= starting + SLACK
        if placed or any(cpus <= room + SLACK for room in free):
            roomless = now
        if now - roomless >= GRACE_SECONDS or now - progress >= START_SECONDS:
            pending = sorted(waiting.values())
            for i in pending:
                ray.kill(hosts[i])
            raise Unplaced(_unplaced(pending, groups, cpus, free, placed, what, now - start))


def _cpus_by_node() -> tuple[list[float], float]:
    """Each live node's free CPUs, and the CPUs in use on all of them."""
    total = {node: resources.get("CPU", 0.0) for node, resources in state.total_resources_per_node().items()}
    available = state.available_resources_per_node()
    free = [available.get(node, {}).get("CPU", 0.0) for node in total]
    return free, sum(total.values()) - sum(free)


def _unplaced(
    pending: list[int],
    groups: Sequence[Sequence[int]],
    cpus: float,
    free: list[float],
    placed: bool,
    what: str,
    waited: float,
) -> str:
    """The one line :class:`Unplaced` says: which partitions, and why (``placed``: Ray gave the actors
    their CPUs, and their worker processes did not finish starting)."""
    pids = sorted(pid for i in pending for pid in groups[i])
    room = ", ".join(f"{cpu:g}" for cpu in sorted(free, reverse=True)) or "none"
    if placed:
        why = f"they had their CPUs but did not start within {waited:.0f} s (a machine too busy?)"
    elif any(cpus <= f + SLACK for f in free):
        why = f"they did not start within {waited:.0f} s although a node has room"
    else:
        why = f"each needs {cpus:g} CPU and no Ray node has that free (free CPUs by node: {room})"
    return f"cannot start the Ray actor(s) hosting partition(s) {pids} {what}: {why}"


__all__ = ["GRACE_SECONDS", "START_SECONDS", "Unplaced", "actor_share", "await_started", "node_cpus"]
