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
    _system_memory_pool()
    return run_command(lambda: args.command(args), debug=args.debug)


def _system_memory_pool() -> None:
    """Arrow's buffers from the C library's allocator, unless ``ARROW_DEFAULT_MEMORY_POOL`` names one.

    A run decompresses and re-cuts its trace batch after batch; the mimalloc pool pyarrow picks by
    default keeps what each batch freed for reuse, so a long run's resident memory grows with its
    trace; the system's returns it, in the same CPU time (docs/performance.md, Memory)."""
    if "ARROW_DEFAULT_MEMORY_POOL" not in os.environ:
        pa.set_memory_pool(pa.system_memory_pool())


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
    inspect = sub.add_parser(
        "inspect",
        help="print a run directory's summary and counts (or a sweep directory's points)",
        description="Print a finished run's summary and event counts; for a run that has not finished, "
        "what it left (complete and partial files) and what can be done with them; for a sweep "
        "directory, each point's state (finished, failed, not run) and the table of means.",
    )
    inspect.add_argument("run_dir", type=Path, help="a run directory, or a sweep's")
    what = inspect.add_mutually_exclusive_group()
    what.add_argument(
        "--recover",
        action="store_true",
        help="salvage the rows a killed run flushed: each *.arrow.part as *.recovered.arrow",
    )
    what.add_argument(
        "--summarize",
        action="store_true",
        help="finish a run stopped after its events.arrow and jobs.arrow were complete: write its "
        "summary.json from them and scenario.toml (wall-clock times unknown), and drop its .running marker",
    )
    inspect.set_defaults(command=_inspect)


def _run(args: argparse.Namespace) -> int:
    return run_scenario(args, load_run_scenario(args))


def _inspect(args: argparse.Namespace) -> int:
    if args.recover:
        return _recover(args.run_dir)
    if args.summarize:
        return _summarize(args.run_dir)
    if _is_sweep(args.run_dir):
        return _inspect_sweep(args.run_dir)
    path = args.run_dir / "summary.json"
    if not path.is_file():
        held = args.run_dir.is_dir() and any(args.run_dir.iterdir())
        what = rundir.describe(args.run_dir) if held else "not a run directory"
        raise FileNotFoundError(f"{args.run_dir}: {what} (no summary.json)")
    summary = json.loads(path.read_text())
    print(_format_run(summary))
    with pa.memory_map(str(args.run_dir / "events.arrow")) as source:
        events = pa.ipc.open_file(source).read_all()
    counts = events.column("kind").cast("string").value_counts().to_pylist()
    print(
        "events: "
        + ", ".join(f"{c['values']} {c['counts']}" for c in sorted(counts, key=lambda c: c["values"]))
    )
    return 0


def _format_run(summary: dict) -> str:
    """The run's table (:func:`format_summary`); a summary written by ``--summarize`` says so instead
    of the wall-clock figures it does not have."""
    run = summary.get("run") or {}
    if not run.get("summarized_after_stop"):
        return format_summary(summary)
    return (
        format_summary({**summary, "run": None})
        + f"\n{run['events']} events; summarized after the run stopped (`gridemu inspect --summarize`): "
        "its wall-clock times and rounds are unknown"
    )


def _recover(run_dir: Path) -> int:
    if rundir.is_live(run_dir):
        raise rundir.RunDirError(f"{run_dir}: {rundir.describe(run_dir)}; recover it once it has stopped")
    if rundir.summarizable(run_dir):  # (stopped after its traces were complete: nothing was lost)
        print(
            f"{run_dir}: nothing to recover: its events.arrow and jobs.arrow are complete; "
            f"`gridemu inspect --summarize {run_dir}` writes its summary.json"
        )
        return 0
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


def _summarize(run_dir: Path) -> int:
    from .engine import runner

    summary = runner.summarize_stopped(run_dir)
    print(_format_run(summary))
    print(f"{run_dir / 'summary.json'}: written; {run_dir} holds a finished run")
    return 0


_POINT = re.compile(r"point-\d{3,}")


def _is_sweep(path: Path) -> bool:
    """A sweep's directory: its definition or tables, or point folders (a sweep running or killed)."""
    if not path.is_dir() or (path / "summary.json").exists():
        return False
    if any((path / name).is_file() for name in ("sweep.json", "sweep.arrow", "sweep.csv")):
        return True
    return any(p.is_dir() and _POINT.fullmatch(p.name) for p in path.iterdir())


def _inspect_sweep(path: Path) -> int:
    """Each point's state, from the sweep table (written when a sweep ends, is interrupted or fails)
    and the point folders (written as each point finishes), then the table of means."""
    from .cli_sweep import format_comparison
    from .engine import sweep

    folders = {p.name for p in path.iterdir() if p.is_dir() and _POINT.fullmatch(p.name)}
    done = {name for name in folders if (path / name / "summary.json").is_file()}
    table = path / "sweep.arrow"
    if not table.is_file():
        state = "is still running" if rundir.is_live(path) else "was stopped or killed before writing it"
        print(f"sweep {path}: no sweep table (sweep.arrow): the sweep {state}; {len(done)} point(s) finished")
        for name in sorted(folders):
            state = "finished" if name in done else "incomplete (no summary.json)"
            print(f"  {name}  {state}")
        return 0
    with pa.memory_map(str(table)) as source:
        rows = pa.ipc.open_file(source).read_all()
    keys = sweep.varied_keys(rows)
    lines, states = [], {}
    for row in rows.to_pylist():
        name = f"point-{row['point']:03d}"
        state = row["status"]
        if state != "ok" and name in done:
            state = "ok (finished after the table was written)"
        states[state.split()[0]] = states.get(state.split()[0], 0) + 1
        values = " ".join(f"{key}={row[key]}" for key in keys)
        error = (row["error"] or "").strip().splitlines()
        lines.append(f"  {name}  {values}  {state}" + (f": {error[-1]}" if error and state != "ok" else ""))
    said = {"ok": "finished", "failed": "failed", "timeout": "timed out", "not": "not run"}
    counts = ", ".join(f"{states[s]} {said.get(s, s)}" for s in sorted(states, key=[*said, *states].index))
    print(f"sweep {path}: {rows.num_rows} points: {counts}")
    print("\n".join(lines))
    if states.get("not"):
        print(f"(`gridemu sweep --resume --out {path}` runs the points not run)")
    if "ok" in states:
        print(format_comparison(sweep.compare(rows, keys), [k for k in keys if k != "seed"]))
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
