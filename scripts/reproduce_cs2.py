"""Reproduce Convergent Scheduling 2.0's experiment (seed 002) and check it against the paper's claims.

The ``cs2`` preset (one cluster of 150 machines, 20 licenses counted per
machine, 1500 jobs, 2% checkpointable) for mean inter-arrival times 1, 4, 6,
8, 10 and 12, and six schedulers:

- ``CS 2.0``: ``cs2`` (float sort, a plan at every event);
- ``CS 2.0 Cs``: ``cs2[sort=counting]`` (counting sort over 1024 classes);
- ``CS 2.0 Td``, ``CS 2.0 Cs Td``: the same with ``period=10`` (a plan every 10 s);
- ``EASY BF``: ``easy``;
- ``Flexible BF``: ``flexible[priority=ls]`` (the paper ranks its queue with
  "the CS 2.0 heuristics"; ours uses seed 000's four local heuristics, whose
  weights default to CS 2.0's).

Prints, per scheduler and load, mean and 95% half-width over seeds of: late
jobs %, slowdown ``(Tw + Te) / Te``, machine usage SU, license usage LU,
average and total scheduling time (wall clock inside the policy, from
``summary.json``), preemptions per job and wasted CPU time; then the
scalability curve (the time of one plan against the number of jobs in the
cluster, 100..1000, as Fig. 8) and each of the paper's claims with whether ours
agrees. Saves the plots as PNG in ``--out``. Runs go in parallel (``--workers``,
default: every CPU).

``--fig1`` runs Fig. 1 instead (jobs in the system over time, see :func:`figure1`).

    python scripts/reproduce_cs2.py [--seeds 20] [--jobs 1500] [--workers N] [--out DIR] [--quick]
    python scripts/reproduce_cs2.py --fig1 [--seeds 1] [--jobs 1500] [--ta 1,4,6,8,10,12]

``--match sort`` runs every CS 2.0 variant with ``cs2[match=sort]`` (the paper's global sort, the
same plans): Fig. 7's total scheduling time with only the matching's order changed.

``--load X`` runs the same ``Ta`` columns at offered load X for ``Ta = 1`` and X / Ta for
the others (the stated ``Ta`` give 11.7 / Ta: see docs/reproductions.md).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
from reproduce_common import Runs, Series, add_quick, apply_quick, fmt, line_figure, run_interarrivals, table

from workloads import presets

TA = [1.0, 4.0, 6.0, 8.0, 10.0, 12.0]
SERIES = [
    Series("CS 2.0", ['local.policy="cs2"']),
    Series("CS 2.0 Cs", ['local.policy="cs2[sort=counting]"']),
    Series("CS 2.0 Td", ['local.policy="cs2[period=10]"']),
    Series("CS 2.0 Cs Td", ['local.policy="cs2[period=10,sort=counting]"']),
    Series("EASY BF", ['local.policy="easy"']),
    Series("Flexible BF", ['local.policy="flexible[priority=ls]"']),
]
CS = [s.label for s in SERIES[:4]]
BACKFILL = [s.label for s in SERIES[4:]]


def grid(metric: str):
    return lambda summary: summary["grid"][metric]


def scheduler(metric: str):
    return lambda summary: summary["scheduler"][metric]


METRICS = [  # (name, title, value of a summary, scale, digits)
    ("late", "late jobs %", grid("late_percent"), 1.0, 1),
    ("slowdown", "slowdown (Tw + Te) / Te", grid("mean_slowdown"), 1.0, 2),
    ("su", "machine usage SU %", grid("system_usage"), 100.0, 1),
    ("lu", "license usage LU %", grid("license_usage"), 100.0, 1),
    ("plan_ms", "average scheduling time per plan (ms)", scheduler("mean_ms"), 1.0, 2),
    ("total_s", "total scheduling time (s)", scheduler("total_seconds"), 1.0, 2),
    ("preemptions", "preemptions per job", grid("preemptions_per_job"), 1.0, 2),
    ("wasted", "wasted CPU time (CPU-hours)", grid("wasted_cpu_seconds"), 1 / 3600, 1),
]
SCALABILITY = {  # Fig. 8; per plan, the Td variants cost what their event-driven twins do
    "CS 2.0": "cs2",
    "CS 2.0 Cs": "cs2[sort=counting]",
    "EASY BF": "easy",
    "Flexible BF": "flexible[priority=ls]",
}


def sorting_every_entry(spec: str) -> str:
    """A CS 2.0 ``spec`` with ``match=sort``: the paper's global sort before the walk (others as given).

    ``--match sort`` runs the CS variants so: the same plans, so only the scheduling time moves,
    which isolates what our merged rows save over the sort (Fig. 7, docs/reproductions.md).
    """
    name, _, params = spec.partition("[")
    if name != "cs2":
        return spec
    return f"cs2[{','.join(filter(None, ['match=sort', params.removesuffix(']')]))}]"


def use_global_sort() -> None:
    """Every CS 2.0 series and scalability spec with ``match=sort`` (see :func:`sorting_every_entry`)."""
    for k, s in enumerate(SERIES):
        spec = s.sets[0].removeprefix('local.policy="').removesuffix('"')
        SERIES[k] = Series(s.label, [f'local.policy="{sorting_every_entry(spec)}"'])
    for label, spec in SCALABILITY.items():
        SCALABILITY[label] = sorting_every_entry(spec)


def metric_tables(runs: Runs) -> tuple[str, dict, dict]:
    """One table per metric (schedulers x loads), the means (for the claims) and (mean, half-width)."""
    means: dict = {}
    bands: dict = {}
    lines = []
    for name, title, value, scale, digits in METRICS:
        rows = []
        for s in SERIES:
            cells = []
            for ta in TA:
                m = runs.mean(s.label, ta, value)
                means[(name, s.label, ta)] = None if m is None else m[0] * scale
                bands[(name, s.label, ta)] = None if m is None else (m[0] * scale, m[1] * scale)
                cells.append(fmt(m, digits, scale))
            rows.append([s.label, *cells])
        lines += ["", title, table(["scheduler", *(f"Ta={ta:g}" for ta in TA)], rows)]
    return "\n".join(lines), means, bands


def scalability(sizes: list[int], repeats: int) -> dict[str, list[float]]:
    """Milliseconds of one plan (median of ``repeats``) against the jobs in the cluster (Fig. 8).

    ``n`` jobs of the cs2 workload (seed 1) all arrive at 0 on the 150-machine
    platform; the first plan starts what fits, then the policy is timed planning
    again for all ``n`` jobs, running and queued (the engine applies nothing).
    """
    from emulator.data.scenario import load
    from emulator.engine.runner import build_partitions

    out: dict[str, list[float]] = {label: [] for label in SCALABILITY}
    for n in sizes:
        for label, spec in SCALABILITY.items():
            sets = [f"workload.jobs={n}", "workload.mean_interarrival=0", 'workload.site="cluster1"']
            sets.append(f'local.policy="{spec}"')
            part = build_partitions(load(presets.path("cs2"), sets, seed=1), [1])[0]
            part.advance(1e-9, [])  # every job arrives at 0; one plan starts what fits
            times = []
            for _ in range(repeats):
                started = time.perf_counter()
                part.policy.schedule(part.view)
                times.append(1e3 * (time.perf_counter() - started))
            out[label].append(statistics.median(times))
    return out


def claims(means: dict) -> list[tuple[str, bool | None, str]]:
    """The paper's statements about its figures, each with ours and whether they agree."""

    def m(name, label, ta):
        return means.get((name, label, ta))

    def best_cs(name, ta, low=True):
        values = [m(name, label, ta) for label in CS]
        values = [v for v in values if v is not None]
        return (min if low else max)(values) if values else None

    def best_bf(name, ta, low=True):
        values = [m(name, label, ta) for label in BACKFILL]
        values = [v for v in values if v is not None]
        return (min if low else max)(values) if values else None

    out = []
    for ta in (1.0, 4.0):
        ours, theirs = m("late", "CS 2.0", ta), best_bf("late", ta)
        ok = None if ours is None or theirs is None else ours < theirs
        out.append(
            (
                f"Fig. 2: CS 2.0 fewer late jobs than both backfilling at Ta={ta:g}",
                ok,
                f"CS 2.0 {ours and round(ours, 1)}% vs best BF {theirs and round(theirs, 1)}%",
            )
        )
    late_cs = [m("late", "CS 2.0", ta) for ta in TA]
    late_bf = [best_bf("late", ta) for ta in TA]
    ok = all(a is not None and b is not None and a <= b for a, b in zip(late_cs, late_bf, strict=True))
    out.append(("Fig. 2: backfilling worse than CS 2.0 at every load", ok, ""))
    slow = [m("slowdown", "CS 2.0", ta) for ta in TA if ta > 1]
    ok = None if None in slow else all(v < 1.5 for v in slow)
    out.append(
        (
            "Fig. 3: CS 2.0 slowdown equal or very close to 1 for Ta > 1",
            ok,
            "CS 2.0: " + ", ".join(f"{v:.2f}" for v in slow if v is not None),
        )
    )
    su = [m("su", "CS 2.0", ta) for ta in TA]
    ok = None if None in su else min(su) >= 90.0
    out.append(
        (
            "Fig. 4: CS 2.0 keeps the machines busy (SU near 100%)",
            ok,
            "CS 2.0 SU %: " + ", ".join(f"{v:.0f}" for v in su if v is not None),
        )
    )
    for ta in (1.0, 4.0, 6.0):
        ours, theirs = m("lu", "CS 2.0", ta), best_bf("lu", ta, low=False)
        ok = None if ours is None or theirs is None else ours > theirs
        out.append(
            (
                f"Fig. 5: CS 2.0 better license usage than backfilling at Ta={ta:g}",
                ok,
                f"CS 2.0 {ours and round(ours, 1)}% vs best BF {theirs and round(theirs, 1)}%",
            )
        )
    slower = [
        m("plan_ms", cs, ta) > max(m("plan_ms", bf, ta) for bf in BACKFILL)
        for cs in CS
        for ta in TA
        if m("plan_ms", cs, ta) is not None and None not in [m("plan_ms", bf, ta) for bf in BACKFILL]
    ]
    out.append(
        (
            "Fig. 6: CS 2.0 versions take more time per plan than backfilling",
            all(slower) if slower else None,
            f"{sum(slower)}/{len(slower)} (version, load) pairs",
        )
    )
    fastest = [
        min(CS, key=lambda label, ta=ta: m("total_s", label, ta) or float("inf")) == "CS 2.0 Cs Td"
        for ta in TA
    ]
    out.append(
        (
            "Fig. 7: CS 2.0 Cs Td has the least total scheduling time of the CS versions",
            all(fastest),
            f"at {sum(fastest)}/{len(TA)} loads",
        )
    )
    return out


def plots(bands: dict, scale: dict[str, list[float]] | None, sizes: list[int], out: Path) -> list[Path]:
    """One PNG per metric (a line per scheduler against Ta, 95% bands) and the scalability curve."""
    out.mkdir(parents=True, exist_ok=True)
    saved = []
    for name, title, *_ in METRICS:
        lines = {s.label: [bands.get((name, s.label, ta)) for ta in TA] for s in SERIES}
        saved.append(line_figure(out / f"{name}.png", title, TA, lines, "mean inter-arrival time Ta", title))
    if scale:
        lines = {label: [(v, 0.0) for v in values] for label, values in scale.items()}
        saved.append(
            line_figure(
                out / "scalability.png",
                "time of one plan (Fig. 8)",
                sizes,
                lines,
                "jobs in the cluster",
                "ms",
            )
        )
    return saved


FIG1_SERIES = [SERIES[0], SERIES[4]]  # CS 2.0 and EASY: the paper's Fig. 1 names no scheduler
FIG1_TIMES = [2500.0 * k for k in range(1, 11)]  # the paper's axis: 0-25,000 s


def in_system(jobs_arrow: bytes, times: np.ndarray) -> np.ndarray:
    """Jobs in the system at each of ``times``: submitted and not finished (queued, running or preempted).

    The paper's "system workload": "the sum of the number of jobs ready to be executed plus the
    number of jobs in execution". Jobs that never finish count until the end.
    """
    jobs = pa.ipc.open_file(pa.BufferReader(jobs_arrow)).read_all()
    submit = np.asarray(jobs.column("submit").to_numpy(zero_copy_only=False), dtype=float)
    finish = np.asarray(jobs.column("finish").to_numpy(zero_copy_only=False), dtype=float)
    finish = np.where(np.isnan(finish), np.inf, finish)
    return (submit[None, :] <= times[:, None]).sum(axis=1) - (finish[None, :] <= times[:, None]).sum(axis=1)


def figure1(args) -> int:
    """Fig. 1: jobs in the system over time for each ``Ta``, with CS 2.0 and EASY.

    Per ``Ta`` (mean of ``--seeds``): the count every 2,500 s up to 25,000 s (the paper's
    axis), its peak, and its trend while jobs arrive (least-squares slope of the count,
    sampled every 100 s from the first to the last submission, in jobs per 1,000 s): the
    paper says the contention "remains almost constant" for ``Ta >= 12``.
    """
    curves: dict[tuple[str, float], list[dict]] = {}

    def keep(label, x, seed, files):
        jobs = pa.ipc.open_file(pa.BufferReader(files["jobs.arrow"])).read_all()
        last = float(np.nanmax(jobs.column("submit").to_numpy(zero_copy_only=False)))
        fine = np.arange(0.0, last + 100.0, 100.0)
        counts = in_system(files["jobs.arrow"], fine)
        slope = np.polyfit(fine, counts, 1)[0] * 1000.0 if fine.size > 1 else 0.0
        span = np.arange(0.0, 100_000.0, 100.0)
        curves.setdefault((label, float(x)), []).append(
            {
                "at": in_system(files["jobs.arrow"], np.array(FIG1_TIMES)),
                "peak": int(in_system(files["jobs.arrow"], span).max()),
                "slope": float(slope),
            }
        )

    count = len(FIG1_SERIES) * len(TA) * args.seeds
    print(f"cs2 Fig. 1: {count} runs ({args.jobs} jobs, {args.seeds} seed(s)); jobs in the system over time")
    fixed = [f"workload.jobs={args.jobs}"]
    runs = run_interarrivals(
        presets.path("cs2"), FIG1_SERIES, TA, args.load, args.seeds, args.workers, fixed, keep
    )
    header = ["scheduler, Ta", *(f"{t / 1000:g}k s" for t in FIG1_TIMES), "peak", "trend /1000 s"]
    rows, lines = [], {}
    for s in FIG1_SERIES:
        for ta in TA:
            found = curves.get((s.label, ta), [])
            if not found:
                continue
            at = np.mean([c["at"] for c in found], axis=0)
            peak = np.mean([c["peak"] for c in found])
            slope = np.mean([c["slope"] for c in found])
            rows.append([f"{s.label}, {ta:g}", *(f"{v:.0f}" for v in at), f"{peak:.0f}", f"{slope:+.1f}"])
            lines[f"{s.label} Ta={ta:g}"] = [(float(v), 0.0) for v in at]
    print(table(header, rows))
    args.out.mkdir(parents=True, exist_ok=True)
    line_figure(
        args.out / "fig1-jobs-in-system.png",
        "Jobs in the system (Fig. 1)",
        FIG1_TIMES,
        lines,
        "time (s)",
        "jobs",
    )
    for failure in runs.failures:
        print("FAILED", failure, file=sys.stderr)
    print(f"\n{count - len(runs.failures)}/{count} runs in {runs.wall_seconds:.0f} s; plot: {args.out}/")
    return 1 if runs.failures else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="repetitions per point (paper: 20)")
    parser.add_argument("--jobs", type=int, default=1500, help="jobs per run (paper: 1500)")
    parser.add_argument("--workers", type=int, default=None, help="parallel processes (default: CPUs)")
    parser.add_argument("--out", type=Path, default=Path("runs/reproduce-cs2"), help="PNG folder")
    parser.add_argument("--ta", default="1,4,6,8,10,12", help="mean inter-arrival times (paper: 1,4,...,12)")
    parser.add_argument(
        "--load",
        type=float,
        default=None,
        help="offered load at Ta = 1, the other Ta in the paper's ratios (default: as stated, 11.7)",
    )
    parser.add_argument(
        "--scalability",
        default="100,200,300,400,500,600,700,800,900,1000",
        help="jobs in the cluster for Fig. 8 ('' to skip)",
    )
    parser.add_argument("--repeats", type=int, default=5, help="plans timed per point of Fig. 8")
    parser.add_argument(
        "--fig1", action="store_true", help="only Fig. 1: jobs in the system over time (CS 2.0, EASY)"
    )
    parser.add_argument(
        "--match",
        choices=("merge", "sort"),
        default="merge",
        help="CS 2.0's matching: merge speed-ranked rows (default) or sort every entry as the paper does",
    )
    add_quick(parser, {"seeds": 3, "scalability": "100,500,1000", "repeats": 3})
    args = apply_quick(parser, parser.parse_args(argv))
    TA[:] = [float(v) for v in args.ta.split(",")]
    if args.match == "sort":
        use_global_sort()
    if args.fig1:
        return figure1(args)
    sizes = [int(v) for v in args.scalability.split(",") if v]
    total = len(SERIES) * len(TA) * args.seeds
    shape = f"{len(SERIES)} schedulers x {len(TA)} loads x {args.seeds} seeds, {args.jobs} jobs"
    print(f"cs2: {total} runs ({shape})")
    fixed = [f"workload.jobs={args.jobs}"]
    runs = run_interarrivals(presets.path("cs2"), SERIES, TA, args.load, args.seeds, args.workers, fixed)
    text, means, bands = metric_tables(runs)
    print(text)
    scale = None
    if sizes:
        started = time.perf_counter()
        scale = scalability(sizes, args.repeats)
        rows = [[label, *(f"{v:.1f}" for v in values)] for label, values in scale.items()]
        print(f"\nms per plan against jobs in the cluster (Fig. 8; {time.perf_counter() - started:.0f} s)")
        print(table(["scheduler", *map(str, sizes)], rows))
    print("\nThe paper's claims")
    for claim, ok, detail in claims(means):
        verdict = {True: "agrees", False: "DIFFERS", None: "n/a"}[ok]
        print(f"  [{verdict:7s}] {claim}" + (f"  ({detail})" if detail else ""))
    for failure in runs.failures:
        print("FAILED", failure, file=sys.stderr)
    saved = plots(bands, scale, sizes, args.out)
    done = total - len(runs.failures)
    print(f"\n{done}/{total} runs in {runs.wall_seconds:.0f} s; plots: {args.out}/ ({len(saved)} PNG)")
    return 1 if runs.failures else 0


if __name__ == "__main__":
    sys.exit(main())
