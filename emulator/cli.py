"""The ``gridemu`` command: a thin layer over :mod:`emulator.engine.runner` and :mod:`emulator.data.scenario`.

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
from pathlib import Path

import pyarrow as pa

from .cli_errors import EXIT_INPUT, run_command
from .cli_report import add_report
from .cli_run import (
    backend_arguments,
    display_arguments,
    format_summary,
    overwrite_argument,
    run_scenario,
    scenario_arguments,
)
from .cli_sweep import add_sweep
from .cli_workloads import (
    TRACE_DEFAULTS,
    add_convert,
    add_presets,
    add_replay,
    load_run_scenario,
    workload_run_arguments,
)
from .data import rundir, scenario
from .data.trace import FLUSH_SECONDS

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
    parser.add_argument("--version", action=_Version, nargs=0, help="show program's version number and exit")
    parser.add_argument("--debug", action="store_true", help="show the traceback of any failure")
    sub = parser.add_subparsers(required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


class _Version(argparse.Action):
    """``--version``, reading the metadata only when asked: argparse's own action wants the text when
    the parser is built, and importlib.metadata costs every command ~10 ms."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        print(f"gridemu {version()}")
        parser.exit()


def version() -> str:
    """The installed distribution's version (its metadata), or a word saying it is not installed."""
    from importlib import metadata

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
