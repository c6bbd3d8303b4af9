"""What the commands that run emulations share: their options, running a loaded scenario, the summary.

Below every command module (:mod:`emulator.cli` and ``cli_workloads``,
``cli_sweep``, ``cli_report``), which import it and never each other's
parsers: ``run``, ``replay`` and the sweeps take the same options and run
and report alike.
"""

from __future__ import annotations

import argparse
import sys

from .api import RAY_CALLS, ray_backend
from .data import scenario
from .data.metrics import jobs_sentence
from .engine import runner
from .engine.progress import RunProgress
from .sync.timing import format_timing


def scenario_arguments(parser: argparse.ArgumentParser, seed: bool = True) -> None:
    """The options every command that loads a scenario shares: ``--seed`` (unless not wanted), ``--set``."""
    if seed:
        parser.add_argument("--seed", type=int, help="override the scenario's seed")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario key, e.g. --set meta.policy=random (repeatable)",
    )


def display_arguments(parser: argparse.ArgumentParser) -> None:
    """``--quiet`` and ``--verbose``, for the commands that run emulations."""
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.add_argument("--verbose", action="store_true", help="report barrier overhead vs partition compute")


def overwrite_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the run (finished or stranded) already in --out; other files there are never deleted",
    )


def backend_arguments(parser: argparse.ArgumentParser) -> None:
    """Where the partitions run: this process, or Ray actors (local or an existing cluster)."""
    parser.add_argument(
        "--backend",
        choices=["inproc", "ray"],
        default="inproc",
        help="where partitions run (default: inproc)",
    )
    parser.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="join this Ray cluster (default: $RAY_ADDRESS, else start one)",
    )
    parser.add_argument(
        "--partitions",
        type=int,
        metavar="N",
        help="Ray actors hosting the clusters' partitions (default: one per CPU; the meta partition runs "
        "in the driver)",
    )
    parser.add_argument(
        "--checkpoint-every",
        type=int,
        default=1000,
        metavar="K",
        help="snapshot Ray actors every K rounds to recover from a dead one (0: off; default 1000)",
    )
    parser.add_argument(
        "--rebalance-every",
        type=int,
        default=runner.REBALANCE_EVERY,
        metavar="K",
        help="every K rounds, move partitions between Ray actors if that evens out their measured "
        f"compute; the trace is the same (0: off; default {runner.REBALANCE_EVERY})",
    )
    parser.add_argument(
        "--ray-calls",
        choices=RAY_CALLS,
        default="direct",
        help="how each round calls the actors: over direct lines (Unix sockets) to those on this "
        "node, Ray calls to the others (direct, the default: ~0.1 ms a round); plain Ray calls "
        "(~1 ms); or a Ray Compiled Graph (~0.5 ms, and its polling takes CPU from the partitions)",
    )


def open_backend(args: argparse.Namespace) -> runner.Backend:
    if args.backend == "inproc":
        return runner.in_process
    return ray_backend(
        args.ray_address, args.partitions, args.checkpoint_every, args.rebalance_every, args.ray_calls
    )


def run_scenario(args: argparse.Namespace, scen: scenario.Scenario) -> int:
    """Run a loaded scenario with ``run``'s options (backend, progress, output) and print the summary."""
    for note in scen.notes:
        print(f"gridemu: note: {note}", file=sys.stderr)
    backend = open_backend(args)
    with RunProgress(len(scen.jobs), scen.name, disable=args.quiet) as progress:
        result = runner.run(
            scen, args.out, progress, backend=backend, backend_name=args.backend, overwrite=args.overwrite
        )
    print(format_summary(result.summary))
    if args.verbose:
        print(format_timing(result.stats, [c.name for c in scen.platform.clusters]))
        calls = getattr(backend, "calls", "")  # how a Ray backend's rounds reached its actors
        if calls:
            print(f"Ray calls: {CALLS_SAID.get(calls, calls)}")
        moved = getattr(backend, "migrations", 0)  # a Ray backend's rebalancing
        if moved:
            print(f"rebalancing: {moved} partition migration(s) between Ray actors")
    if args.backend == "ray" and result.stats.barrier_share > BARRIER_WARNING:
        print(
            f"gridemu: warning: the barrier took {result.stats.barrier_share:.0%} of the run's time; "
            "fewer --partitions, a larger link latency (lookahead) or --backend inproc would be faster",
            file=sys.stderr,
        )
    print(f"run directory: {result.out_dir}")
    return 0


CALLS_SAID = {
    "direct": "direct lines to every actor",
    "plain": "plain Ray calls",
    "direct+plain": "direct lines to the actors on this node, plain Ray calls to the others",
    "compiled": "a Ray Compiled Graph",
}
"""``--verbose``'s words for :attr:`actors.RayTransport.calls`."""

BARRIER_WARNING = 0.5
"""Share of a Ray run's time spent in the barrier above which the user is told."""


COLUMNS = [
    ("jobs", "jobs_finished", "{:d}"),
    ("wait", "mean_wait", "{:.1f}"),
    ("bsld", "mean_bounded_slowdown", "{:.2f}"),
    ("late %", "late_percent", "{:.1f}"),
    ("SU", "system_usage", "{:.3f}"),
    ("LU", "license_usage", "{:.3f}"),
    ("share", "workload_share", "{:.3f}"),
    ("makespan", "makespan", "{:.0f}"),
]


def format_summary(summary: dict) -> str:
    """The end-of-run table: one row per cluster and one for the grid."""
    rows = [(name, metrics) for name, metrics in summary["clusters"].items()] + [("grid", summary["grid"])]
    header = ["cluster"] + [title for title, _, _ in COLUMNS]
    body = [[name] + [_cell(metrics.get(key), fmt) for _, key, fmt in COLUMNS] for name, metrics in rows]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(_pad(cell, w, i) for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
        for r in [header, *body]
    ]
    lines.insert(1, "-" * len(lines[0]))
    lines.append(jobs_sentence(summary))
    skipped = summary.get("workload", {}).get("skipped", [])
    if skipped:
        count = summary["workload"]["skipped_lines"]
        lines.append(f"{count} trace line(s) skipped by the reader's rules (listed in summary.json), e.g.")
        lines.append(f"  {skipped[0]}")
    run = summary.get("run")
    if run:
        lines.append(f"{run['events']} events in {run['rounds']} rounds, {run['wall_seconds']:.2f} s wall")
    return "\n".join(lines)


def _pad(cell: str, width: int, column: int) -> str:
    return cell.rjust(width) if column else cell.ljust(width)


def _cell(value, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)
