"""Sweep plots: a metric against a varied parameter, one series per combination of the other keys.

Each point is the mean over seeds with its 95% confidence interval (Student's t,
from :func:`emulator.engine.sweep.compare`, the numbers of the sweep's table). The x axis is
the first varied numeric key (e.g. ``workload.mean_interarrival``), drawn as lines
with bands; with no numeric key it is the first key's values as categories (e.g.
each ``meta.policy``), drawn as points with error bars side by side, since a line
between two policies would claim values between them. Several sweeps overlay in
one figure (:func:`overlay`); several metrics share one figure as panels
(:func:`panel_figure`). Axes are labelled in readable units (waits in hours,
shares in %), log per metric (:class:`.sweep_options.LogScale`), and every text
is fitted to the width the figure is drawn at (:mod:`.text_fit`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.ticker import EngFormatter, FuncFormatter, LogFormatter

from ..engine.sweep import FAILURE_METRICS, METRICS, compare
from .style import TIME_UNITS, ReportError, ReportFigure, new_figure, palette, time_unit
from .sweep_options import LogScale, SweepOptions
from .text_fit import fit_axis_label, fit_categories, fit_legend

QUANTITIES: dict[str, tuple[str, str]] = {
    "mean_wait": ("mean wait", "time"),
    "mean_bounded_slowdown": ("mean bounded slowdown", "slowdown"),
    "late_percent": ("late jobs", "percent"),
    "system_usage": ("system usage", "fraction"),
    "utilization": ("utilisation", "fraction"),
    "jobs_killed": ("jobs killed (kill rows)", "ratio"),
    "jobs_lost": ("jobs lost (killed too often)", "ratio"),
    "makespan": ("makespan", "time"),
    "throughput": ("throughput", "rate"),
    "mcp": ("MCP (mean comprehensive performance)", "ratio"),
    "pb": ("PB (performance balance)", "ratio"),
    "mean_interarrival": ("mean interarrival time", "time"),
    "mttf": ("MTTF (mean time to failure)", "time"),
    "mttr": ("MTTR (mean time to repair)", "time"),
    "status_period": ("status report period", "time"),
    "load": ("load (x the trace's)", "ratio"),
}
"""Metrics and sweep keys (by their last dotted part) -> human label and kind of unit:
``time`` in s (shown in s/min/h/days), ``fraction`` of 1 (shown in %), ``percent``,
``rate`` per s (shown per s/min/h/day), ``slowdown`` (dimensionless, >= 1), ``ratio``
(dimensionless, or a count). Other keys read as their dotted name in words (``local policy``)."""

CEILINGS = {"fraction": 1.0, "percent": 100.0}
"""Kinds of quantity that cannot exceed a value: their intervals stop there, their axes stay linear."""
FLOORS = {"slowdown": 1.0}
"""Kinds of quantity that cannot go below a value other than 0, where the others' intervals stop."""

PANEL_WIDTH = 3.5
"""Inches a panel of :func:`panel_figure` takes at the least: a figure gets as many columns as fit."""


@dataclass(frozen=True)
class Band:
    """One series: its label, x values (numbers, or category names), mean and 95% half-width, runs."""

    label: str
    x: np.ndarray
    mean: np.ndarray
    half: np.ndarray
    runs: np.ndarray


@dataclass(frozen=True)
class SweepPlot:
    metric: str
    x_key: str | None
    categorical: bool  # x values are names (points with error bars), not numbers (lines with bands)
    bands: list[Band]
    legend: str = ""  # the legend's title: the one key the series differ by, named once


def x_key(rows: pa.Table, keys: list[str]) -> str | None:
    """The key for the x axis: the first numeric varied key other than seed, else the first other key."""
    others = [k for k in keys if k != "seed"]
    numeric = [k for k in others if _is_numeric(rows.schema.field(k).type)]
    return (numeric or others or [None])[0]


def sweep_plot(
    rows: pa.Table,
    keys: list[str],
    metric: str,
    x: str | None = None,
    name: str = "",
    labels: Mapping[str, str] = MappingProxyType({}),
) -> SweepPlot:
    """The series of ``metric`` against ``x`` (default :func:`x_key`), from the sweep's ok points.

    ``name`` (a sweep's, when several are overlaid) starts every series' label; values and keys in
    series labels read as their ``labels`` (short labels, :mod:`.labels`) where they have one.
    """

    def short(value: object) -> str:
        return labels.get(str(value), str(value))

    x = x or x_key(rows, keys)
    check_varied(keys, x, name)
    lines = [k for k in keys if k not in ("seed", x)]
    categorical = x is not None and not _is_numeric(rows.schema.field(x).type)
    by_line: dict[str, list[tuple]] = {}
    for g in compare(rows, keys):
        if g[metric] is None:
            continue
        values = ", ".join(short(g[k]) if len(lines) == 1 else f"{short(k)}={short(g[k])}" for k in lines)
        label = ": ".join(part for part in (short(name), values) if part) or "all runs"
        by_line.setdefault(label, []).append(("all runs" if x is None else g[x], *g[metric], g["runs"]))
    bands = []
    for label, values in by_line.items():
        values = values if categorical or x is None else sorted(values)
        at, mean, half, runs = zip(*values, strict=True)
        bands.append(
            Band(label, np.array(at), np.array(mean), np.array(half), np.array(runs, dtype=np.int64))
        )
    return SweepPlot(metric, x, categorical or x is None, bands, lines[0] if len(lines) == 1 else "")


def check_varied(keys: list[str], x: str | None, name: str = "") -> None:
    """A clear error for an x key the sweep does not vary (another sweep's, when overlaying)."""
    if x is not None and x not in keys:
        raise ReportError(f"{name or 'the sweep'} does not vary {x} (varied: {', '.join(keys)})")


def overlay(plots: list[SweepPlot]) -> SweepPlot:
    """Several sweeps' plots of one metric as one: every series, categorical if any sweep's x is,
    the legend titled by what a label holds (the sweep, then the other keys' values)."""
    first = plots[0]
    legend = first.legend if len(plots) == 1 else ": ".join(filter(None, ("sweep", first.legend)))
    bands = [b for p in plots for b in p.bands]
    return replace(first, categorical=any(p.categorical for p in plots), bands=bands, legend=legend)


def plotted_metrics(tables: list[pa.Table]) -> list[str]:
    """The metrics worth a figure: those some ok point has a value of (no late % without deadlines),
    and failure counts only where some point has failures."""
    ok = [t.filter(pc.equal(t.column("status"), "ok")) for t in tables]
    return [
        metric
        for metric in METRICS
        if any(v is not None and np.isfinite(v) for t in ok for v in t.column(metric).to_pylist())
        and (metric not in FAILURE_METRICS or any(any(t.column(metric).to_pylist()) for t in ok))
    ]


def describe(name: str, labels: Mapping[str, str] = MappingProxyType({})) -> tuple[str, str]:
    """A metric's or key's label and kind of unit: its short label if ``labels`` has one, else
    :data:`QUANTITIES`' (by full or last dotted name), else its name in words (``local policy``)."""
    words = name.replace(".", " ").replace("_", " ")
    label, kind = QUANTITIES.get(name, QUANTITIES.get(name.rsplit(".", 1)[-1], (words, "ratio")))
    return labels.get(name, label), kind


def quantity(
    name: str, values: np.ndarray, labels: Mapping[str, str] = MappingProxyType({})
) -> tuple[str, float]:
    """An axis label with its unit and the factor that converts ``values`` to it.

    Times take the largest unit the values reach twice (so 1e5 to 3e7 s reads 1.2 to
    370 days); rates the smallest unit with at least one per unit.
    """
    label, kind = describe(name, labels)
    top = float(np.nanmax(np.abs(values))) if len(values) else 0.0
    if kind in ("fraction", "percent"):
        return f"{label} (%)", 100.0 if kind == "fraction" else 1.0
    if kind == "time":
        unit, size = time_unit(top)
        return f"{label} ({unit})", 1.0 / size
    if kind == "rate":
        unit, size = next(((u, s) for u, s in TIME_UNITS if top * s >= 1), TIME_UNITS[-1])
        return f"{label} (jobs/{unit.removesuffix('s') if unit == 'days' else unit})", size
    return label, 1.0


def log_axes(p: SweepPlot, options: SweepOptions | str = "auto") -> tuple[bool, bool]:
    """Whether x and y are log scale for this plot's metric (:meth:`.sweep_options.LogScale.axes`)."""
    options = _options(options)
    xs = np.array([]) if p.categorical else np.concatenate([b.x for b in p.bands]).astype(float)
    return options.log.axes(p.metric, describe(p.metric)[1] in CEILINGS, xs, _means(p))


def sweep_figure(p: SweepPlot, options: SweepOptions | str = "auto") -> Figure:
    """Lines with 95% bands (numeric x) or dodged points with 95% error bars (categorical x).

    ``options`` (:class:`.sweep_options.SweepOptions`) may be only a log choice (``"y"``).
    """
    options = _options(options)
    figure = new_figure(1.9 + 0.2 * options.width + _legend_height(p, options.width), width=options.width)
    ax = figure.add_subplot()
    _draw(figure, ax, p, options, x_labels=True)
    _legend(figure, p, options)
    return figure


def panel_figure(plots: list[SweepPlot], options: SweepOptions | str = "auto") -> Figure:
    """Several metrics of one sweep (or overlay) as panels sharing their x axis: as many columns as
    :data:`PANEL_WIDTH` fit in the width, x tick labels and x label only under each column's last
    panel, one legend on top."""
    options = _options(options)
    columns = max(1, min(len(plots), int(options.width // PANEL_WIDTH)))
    rows = math.ceil(len(plots) / columns)
    height = rows * (0.4 + 0.5 * options.width / columns) + 0.2 + _legend_height(plots[0], options.width)
    figure = new_figure(height, width=options.width)
    axes = figure.subplots(rows, columns, sharex=True, squeeze=False).ravel()
    for ax in axes[len(plots) :]:
        ax.remove()
    for index, (ax, p) in enumerate(zip(axes, plots, strict=False)):
        _draw(figure, ax, p, options, x_labels=index + columns >= len(plots))
    figure.align_ylabels()
    _legend(figure, plots[0], options)
    return figure


def _options(options: SweepOptions | str) -> SweepOptions:
    """Options as given, or made of a log choice alone (``sweep_figure(p, "y")``, the notebook's way)."""
    return SweepOptions(log=LogScale.parse(options)) if isinstance(options, str) else options


def _draw(figure: ReportFigure, ax: Axes, p: SweepPlot, options: SweepOptions, x_labels: bool) -> None:
    """One metric's series in ``ax``: scales, points or lines, labels fitted to the space they get;
    ``x_labels``: whether this axes shows x tick labels and the x label (a panel's last row does)."""
    log_x, log_y = log_axes(p, options)
    y_label, y_factor = quantity(p.metric, _means(p), options.labels)
    colours = palette([b.label for b in p.bands])
    ax.set_xscale("log" if log_x else "linear")  # before the data and ticks: a new scale resets them
    ax.set_yscale("log" if log_y else "linear")
    if p.categorical:
        names = _points(ax, p, colours, y_factor, options.labels)
        x_label = describe(p.x_key or "", options.labels)[0]
        if x_labels:
            figure.fitters.append(fit_categories(ax, names))
    else:
        xs = np.concatenate([b.x for b in p.bands]).astype(float)
        x_label, x_factor = quantity(p.x_key, xs, options.labels)
        _lines(ax, p, colours, x_factor, y_factor)
    _ticks(ax, (log_x, log_y), not p.categorical)
    if not log_y:
        _floor(ax, p, y_factor)
    ax.set_ylabel(y_label)
    figure.fitters.append(fit_axis_label(ax, ax.yaxis))
    ax.set_xlabel(x_label if x_labels else "")
    ax.tick_params(axis="x", labelbottom=x_labels)
    ax.grid(alpha=0.3, which="major")


def _ticks(ax: Axes, logs: tuple[bool, bool], numeric_x: bool) -> None:
    """Tick labels as plain numbers: log axes as 0.1, 10, 1000 (never 6.2×10¹), linear axes reaching
    10^4 with SI prefixes (250k, 2M: no 500000, no "1e6" above the axis)."""
    for axis, log, limits in ((ax.xaxis, logs[0], ax.get_xlim()), (ax.yaxis, logs[1], ax.get_ylim())):
        if log:
            axis.set_major_formatter(FuncFormatter(_log_tick))
            axis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))
        elif (axis is ax.yaxis or numeric_x) and max(map(abs, limits)) >= 1e4:
            axis.set_major_formatter(EngFormatter(sep=""))


def _floor(ax: Axes, p: SweepPlot, factor: float) -> None:
    """A linear y axis starts at most a margin below what the metric can be (no negative late %), and
    one unit above it when every value sits there (all 0% late: 0 to 1%, not -0.05 to 0.05)."""
    floor = FLOORS.get(describe(p.metric)[1], 0.0) * factor
    bottom, top = ax.get_ylim()
    highest = max((float(np.max(_interval(b, p.metric, factor)[1])) for b in p.bands), default=floor)
    top = top if highest > floor else floor + 1.0
    if bottom < floor:
        ax.set_ylim(floor - 0.05 * (top - floor), top)


def _legend_height(p: SweepPlot, width: float) -> float:
    """Inches to leave for the legend above the axes, from its labels' lengths (about 0.07 inch a
    character in its small font, 0.5 for the marker and spacing, 0.2 a row, 0.25 for its title);
    :func:`.text_fit.fit_legend` lays it out exactly when drawn."""
    if len(p.bands) < 2:
        return 0.0
    entry = 0.5 + 0.07 * max(len(b.label) for b in p.bands)
    columns = max(1, min(len(p.bands), int(width // entry)))
    return 0.25 + 0.2 * math.ceil(len(p.bands) / columns)


def _legend(figure: ReportFigure, p: SweepPlot, options: SweepOptions) -> None:
    """One legend above the axes, titled by what the series differ by; none for a single series."""
    if len(p.bands) < 2:
        return
    handles, labels = figure.axes[0].get_legend_handles_labels()

    def make(texts: list[str], columns: int) -> Legend:
        return figure.legend(
            handles,
            texts,
            ncols=columns,
            title=describe(p.legend, options.labels)[0] or None,
            loc="outside upper center",
            fontsize="small",
            title_fontsize="small",
            frameon=False,
        )

    figure.fitters.append(fit_legend(figure, make, labels))


def _lines(ax, p: SweepPlot, colours: list[str], x_factor: float, y_factor: float) -> None:
    for band, colour in zip(p.bands, colours, strict=True):
        x, mean = band.x.astype(float) * x_factor, band.mean * y_factor
        low, high = _interval(band, p.metric, y_factor)
        ax.plot(x, mean, marker="o", ms=4, color=colour, label=band.label)
        ax.fill_between(x, low, high, color=colour, alpha=0.2, lw=0)
        if len(x) == 1:  # a band of one point has no width: show the interval as an error bar
            ax.errorbar(x, mean, [mean - low, high - mean], color=colour, capsize=4)


def _points(ax, p: SweepPlot, colours: list[str], y_factor: float, labels: Mapping[str, str]) -> list[str]:
    """Each category at an integer position, the series side by side around it (never joined);
    the categories' tick labels (their short labels where they have one)."""
    names = list(dict.fromkeys(str(v) for b in p.bands for v in b.x))
    step = min(0.8 / max(len(p.bands), 1), 0.2)
    for i, (band, colour) in enumerate(zip(p.bands, colours, strict=True)):
        at = np.array([names.index(str(v)) for v in band.x]) + (i - (len(p.bands) - 1) / 2) * step
        mean = band.mean * y_factor
        low, high = _interval(band, p.metric, y_factor)
        ax.errorbar(
            at,
            mean,
            [mean - low, high - mean],
            fmt="o",
            ms=5,
            capsize=3,
            color=colour,
            label=band.label,
        )
    shown = [labels.get(name, name) for name in names]
    ax.set_xticks(range(len(names)), shown)
    ax.set_xlim(-0.6, len(names) - 0.4)
    return shown


def _interval(band: Band, metric: str, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """The 95% interval's ends, within what the metric can be: every metric here is >= 0 (bounded
    slowdown >= 1) and shares are <= 100%, so an interval stops there rather than claim negative
    waits (Student's t is symmetric; the data are not)."""
    kind = describe(metric)[1]
    low = np.maximum(band.mean - band.half, FLOORS.get(kind, 0.0))
    high = np.minimum(band.mean + band.half, CEILINGS.get(kind, np.inf))
    return low * factor, high * factor


def _means(p: SweepPlot) -> np.ndarray:
    return np.concatenate([b.mean for b in p.bands]) if p.bands else np.array([])


def _log_tick(value: float, _position: int) -> str:
    """A log axis' tick as a plain number (0.01, 10, 1000), as a power of ten past 10^4 or below 10^-3
    (never "6.2×10¹")."""
    if 1e-3 <= value < 1e5:
        return f"{value:g}"
    return f"$10^{{{round(math.log10(value))}}}$"


def _is_numeric(kind: pa.DataType) -> bool:
    return pa.types.is_integer(kind) or pa.types.is_floating(kind)
