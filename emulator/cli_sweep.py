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
        "--resume", action="store_true", help="continue the sweep in --out: skip the points it finished"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(command=run_sweep)


def run_sweep(args: argparse.Namespace) -> int:
    _apply_recipe(args)
    varies = sweep.parse_vary(args.vary)
    if not varies:
        raise ScenarioError("sweep: give at least one --vary KEY=VALUES")
    todo = sweep.points(varies, args.overrides)
    source = str(Path(args.scenario).resolve()) if Path(args.scenario).is_file() else args.scenario
    seed, sets = todo[0].overrides()
    first = scenarios.load(source, sets, seed=seed)  # a broken scenario fails here, once
    for note in first.notes:
        print(f"gridemu: note: {note}", file=sys.stderr)
    _validate(source, todo)
    out = _sweep_dir(args, first.name)
    results = [r for r in (sweep.finished(out, p) for p in todo) if r is not None] if args.resume else []
    left = [p for p in todo if p.index not in {r.point.index for r in results}]
    keys = [key for key, _ in varies]
    try:
        _execute(args, source, left, out, results, first.name)
    finally:  # interrupted or not, the tables say what every point became
        ran = {r.point.index for r in results}
        pending = [sweep.PointResult(p, error=sweep.NOT_RUN) for p in todo if p.index not in ran]
        rows = sweep.table([*results, *pending], keys)
        sweep.write_tables(out, rows)
    print(format_comparison(sweep.compare(rows, keys), [k for k in keys if k != "seed"]))
    for key in sweep.inert_keys(rows, keys):
        print(f"gridemu: warning: {INERT.get(key, INERT_ANY).format(key=key)}", file=sys.stderr)
    failed = [r for r in results if r.error]
    done = len(results) - len(failed)
    print(f"{done} of {len(results)} runs done; results in {out}/sweep.arrow and sweep.csv")
    for result in sorted(failed, key=lambda r: r.point.index):
        print(f"failed: {result.point.name} {result.point.values}: {result.error}", file=sys.stderr)
    return 1 if failed else 0


INERT_ANY = "varying {key} changed no metric: every value gave the same results (does the key reach the run?)"
INERT = {
    "seed": "the seeds gave identical results (± 0): nothing in this scenario draws from the seed; on a"
    ' trace, [workload] resample = "window" or "bootstrap" or estimate_noise make each seed a'
    " replicate (README: Variance on a trace)",
}
"""The warning for a varied key that changed nothing (:func:`emulator.engine.sweep.inert_keys`)."""


def _validate(source: str, todo: list[sweep.Point]) -> None:
    """Load every point's scenario before any runs: a bad value fails the sweep at once, naming it."""
    for point in todo[1:]:
        seed, sets = point.overrides()
        try:
            scenarios.load(source, sets, seed=seed)
        except (ScenarioError, PolicyError) as err:
            raise ScenarioError(f"sweep point {point.name} {point.values}: {err}") from None


def _sweep_dir(args: argparse.Namespace, name: str) -> Path:
    out = args.out or _default_dir(name)
    if out.exists() and any(out.iterdir()) and not args.resume:
        raise FileExistsError(f"{out}: sweep directory is not empty; pick another --out, or --resume it")
    out.mkdir(parents=True, exist_ok=True)
    return out


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
    if args.recipe is None:
        if args.scenario is None:
            raise ScenarioError("sweep: give a scenario, or --recipe NAME (see `gridemu presets`)")
        return
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
