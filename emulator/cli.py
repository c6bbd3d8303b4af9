"""The ``gridemu`` command: a thin layer over :mod:`emulator.runner` and :mod:`emulator.scenario`.

Each subcommand is a function ``add_X(sub)`` that registers its parser and
sets ``command`` to its handler; :data:`COMMANDS` lists them (modules of later
features add theirs there). Errors a user can fix (a bad scenario, a trace
line, an existing output directory) print one clear line and exit with status
2; no traceback.
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
import textwrap
from contextlib import suppress
from importlib import metadata
from pathlib import Path

import pyarrow as pa

from . import rundir, runner, scenario
from .cli_errors import EXIT_INPUT, run_command
from .cli_report import add_report
from .cli_sweep import add_sweep
from .cli_workloads import (
    TRACE_DEFAULTS,
    add_convert,
    add_presets,
    add_replay,
    load_run_scenario,
    workload_run_arguments,
)
from .metrics import jobs_sentence
from .progress import RunProgress
from .timing import format_timing
from .trace import FLUSH_SECONDS

EXIT_USAGE = EXIT_INPUT

DESCRIPTION = (
    "A GridSim-compatible grid and cluster scheduling emulator: run scenarios, traces and the papers' "
    "presets, replay job streams under other policies, sweep, report. `gridemu COMMAND --help` for each."
)


def main(argv: list[str] | None = None) -> int:
    """The ``gridemu`` command; exit codes in :mod:`emulator.cli_errors` (and the README)."""
    parser = _parser()
    args = parser.parse_args(argv)
    _import_from_cwd()
    return run_command(lambda: args.command(args), debug=args.debug)


def _import_from_cwd() -> None:
    """Plug-in policies (``mymodule:MyPolicy``) beside the user import as under ``python -m``, whose
    path starts with the current directory (the console script's starts with its bin directory).
    Appended, so installed packages keep precedence over files that happen to share their names;
    Ray workers search the driver's directory too (:mod:`actors.session`)."""
    with suppress(FileNotFoundError):  # (a deleted working directory: nothing to add)
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.append(os.getcwd())


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gridemu", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"gridemu {version()}")
    parser.add_argument("--debug", action="store_true", help="show the traceback of any failure")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def version() -> str:
    """The installed distribution's version (its metadata), or a word saying it is not installed."""
    try:
        return metadata.version("gridemu")
    except metadata.PackageNotFoundError:
        return "(not installed: no version metadata)"


_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`~?([^`<]*?)\s*(?:<[^>]*>)?`")


def plain(text: str) -> str:
    """A docstring's text without its Sphinx markup, for help and listings.

    >>> plain("Flexible backfilling with ``priority``, see :class:`~emulator.queue_table.QueueTable`.")
    'Flexible backfilling with priority, see QueueTable.'
    """
    text = _ROLE.sub(lambda m: m.group(1).rpartition(".")[2] if "~" in m.group(0) else m.group(1), text)
    return text.replace("``", "")


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


RUN_DESCRIPTION = (
    "Run a scenario (a TOML file, a built-in name, --swf TRACE or --preset NAME) and write a run "
    "directory: events.arrow (every event), jobs.arrow (every job's inputs and outcome), scenario.toml "
    "(the effective configuration) and summary.json (the metrics). --set KEY=VALUE changes any key; "
    "`gridemu policies` lists the policies and their parameters."
)


def add_run(sub) -> None:
    run = sub.add_parser(
        "run",
        help="run a scenario and write a run directory",
        description=textwrap.fill(RUN_DESCRIPTION, 100),  # the epilog's layout is kept: fill this one
        epilog=TRACE_DEFAULTS,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "scenario",
        nargs="?",
        help=f"a scenario file, or a built-in name ({', '.join(scenario.builtin_names())})",
    )
    workload_run_arguments(run)
    run.add_argument("--out", type=Path, help="run directory (default: a new runs/<name>-seed<N>-NNN)")
    overwrite_argument(run)
    backend_arguments(run)
    scenario_arguments(run)
    display_arguments(run)
    run.set_defaults(command=_run)


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
        "--partitions", type=int, metavar="N", help="Ray actors hosting the partitions (default: one per CPU)"
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
        choices=["compiled", "plain"],
        default="plain",
        help="one plain call per actor and round, or a Ray Compiled Graph: ~4x cheaper rounds, "
        "but its polling takes CPU from the partitions when actors fill the cores",
    )


def open_backend(args: argparse.Namespace) -> runner.Backend:
    if args.backend == "inproc":
        return runner.in_process
    from actors import ray_backend  # imports Ray: only when asked for

    compiled = args.ray_calls == "compiled"
    return ray_backend(
        args.ray_address, args.partitions, args.checkpoint_every, compiled, args.rebalance_every
    )


def add_inspect(sub) -> None:
    inspect = sub.add_parser("inspect", help="print a run directory's summary and counts")
    inspect.add_argument("run_dir", type=Path)
    inspect.add_argument(
        "--recover",
        action="store_true",
        help="salvage the rows a killed run flushed: each *.arrow.part as *.recovered.arrow",
    )
    inspect.set_defaults(command=_inspect)


def _run(args: argparse.Namespace) -> int:
    return run_scenario(args, load_run_scenario(args))


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


BARRIER_WARNING = 0.5
"""Share of a Ray run's time spent in the barrier above which the user is told."""


def _inspect(args: argparse.Namespace) -> int:
    if args.recover:
        return _recover(args.run_dir)
    path = args.run_dir / "summary.json"
    if not path.is_file():
        held = args.run_dir.is_dir() and any(args.run_dir.iterdir())
        what = rundir.describe(args.run_dir) if held else "not a run directory"
        raise FileNotFoundError(f"{args.run_dir}: {what} (no summary.json)")
    summary = json.loads(path.read_text())
    print(format_summary(summary))
    with pa.memory_map(str(args.run_dir / "events.arrow")) as source:
        events = pa.ipc.open_file(source).read_all()
    counts = events.column("kind").cast("string").value_counts().to_pylist()
    print(
        "events: "
        + ", ".join(f"{c['values']} {c['counts']}" for c in sorted(counts, key=lambda c: c["values"]))
    )
    return 0


def _recover(run_dir: Path) -> int:
    found = rundir.recover(run_dir)
    if not found:
        parts = sorted(part.name for part in run_dir.glob("*.arrow.part"))
        if parts:  # created, but the run was stopped before it first wrote rows
            raise FileNotFoundError(
                f"{run_dir}: {', '.join(parts)} holds no rows: the run was stopped before its first flush "
                f"(rows are written every {FLUSH_SECONDS:g} s of wall time), so nothing can be recovered"
            )
        raise FileNotFoundError(f"{run_dir}: no readable *.arrow.part to recover")
    for name, rows in found.items():
        print(f"{run_dir / name}: {rows:,} rows recovered")
    return 0


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
        lines.append(
            f"{run['events']} events in {run['rounds']} barrier rounds, {run['wall_seconds']:.2f} s wall"
        )
    return "\n".join(lines)


def _pad(cell: str, width: int, column: int) -> str:
    return cell.rjust(width) if column else cell.ljust(width)


def _cell(value, fmt: str) -> str:
    return "-" if value is None else fmt.format(value)


def add_policies(sub) -> None:
    parser = sub.add_parser(
        "policies",
        help="list every local and meta policy with its parameters and defaults",
        description="Every registered policy: its name, one line on what it does, and its parameters "
        "with their defaults (set them in a spec, e.g. --set 'local.policy=\"easy[key=value]\"', or a "
        "params table).",
    )
    parser.set_defaults(command=_policies)


def _policies(args: argparse.Namespace) -> int:
    from .policies import LOCAL, META

    print(format_policies(LOCAL, "local policies: [local] policy, a cluster's policy, --set local.policy="))
    print()
    print(format_policies(META, "meta policies: [meta] policy, --set meta.policy="))
    example = "--set 'local.policy=\"cs2[sort=counting,period=10]\"'"
    print(f"\nparameters: in a spec, e.g. {example}, or a params table")
    return 0


def format_policies(registry, title: str, width: int = 100) -> str:
    """One entry per policy, built-in then installed plug-ins: name and description, then its
    ``key=default`` parameters."""
    notes = {name: "" for name in registry.names()}
    notes.update((name, f" (plug-in {reference})") for name, reference in registry.installed().items())
    pad = max(map(len, notes)) + 2
    lines = [title]
    for name, note in notes.items():
        lines += textwrap.wrap(
            describe_policy(registry.lookup(name)) + note,
            width,
            initial_indent=f"  {name.ljust(pad)}",
            subsequent_indent=" " * (pad + 2),
        )
        params = [_parameter(key, value) for key, value in registry.defaults(name).items()]
        lines += textwrap.wrap(
            "parameters: " + " ".join(params) if params else "",
            width,
            initial_indent=" " * (pad + 2),
            subsequent_indent=" " * (pad + 2),
        )
    return "\n".join(lines)


def describe_policy(cls: type) -> str:
    """The first line of the policy class's own docstring, or of its module's when the class defers to it."""
    own = (cls.__dict__.get("__doc__") or "").strip()
    line = own.splitlines()[0] if own else ""
    if not line or "module docstring" in line:
        module = sys.modules[cls.__module__].__doc__ or ""
        line = module.strip().splitlines()[0] if module.strip() else line
    return plain(line)


def _parameter(key: str, default) -> str:
    if default is inspect.Parameter.empty:
        return f"{key}=(required)"
    return f"{key}={str(default).lower() if isinstance(default, bool) else default}"


COMMANDS = [add_run, add_replay, add_inspect, add_sweep, add_report, add_convert, add_presets, add_policies]


if __name__ == "__main__":
    sys.exit(main())
