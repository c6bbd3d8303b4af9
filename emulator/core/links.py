"""Stress tests: link degradation and stale information, the ``[stress]`` keys that set them.

- ``status_period`` (s, default 0): clusters report their status to the
  meta-scheduler only at multiples of it, one report carrying every change
  since the last (none when nothing changed), so dispatch policies act on
  older views. 0: after every scheduling event.
- ``[[stress.links]]``: a cluster's link from a time on (piecewise constant;
  the cluster's own ``latency``/``bandwidth`` before its first change). The
  true schedule is in the platform (``Cluster.link_changes``): transfers
  (:class:`~emulator.core.model.ChangingLinkClock`) and status messages use the
  link in force when they are sent, the lookahead is the least latency at any
  time, and the meta-scheduler's view (``MetaView.latency``/``bandwidth``)
  learns of a change only from the cluster's next status report.
"""

from __future__ import annotations

import math
from dataclasses import replace

from .config import ScenarioError, Table
from .model import MIN_LATENCY, Cluster, Link


def read(stress: Table, clusters: list[Cluster]) -> tuple[list[Cluster], float]:
    """The clusters with their ``link_changes`` from ``[[stress.links]]``, and ``status_period``."""
    period = stress.number("status_period", 0.0, low=0.0)
    if math.isinf(period):
        raise stress.fail("status_period", period, "a finite number >= 0")
    names = [c.name for c in clusters]
    changes: dict[str, dict[float, tuple[Table, float | None, float | None]]] = {n: {} for n in names}
    for t in stress.tables("links", []):
        name = t.get(
            "cluster", str, check=lambda v: v in names, expected=f"one of the clusters: {', '.join(names)}"
        )
        time = t.number("time", low=0.0)
        if math.isinf(time):
            raise t.fail("time", time, "a finite time >= 0")
        latency = t.number("latency", low=MIN_LATENCY, finite=True) if t.has("latency") else None
        bandwidth = _bandwidth(t)
        if latency is None and bandwidth is None:
            raise ScenarioError(
                f"{t.source}: {t.path}: expected a new 'latency' and/or 'bandwidth' (or 'baud_rate')"
            )
        t.done()
        earlier = changes[name].get(time)
        if earlier is not None:
            raise ScenarioError(
                f"{t.source}: {t.path} changes the link of cluster {name!r} at time {time:g}, "
                f"as {earlier[0].path} does: expected one change per cluster and time"
            )
        changes[name][time] = (t, latency, bandwidth)
    built = []
    for cluster in clusters:
        link, steps = cluster.link, []
        for time in sorted(changes[cluster.name]):
            _, latency, bandwidth = changes[cluster.name][time]
            latency = link.latency if latency is None else latency
            link = Link(latency, link.bandwidth if bandwidth is None else bandwidth)
            steps.append((time, link))
        built.append(replace(cluster, link_changes=tuple(steps)) if steps else cluster)
    return built, period


def _bandwidth(t: Table) -> float | None:
    """``bandwidth`` in bytes/s or ``baud_rate`` in bits/s (as in ``[[clusters]]``); None: unchanged."""
    if t.has("bandwidth") and t.has("baud_rate"):
        raise t.fail("baud_rate", t.data["baud_rate"], "either bandwidth or baud_rate, not both")
    if t.has("baud_rate"):
        return t.number("baud_rate", low=0.0, strict_low=True) / 8.0
    if t.has("bandwidth"):
        return t.number("bandwidth", low=0.0, strict_low=True)
    return None
