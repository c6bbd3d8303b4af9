"""``gridemu report``: a run's or a sweep's figures as one self-contained HTML page, and PNGs on request."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import progress
from .cli_sweep import format_comparison
from .sweep import compare, varied_keys


def add_report(sub) -> None:
    parser = sub.add_parser(
        "report", help="an HTML report of a run (Gantt charts, usage, distributions) or a sweep (comparisons)"
    )
    parser.add_argument(
        "path", type=Path, metavar="RUN_OR_SWEEP_DIR", help="a run directory or a sweep directory"
    )
    parser.add_argument(
        "-o", "--out", type=Path, help="the HTML file (default: RUN_OR_SWEEP_DIR/report.html)"
    )
    parser.add_argument("--png", type=Path, metavar="DIR", help="also write every figure as DIR/<figure>.png")
    parser.add_argument(
        "--color",
        choices=["auto", "class", "late"],
        default="auto",
        help="colour Gantt bars by user class or by deadline outcome (auto: class if there are several)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(command=run_report)


def run_report(args: argparse.Namespace) -> int:
    from .report import draw_report, plan_report, write_report  # matplotlib: only for this command

    plan = plan_report(args.path, args.color)
    with progress.bar(
        len(plan.figures), f"report {args.path.resolve().name}", "figure", args.quiet
    ) as figures:
        report = draw_report(plan, lambda done, _: figures.update(done - figures.n))
    out = args.out or args.path / "report.html"
    pngs = write_report(report, out, args.png)
    print(_end_table(report))
    print(f"report: {out} ({len(report.figures)} figures, {out.stat().st_size / 1e6:.1f} MB, self-contained)")
    if args.png is not None:
        print(f"figures: {len(pngs)} PNG files in {args.png}")
    return 0


def _end_table(report) -> str:
    """The table the run or sweep printed at its end, printed again under the report's line."""
    if report.kind == "sweep":
        keys = varied_keys(report.rows)
        return format_comparison(compare(report.rows, keys), [k for k in keys if k != "seed"])
    from .cli import format_summary  # cli imports this module: a call-time import breaks the cycle

    return format_summary(report.summary)
