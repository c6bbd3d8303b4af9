"""Which Ray actor hosts which partition: a balanced grouping, and how to move towards a better one.

A round runs every actor in parallel and waits for the slowest, so a run is
as fast as its most loaded actor. Groups are built by longest-processing-time
first (LPT): partitions by decreasing weight, each to the least loaded actor.
Weights are static at the start (:func:`static_weights`) and the transport
later regroups on measured compute (wall clock: it changes which process runs
a partition, never what the partition computes, so traces stay the same).
The measured loads decay from check to check (:func:`decayed_loads`), so a
lasting imbalance moves partitions and one noisy window does not.
:func:`two_actor_ceilings` says how much any grouping could gain at all, from
the rounds of an in-process run (``scripts/bench_ray.py`` reports it).
Everything here is a pure function of its arguments, ties broken by index.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from emulator.data.scenario import Scenario
from emulator.engine.runner import entries


def static_weights(scenario: Scenario) -> list[float]:
    """A weight per partition before anything was measured: the jobs a cluster can expect, 0 for the
    meta partition.

    Every job costs its cluster a few events and scheduling passes, so the
    jobs entering a cluster directly (a trace's sites) weigh what they are;
    the meta-scheduler's jobs are shared in proportion to the clusters' CPUs,
    as load-balancing policies share them (jobs split a grid's compute
    closer to the best split than CPUs alone). MIPS is left out: faster
    machines finish the same jobs sooner, with no fewer events. The meta
    partition does one cheap call per job, not work per machine: weight 0 puts
    it, last, on the lightest actor; measured rebalancing moves it if that was
    wrong (a weight per job would outweigh clusters whose jobs cost more, as
    under CS 2.0). The measurements: docs/performance.md, its history.
    """
    direct, via_meta = entries(scenario)
    clusters = scenario.platform.clusters
    share = len(via_meta) / (sum(cluster.cpus for cluster in clusters) or 1)  # meta jobs per CPU
    return [0.0] + [len(mine) + share * c.cpus for mine, c in zip(direct, clusters, strict=True)]


def group_partitions(
    weights: Sequence[float], hosts: int, pids: Sequence[int] | None = None
) -> list[list[int]]:
    """Partition ids ``pids`` (default ``0..len(weights)-1``) in ``hosts`` groups balanced by LPT
    over ``weights`` (indexed by pid).

    Heaviest partition first (ties: lower pid), each to the actor with the
    least load so far (ties: fewer partitions, then lower index, so that no
    actor stays empty while there are partitions enough). Groups list pids in
    increasing order.

    >>> group_partitions([0, 8, 4, 4, 3, 3, 2], 2)
    [[1, 4, 6], [0, 2, 3, 5]]
    >>> group_partitions([0, 8, 4, 4, 3, 3, 2], 2, pids=range(1, 7))  # the meta partition elsewhere
    [[1, 4, 6], [2, 3, 5]]
    """
    pids = range(len(weights)) if pids is None else pids
    hosts = max(1, min(hosts, len(pids)))
    groups: list[list[int]] = [[] for _ in range(hosts)]
    loads = [0.0] * hosts
    for pid in sorted(pids, key=lambda p: (-weights[p], p)):
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
    grouped = sorted(pid for group in groups for pid in group)  # (the driver's partitions stay there)
    proposed = keep_in_place(group_partitions(weights, len(groups), grouped), owners(groups))
    slowest = max(host_loads(groups, weights))
    saving = slowest - max(host_loads(proposed, weights))
    if saving <= gain * slowest or saving <= floor:
        return None
    return proposed


def decayed_loads(loads: Sequence[float], window: Sequence[float], memory: float) -> list[float]:
    """Each partition's load after one more window: ``memory`` of the old plus the rest of the window's.

    Starting from zeros, a load counts ``1 - memory**k`` of itself after ``k``
    windows: an imbalance has to last a few windows before it looks worth a
    migration, and one noisy window cannot move partitions on its own.

    >>> decayed_loads([1.0, 0.0], [0.0, 2.0], memory=0.75)
    [0.75, 0.5]
    """
    return [memory * old + (1.0 - memory) * new for old, new in zip(loads, window, strict=True)]


def round_work(rounds: Sequence[dict[int, float]]) -> np.ndarray:
    """Each round's compute seconds by partition (``InProcess.partition_seconds``), as rounds x pids.

    >>> round_work([{0: 0.5, 2: 1.0}, {1: 2.0}]).tolist()
    [[0.5, 0.0, 1.0], [0.0, 2.0, 0.0]]
    """
    pids = 1 + max((pid for r in rounds for pid in r), default=-1)
    work = np.zeros((len(rounds), pids))
    for i, r in enumerate(rounds):
        for pid, seconds in r.items():
            work[i, pid] = seconds
    return work


SPLITS_CHUNK = 4096
"""Splits scored at once by :func:`two_actor_ceilings` (rounds x 4096 floats at a time)."""


def two_actor_ceilings(work: np.ndarray) -> tuple[float, float]:
    """The most two actors could speed up a run whose rounds took ``work`` (rounds x pids) in one process.

    A round lasts as long as its busier actor, and no partition's round can
    be split, so with the barrier free of cost the best is: ``(one split,
    split per round)``, the speed-up of the best split of the partitions
    between two actors kept for the whole run, and of a split chosen afresh
    every round (what rebalancing after every round could at most reach).
    Every split is tried: fine for the few dozen partitions two actors host
    on a benchmark, exponential beyond.

    >>> two_actor_ceilings(np.array([[0.0, 2.0, 1.0, 1.0], [0.0, 0.0, 2.0, 2.0]]))
    (1.6, 2.0)
    """
    rounds, pids = work.shape
    total, per_round = work.sum(), work.sum(axis=1)
    if pids < 2 or total == 0:
        return 1.0, 1.0
    whole_run, each_round = np.inf, np.full(rounds, np.inf)
    others = pids - 1  # partition 0 stays with the first actor: the other splits are mirror images
    for start in range(0, 1 << others, SPLITS_CHUNK):
        splits = np.arange(start, min(start + SPLITS_CHUNK, 1 << others))
        with_first = ((splits[:, None] >> np.arange(others)) & 1).astype(float).T  # others x splits
        first = work[:, 1:] @ with_first + work[:, :1]  # rounds x splits: the first actor's seconds
        busier = np.maximum(first, per_round[:, None] - first)
        whole_run = min(whole_run, busier.sum(axis=0).min())
        each_round = np.minimum(each_round, busier.min(axis=1))
    return float(total / whole_run), float(total / each_round.sum())


def projected_speedup(
    work: np.ndarray,
    actors: int,
    round_cost: float,
    overhead: float = 0.0,
    in_driver: Sequence[int] = (),
    driver: float = 0.0,
    pipelined: bool = False,
) -> float:
    """What ``actors`` actors on as many cores could give over one process, for rounds that took ``work``.

    ``work``: compute seconds, rounds x pids, measured in one process. The
    partitions are grouped by LPT over their total compute, once for the run;
    a round then lasts its busiest actor's compute plus ``round_cost`` (Ray's
    round of calls to that many actors, measured); both sides pay
    ``overhead`` per round (the coordinator's own work). So a run whose rounds
    each hold one partition's work gains nothing, whatever the actors.
    Partitions ``in_driver`` (:class:`actors.driver_host.DriverHost`) run in the
    driver beside the actors (as a process of its own): a round that holds
    only them pays no Ray round.

    ``driver``: the driver's own CPU seconds beyond its partitions (replies
    unpacked, rows merged and written, the coordinator: measured on a Ray run),
    which takes the place of ``overhead`` on the actors' side. It is spread over
    the rounds like the actors' compute (their rows are its work) and runs in
    the driver's turn, after the round's replies. ``pipelined``: the driver's
    turn of a round overlaps the actors' next round, as pipelined rounds and
    overlapped writing have it (else a round ends with it). Either way the
    actors and the driver share ``actors`` cores: a run takes at least all of
    their CPU over the cores.

    >>> work = np.array([[1.0, 1.0], [2.0, 0.0]])  # two rounds, two partitions
    >>> round(projected_speedup(work, 2, 0.5), 3)   # (2 + 2) / (1 + 0.5 + 2 + 0.5)
    1.0
    >>> round(projected_speedup(work, 2, 0.5, in_driver=[0]), 3)  # (2 + 2) / (1 + 0.5 + 2)
    1.143
    """
    pids = [pid for pid in range(work.shape[1]) if pid not in in_driver]
    groups = group_partitions(work.sum(axis=0).tolist(), actors, pids)
    busiest = np.stack([work[:, group].sum(axis=1) for group in groups], axis=1).max(axis=1)
    hosted = work[:, list(in_driver)].sum(axis=1)
    calls = (busiest > 0) | (hosted == 0)  # rounds that call actors (an empty round still costs one)
    rounds = work.shape[0]
    if not driver:
        took = np.maximum(busiest, hosted).sum() + round_cost * calls.sum() + overhead * rounds
        return float((work.sum() + overhead * rounds) / took)
    spread = work[:, pids].sum(axis=1)
    turn = hosted + driver * spread / max(spread.sum(), 1e-12)  # the driver's turn, by round
    actor_side = busiest + round_cost * calls
    if pipelined:  # round r's turn beside round r + 1's actors
        path = np.maximum(np.append(actor_side, 0.0), np.insert(turn, 0, 0.0)).sum()
    else:
        path = (np.maximum(actor_side, hosted) + turn - hosted).sum()
    cpu = work.sum() + driver + round_cost * calls.sum()
    return float((work.sum() + overhead * rounds) / max(path, cpu / actors))


def owners(groups: list[list[int]]) -> dict[int, int]:
    """The index of the group (actor) holding every pid."""
    return {pid: h for h, group in enumerate(groups) for pid in group}


__all__ = [
    "better_grouping",
    "decayed_loads",
    "group_partitions",
    "host_loads",
    "keep_in_place",
    "owners",
    "projected_speedup",
    "round_work",
    "static_weights",
    "two_actor_ceilings",
]
