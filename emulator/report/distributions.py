"""Distributions of wait time and bounded slowdown: empirical CDFs per cluster and for the grid.

CDFs rather than histograms: every job is drawn (no bin width to choose), clusters
of very different sizes compare on one axis, and medians and tails read off directly.
Only finished jobs have a wait and a slowdown, and only those the metrics measure
(after the warm-up, before the cool-down) are drawn; the bounded slowdown is the metric's.
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
    """Each cluster's finished jobs, then (with several clusters) the grid's."""
    wait, bsld, done = _job_values(run)
    on = cluster_names(run.jobs)
    groups = {c.name: done & (on == c.name) for c in run.clusters}
    if len(groups) != 1:
        groups[GRID] = done
    return Distribution(
        {name: np.sort(wait[mask]) for name, mask in groups.items()},
        {name: np.sort(bsld[mask]) for name, mask in groups.items()},
    )


def run_distributions(runs: list[tuple[str, RunData]]) -> Distribution:
    """Several runs' whole grids, each named (a run and its replay, say), to overlay."""
    values = {name: _job_values(run) for name, run in runs}
    return Distribution(
        {name: np.sort(wait[done]) for name, (wait, _, done) in values.items()},
        {name: np.sort(bsld[done]) for name, (_, bsld, done) in values.items()},
    )


def _job_values(run: RunData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every job's wait and bounded slowdown, and which ones the metrics take (finished, measured)."""
    submit, start, finish = (numbers(run.jobs, k) for k in ("submit", "start", "finish"))
    wait = start - submit
    bsld = bounded_slowdown(wait, finish - start, run.options.bsld_threshold)
    return wait, bsld, np.isfinite(finish) & run.options.measured(submit)


def distribution_figure(d: Distribution) -> Figure:
    figure = new_figure(3.6)
    wait_ax, bsld_ax = figure.subplots(1, 2, sharey=True)
    names = [name for name in d.wait if name != GRID]
    colours = dict(zip(names, palette(names), strict=True)) | {GRID: "black"}
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
    if len(d.wait) > 1:  # one line needs no name
        bsld_ax.legend(loc="lower right", fontsize="small", frameon=False)
    return figure
