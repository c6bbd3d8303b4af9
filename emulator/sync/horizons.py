"""Per-partition safe horizons from promises over the link graph (DESIGN.md, "Safe horizons").

Messages travel only along links, each with a least latency > 0. A partition
that says it could send nothing before its *promise*, and that receives
nothing that would make it send earlier, cannot put a message on a link
before that time; whatever it sends reaches its neighbour one latency later.
So each partition's *earliest output time* is a shortest path over the link
graph, from every partition's own promise, and its *horizon* (the earliest
time a message not yet sent could reach it) is the least
``EOT(sender) + latency`` over its in-links. A partition nothing can reach
has an infinite horizon: it runs freely.

>>> links = Links({(0, 1): 2.0, (1, 0): 2.0})
>>> eot = earliest_outputs(links, {0: 10.0, 1: 3.0}, {0: True, 1: True})
>>> eot, horizons(links, eot)
({0: 5.0, 1: 3.0}, {0: 5.0, 1: 7.0})
"""

from __future__ import annotations

import bisect
import heapq
import math
from array import array
from collections.abc import Mapping

import numpy as np

from ..core.messages import META


class Links:
    """The link graph: the least latency of each directed link ``(src, dst)`` over the whole run.

    >>> Links({(0, 1): 0.5}).into[1]
    [(0, 0.5)]
    """

    def __init__(self, latencies: Mapping[tuple[int, int], float]) -> None:
        self.into: dict[int, list[tuple[int, float]]] = {}
        self.out_of: dict[int, list[tuple[int, float]]] = {}
        for (src, dst), latency in sorted(latencies.items()):
            if not latency > 0:
                raise ValueError(f"link {src} -> {dst}: latency must be > 0, got {latency}")
            self.into.setdefault(dst, []).append((src, latency))
            self.out_of.setdefault(src, []).append((dst, latency))

    @classmethod
    def of_platform(cls, platform) -> Links:
        """Meta <-> cluster ``i`` (partition ``i + 1``) both ways, at the least latency the link ever has.

        A link that changes (stress tests) carries each message at the latency in
        force when it is sent, so the least one over its changes bounds them all.
        """
        latencies = {}
        for i, cluster in enumerate(platform.clusters):
            least = min(link.latency for link in (cluster.link, *(new for _, new in cluster.link_changes)))
            latencies[(META, i + 1)] = latencies[(i + 1, META)] = least
        return cls(latencies)


def earliest_outputs(links: Links, base: Mapping[int, float], reacts: Mapping[int, bool]) -> dict[int, float]:
    """Each partition's earliest output time: its ``base`` lowered along links into reacting partitions.

    ``base``: by pid, the least of the partition's promise and (if it reacts)
    the earliest message already pending for it. A message can wake only a
    partition that reacts, so only links into those carry a lower bound on.
    Dijkstra from every partition at once (latencies are > 0).
    """
    eot = dict(base)
    heap = [(t, pid) for pid, t in eot.items() if t < math.inf]
    heapq.heapify(heap)
    while heap:
        t, src = heapq.heappop(heap)
        if t > eot[src]:
            continue
        for dst, latency in links.out_of.get(src, ()):
            arrival = t + latency
            if arrival < eot.get(dst, math.inf) and reacts.get(dst, True):
                eot[dst] = arrival
                heapq.heappush(heap, (arrival, dst))
    return eot


def horizons(links: Links, eot: Mapping[int, float]) -> dict[int, float]:
    """By pid of ``eot``: the earliest time a message not yet sent could reach it (inf: none can)."""
    into = links.into
    return {
        pid: min((eot.get(src, math.inf) + lat for src, lat in into.get(pid, ())), default=math.inf)
        for pid in eot
    }


class LinkSolver:
    """:func:`earliest_outputs` and :func:`horizons` over arrays indexed like ``pids``.

    A grid's links form a star (the meta partition and each cluster, both
    ways): then the fixed point has a closed form, a few numpy operations
    whatever the number of clusters. The hub's earliest output is the least
    of its own and, if it reacts, each cluster's plus its latency (a path back
    through the hub is longer); each reacting cluster's is the least of its
    own and the hub's plus its link. Any other graph takes the general path.
    """

    def __init__(self, links: Links, pids: list[int]) -> None:
        self.links, self.pids = links, pids
        index = {pid: i for i, pid in enumerate(pids)}
        edges = [(src, dst) for src, out in links.out_of.items() for dst, _ in out]
        hubs = set(pids)
        for src, dst in edges:
            hubs &= {src, dst}
        self.hub = index[min(hubs)] if edges and hubs and all(p in index for e in edges for p in e) else None
        if self.hub is None:
            return
        hub = pids[self.hub]
        self.spokes = np.array([i for i, pid in enumerate(pids) if pid != hub], dtype=np.int64)
        into = {src: lat for src, lat in links.into.get(hub, ())}
        out = {dst: lat for dst, lat in links.out_of.get(hub, ())}
        self.to_hub = np.array([into.get(pids[i], math.inf) for i in self.spokes])
        self.from_hub = np.array([out.get(pids[i], math.inf) for i in self.spokes])

    def horizons(self, base: np.ndarray, reacts: np.ndarray) -> np.ndarray:
        if self.hub is None:
            return self._general(base, reacts)
        hub, spokes = self.hub, self.spokes
        hub_eot = base[hub]
        if reacts[hub] and spokes.size:
            hub_eot = min(hub_eot, float((base[spokes] + self.to_hub).min()))
        spoke_eot = np.where(reacts[spokes], np.minimum(base[spokes], hub_eot + self.from_hub), base[spokes])
        horizon = np.empty_like(base)
        horizon[spokes] = hub_eot + self.from_hub
        horizon[hub] = (spoke_eot + self.to_hub).min(initial=math.inf)
        return horizon

    def _general(self, base: np.ndarray, reacts: np.ndarray) -> np.ndarray:
        pids = self.pids
        eot = earliest_outputs(
            self.links,
            dict(zip(pids, base.tolist(), strict=True)),
            dict(zip(pids, reacts.tolist(), strict=True)),
        )
        found = horizons(self.links, eot)
        return np.array([found[pid] for pid in pids], dtype=float)


class Timeline:
    """What a partition processed, for the run's tail: every event time, and when its foreground ended.

    Background events (failures, repairs, outages, link changes) never end, so
    a run stops when foreground work does, and its trace keeps the background
    rows before :func:`tail_end`. ``end`` is the time of the event after which
    the partition last had no foreground work left (-inf: it never had any).
    """

    def __init__(self, busy: bool) -> None:
        self.times = array("d")
        self.end = -math.inf
        self._busy = busy

    def woken(self) -> None:
        """Work was delivered (a job on its way): foreground until an event says otherwise."""
        self._busy = True

    def step(self, time: float, busy: bool) -> None:
        """The events at ``time`` were processed; ``busy``: foreground work is left after them."""
        self.times.append(time)
        if busy:
            self._busy = True
        elif self._busy:
            self.end = time
            self._busy = False


def tail_end(times: list[array], last_foreground: float, lookahead: float) -> float:
    """Where the trace ends: the first window limit past the last foreground event.

    The trace has always ended there: the coordinator used to advance every
    partition in windows ``[t, t + lookahead)`` from the earliest pending time
    ``t``, and stopped after the first window that left no foreground work.
    That limit depends only on the event times, so it is rebuilt from them
    (each partition's, up to ``last_foreground``), and the background rows
    before it are kept, whatever order the partitions ran in.
    """
    if last_foreground == -math.inf:
        return -math.inf
    merged = sorted({t for part in times for t in part if t <= last_foreground})
    limit = -math.inf
    while limit <= last_foreground:
        limit = merged[bisect.bisect_left(merged, limit)] + lookahead
    return limit
