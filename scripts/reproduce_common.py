"""What the paper-reproduction scripts share: run labelled sweeps in parallel, aggregate, tabulate, plot.

A reproduction is a list of *series* (a label and the ``--set`` overrides that
make it: a policy case, a grid size...), each run over a list of x values (one
scenario key) and seeds. Every run is an :func:`emulator.engine.sweep.run_point` on a
process pool (:func:`emulator.engine.sweep_pool.process_pool`); only its ``summary.json``
is kept. Means come with 95% confidence half-widths over seeds
(:func:`emulator.engine.sweep.mean_ci`).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from emulator.data.offered_load import interarrival_for_load, offered_load
from emulator.engine.sweep import Point, mean_ci, points
from emulator.engine.sweep_pool import process_pool


@dataclass
class Series:
    """One curve of a figure: its label and the ``--set`` overrides shared by its runs."""

    label: str
    sets: list[str]


@dataclass
class Runs:
    """Every run's summary, by (series label, x value), in seed order."""

    summaries: dict[tuple[str, object], list[dict]] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0

    def values(self, label: str, x: object, metric: Callable[[dict], float | None]) -> list[float]:
        found = (metric(s) for s in self.summaries.get((label, _key(x)), []))
        return [v for v in found if v is not None]

    def at(self, label: str, x: object) -> list[dict]:
        """Every seed's summary of series ``label`` at ``x``, in seed order (failed runs left out)."""
        return self.summaries.get((label, _key(x)), [])

    def mean(
        self, label: str, x: object, metric: Callable[[dict], float | None]
    ) -> tuple[float, float] | None:
        return mean_ci(self.values(label, x, metric))


def add_quick(parser: argparse.ArgumentParser, smaller: dict[str, object]) -> None:
    """Add ``--quick``: a look in a couple of minutes instead of the documented full size.

    ``smaller`` maps an option's destination to its quick value; the defaults stay the
    documented full-size run, so ``docs/reproductions.md``'s commands give its numbers.
    """
    shown = ", ".join(f"--{name.replace('_', '-')} {value!r}" for name, value in smaller.items())
    parser.add_argument("--quick", action="store_true", help=f"a smaller run: {shown} (unless given)")
    parser.set_defaults(quick_values=smaller)


def apply_quick(parser: argparse.ArgumentParser, args: argparse.Namespace) -> argparse.Namespace:
    """With ``--quick``, each option of :func:`add_quick` left at its default takes its quick value."""
    if args.quick:
        for name, value in args.quick_values.items():
            if getattr(args, name) == parser.get_default(name):
                setattr(args, name, value)
    return args


def run_series(
    scenario: Path,
    series: list[Series],
    x_key: str,
    xs: list,
    seeds: int,
    workers: int | None,
    fixed=(),
    keep: Callable[[str, object, int, dict[str, bytes]], None] | None = None,
) -> Runs:
    """Run every series x value x seed (seeds 1..``seeds``) in parallel; failures are listed, not fatal.

    ``keep(label, x, seed, files)``, when given, sees each successful run's files (``jobs.arrow``,
    ``events.arrow``...) before they are dropped.
    """
    todo: list[Point] = []
    label_of: dict[int, str] = {}
    for s in series:
        varies = [(x_key, list(xs)), ("seed", list(range(1, seeds + 1)))]
        for p in points(varies, [*fixed, *s.sets]):
            label_of[len(todo)] = s.label
            todo.append(Point(len(todo), p.values, p.fixed))
    runs = Runs()
    started = time.perf_counter()
    for done, result in enumerate(process_pool(workers)(str(scenario), todo), 1):
        label, x = label_of[result.point.index], result.point.values[x_key]
        if result.error:
            runs.failures.append(f"{label} {x_key}={x} seed={result.point.values['seed']}: {result.error}")
        else:
            summary = json.loads(result.files["summary.json"])
            if keep is not None:
                keep(label, x, result.point.values["seed"], result.files)
            runs.summaries.setdefault((label, _key(x)), []).append((result.point.values["seed"], summary))
        result.files.clear()  # the pool keeps every result until it closes: drop the run files now
        elapsed = time.perf_counter() - started
        print(f"\r  {done}/{len(todo)} runs, {elapsed:.0f} s", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    runs.summaries = {k: [s for _, s in sorted(v, key=lambda e: e[0])] for k, v in runs.summaries.items()}
    runs.wall_seconds = time.perf_counter() - started
    return runs


def load_axis(scenario: Path, xs: list[float], load: float, fixed=()) -> list[float]:
    """A paper's inter-arrival axis ``xs`` moved to offered load ``load`` at its heaviest point.

    The least positive ``x`` gets the mean inter-arrival of offered load ``load``
    (:mod:`emulator.data.offered_load`); the others keep the paper's ratios to it, so its
    points stay in the proportions it chose; 0 (every job at once) stays 0.
    """
    heaviest = min(x for x in xs if x > 0)
    gap = interarrival_for_load(scenario, load, list(fixed))
    return [round(x * gap / heaviest, 6) for x in xs]


def run_interarrivals(
    scenario: Path,
    series: list[Series],
    xs: list[float],
    load: float | None,
    seeds: int,
    workers: int | None,
    fixed=(),
    keep: Callable[[str, object, int, dict[str, bytes]], None] | None = None,
) -> Runs:
    """:func:`run_series` over the paper's inter-arrival axis ``xs``, or over it moved to ``load``.

    Either way the results (and ``keep``'s x) are keyed by the paper's ``xs``, so its
    tables line up with the paper's columns; each point's offered load is printed.
    """
    gaps = list(xs) if load is None else load_axis(scenario, xs, load, fixed)
    paper = dict(zip(gaps, xs, strict=True))
    print("offered load: " + loads_line(scenario, xs, gaps, fixed))
    relabel = keep and (lambda label, x, seed, files: keep(label, paper[x], seed, files))
    key = "workload.mean_interarrival"
    runs = run_series(scenario, series, key, gaps, seeds, workers, fixed, relabel)
    runs.summaries = {(label, paper[x]): v for (label, x), v in runs.summaries.items()}
    return runs


def loads_line(scenario: Path, xs: list[float], gaps: list[float], fixed=()) -> str:
    """Each point's offered load, e.g. ``t_a = 5: 8.00 (mean inter-arrival 5 s)``."""
    parts = []
    for x, gap in zip(xs, gaps, strict=True):
        value = offered_load(scenario, [*fixed, f"workload.mean_interarrival={gap}"])
        parts.append(f"{x:g}: {value:.2f} (mean inter-arrival {gap:g} s)")
    return ", ".join(parts)


def _key(x: object) -> object:
    """An x value as a dictionary key (a list, e.g. a range, becomes a tuple)."""
    return tuple(x) if isinstance(x, list) else x


def fmt(value: tuple[float, float] | None, digits: int = 2, scale: float = 1.0) -> str:
    """``mean ±half-width`` (half-width omitted for a single run)."""
    if value is None:
        return "-"
    mean, half = value[0] * scale, value[1] * scale
    return f"{mean:.{digits}f}" + (f" ±{half:.{digits}f}" if half else "")


def table(header: list[str], rows: list[list[str]]) -> str:
    """A plain-text table, first column left-aligned, the others right-aligned."""
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, ["-" * w for w in widths], *rows]:
        cells = [
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells))
    return "\n".join(lines)


def relative(ours: float | None, paper: float | None) -> str:
    """How far ours is from the paper's number: absolute difference and ratio."""
    if ours is None or paper is None:
        return "-"
    ratio = f" (x{ours / paper:.2f})" if paper else ""
    return f"{ours - paper:+.2f}{ratio}"


def bar_figure(path: Path, title: str, groups: list[str], bars: dict[str, list], ylabel: str) -> Path:
    """Grouped bars with 95% error bars: ``bars`` maps a series label to one (mean, half) per group.

    The only place the scripts draw (matplotlib, through the report package's
    figure class and PNG writer, no pyplot state).
    """
    from emulator.report import ReportFigure, png_bytes

    figure = ReportFigure(figsize=(7.0, 3.6), dpi=110, layout="constrained")
    ax = figure.add_subplot()
    width = 0.8 / max(len(bars), 1)
    for i, (label, values) in enumerate(bars.items()):
        xs = [g + (i - (len(bars) - 1) / 2) * width for g in range(len(groups))]
        means = [v[0] if v else float("nan") for v in values]
        errors = [v[1] if v else 0.0 for v in values]
        ax.bar(xs, means, width, yerr=errors, capsize=2, label=label)
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    path.write_bytes(png_bytes(figure))
    return path


def line_figure(path: Path, title: str, xs: list, lines: dict[str, list], xlabel: str, ylabel: str) -> Path:
    """One line per series with a 95% band: ``lines`` maps a label to one (mean, half) per x."""
    from emulator.report import ReportFigure, png_bytes

    figure = ReportFigure(figsize=(6.0, 3.6), dpi=110, layout="constrained")
    ax = figure.add_subplot()
    for label, values in lines.items():
        keep = [(x, v) for x, v in zip(xs, values, strict=True) if v is not None]
        if not keep:
            continue
        x, v = zip(*keep, strict=True)
        mean = [m for m, _ in v]
        ax.plot(x, mean, marker="o", label=label)
        ax.fill_between(x, [m - h for m, h in v], [m + h for m, h in v], alpha=0.2)
    means = [v[0] for values in lines.values() for v in values if v is not None and v[0] > 0]
    if means and max(means) > 100 * min(means):
        ax.set_yscale("log")  # series orders of magnitude apart (PARS/BARS vs MCRS/LARS TTR)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize="small")
    path.write_bytes(png_bytes(figure))
    return path


def report_end(failures: list, total: int, wall: float, out: Path) -> int:
    """The closing lines every reproduction prints; exit status 1 when a run failed."""
    for failure in failures:
        print("FAILED", failure, file=sys.stderr)
    print(f"\n{total - len(failures)}/{total} runs in {wall:.0f} s; plots: {out}/")
    return 1 if failures else 0
