"""Late jobs per cluster: how every job ended (late, on time, no deadline, rejected), stacked.

The late counts are the ``late_jobs`` metric; the bars add what it is a share of.
Jobs rejected before reaching any cluster get a bar of their own.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.figure import Figure

from .data import JOB_STATES, RunData, job_states
from .style import new_figure, palette

NOWHERE = "(no cluster)"


@dataclass(frozen=True)
class Outcomes:
    clusters: list[str]
    counts: np.ndarray  # clusters x JOB_STATES

    def late_percent(self) -> np.ndarray:
        """Late jobs as a percentage of the jobs with a deadline (NaN where none has one)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return 100.0 * self.counts[:, 0] / self.counts[:, :2].sum(axis=1)


def outcomes(run: RunData) -> Outcomes:
    names = [c.name for c in run.clusters]
    found = pc.index_in(run.jobs.column("cluster"), pa.array(names, pa.string()))
    where = np.asarray(pc.fill_null(found, len(names)).to_numpy(), dtype=np.int64)
    counts = np.zeros((len(names) + 1, len(JOB_STATES)), dtype=np.int64)
    np.add.at(counts, (where, job_states(run.jobs)), 1)
    if counts[-1].any():
        return Outcomes([*names, NOWHERE], counts)
    return Outcomes(names, counts[:-1])


def late_figure(o: Outcomes) -> Figure:
    figure = new_figure(3.4)
    ax = figure.add_subplot()
    x = np.arange(len(o.clusters))
    bottom = np.zeros(len(x))
    for state, colour, count in zip(JOB_STATES, palette(list(JOB_STATES)), o.counts.T, strict=True):
        ax.bar(x, count, 0.6, bottom=bottom, color=colour, label=state)
        bottom += count
    if len(x) <= 24:
        for xi, top, percent in zip(x, bottom, o.late_percent(), strict=True):
            if np.isfinite(percent):
                ax.annotate(f"{percent:.1f}% late", (xi, top), ha="center", va="bottom", fontsize="small")
    ax.set_xticks(x, o.clusters, rotation=0 if len(x) <= 12 else 90)
    ax.set(ylabel="jobs (% late: of those with a deadline)", ylim=(0, max(bottom.max(initial=0), 1) * 1.12))
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return figure
