"""Reports of a run or sweep directory: plan the figures, draw each, assemble the page, export PNGs.

Planning first (a list of figures with a draw function each) lets the CLI show a
progress bar over figures, and lets the notebook API draw any one of them alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from matplotlib.figure import Figure

from ..engine.sweep import varied_keys
from .data import RunData, has_deadlines, is_run_dir, load_run, read_arrow
from .distributions import distribution_figure, distributions, run_distributions
from .gantt import gantt_bars, gantt_figure
from .late import late_figure, outcomes
from .page import Rendered, Section, html_page
from .queue import queue_figure, queue_lengths
from .share import share_figure, shares
from .style import DPI, FORMATS, PRINT_DPI, ReportError, figure_bytes, png_bytes, set_width
from .sweep_options import LogScale, SweepOptions
from .sweep_plot import (
    check_varied,
    describe,
    overlay,
    panel_figure,
    plotted_metrics,
    sweep_figure,
    sweep_plot,
    x_key,
)
from .tables import run_facts, run_tables, runs_facts, runs_tables, sweep_facts, sweep_tables
from .usage import PANELS, cluster_usage, licensed, usage_figure

Draw = Callable[[], tuple[Figure, str]]
"""Draws one figure; returns it with a note on what was simplified ("" when nothing was)."""


@dataclass(frozen=True)
class Planned:
    section: str
    name: str
    title: str
    draw: Draw


@dataclass
class Report:
    """A drawn report: what it is of, the page, and every figure (the page inlines the same PNGs)."""

    kind: str  # "run", "runs" or "sweep"
    source: Path
    title: str
    html: str
    figures: list[Rendered] = field(default_factory=list)
    summary: dict | None = None  # a run's summary.json
    sweeps: list[tuple[str, pa.Table]] = field(default_factory=list)  # each sweep's name and sweep.arrow
    format: str = "png"  # of the figure files (Rendered.file)
    runs: list[tuple[str, dict]] = field(default_factory=list)  # each compared run's name and summary.json


def gantt_plot(
    run: RunData,
    cluster: int | str = 0,
    color_by: str = "auto",
    max_rows: int | None = None,
    max_bars: int | None = None,
) -> Figure:
    return gantt_figure(gantt_bars(run, cluster, color_by, max_rows, max_bars))


def usage_plot(run: RunData, clusters: list[int | str] | None = None) -> Figure:
    usages = cluster_usage(run)
    if clusters is not None:
        usages = [usages[run.cluster_index(c)] for c in clusters]
    return usage_figure(usages)


PLOTS: dict[str, Callable[..., Figure]] = {
    "gantt": gantt_plot,
    "usage": usage_plot,
    "queue": lambda run: queue_figure(queue_lengths(run)),
    "share": lambda run: share_figure(shares(run)),
    "distributions": lambda run: distribution_figure(distributions(run)),
    "late": lambda run: late_figure(outcomes(run)),
}
"""A run's figures by kind; options as keywords (gantt: ``cluster``, ``color_by``; usage: ``clusters``)."""


def plan_run(run: RunData, color_by: str = "auto") -> list[Planned]:
    """Every figure of a run's report: a Gantt chart per cluster, usage (per few clusters), the rest.

    A figure that would say nothing is left out: the workload share of one cluster (all of it),
    late jobs when no job has a deadline. Each kind of figure is a section with one heading.
    """
    planned, stems = [], set()
    gantts = "Gantt charts" if len(run.clusters) > 1 else "Gantt chart"
    for index, shape in enumerate(run.clusters):
        stem = f"gantt-{_slug(shape.name)}"
        stem = stem if stem not in stems else f"{stem}-{index}"  # two names that slug alike
        stems.add(stem)

        def draw(index: int = index) -> tuple[Figure, str]:
            bars = gantt_bars(run, index, color_by)
            return gantt_figure(bars), bars.note

        planned.append(Planned(gantts, stem, f"Gantt chart: {shape.name}", draw))
    names = [c.name for c in run.clusters]
    usage = "CPU and license usage" if licensed(run) else "CPU usage"
    for first in range(0, len(names), PANELS):
        part = names[first : first + PANELS]
        suffix = "" if len(names) <= PANELS else f"-{first // PANELS + 1}"
        planned.append(
            Planned(
                f"{usage} over time",
                f"usage{suffix}",
                f"{usage}: {', '.join(part)}",
                lambda part=part: (usage_plot(run, part), ""),
            )
        )
    for section, kind, shown in (
        ("Queue length over time", "queue", True),
        ("Workload share per cluster", "share", len(run.clusters) > 1),
        ("Distributions of wait time and bounded slowdown", "distributions", True),
        ("Late jobs per cluster", "late", has_deadlines(run.jobs)),
    ):
        if shown:
            planned.append(Planned(section, kind, section, lambda kind=kind: (PLOTS[kind](run), "")))
    return planned


def plan_runs(runs: list[tuple[str, RunData]]) -> list[Planned]:
    """The figures comparing runs: their wait and bounded slowdown distributions, overlaid."""
    title = "Distributions of wait time and bounded slowdown"
    return [
        Planned(title, "distributions", title, lambda: (distribution_figure(run_distributions(runs)), ""))
    ]


def plan_sweep(sweeps: list[tuple[str, pa.Table]], options: SweepOptions | None = None) -> list[Planned]:
    """A metric-vs-parameter figure per metric (``options.metrics``, default every metric some point
    has a value of), every sweep overlaid; or, with ``options.panel``, one figure of them all.

    The x key is the first sweep's (:func:`.sweep_plot.x_key`); every other sweep must vary it too.
    """
    options = options or SweepOptions()
    first = sweeps[0][1]
    x = x_key(first, varied_keys(first))
    named = len(sweeps) > 1

    def plot(metric: str):
        return overlay(
            [
                sweep_plot(rows, varied_keys(rows), metric, x, name if named else "", options.labels)
                for name, rows in sweeps
            ]
        )

    for name, rows in sweeps:
        check_varied(varied_keys(rows), x, name)
    metrics = _sweep_metrics([rows for _, rows in sweeps], options.metrics)
    if options.panel:
        names = ", ".join(describe(m, options.labels)[0] for m in metrics)
        return [
            Planned(
                "Metrics against parameters",
                "sweep-panel",
                f"{names} (mean, 95% CI)",
                lambda: (panel_figure([plot(m) for m in metrics], options), ""),
            )
        ]
    return [
        Planned(
            "Metrics against parameters",
            f"sweep-{metric}",
            f"{describe(metric, options.labels)[0]} (mean, 95% CI)",
            lambda metric=metric: (sweep_figure(plot(metric), options), ""),
        )
        for metric in metrics
    ]


def _sweep_metrics(tables: list[pa.Table], chosen: tuple[str, ...]) -> list[str]:
    """The metrics chosen (each must have a value at some point), or every one that has."""
    plotted = plotted_metrics(tables)
    empty = [m for m in chosen if m not in plotted]
    if empty:
        raise ReportError(
            f"metrics: no ok point has a value of {', '.join(empty)}; with values: {', '.join(plotted)}"
        )
    return list(chosen) or plotted


@dataclass
class Plan:
    """What a report will hold, before any figure is drawn (so a progress bar knows its total)."""

    kind: str  # "run", "runs" or "sweep"
    source: Path
    title: str
    facts: list[str]
    tables: list[tuple[str, str]]  # (heading, HTML) sections before the figures
    figures: list[Planned]
    summary: dict | None = None
    sweeps: list[tuple[str, pa.Table]] = field(default_factory=list)  # (name, sweep.arrow) of each sweep
    runs: list[tuple[str, dict]] = field(default_factory=list)  # (name, summary.json) of compared runs


Paths = Path | str | Sequence[Path | str]
"""One run or sweep directory, several run directories (compared), or several sweeps (overlaid)."""


def plan_report(
    paths: Paths,
    color_by: str = "auto",
    log: str | Sequence[str] = "auto",
    sweep: SweepOptions | None = None,
) -> Plan:
    """Read run directories or sweep directories and list the report's tables and figures.

    ``sweep``: the sweep figures' options (:class:`.sweep_options.SweepOptions`); ``log`` alone is a
    shorthand for its log axes: ``auto``, ``none``, ``x``, ``y``, ``xy`` or ``METRIC=`` one of them.
    """
    paths = [Path(p) for p in ([paths] if isinstance(paths, str | Path) else paths)]
    sweep = sweep or SweepOptions(log=LogScale.parse(log))
    if all((p / "sweep.arrow").is_file() for p in paths):
        return _plan_sweeps(paths, sweep)
    stray = next((p for p in paths if not is_run_dir(p)), None)
    if stray is not None and len(paths) == 1:
        raise FileNotFoundError(
            f"{stray}: neither a run directory (summary.json, ...) nor a sweep (sweep.arrow)"
        )
    if stray is not None:
        raise FileNotFoundError(
            f"{stray}: not a run directory (summary.json, ...); expected run directories or sweep directories"
        )
    if sweep != SweepOptions(width=sweep.width):
        raise ReportError(
            f"{paths[0]}: runs, not sweeps; metrics, panel, log and labels choose sweep figures"
        )
    if len(paths) > 1:
        return _plan_runs(paths)
    (path,) = paths
    run = load_run(path)
    figures = plan_run(run, color_by)
    return Plan("run", path, f"Run {run.name}", run_facts(run), run_tables(run), figures, summary=run.summary)


def _plan_runs(paths: list[Path]) -> Plan:
    """Several runs' report (a run and its replays, say): metrics side by side, distributions overlaid."""
    runs = list(zip(_names(paths), (load_run(p) for p in paths), strict=True))
    title = f"Runs {', '.join(name for name, _ in runs)}"
    summaries = [(name, run.summary) for name, run in runs]
    return Plan("runs", paths[0], title, runs_facts(runs), runs_tables(runs), plan_runs(runs), runs=summaries)


def _names(paths: list[Path]) -> list[str]:
    """Each directory's name, numbered where two are alike."""
    names = [p.resolve().name for p in paths]
    return [n if names.count(n) == 1 else f"{n}-{i + 1}" for i, n in enumerate(names)]


def _plan_sweeps(paths: list[Path], options: SweepOptions) -> Plan:
    """A sweep's report, or several sweeps' (each named by its directory, in facts, tables and legends)."""
    names = _names(paths)
    sweeps = [(name, read_arrow(p / "sweep.arrow")) for name, p in zip(names, paths, strict=True)]
    if len(sweeps) == 1:
        rows = sweeps[0][1]
        return Plan(
            "sweep",
            paths[0],
            f"Sweep {names[0]}",
            sweep_facts(rows),
            sweep_tables(rows),
            plan_sweep(sweeps, options),
            sweeps=sweeps,
        )
    facts = [f"{name}: {fact}" for name, rows in sweeps for fact in sweep_facts(rows)]
    tables = [(f"{heading}: {name}", html) for name, rows in sweeps for heading, html in sweep_tables(rows)]
    title = f"Sweeps {', '.join(names)}"
    return Plan("sweep", paths[0], title, facts, tables, plan_sweep(sweeps, options), sweeps=sweeps)


def draw_report(
    plan: Plan,
    on_figure: Callable[[int, int], None] | None = None,
    fmt: str = "png",
    width: float | None = None,
    dpi: float = PRINT_DPI,
) -> Report:
    """Draw every planned figure (``on_figure(done, total)`` after each) and assemble the page.

    ``fmt`` (png, pdf, svg) is the figure files' format, ``width`` their width in inches (default
    :data:`.style.WIDTH`, see :func:`.style.set_width`), ``dpi`` their pixels per inch (PNG); the
    page inlines PNGs of the same figures at :data:`.style.DPI`.
    """
    if fmt not in FORMATS:
        raise ReportError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    figures = []
    for done, item in enumerate(plan.figures, 1):
        figure, note = item.draw()
        if width is not None:
            set_width(figure, width)
        png = png_bytes(figure)
        figures.append(
            Rendered(
                item.name,
                item.title,
                png,
                note,
                png if (fmt, dpi) == ("png", DPI) else figure_bytes(figure, fmt, dpi),
            )
        )
        if on_figure is not None:
            on_figure(done, len(plan.figures))
    sections = [Section(heading, html) for heading, html in plan.tables]
    for item, rendered in zip(plan.figures, figures, strict=True):
        if sections[-1].heading != item.section:
            sections.append(Section(item.section))
        last = sections[-1]
        sections[-1] = Section(last.heading, last.html, (*last.figures, rendered))
    page = html_page(plan.title, plan.facts, sections)
    return Report(
        plan.kind, plan.source, plan.title, page, figures, plan.summary, plan.sweeps, fmt, plan.runs
    )


def build_report(
    paths: Paths,
    color_by: str = "auto",
    log: str | Sequence[str] = "auto",
    fmt: str = "png",
    width: float | None = None,
    sweep: SweepOptions | None = None,
    dpi: float = PRINT_DPI,
) -> Report:
    """The report of a run directory or of sweep directories, drawn in one go (options as the CLI's)."""
    return draw_report(plan_report(paths, color_by, log, sweep), fmt=fmt, width=width, dpi=dpi)


def write_report(report: Report, out: Path, figure_dir: Path | None = None) -> list[Path]:
    """Write the page (``.part`` then renamed, like every output) and, with ``figure_dir``, each figure
    as ``<name>.<format>`` (for PNG at the page's dpi, the very bytes the page inlines)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    part.write_text(report.html, encoding="utf-8")
    part.replace(out)
    written = []
    if figure_dir is not None:
        figure_dir.mkdir(parents=True, exist_ok=True)
        for figure in report.figures:
            path = figure_dir / f"{figure.name}.{report.format}"
            path.write_bytes(figure.file)
            written.append(path)
    return written


def _slug(name: str) -> str:
    """A file-name-safe stem from a cluster name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "cluster"
