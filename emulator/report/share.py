"""Workload share per cluster: the dispatched work (``summary.json``'s metric) beside the share of jobs.

The two differ when a meta-scheduler sends big jobs one way and small ones another,
which is what seed 001's Table 1 compares.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from matplotlib.figure import Figure

from .data import RunData, cluster_names
from .style import OKABE_ITO, new_figure


@dataclass(frozen=True)
class Shares:
    clusters: list[str]
    workload: np.ndarray  # the workload_share metric (NaN where undefined)
    jobs: np.ndarray  # fraction of all jobs that reached the cluster


def shares(run: RunData) -> Shares:
    names = [c.name for c in run.clusters]
    per_cluster = run.summary["clusters"]
    workload = [per_cluster.get(n, {}).get("workload_share") for n in names]
    on = cluster_names(run.jobs)
    jobs = np.array([np.count_nonzero(on == n) for n in names], dtype=float) / max(len(on), 1)
    return Shares(names, np.array([np.nan if w is None else w for w in workload], dtype=float), jobs)


def share_figure(s: Shares) -> Figure:
    figure = new_figure(3.2)
    ax = figure.add_subplot()
    x = np.arange(len(s.clusters))
    work = ax.bar(x - 0.2, s.workload, 0.4, label="workload (estimated MI)", color=OKABE_ITO[0])
    ax.bar(x + 0.2, s.jobs, 0.4, label="jobs", color=OKABE_ITO[4])
    if len(x) <= 24:
        ax.bar_label(work, fmt="%.2f", fontsize="small")
    ax.set_xticks(x, s.clusters, rotation=0 if len(x) <= 12 else 90)
    ax.set(ylabel="share of the grid", ylim=(0, max(1e-9, np.nanmax([*s.workload, *s.jobs, 0])) * 1.15))
    ax.legend(fontsize="small", frameon=False)
    return figure
