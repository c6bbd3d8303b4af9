"""The workload commands: ``run --swf`` / ``run --preset``, ``replay``, ``convert``, ``presets``.

Thin layers over :mod:`workloads`: this module builds scenarios (a trace with
no scenario file, a preset, a replay) and hands them to the ``run`` command's
own code (:func:`emulator.cli_run.run_scenario`), so they run and report alike.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from .cli_run import (
    backend_arguments,
    display_arguments,
    overwrite_argument,
    run_scenario,
    scenario_arguments,
)
from .core.config import ScenarioError
from .data import scenario
from .data.rundir import default_dir
from .data.scenario import Scenario

TRACE_DEFAULTS = """with --swf TRACE and no scenario file: one cluster built from the trace's header
(MaxNodes machines sharing MaxProcs CPUs; MaxProcs 1-CPU machines without MaxNodes) at 1 MIPS, jobs
read by the archive's rules (pwa: run time field 4, estimate field 9, processors field 5; a scenario
file's source = "swf" reads them so too unless its rules = "gridsim" asks for GridSim's), spread over
machines, entering the cluster directly (no meta-scheduler), EASY backfilling. With an Alea machines file
(TRACE.machines beside the trace, or --machines) the platform is that file's clusters, and jobs asking for
a cluster (cl_NAME) go to it. --sites partition|queue makes one cluster per site the jobs name (LCG-2005-1:
170), each as large as its busiest moment in the trace. Change any of it with --set, e.g. --set
local.policy=fcfs --set workload.interarrival_scale=0.5"""


def workload_run_arguments(parser: argparse.ArgumentParser) -> None:
    """``run``'s options for a scenario without a scenario file."""
    parser.add_argument(
        "--swf", metavar="TRACE", type=Path, help="run an SWF (or Alea) trace, no scenario file"
    )
    parser.add_argument(
        "--machines", metavar="FILE", type=Path, help="with --swf: an Alea .machines platform"
    )
    parser.add_argument(
        "--sites", choices=["partition", "queue"], help="with --swf: one cluster per site (field 16 or 15)"
    )
    parser.add_argument("--preset", metavar="NAME", help="a paper's experiment (see `gridemu presets`)")


def load_run_scenario(args: argparse.Namespace) -> Scenario:
    """The scenario ``run`` was given: a file or built-in name, ``--swf TRACE``, or ``--preset NAME``."""
    given = [what for what in (args.scenario, args.swf, args.preset) if what is not None]
    if len(given) != 1:
        raise ScenarioError("run: give one of SCENARIO, --swf TRACE or --preset NAME")
    if (args.machines or args.sites) and args.swf is None:
        raise ScenarioError("run: --machines and --sites go with --swf TRACE")
    if args.preset is not None:
        from workloads import presets

        try:
            return scenario.load(presets.path(args.preset), args.overrides, seed=args.seed)
        except KeyError as err:
            raise ScenarioError(f"--preset: {err.args[0]}") from None
    if args.swf is not None:
        raw = trace_scenario(args.swf, args.machines, args.sites)
        return scenario.load_raw(raw, f"--swf {args.swf}", Path.cwd(), args.overrides, args.seed)
    return scenario.load(args.scenario, args.overrides, seed=args.seed)


def trace_scenario(trace: Path, machines: Path | None = None, sites: str | None = None) -> dict:
    """A whole scenario for a trace file (see :data:`TRACE_DEFAULTS`), as a TOML document."""
    from workloads.alea import machines_path, read_machines
    from workloads.platforms import trace_name

    if not trace.is_file():
        raise FileNotFoundError(f"--swf {trace}: no such file")
    path = str(trace.resolve())
    name = trace_name(path)
    raw: dict = {"name": name, "local": {"policy": "easy"}, "meta": {"policy": "least-load"}}
    machines = machines or (machines_path(trace) if machines_path(trace).is_file() and not sites else None)
    if machines is not None:
        raw["platform"] = {"source": "alea", "path": str(machines.resolve())}
        raw["workload"] = {"source": "alea", "path": path}
        clusters = read_machines(machines)
        if len(clusters) == 1:
            raw["workload"]["site"] = clusters[0].name
    elif sites:
        raw["platform"] = {"source": "swf", "path": path, "sites": sites}
        raw["workload"] = {"source": "swf", "path": path, "rules": scenario.TRACE_RULES, "sites": sites}
    else:
        raw["platform"] = {"source": "swf", "path": path, "name": name}
        raw["workload"] = {"source": "swf", "path": path, "rules": scenario.TRACE_RULES, "site": name}
    return raw


# --- replay ---------------------------------------------------------------------------------


def add_replay(sub) -> None:

    replay = sub.add_parser(
        "replay",
        help="re-run an earlier run's exact job stream (its jobs.arrow), under its scenario or another",
        description="Re-run the job stream of RUN (a run directory or a jobs.arrow) under the run's "
        "scenario.toml, or --scenario; the same scenario and seed reproduce the run's traces byte for byte.",
    )
    replay.add_argument("run", metavar="RUN", help="a run directory, or a jobs table (.arrow)")
    replay.add_argument("--scenario", help="scenario to replay under (default: the run's scenario.toml)")
    replay.add_argument(
        "--out",
        type=Path,
        help="run directory (default: a new runs/<RUN>-replay-<what changed>-NNN, e.g. "
        "runs/kth-seed1-001-replay-local.policy=fcfs-001)",
    )
    overwrite_argument(replay)
    backend_arguments(replay)
    scenario_arguments(replay)
    display_arguments(replay)
    replay.set_defaults(command=_replay)


def _replay(args: argparse.Namespace) -> int:
    from .data.replay import replay_name, replay_scenario

    replayed = replay_scenario(args.run, args.scenario, args.overrides, args.seed)
    if args.out is None:  # named by what the replay changed, not runs/<name>-replay-seed<N>-NNN
        args.out = default_dir(replay_name(args.run, args.scenario, args.overrides, args.seed), None)
    return run_scenario(args, replayed)


# --- convert --------------------------------------------------------------------------------


def add_convert(sub) -> None:
    from workloads import formats

    convert = sub.add_parser(
        "convert",
        help="convert a job stream between SWF, GWF and the Arrow jobs table; out to Parquet or Batsim CSV",
        description="Formats come from the names (.swf, .gwf, .arrow, optionally .gz; .parquet; .csv: "
        "a Batsim/evalys jobs CSV of a run's schedule; a run directory reads its jobs.arrow) unless given. "
        "SWF -> Arrow -> SWF keeps every field and the header. RUN_DIR into a directory (existing, or "
        "ending in /) writes Parquet copies of the run's events.arrow and jobs.arrow there.",
    )
    convert.add_argument("source", metavar="IN")
    convert.add_argument("target", metavar="OUT")
    convert.add_argument("--from", dest="source_format", choices=formats.names("read"))
    convert.add_argument("--to", dest="target_format", choices=formats.names("write"))
    convert.add_argument("--rules", choices=["pwa", "gridsim"], help="SWF/Alea rules (default pwa)")
    convert.add_argument("--sites", help="sites field: SWF partition|queue, GWF origin|last-run|none")
    convert.add_argument("--limit", type=int, metavar="N", help="the first N jobs (of the window)")
    convert.add_argument("--start", type=float, metavar="T", help="jobs submitted at or after T")
    convert.add_argument("--end", type=float, metavar="T", help="jobs submitted before T")
    convert.add_argument(
        "--interarrival-scale", type=float, metavar="F", help="multiply the gaps between submit times by F"
    )
    convert.add_argument("--estimate", choices=["requested", "runtime"], help="estimates schedulers see")
    convert.add_argument("--cancelled", choices=["keep", "drop"], help="jobs of status 5")
    convert.add_argument("--failed", choices=["keep", "drop"], help="jobs of status 0")
    convert.add_argument(
        "--trace-fields",
        dest="schedule",
        action="store_false",
        default=None,
        help="from a run's jobs.arrow: write the trace's wait/run time/status, not the emulated schedule",
    )
    convert.set_defaults(command=_convert)


def _convert(args: argparse.Namespace) -> int:
    from workloads import formats
    from workloads.convert import convert

    fmt = args.source_format or _detect(formats.detect, args.source)
    options = {
        key: value
        for key, value in {
            "limit": args.limit,
            "start": args.start,
            "end": args.end,
            "interarrival_scale": args.interarrival_scale,
            "estimate": args.estimate,
            "cancelled": args.cancelled,
            "failed": args.failed,
            "sites": args.sites,
        }.items()
        if value is not None
    }
    if formats.FORMATS[fmt].rules:
        options["rules"] = args.rules or "pwa"
    elif args.rules:
        raise ScenarioError(f"convert: --rules applies to SWF and Alea input, not {fmt}")
    started = time.perf_counter()
    try:
        stream = convert(
            args.source,
            args.target,
            source_format=fmt,
            target_format=args.target_format,
            schedule=args.schedule,
            **options,
        )
    except (ValueError, OSError) as err:
        raise ScenarioError(f"convert: {err}") from None
    seconds = time.perf_counter() - started
    rows = stream.table.num_rows
    print(
        f"{args.source} -> {args.target}: {rows} jobs in {seconds:.2f} s "
        f"({rows / max(seconds, 1e-9):,.0f} jobs/s)"
    )
    if stream.skipped:
        print(
            f"{len(stream.skipped)} line(s) skipped, e.g. "
            f"line {stream.skipped[0].line}: {stream.skipped[0].reason}"
        )
    if stream.left_out:
        print(f"{stream.left_out} job(s) left out by the selection")
    return 0


def _detect(detect, path: str) -> str:
    try:
        return detect(path).name
    except ValueError as err:
        raise ScenarioError(f"convert: {err}; use --from/--to") from None


# --- presets --------------------------------------------------------------------------------


def add_presets(sub) -> None:
    presets = sub.add_parser(
        "presets",
        help="list the papers' experiments (run --preset NAME), sweep recipes (sweep --recipe NAME)",
    )
    presets.set_defaults(command=_presets)


def _presets(args: argparse.Namespace) -> int:
    from workloads import presets, recipes

    width = max(map(len, [*presets.names(), *recipes.names()]))
    for name in presets.names():
        print(f"{name.ljust(width)}  {presets.summary(name)}")
    print(
        "\nrun one: gridemu run --preset NAME [--set workload.jobs=500 ...]; "
        f"files in {presets.path(presets.names()[0]).parent}\n\nsweep recipes:"
    )
    for name in recipes.names():
        print(f"{name.ljust(width)}  {recipes.summary(name)}")
    print(
        "\nrun one: gridemu sweep --recipe NAME [--set workload.jobs=500 --vary seed=1..3 ...]; "
        f"files in {recipes.path(recipes.names()[0]).parent}"
    )
    return 0
