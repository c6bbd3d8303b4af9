"""CPU and license usage over time, per cluster: the curves the SU and LU metrics integrate.

The series are :func:`emulator.data.metrics.usage_series`, the metrics' own inputs, so a
plot can never disagree with ``summary.json``: "used" is CPUs (copies) held by
running jobs, "wanted" is what the jobs in the cluster's system (queued or
running) ask for, and capacity is the cluster's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..data.metrics import usage_series
from .data import RunData
from .style import OKABE_ITO, last_time, new_figure, steps, time_axis

PANELS = 6
"""Clusters per usage figure; more clusters make more figures, so every panel stays legible."""

USED, WANTED = OKABE_ITO[0], OKABE_ITO[1]

SERIES = ("cpus_used", "cpus_wanted", "licenses_used", "licenses_wanted")


@dataclass(frozen=True)
class Usage:
    """One cluster's usage: each series' level after every distinct event time."""

    cluster: str
    cpus: int
    licenses: int
    time: np.ndarray
    levels: dict[str, np.ndarray]
    origin: float = 0.0  # the run's start: times are labelled from it


def cluster_usage(run: RunData) -> list[Usage]:
    """Every cluster's usage step series, in platform order."""
    series = usage_series(run.jobs, run.events, tuple(c.license_per_machine for c in run.clusters))
    result = []
    for index, shape in enumerate(run.clusters):
        on = series["cluster"] == index
        levels = {}
        for name in SERIES:
            time, levels[name] = steps(series["time"][on], series[name][on])
        result.append(Usage(shape.name, shape.cpus, shape.license_copies, time, levels, run.start))
    return result


def usage_figure(usages: list[Usage]) -> Figure:
    """A row per cluster: CPUs on the left, license copies on the right, capacity dotted.

    The license column is left out when none of the clusters has a license.
    """
    with_licenses = any(u.licenses > 0 for u in usages)
    figure = new_figure(0.4 + 1.7 * len(usages))
    axes = figure.subplots(len(usages), 2 if with_licenses else 1, sharex=True, squeeze=False)
    for row, usage in zip(axes, usages, strict=True):
        _panel(row[0], usage, "cpus", usage.cpus, f"{usage.cluster}: CPUs")
        if with_licenses:
            _panel(row[1], usage, "licenses", usage.licenses, f"{usage.cluster}: license copies")
    axes[0, 0].legend(loc="upper right", fontsize="small", frameon=False)
    for ax in axes[-1]:
        time_axis(ax.xaxis, usages[0].origin, last_time([u.time for u in usages], usages[0].origin))
    return figure


def licensed(run: RunData) -> bool:
    """Whether some cluster has license copies (else a report draws no license panels)."""
    return any(c.license_copies > 0 for c in run.clusters)


def _panel(ax, usage: Usage, what: str, capacity: int, title: str) -> None:
    ax.set_title(title, loc="left", fontsize="medium")
    if capacity <= 0:
        ax.text(0.5, 0.5, "none in this cluster", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
        return
    ax.step(usage.time, usage.levels[f"{what}_used"], where="post", color=USED, lw=1, label="used")
    ax.step(
        usage.time,
        usage.levels[f"{what}_wanted"],
        where="post",
        color=WANTED,
        lw=0.8,
        ls="--",
        label="wanted",
    )
    ax.axhline(capacity, color="black", lw=0.8, ls=":", label="capacity")
    ax.set_ylim(0, None)
