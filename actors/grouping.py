"""Which Ray actor hosts which partition: a balanced grouping, and how to move towards a better one.

A round runs every actor in parallel and waits for the slowest, so a run is
as fast as its most loaded actor. Groups are built by longest-processing-time
first (LPT): partitions by decreasing weight, each to the least loaded actor.
Weights are static at the start (:func:`static_weights`) and the transport
later regroups on measured compute (wall clock: it changes which process runs
a partition, never what the partition computes, so traces stay the same).
Everything here is a pure function of its arguments, ties broken by index.
"""

from __future__ import annotations

from collections.abc import Sequence

from emulator.scenario import Scenario


def static_weights(scenario: Scenario) -> list[float]:
    """A weight per partition before anything was measured: a cluster's CPUs, 0 for the meta partition.

    Under load-balancing meta policies a cluster receives jobs in proportion
    to its CPUs, and its queue and running set (what every scheduling event
    goes over) grow with them. MIPS is left out: faster machines finish the
    same jobs sooner, with no fewer events. The meta partition does one cheap
    call per job, not work per machine: weight 0 puts it, last, on the
    lightest actor; measured rebalancing moves it if that was wrong.
    """
    return [0.0] + [float(cluster.cpus) for cluster in scenario.platform.clusters]


def group_partitions(weights: Sequence[float], hosts: int) -> list[list[int]]:
    """Partition ids ``0..len(weights)-1`` in ``hosts`` groups balanced by LPT over ``weights``.

    Heaviest partition first (ties: lower pid), each to the actor with the
    least load so far (ties: fewer partitions, then lower index, so that no
    actor stays empty while there are partitions enough). Groups list pids in
    increasing order.

    >>> group_partitions([0, 8, 4, 4, 3, 3, 2], 2)
    [[1, 4, 6], [0, 2, 3, 5]]
    """
    hosts = max(1, min(hosts, len(weights)))
    groups: list[list[int]] = [[] for _ in range(hosts)]
    loads = [0.0] * hosts
    for pid in sorted(range(len(weights)), key=lambda p: (-weights[p], p)):
        h = min(range(hosts), key=lambda i: (loads[i], len(groups[i]), i))
        groups[h].append(pid)
        loads[h] += weights[pid]
    return [sorted(group) for group in groups]


def host_loads(groups: list[list[int]], weights: Sequence[float]) -> list[float]:
    """Each group's total weight."""
    return [sum(weights[pid] for pid in group) for group in groups]


def keep_in_place(groups: list[list[int]], owner: dict[int, int]) -> list[list[int]]:
    """``groups`` reordered so that group ``h`` goes to actor ``h``, the one already holding most of it.

    LPT numbers its groups afresh; matching each to the actor that already
    hosts most of its partitions (greedily, ties by index) keeps the
    partitions that need not move where they are.

    >>> keep_in_place([[2, 3], [0, 1]], {0: 0, 1: 0, 2: 1, 3: 0})
    [[0, 1], [2, 3]]
    """
    overlaps = sorted(
        (-sum(owner[pid] == h for pid in group), g, h)
        for g, group in enumerate(groups)
        for h in range(len(groups))
    )
    placed: dict[int, list[int]] = {}
    used: set[int] = set()
    for _, g, h in overlaps:
        if h not in placed and g not in used:
            placed[h] = groups[g]
            used.add(g)
    return [placed[h] for h in range(len(groups))]


def better_grouping(
    weights: Sequence[float], groups: list[list[int]], gain: float, floor: float
) -> list[list[int]] | None:
    """LPT groups over measured ``weights``, each kept on the actor holding most of it; or None.

    None unless the new groups cut the slowest actor's load by more than
    ``gain`` (a share of it) and more than ``floor`` (in the weights' unit,
    seconds): a migration costs a pickle round trip and a snapshot of every
    actor, and on light runs small relative gains are timing noise.

    >>> better_grouping([0.0, 3.0, 1.0, 1.0], [[0], [1, 2, 3]], gain=0.1, floor=0.5)
    [[1], [0, 2, 3]]
    >>> better_grouping([0.0, 3.0, 1.0, 1.0], [[1], [0, 2, 3]], gain=0.1, floor=0.5) is None
    True
    """
    proposed = keep_in_place(group_partitions(weights, len(groups)), owners(groups))
    slowest = max(host_loads(groups, weights))
    saving = slowest - max(host_loads(proposed, weights))
    if saving <= gain * slowest or saving <= floor:
        return None
    return proposed


def owners(groups: list[list[int]]) -> dict[int, int]:
    """The index of the group (actor) holding every pid."""
    return {pid: h for h, group in enumerate(groups) for pid in group}


__all__ = ["better_grouping", "group_partitions", "host_loads", "keep_in_place", "owners", "static_weights"]
