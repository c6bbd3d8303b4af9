"""``gridemu sweep``: many independent runs in parallel, one table to compare them."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .cli_run import scenario_arguments
from .core.config import ScenarioError
from .data import rundir
from .data import scenario as scenarios
from .engine import progress, sweep
from .policies import PolicyError


def add_sweep(sub) -> None:

    parser = sub.add_parser("sweep", help="run the cross product of scenario variations in parallel")
    parser.add_argument("scenario", nargs="?", help="a scenario file or a built-in name (or give --recipe)")
    parser.add_argument(
        "--recipe",
        metavar="NAME",
        help="a named sweep (scenario, --set and --vary lists; see `gridemu presets`); "
        "--vary and --set given too are added, a --vary of the same key replaces the recipe's",
    )
    parser.add_argument(
        "--vary",
        action="append",
        default=[],
        metavar="KEY=VALUES",
        help="values of one key: a,b,c (commas inside [...] or quotes do not split: "
        "local.policy=cs2[sort=counting,period=10],easy), first..last (integers, e.g. seed=1..20) or "
        "first..last:step (e.g. stress.load=0.5..2.0:0.25); repeatable",
    )
    scenario_arguments(parser, seed=False)  # --set: the same in every run; seeds are varied
    parser.add_argument("--out", type=Path, help="sweep directory (default: a new runs/sweep-<name>-NNN)")
    parser.add_argument(
        "--backend",
        choices=["inproc", "ray"],
        default="inproc",
        help="processes of this machine, or Ray tasks",
    )
    parser.add_argument("--ray-address", metavar="ADDRESS", help="join this Ray cluster (default: start one)")
    parser.add_argument("--workers", type=int, help="parallel runs with --backend inproc (default: CPUs)")
    parser.add_argument(
        "--point-timeout", type=float, metavar="SECONDS", help="stop a point running longer (inproc backend)"
    )
    parser.add_argument(
        "--resume",
        action="store_true",
        help="continue the sweep in --out: skip the points it finished (the scenario, --vary and --set "
        "it records are used; any given must match them)",
    )
    parser.add_argument(
        "--overwrite",
        action="store_true",
        help="replace the sweep (finished or stranded, never one running) already in --out; "
        "other files there are never deleted",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(command=run_sweep)


def run_sweep(args: argparse.Namespace) -> int:
    if args.resume and args.overwrite:
        raise ScenarioError("sweep: --resume continues the sweep in --out, --overwrite replaces it; give one")
    if args.out is not None and rundir.is_live(args.out):  # said first: nothing else matters then
        raise sweep.SweepDirError(f"{args.out}: {sweep.live(args.out)}")
    definition = _definition(args)
    varies = sweep.parse_vary(definition.vary)
    todo = sweep.points(varies, definition.set)
    source = definition.scenario
    seed, sets = todo[0].overrides()
    first = scenarios.load(source, sets, seed=seed)  # a broken scenario fails here, once
    for note in first.notes:
        print(f"gridemu: note: {note}", file=sys.stderr)
    earlier = {p.index for p in todo if args.resume and sweep.finished(args.out, p)}
    configs = _validate(source, todo, first, earlier)
    out = args.out or _default_dir(first.name)
    held = sweep.claim(out, resume=args.resume, overwrite=args.overwrite)
    try:
        results = _resumed(out, source, todo, configs) if args.resume else []
    except BaseException:
        sweep.let_go(held)  # refused before anything ran: the directory stays as it was
        raise
    keys = [key for key, _ in varies]
    try:
        if sweep.read_definition(out) is None:  # a new sweep, or one an older gridemu began
            sweep.write_definition(out, definition)
        left = [p for p in todo if p.index not in {r.point.index for r in results}]
        try:
            _execute(args, source, left, out, results, first.name)
        finally:  # interrupted or not, the tables say what every point became
            ran = {r.point.index for r in results}
            pending = [sweep.PointResult(p, error=sweep.NOT_RUN) for p in todo if p.index not in ran]
            rows = sweep.table([*results, *pending], keys)
            sweep.write_tables(out, rows)
    except BaseException:
        held.release()  # stopped: its marker says so, and --resume continues it
        raise
    held.finish()
    print(format_comparison(sweep.compare(rows, keys), [k for k in keys if k != "seed"]))
    for key in sweep.inert_keys(rows, keys):
        print(f"gridemu: warning: {INERT.get(key, INERT_ANY).format(key=key)}", file=sys.stderr)
    failed = [r for r in results if r.error]
    done = len(results) - len(failed)
    print(f"{done} of {len(results)} runs done; results in {out}/sweep.arrow and sweep.csv")
    for result in sorted(failed, key=lambda r: r.point.index):
        print(f"failed: {result.point.name} {result.point.values}: {result.error}", file=sys.stderr)
    return 1 if failed else 0


def _definition(args: argparse.Namespace) -> sweep.Definition:
    """The sweep asked for: the command line's, or with ``--resume`` the one ``--out`` records, which
    what the command line gives (a scenario, ``--vary``, ``--set``, a recipe) must match."""
    if args.resume and args.out is None:
        raise ScenarioError("sweep --resume: name the sweep's directory with --out DIR")
    recorded = sweep.read_definition(args.out) if args.resume else None
    if args.recipe is not None:
        _apply_recipe(args)
    if recorded is None:
        if args.scenario is None:
            if args.resume:
                raise ScenarioError(f"sweep --resume: {args.out}: {_nothing_recorded(args.out)}")
            raise ScenarioError("sweep: give a scenario, or --recipe NAME (see `gridemu presets`)")
        if not args.vary:
            raise ScenarioError("sweep: give at least one --vary KEY=VALUES")
        return sweep.Definition(_source(args.scenario), tuple(args.vary), tuple(args.overrides))
    asked = sweep.Definition(
        _source(args.scenario) if args.scenario is not None else recorded.scenario,
        tuple(args.vary) or recorded.vary,
        tuple(args.overrides) or recorded.set,
    )
    mismatch = sweep.differs(recorded, asked)
    if mismatch:
        raise sweep.SweepMismatch(
            f"sweep --resume: {args.out} holds another sweep than the one asked for: {mismatch} "
            f"(`gridemu sweep --resume --out {args.out}` alone resumes the one it holds)"
        )
    return recorded


def _nothing_recorded(out: Path) -> str:
    if not out.is_dir() or not any(out.iterdir()):
        return "no sweep there to resume; give a scenario and --vary to start one"
    return (
        f"records no sweep ({sweep.DEFINITION} is missing: begun by an older gridemu?); "
        "give its scenario, --vary and --set again to resume it"
    )


def _source(scenario: str) -> str:
    """A scenario file by its resolved path (the same file from any directory), a built-in by name."""
    return str(Path(scenario).resolve()) if Path(scenario).is_file() else scenario


def _resumed(out: Path, source: str, todo: list[sweep.Point], configs: dict[int, dict]) -> list:
    """The points an earlier run of the sweep in ``out`` finished, each checked to be the point asked for."""
    results = []
    for point in todo:
        result = sweep.finished(out, point)
        if result is None:
            continue
        if point.index not in configs:  # finished since they were loaded (by a sweep since ended)
            seed, sets = point.overrides()
            configs[point.index] = sweep.effective(scenarios.load(source, sets, seed=seed).effective)
        mismatch = sweep.point_differs(out, point, configs[point.index])
        if mismatch:
            raise sweep.SweepMismatch(
                f"sweep --resume: {out}/{point.name} ran another point than the one asked for: {mismatch} "
                "(resume it with the scenario, --vary and --set it ran with, or --overwrite it)"
            )
        results.append(result)
    return results


INERT_ANY = "varying {key} changed no metric: every value gave the same results (does the key reach the run?)"
INERT = {
    "seed": "the seeds gave identical results (± 0): nothing in this scenario draws from the seed; on a"
    ' trace, [workload] resample = "window" or "bootstrap" or estimate_noise make each seed a'
    " replicate (docs/guide.md: Variance on a trace)",
}
"""The warning for a varied key that changed nothing (:func:`emulator.engine.sweep.inert_keys`)."""


def _validate(source: str, todo: list[sweep.Point], first, keep: set[int]) -> dict[int, dict]:
    """Load every point's scenario before any runs: a bad value fails the sweep at once, naming it.
    Returns the effective configurations of the points in ``keep`` (those to resume)."""
    configs = {todo[0].index: sweep.effective(first.effective)} if todo[0].index in keep else {}
    for point in todo[1:]:
        seed, sets = point.overrides()
        try:
            loaded = scenarios.load(source, sets, seed=seed)
        except (ScenarioError, PolicyError) as err:
            raise ScenarioError(f"sweep point {point.name} {point.values}: {err}") from None
        if point.index in keep:
            configs[point.index] = sweep.effective(loaded.effective)
    return configs


def _execute(args, source: str, left: list[sweep.Point], out: Path, results: list, name: str) -> None:
    """Run the points ``left``, writing each point's folder as it ends and appending to ``results``."""
    if args.backend == "inproc":
        from .engine.sweep_pool import process_pool  # (multiprocessing: only sweeps need it)

        execute = process_pool(args.workers, args.point_timeout)
    else:
        execute = _ray(args.ray_address)
    with progress.bar(len(left), f"sweep {name}", "run", args.quiet) as runs:
        for result in execute(source, left):
            sweep.write_point(out, result)
            results.append(result)
            runs.update(1)
            if result.error:
                runs.write(
                    f"{result.point.name} {result.point.values} failed: {result.error.splitlines()[-1]}"
                )


def _apply_recipe(args: argparse.Namespace) -> None:
    """Fill the scenario, ``--set`` and ``--vary`` from ``--recipe`` (the command line's own win)."""
    from workloads import recipes

    recipe = recipes.load(args.recipe)
    if args.scenario is not None and args.scenario != recipe.scenario:
        raise ScenarioError(
            f"sweep: --recipe {args.recipe} sweeps {recipe.scenario!r}; "
            "leave the scenario out, or give that one"
        )
    args.scenario = recipe.scenario
    args.overrides = [*recipe.set, *args.overrides]
    args.vary = recipes.merge_vary(recipe.vary, args.vary)


def format_comparison(groups: list[dict], keys: list[str]) -> str:
    """Mean ± 95% CI over seeds, one row per combination of the other varied keys."""
    header = [*keys, "runs", *sweep.METRICS]
    body = [
        [str(g[k]) for k in keys] + [str(g["runs"])] + [_cell(g[m]) for m in sweep.METRICS] for g in groups
    ]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    lines = ["  ".join(c.rjust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *body]]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def _cell(value) -> str:
    if value is None:
        return "-"
    mean, half = value
    return f"{mean:.4g} ± {half:.2g}"


def _ray(address: str | None) -> sweep.Executor:
    from actors import ray_tasks  # imports Ray: only when asked for

    return ray_tasks(address)


def _default_dir(name: str, root: Path = Path("runs")) -> Path:
    return rundir.default_dir(f"sweep-{name}", None, root)
