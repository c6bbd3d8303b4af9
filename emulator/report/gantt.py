"""Gantt charts: a cluster's CPUs (rows, machine by machine) against time, a bar per CPU a job ran on.

Bars come straight from the trace: each ``start``/``resume`` row opens a run on the
machines and PEs it lists, the job's next ``finish``/``preempt`` row closes it. The
pairing is a sort by (job, trace order), so millions of events cost a few numpy
calls. Large clusters stay readable: above ``max_rows`` CPUs neighbouring CPUs
share a row, above ``max_bars`` bars a random sample of the runs is drawn; both
are said in :attr:`Gantt.note` (shown on the page).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..metrics import INT, is_in, numbers
from .data import RunData, categories, job_rows
from .style import legend_patches, new_figure, palette

OPEN, CLOSE = ("start", "resume"), ("finish", "preempt", "kill")  # kill: failures, outages, estimates
MAX_ROWS = 400
"""CPUs above which neighbouring CPUs share a Gantt row."""
MAX_BARS = 40_000
"""Bars above which a random sample of the runs is drawn (a PNG cannot show more anyway)."""
OUTLINED = 5_000
"""Bars up to which each has a thin white outline (beyond, outlines would hide the colours)."""
SAMPLE_SEED = 0
"""The sample is seeded: the same run always gives the same picture."""


@dataclass(frozen=True)
class Gantt:
    """The bars of one cluster's chart, one per (run of a job, row), with what the figure needs."""

    cluster: str
    cpus: int
    rows: int
    cpus_per_row: int
    job: np.ndarray
    row: np.ndarray
    start: np.ndarray
    end: np.ndarray
    preempted: np.ndarray  # the run was ended by a preemption (marked on the chart)
    category: np.ndarray
    labels: list[str]
    machine_rows: np.ndarray  # first drawn row of each machine
    jobs: int  # jobs that ran on the cluster (all of them, drawn or not)
    note: str = ""


def run_segments(events: pa.Table, cluster: int) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """Each run of a job on ``cluster``: its opening event row, its end time, whether a preemption (or a
    kill) ended it.

    A run the trace never closes (a run directory of a run that died) ends at the trace's last time.
    """
    kinds = events.column("kind")
    mask = (numbers(events, "cluster", INT) == cluster) & is_in(kinds, OPEN + CLOSE)
    rows = events.filter(pa.array(mask))
    job, time = numbers(rows, "job", INT), numbers(rows, "time")
    opens = is_in(rows.column("kind"), OPEN)
    preempt = is_in(rows.column("kind"), ("preempt", "kill"))
    order = np.lexsort((np.arange(len(job)), job))  # by job, then trace order
    ordered_open = opens[order]
    closed = ordered_open & np.r_[~ordered_open[1:] & (job[order][1:] == job[order][:-1]), False]
    closer = np.where(closed, np.r_[order[1:], 0], -1)[ordered_open]
    end = np.where(closer >= 0, time[closer], time.max() if len(time) else math.nan)
    return rows.take(pa.array(order[ordered_open])), end, (closer >= 0) & preempt[closer]


def gantt_bars(
    run: RunData,
    cluster: int | str,
    color_by: str = "auto",
    max_rows: int | None = None,
    max_bars: int | None = None,
) -> Gantt:
    """The Gantt bars of ``cluster`` (index or name), rows grouped and runs sampled above the limits.

    The limits default to :data:`MAX_ROWS` and :data:`MAX_BARS`, read at call time.
    """
    max_rows = MAX_ROWS if max_rows is None else max_rows
    max_bars = MAX_BARS if max_bars is None else max_bars
    index = run.cluster_index(cluster)
    shape = run.clusters[index]
    opening, end, preempted = run_segments(run.events, index)
    machines = opening.column("machines").combine_chunks()
    pes = pc.list_flatten(opening.column("pes").combine_chunks()).to_numpy()
    segment = pc.list_parent_indices(machines).to_numpy()
    machine = pc.list_flatten(machines).to_numpy()
    if len(machine) and machine.max() >= len(shape.machine_cpus):
        raise ValueError(
            f"{run.path}: the trace uses machine {machine.max()} of {shape.name}, not in scenario.toml"
        )
    row = shape.first_row[machine] + pes
    group = math.ceil(shape.cpus / max_rows) if shape.cpus > max_rows else 1
    notes = []
    if group > 1:
        segment, row = _group_rows(segment, row, group, shape.cpus)
        notes.append(f"{shape.cpus:,} CPUs drawn as rows of {group} neighbouring CPUs")
    if len(segment) > max_bars:
        kept = _sample_runs(segment, opening.num_rows, max_bars)
        notes.append(f"a random sample of {kept.sum():,} of {opening.num_rows:,} job runs drawn")
        segment, row = segment[kept[segment]], row[kept[segment]]
    job = numbers(opening, "job", INT)
    codes, labels = categories(run.jobs, color_by)
    return Gantt(
        shape.name,
        shape.cpus,
        math.ceil(shape.cpus / group),
        group,
        job[segment],
        row,
        numbers(opening, "time")[segment],
        end[segment],
        preempted[segment],
        codes[job_rows(run.jobs, job[segment])],
        labels,
        shape.first_row // group,
        len(np.unique(job)),
        "; ".join(notes),
    )


def _group_rows(segment: np.ndarray, row: np.ndarray, group: int, cpus: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of ``group`` neighbouring CPUs: one bar per (run, row group), in the bars' order."""
    row = row // group
    _, first = np.unique(segment * cpus + row, return_index=True)
    keep = np.sort(first)
    return segment[keep], row[keep]


def _sample_runs(segment: np.ndarray, runs: int, max_bars: int) -> np.ndarray:
    """Which runs to draw: whole runs in a seeded random order, as many as fit in ``max_bars`` bars."""
    counts = np.bincount(segment, minlength=runs)
    shuffled = np.random.default_rng(SAMPLE_SEED).permutation(runs)
    kept = np.zeros(runs, dtype=bool)
    kept[shuffled[np.cumsum(counts[shuffled]) <= max_bars]] = True
    return kept


def gantt_figure(g: Gantt) -> Figure:
    """Rows top to bottom in machine order; bars coloured by category; preemptions as black crosses."""
    figure = new_figure(min(2.2 + 0.04 * g.rows, 9.0))
    ax = figure.add_subplot()
    colours = palette(g.labels)
    half = 0.42
    x = np.stack([g.start, g.start, g.end, g.end], axis=1)
    y = np.stack([g.row - half, g.row + half, g.row + half, g.row - half], axis=1)
    outline = 0.4 if len(g.start) <= OUTLINED else 0.0  # separates back-to-back jobs while they are few
    bars = PolyCollection(
        np.stack([x, y], axis=-1),
        facecolors=np.asarray(colours)[g.category],
        edgecolors="white",
        linewidths=outline,
    )
    ax.add_collection(bars)
    present = np.unique(g.category)  # the legend names only what is drawn
    handles = legend_patches([g.labels[i] for i in present], [colours[i] for i in present])
    if g.preempted.any():
        ax.scatter(g.end[g.preempted], g.row[g.preempted], marker="x", s=14, color="black", zorder=3)
        handles.append(Line2D([], [], marker="x", color="black", linestyle="none", label="preempted"))
    if len(g.machine_rows) <= 200:
        ax.hlines(g.machine_rows[1:] - 0.5, 0, 1, transform=ax.get_yaxis_transform(), lw=0.3, color="#ccc")
    every = max(1, math.ceil(len(g.machine_rows) / 24))  # at most 24 machine labels
    ax.set_yticks(g.machine_rows[::every], [f"m{i}" for i in range(0, len(g.machine_rows), every)])
    ax.set_ylim(g.rows - 0.5, -0.5)
    if len(g.start):
        ax.set_xlim(g.start.min(), g.end.max())
    per_row = "" if g.cpus_per_row == 1 else f", {g.cpus_per_row} CPUs per row"
    ax.set(xlabel="time (s)", ylabel=f"CPUs by machine{per_row}")
    ax.set_title(f"{g.cluster}: {g.cpus:,} CPUs, {g.jobs:,} jobs", loc="left")
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False)
    return figure
