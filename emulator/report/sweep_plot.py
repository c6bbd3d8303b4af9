"""Sweep plots: a metric against a varied parameter, one line per combination of the other keys.

Each point is the mean over seeds with its 95% confidence band (Student's t, from
:func:`emulator.sweep.compare`, the numbers of the sweep's table). The x axis is
the first varied numeric key (e.g. ``workload.mean_interarrival``); lines are the
other keys' combinations (e.g. each ``meta.policy``). With no numeric key the first
key's values are categories; with only seeds varied there is one point.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from matplotlib.figure import Figure

from ..sweep import compare
from .style import new_figure, palette

LABELS = {
    "mean_wait": "mean wait (s)",
    "mean_bounded_slowdown": "mean bounded slowdown",
    "late_percent": "late jobs (%)",
    "system_usage": "system usage",
    "utilization": "utilization",
    "jobs_killed": "jobs killed (kill rows)",
    "jobs_lost": "jobs lost (killed too often)",
    "makespan": "makespan (s)",
    "throughput": "throughput (jobs/s)",
    "mcp": "MCP (mean comprehensive performance)",
    "pb": "PB (performance balance)",
}


@dataclass(frozen=True)
class Band:
    """One line: its label, x positions, mean and 95% half-width per position, runs per position."""

    label: str
    x: np.ndarray
    mean: np.ndarray
    half: np.ndarray
    runs: np.ndarray


@dataclass(frozen=True)
class SweepPlot:
    metric: str
    x_key: str | None
    x_ticks: list[str] | None  # labels of categorical x positions (None: numeric x)
    bands: list[Band]


def x_key(rows: pa.Table, keys: list[str]) -> str | None:
    """The key for the x axis: the first numeric varied key other than seed, else the first other key."""
    others = [k for k in keys if k != "seed"]
    numeric = [
        k
        for k in others
        if pa.types.is_integer(rows.schema.field(k).type) or pa.types.is_floating(rows.schema.field(k).type)
    ]
    return (numeric or others or [None])[0]


def sweep_plot(rows: pa.Table, keys: list[str], metric: str, x: str | None = None) -> SweepPlot:
    """The bands of ``metric`` against ``x`` (default :func:`x_key`), from the sweep's ok points."""
    x = x or x_key(rows, keys)
    lines = [k for k in keys if k not in ("seed", x)]
    groups = [g for g in compare(rows, keys) if g[metric] is not None]
    numeric = x is not None and not pa.types.is_string(rows.schema.field(x).type)
    ticks = None if numeric or x is None else list(dict.fromkeys(g[x] for g in groups))
    by_line: dict[str, list[tuple[float, float, float, int]]] = {}
    for g in groups:
        label = ", ".join(f"{k}={g[k]}" for k in lines) or "all runs"
        position = 0.0 if x is None else (float(g[x]) if ticks is None else ticks.index(g[x]))
        by_line.setdefault(label, []).append((position, *g[metric], g["runs"]))
    bands = []
    for label, values in by_line.items():
        position, mean, half, runs = (np.array(v) for v in zip(*sorted(values), strict=True))
        bands.append(Band(label, position, mean, half, runs.astype(np.int64)))
    return SweepPlot(metric, x, ticks, bands)


def sweep_figure(p: SweepPlot) -> Figure:
    figure = new_figure(3.6, width=7.5)
    ax = figure.add_subplot()
    for band, colour in zip(p.bands, palette([b.label for b in p.bands]), strict=True):
        ax.plot(band.x, band.mean, marker="o", ms=4, color=colour, label=band.label)
        ax.fill_between(band.x, band.mean - band.half, band.mean + band.half, color=colour, alpha=0.2, lw=0)
        if len(band.x) == 1:  # a band of one point has no width: show the interval as an error bar
            ax.errorbar(band.x, band.mean, band.half, color=colour, capsize=4)
    if p.x_ticks is not None:
        ax.set_xticks(range(len(p.x_ticks)), [str(t) for t in p.x_ticks])
    elif p.x_key is None:
        ax.set_xticks([0], ["all runs"])
    ax.set(xlabel=p.x_key or "", ylabel=LABELS.get(p.metric, p.metric))
    ax.set_title(f"{LABELS.get(p.metric, p.metric)}: mean and 95% confidence band over seeds", loc="left")
    ax.grid(alpha=0.3)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return figure
