"""Gantt charts: a cluster's CPUs (rows, machine by machine) against time, every job drawn.

Bars come straight from the trace: each ``start``/``resume`` row opens a run on the
machines and PEs it lists, the job's next ``finish``/``preempt`` row closes it. The
pairing is a sort by (job, trace order), so millions of events cost a few numpy
calls. Nothing is ever sampled: a small chart draws each run as outlined rectangles
(one per block of neighbouring CPUs it held, as evalys does), so back-to-back jobs
keep their edges;
above ``max_rows`` CPUs or ``max_bars`` bars it becomes an occupancy image, each
row's CPU-seconds summed exactly into time bins, so a cell's ink is the share of
its CPUs busy (a 70%-busy machine looks 70% busy) and its hue the jobs' categories.
:attr:`Gantt.note` says so on the page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..data.metrics import INT, cluster_codes, is_in, numbers
from .data import WAIT_COLOURS, RunData, categories, job_rows
from .style import legend_patches, new_figure, palette, time_axis, time_unit

OPEN, CLOSE = ("start", "resume"), ("finish", "preempt", "kill")  # kill: failures, outages, estimates
MAX_ROWS = 400
"""CPUs above which neighbouring CPUs share a Gantt row (drawn as an occupancy image)."""
MAX_BARS = 40_000
"""Bars above which the chart is an occupancy image (more vector bars than pixels only slow it down)."""
BINS = 1_000
"""Time bins of an occupancy image: about one per pixel column of the default figure."""
RASTERIZED = 5_000
"""Rectangles above which PDF and SVG files hold them as an image (vector files would grow large)."""
EDGE = "#222222"
"""Outline of every job's rectangle: where one job ends and the next begins."""


@dataclass(frozen=True)
class Occupancy:
    """An occupancy image: ``busy[row, bin, category]`` is the share of the row's CPUs busy with
    jobs of that category, averaged over the bin (so each cell sums to at most 1)."""

    edges: np.ndarray  # bins + 1 times (s)
    busy: np.ndarray

    def busy_fraction(self, row_cpus: np.ndarray) -> float:
        """The share of the CPUs busy over the image's time span (the utilization metric)."""
        per_row = self.busy.sum(axis=(1, 2)) / self.busy.shape[1]
        return float((per_row * row_cpus).sum() / row_cpus.sum())


@dataclass(frozen=True)
class Gantt:
    """The bars of one cluster's chart, one per (run of a job, CPU), with what the figure needs.

    ``row`` is the drawn row (CPU // ``cpus_per_row``); ``occupancy`` is set when the
    chart is drawn as an image rather than as bars.
    """

    cluster: str
    cpus: int
    rows: int
    cpus_per_row: int
    job: np.ndarray
    segment: np.ndarray  # which run of a job (index into the runs on the cluster) the bar is of
    row: np.ndarray
    start: np.ndarray
    end: np.ndarray
    preempted: np.ndarray  # the run was ended by a preemption (marked on the chart)
    category: np.ndarray
    labels: list[str]
    machine_rows: np.ndarray  # first drawn row of each machine
    jobs: int  # jobs that ran on the cluster
    origin: float  # the run's start: times are labelled from it
    occupancy: Occupancy | None = None
    note: str = ""

    @property
    def row_cpus(self) -> np.ndarray:
        """CPUs in each drawn row (the last row of a grouped chart may hold fewer)."""
        return np.bincount(np.arange(self.cpus) // self.cpus_per_row, minlength=self.rows)

    @property
    def busy_fraction(self) -> float:
        """CPU-seconds of the runs over CPUs x (first start to last end): the cluster's utilization."""
        if not len(self.start):
            return 0.0
        span = self.end.max() - self.start.min()
        return float((self.end - self.start).sum() / (self.cpus * span)) if span > 0 else 1.0


def run_segments(events: pa.Table, cluster: int) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """Each run of a job on ``cluster``: its opening event row, its end time, whether a preemption (or a
    kill) ended it.

    A run the trace never closes (a run directory of a run that died) ends at the trace's last time.
    """
    kinds = events.column("kind")
    mask = (cluster_codes(events) == cluster) & is_in(kinds, OPEN + CLOSE)
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
    """Every run of ``cluster`` (index or name) on every CPU; an occupancy image above the limits.

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
    group = math.ceil(shape.cpus / max_rows) if shape.cpus > max_rows else 1
    job = numbers(opening, "job", INT)
    codes, labels = categories(run.jobs, color_by)
    g = Gantt(
        shape.name,
        shape.cpus,
        math.ceil(shape.cpus / group),
        group,
        job[segment],
        segment,
        (shape.first_row[machine] + pes) // group,
        numbers(opening, "time")[segment],
        end[segment],
        preempted[segment],
        codes[job_rows(run.jobs, job[segment])],
        labels,
        shape.first_row // group,
        len(np.unique(job)),
        run.start,
    )
    if group == 1 and len(segment) <= max_bars:
        return g
    return _as_image(g)


def _as_image(g: Gantt) -> Gantt:
    """The chart as an occupancy image over the runs' span, and the note saying how to read it."""
    lo, hi = (g.start.min(), g.end.max()) if len(g.start) else (g.origin, g.origin + 1.0)
    edges = np.linspace(lo, hi if hi > lo else lo + 1.0, BINS + 1)
    busy = occupancy(g.row, g.start, g.end, g.category, g.row_cpus, len(g.labels), edges)
    unit, size = time_unit(edges[1] - edges[0])
    rows = "one row per CPU" if g.cpus_per_row == 1 else f"rows of {g.cpus_per_row} neighbouring CPUs"
    note = (
        f"all {len(g.start):,} CPU runs of {g.jobs:,} jobs binned into {BINS:,} columns of "
        f"{(edges[1] - edges[0]) / size:.3g} {unit}, {rows}: "
        "the darker a cell, the more of its CPUs were busy"
    )
    return replace(g, occupancy=Occupancy(edges, busy), note=note)


def occupancy(
    row: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    category: np.ndarray,
    row_cpus: np.ndarray,
    kinds: int,
    edges: np.ndarray,
) -> np.ndarray:
    """``rows x bins x kinds``: each (row, bin)'s CPU-seconds per category, over the bin's CPU-seconds.

    Exact, not sampled: a run adds its part-bins at both ends and a +1/-1 pair around
    its whole bins, which one cumulative sum spreads; so the cost is linear in the runs.
    """
    rows, bins, width = len(row_cpus), len(edges) - 1, edges[1] - edges[0]
    first = np.clip(((start - edges[0]) // width).astype(np.int64), 0, bins - 1)
    last = np.clip(((end - edges[0]) // width).astype(np.int64), 0, bins - 1)
    weight = 1.0 / row_cpus[row]
    same = first == last
    head = np.where(same, end - start, edges[first + 1] - start) / width
    tail = np.where(same, 0.0, (end - edges[last]) / width)
    whole = last - first > 1
    size = rows * (bins + 1) * kinds

    def add(b: np.ndarray, values: np.ndarray, on: np.ndarray | slice = slice(None)) -> np.ndarray:
        """``values`` summed into cells (row, bin ``b``, category) of the runs ``on``."""
        cell = (row[on] * (bins + 1) + b) * kinds + category[on]
        return np.bincount(cell, values, size)

    parts = add(first, head * weight) + add(last, tail * weight)
    marks = add(first[whole] + 1, weight[whole], whole) - add(last[whole], weight[whole], whole)
    busy = parts.reshape(rows, bins + 1, kinds) + np.cumsum(marks.reshape(rows, bins + 1, kinds), axis=1)
    return busy[:, :bins]


def blocks(g: Gantt) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rectangles of a chart drawn as bars: each run's CPUs in blocks of neighbouring rows.

    Returns, per rectangle, one of its bars (for times and category) and its first and last row.
    """
    order = np.lexsort((g.row, g.segment))
    run, row = g.segment[order], g.row[order]
    first = np.flatnonzero(np.r_[True, (run[1:] != run[:-1]) | (row[1:] != row[:-1] + 1)][: len(run)])
    last = np.r_[first[1:], len(order)][: len(first)] - 1
    return order[first], row[first], row[last]


def gantt_figure(g: Gantt) -> Figure:
    """Rows top to bottom in machine order, coloured by category; preemptions as black crosses.

    The legend names the categories drawn, and only when there are several of them.
    """
    figure = new_figure(min(2.2 + 0.04 * g.rows, 9.0))
    ax = figure.add_subplot()
    colours = [
        WAIT_COLOURS.get(label, colour) for label, colour in zip(g.labels, palette(g.labels), strict=True)
    ]
    if g.occupancy is None:
        _draw_bars(ax, g, colours)
    else:
        _draw_image(ax, g.occupancy, g.rows, colours)
    present = np.unique(g.category)  # the legend names only what is drawn
    handles = legend_patches([g.labels[i] for i in present], [colours[i] for i in present])
    handles = handles if len(handles) > 1 else []
    if g.preempted.any():
        ax.scatter(g.end[g.preempted], g.row[g.preempted], marker="x", s=14, color="black", zorder=3)
        handles.append(Line2D([], [], marker="x", color="black", linestyle="none", label="preempted"))
    if len(g.machine_rows) <= 200 and len(g.machine_rows) < g.rows:  # machines of several rows
        ax.hlines(g.machine_rows[1:] - 0.5, 0, 1, transform=ax.get_yaxis_transform(), lw=0.3, color="#ccc")
    every = max(1, math.ceil(len(g.machine_rows) / 24))  # at most 24 machine labels
    ax.set_yticks(g.machine_rows[::every], [f"m{i}" for i in range(0, len(g.machine_rows), every)])
    ax.set_ylim(g.rows - 0.5, -0.5)
    if len(g.start):
        ax.set_xlim(g.start.min(), g.end.max())
        time_axis(ax.xaxis, g.origin, g.end.max())
    per_row = "" if g.cpus_per_row == 1 else f", {g.cpus_per_row} CPUs per row"
    ax.set_ylabel(f"CPUs by machine{per_row}")
    busy = f", {100 * g.busy_fraction:.1f}% busy" if len(g.start) else ""
    ax.set_title(f"{g.cluster}: {g.cpus:,} CPUs, {g.jobs:,} jobs{busy}", loc="left", wrap=True)
    if handles:
        ax.legend(
            handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize="small", frameon=False
        )
    return figure


def _draw_bars(ax, g: Gantt, colours: list[str]) -> None:
    """One outlined rectangle per block of a run's neighbouring CPUs (rasterized in PDF/SVG when many)."""
    bar, low, high = blocks(g)
    start, end = g.start[bar], g.end[bar]
    x = np.stack([start, start, end, end], axis=1)
    y = np.stack([low - 0.5, high + 0.5, high + 0.5, low - 0.5], axis=1)
    rectangles = PolyCollection(
        np.stack([x, y], axis=-1),
        facecolors=np.asarray(colours)[g.category[bar]],
        edgecolors=EDGE,
        linewidths=0.3,
        rasterized=len(bar) > RASTERIZED,
    )
    ax.add_collection(rectangles)


def _draw_image(ax, o: Occupancy, rows: int, colours: list[str]) -> None:
    """Each cell white blended with its categories' colours by their busy shares."""
    ink = 1.0 - np.array([to_rgb(c) for c in colours])  # how far each colour is from white
    rgb = np.clip(1.0 - o.busy @ ink, 0.0, 1.0)
    extent = (o.edges[0], o.edges[-1], rows - 0.5, -0.5)
    ax.imshow(rgb, extent=extent, aspect="auto", interpolation="antialiased", origin="upper")
