"""``gridemu report``: a run's or sweeps' figures as one self-contained HTML page, figure files on request."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli_errors import EXIT_INPUT
from .cli_run import format_summary
from .cli_sweep import format_comparison
from .data.rundir import safe_name
from .engine import progress
from .engine.sweep import compare, varied_keys

FORMATS = ("png", "pdf", "svg")  # emulator.report.FORMATS, repeated so --help needs no matplotlib
LOG_OPTIONS = ("auto", "none", "x", "y", "xy")  # emulator.report.LOG_OPTIONS, likewise


def add_report(sub) -> None:
    parser = sub.add_parser(
        "report",
        help="an HTML report of a run (Gantt charts, usage, distributions) or of sweeps (comparisons)",
    )
    parser.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="a run directory, or one or more sweep directories (overlaid in each figure)",
    )
    parser.add_argument("-o", "--out", type=Path, help="the HTML file (default: the first DIR's report.html)")
    parser.add_argument(
        "--figures",
        "--png",
        dest="figures",
        type=Path,
        metavar="FIGDIR",
        help="also write every figure as FIGDIR/<figure>.<format>",
    )
    parser.add_argument(
        "--format",
        choices=FORMATS,
        default="png",
        help="the figure files' format (default png; the page's are PNG)",
    )
    parser.add_argument(
        "--width",
        type=_inches,
        metavar="INCHES",
        help="figure width in inches (default 10; heights scale by its square root; PNG: 110 pixels/inch)",
    )
    parser.add_argument(
        "--log",
        choices=LOG_OPTIONS,
        default="auto",
        help="sweep axes in log scale: auto (where values span over 2 decades), none, or x, y, xy to force",
    )
    parser.add_argument(
        "--color",
        choices=["auto", "class", "late"],
        default="auto",
        help="colour Gantt bars by user class or by deadline outcome (auto: class if there are several)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(command=run_report)


def _inches(text: str) -> float:
    """``--width``: a positive number of inches (a paper's column is about 3.5, a page 7)."""
    try:
        width = float(text)
    except ValueError:
        width = -1.0
    if not 0.5 <= width <= 100:
        raise argparse.ArgumentTypeError(f"{text!r}: expected inches between 0.5 and 100, e.g. 3.5")
    return width


def run_report(args: argparse.Namespace) -> int:
    from .report import ReportError, draw_report, plan_report, write_report  # matplotlib: only here

    try:
        plan = plan_report(args.paths, args.color, args.log)
    except ReportError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INPUT
    name = ", ".join(p.resolve().name for p in args.paths)
    with progress.bar(len(plan.figures), f"report {name}", "figure", args.quiet) as figures:
        report = draw_report(plan, lambda done, _: figures.update(done - figures.n), args.format, args.width)
    out = args.out or _default_out(plan.kind, args.paths)
    written = write_report(report, out, args.figures)
    print(_end_table(report))
    print(f"report: {out} ({len(report.figures)} figures, {out.stat().st_size / 1e6:.1f} MB, self-contained)")
    if args.figures is not None:
        print(f"figures: {len(written)} {args.format.upper()} files in {args.figures}")
    return 0


NAME_LENGTH = 200
"""Characters of a comparison's default file name taken from the runs' names (a name holds 255 bytes)."""


def _default_out(kind: str, paths: list[Path]) -> Path:
    """The first directory's ``report.html``; runs compared go to ``runs/compare-<run>+<run>.html``, so
    a comparison never replaces the first run's own report (nor adds a file its run directory lacks)."""
    if kind != "runs":
        return paths[0] / "report.html"
    names = "+".join(p.resolve().name for p in paths)
    return Path("runs") / f"compare-{safe_name(names)[:NAME_LENGTH]}.html"


def _end_table(report) -> str:
    """The table the run, runs or sweeps printed at their end, printed again under the report's line."""
    if report.kind == "runs":
        return "\n\n".join(f"{name}:\n{format_summary(summary)}" for name, summary in report.runs)
    if report.kind == "sweep":
        tables = []
        for name, rows in report.sweeps:
            keys = varied_keys(rows)
            table = format_comparison(compare(rows, keys), [k for k in keys if k != "seed"])
            tables.append(table if len(report.sweeps) == 1 else f"{name}:\n{table}")
        return "\n\n".join(tables)

    return format_summary(report.summary)
