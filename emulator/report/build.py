"""Reports of a run or sweep directory: plan the figures, draw each, assemble the page, export PNGs.

Planning first (a list of figures with a draw function each) lets the CLI show a
progress bar over figures, and lets the notebook API draw any one of them alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
from matplotlib.figure import Figure

from ..sweep import FAILURE_METRICS, varied_keys
from ..sweep import METRICS as SWEEP_METRICS
from .data import RunData, is_run_dir, load_run, read_arrow
from .distributions import distribution_figure, distributions
from .gantt import gantt_bars, gantt_figure
from .late import late_figure, outcomes
from .page import Rendered, Section, html_page
from .queue import queue_figure, queue_lengths
from .share import share_figure, shares
from .style import png_bytes
from .sweep_plot import LABELS, sweep_figure, sweep_plot
from .tables import run_facts, run_tables, sweep_facts, sweep_tables
from .usage import PANELS, cluster_usage, usage_figure

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

    kind: str  # "run" or "sweep"
    source: Path
    title: str
    html: str
    figures: list[Rendered] = field(default_factory=list)
    summary: dict | None = None  # a run's summary.json
    rows: pa.Table | None = None  # a sweep's sweep.arrow


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
    """Every figure of a run's report: a Gantt chart per cluster, usage (per few clusters), the rest."""
    planned, stems = [], set()
    for index, shape in enumerate(run.clusters):
        stem = f"gantt-{_slug(shape.name)}"
        stem = stem if stem not in stems else f"{stem}-{index}"  # two names that slug alike
        stems.add(stem)

        def draw(index: int = index) -> tuple[Figure, str]:
            bars = gantt_bars(run, index, color_by)
            return gantt_figure(bars), bars.note

        planned.append(Planned("Gantt charts", stem, f"Gantt chart: {shape.name}", draw))
    names = [c.name for c in run.clusters]
    for first in range(0, len(names), PANELS):
        part = names[first : first + PANELS]
        suffix = "" if len(names) <= PANELS else f"-{first // PANELS + 1}"
        planned.append(
            Planned(
                "Usage over time",
                f"usage{suffix}",
                f"CPU and license usage: {', '.join(part)}",
                lambda part=part: (usage_plot(run, part), ""),
            )
        )
    for section, kind, title in (
        ("Usage over time", "queue", "Queue length over time"),
        ("Workload share", "share", "Workload share per cluster"),
        ("Wait and slowdown", "distributions", "Distributions of wait time and bounded slowdown"),
        ("Late jobs", "late", "Late jobs per cluster"),
    ):
        planned.append(Planned(section, kind, title, lambda kind=kind: (PLOTS[kind](run), "")))
    return planned


def plan_sweep(rows: pa.Table) -> list[Planned]:
    """A metric-vs-parameter figure per compared metric."""
    keys = varied_keys(rows)
    return [
        Planned(
            "Metrics against parameters",
            f"sweep-{metric}",
            f"{LABELS.get(metric, metric)} (mean, 95% CI)",
            lambda metric=metric: (sweep_figure(sweep_plot(rows, keys, metric)), ""),
        )
        for metric in SWEEP_METRICS
        if metric not in FAILURE_METRICS or any(rows.column(metric).to_pylist())
    ]


@dataclass
class Plan:
    """What a report will hold, before any figure is drawn (so a progress bar knows its total)."""

    kind: str  # "run" or "sweep"
    source: Path
    title: str
    facts: list[str]
    tables: list[tuple[str, str]]  # (heading, HTML) sections before the figures
    figures: list[Planned]
    summary: dict | None = None
    rows: pa.Table | None = None


def plan_report(path: Path | str, color_by: str = "auto") -> Plan:
    """Read a run directory or a sweep directory and list its report's tables and figures."""
    path = Path(path)
    if (path / "sweep.arrow").is_file():
        rows = read_arrow(path / "sweep.arrow")
        title = f"Sweep {path.resolve().name}"
        return Plan("sweep", path, title, sweep_facts(rows), sweep_tables(rows), plan_sweep(rows), rows=rows)
    if not is_run_dir(path):
        raise FileNotFoundError(
            f"{path}: neither a run directory (summary.json, ...) nor a sweep (sweep.arrow)"
        )
    run = load_run(path)
    figures = plan_run(run, color_by)
    return Plan("run", path, f"Run {run.name}", run_facts(run), run_tables(run), figures, summary=run.summary)


def draw_report(plan: Plan, on_figure: Callable[[int, int], None] | None = None) -> Report:
    """Draw every planned figure (``on_figure(done, total)`` after each) and assemble the page."""
    figures = []
    for done, item in enumerate(plan.figures, 1):
        figure, note = item.draw()
        figures.append(Rendered(item.name, item.title, png_bytes(figure), note))
        if on_figure is not None:
            on_figure(done, len(plan.figures))
    sections = [Section(heading, html) for heading, html in plan.tables]
    for item, rendered in zip(plan.figures, figures, strict=True):
        if sections[-1].heading != item.section:
            sections.append(Section(item.section))
        last = sections[-1]
        sections[-1] = Section(last.heading, last.html, (*last.figures, rendered))
    page = html_page(plan.title, plan.facts, sections)
    return Report(plan.kind, plan.source, plan.title, page, figures, plan.summary, plan.rows)


def build_report(path: Path | str, color_by: str = "auto") -> Report:
    """The report of a run directory or a sweep directory, drawn in one go."""
    return draw_report(plan_report(path, color_by))


def write_report(report: Report, out: Path, png_dir: Path | None = None) -> list[Path]:
    """Write the page (``.part`` then renamed, like every output) and, with ``png_dir``, each PNG."""
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    part.write_text(report.html, encoding="utf-8")
    part.replace(out)
    written = []
    if png_dir is not None:
        png_dir.mkdir(parents=True, exist_ok=True)
        for figure in report.figures:
            (png_dir / f"{figure.name}.png").write_bytes(figure.png)
            written.append(png_dir / f"{figure.name}.png")
    return written


def _slug(name: str) -> str:
    """A file-name-safe stem from a cluster name."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "cluster"
