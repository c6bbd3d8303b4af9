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
PRINT_DPI = 300  # emulator.report.style.PRINT_DPI, likewise


def add_report(sub) -> None:
    parser = sub.add_parser(
        "report",
        help="an HTML report of a run (Gantt charts, usage, distributions), of runs compared (a run and its"
        " replay) or of sweeps (comparisons)",
    )
    parser.add_argument(
        "paths",
        type=Path,
        nargs="+",
        metavar="DIR",
        help="a run directory; several run directories (compared side by side); or one or more sweep"
        " directories (overlaid in each figure)",
    )
    parser.add_argument(
        "-o",
        "--out",
        type=Path,
        help="the HTML file (default: the first DIR's report.html;"
        " runs compared: runs/compare-<run>+<run>.html)",
    )
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
        help="figure width in inches (default 10, sweeps 7.5; 3.5 for a paper's column)",
    )
    parser.add_argument(
        "--dpi",
        type=_dpi,
        default=PRINT_DPI,
        help=f"pixels per inch of PNG figure files (default {PRINT_DPI}; the page's PNGs are 110)",
    )
    parser.add_argument(
        "--log",
        action="append",
        metavar="[METRIC=]AXES",
        help=f"sweep axes in log scale, AXES one of {', '.join(LOG_OPTIONS)}; per metric with "
        "METRIC=AXES (repeatable). Default auto: where positive values span over 2 decades, "
        "never for bounded metrics (utilisation %%), which only METRIC=y forces",
    )
    parser.add_argument(
        "--metrics",
        metavar="M1,M2",
        help="sweeps: the metrics to draw (default every metric some point has), e.g. mean_wait,utilization",
    )
    parser.add_argument(
        "--panel",
        action="store_true",
        help="sweeps: one figure of the metrics as panels sharing their x axis (columns as the width allows)",
    )
    parser.add_argument(
        "--label",
        action="append",
        default=[],
        metavar="RAW=SHORT",
        help="sweeps: a short label for a value, key or metric, e.g. 'easy[order=sjf]=EASY-SJF' (repeatable)",
    )
    parser.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help='sweeps: short labels from a TOML ("RAW" = "SHORT" lines) or CSV (RAW,SHORT rows) file',
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


def _dpi(text: str) -> int:
    """``--dpi``: whole pixels per inch (300 for print, 600 for line art)."""
    dpi = int(text) if text.isdigit() else 0
    if not 50 <= dpi <= 2400:
        raise argparse.ArgumentTypeError(f"{text!r}: expected pixels per inch between 50 and 2400, e.g. 300")
    return dpi


def _sweep_options(args: argparse.Namespace):
    """The sweep figures' options from ``--metrics``, ``--panel``, ``--log``, ``--label(s)``, ``--width``
    (a ReportError, one line, for a bad one)."""
    from .report import LogScale, SweepOptions, read_labels
    from .report.sweep_options import SWEEP_WIDTH, parse_metrics

    return SweepOptions(
        metrics=parse_metrics(args.metrics or ""),
        panel=args.panel,
        log=LogScale.parse(args.log or "auto"),
        labels=read_labels(args.label, [args.labels] if args.labels else []),
        width=args.width or SWEEP_WIDTH,
    )


def run_report(args: argparse.Namespace) -> int:
    from .report import ReportError, draw_report, plan_report, write_report  # matplotlib: only here

    try:
        plan = plan_report(args.paths, args.color, sweep=_sweep_options(args))
    except ReportError as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_INPUT
    name = ", ".join(p.resolve().name for p in args.paths)
    with progress.bar(len(plan.figures), f"report {name}", "figure", args.quiet) as figures:
        report = draw_report(
            plan, lambda done, _: figures.update(done - figures.n), args.format, args.width, args.dpi
        )
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
