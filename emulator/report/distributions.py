"""Distributions of wait time and bounded slowdown: empirical CDFs per cluster and for the grid.

CDFs rather than histograms: every job is drawn (no bin width to choose), clusters
of very different sizes compare on one axis, and medians and tails read off directly.
Only finished jobs have a wait and a slowdown; the bounded slowdown is the metric's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from ..data.metrics import bounded_slowdown, numbers
from .data import RunData, cluster_names
from .style import new_figure, palette

GRID = "grid"


@dataclass(frozen=True)
class Distribution:
    """Sorted values per group (each cluster, then the grid)."""

    wait: dict[str, np.ndarray]
    bounded_slowdown: dict[str, np.ndarray]


def distributions(run: RunData) -> Distribution:
    jobs = run.jobs
    submit, start, finish = (numbers(jobs, k) for k in ("submit", "start", "finish"))
    done = np.isfinite(finish)
    wait, bsld = start - submit, bounded_slowdown(start - submit, finish - start)
    on = cluster_names(jobs)
    groups = {c.name: done & (on == c.name) for c in run.clusters} | {GRID: done}
    return Distribution(
        {name: np.sort(wait[mask]) for name, mask in groups.items()},
        {name: np.sort(bsld[mask]) for name, mask in groups.items()},
    )


def distribution_figure(d: Distribution) -> Figure:
    figure = new_figure(3.6)
    wait_ax, bsld_ax = figure.subplots(1, 2, sharey=True)
    names = list(d.wait)
    colours = dict(zip(names, [*palette(names[:-1]), "black"], strict=True))
    for ax, values, label in (
        (wait_ax, d.wait, "wait (s)"),
        (bsld_ax, d.bounded_slowdown, "bounded slowdown"),
    ):
        for name, sorted_values in values.items():
            if len(sorted_values):
                fraction = np.arange(1, len(sorted_values) + 1) / len(sorted_values)
                ax.step(
                    sorted_values,
                    fraction,
                    where="post",
                    color=colours[name],
                    label=name,
                    lw=1.6 if name == GRID else 0.9,
                )
        if ax is wait_ax:
            ax.set_xscale("symlog", linthresh=1.0, linscale=0.3)  # waits of 0 s are common
        else:
            ax.set_xscale("log")  # bounded slowdown is at least 1
        ax.set_xlabel(label)
        ax.grid(alpha=0.3)
    wait_ax.set(ylabel="fraction of finished jobs", ylim=(0, 1.02))
    wait_ax.set_title("Wait time", loc="left")
    bsld_ax.set_title("Bounded slowdown", loc="left")
    bsld_ax.legend(loc="lower right", fontsize="small", frameon=False)
    return figure
