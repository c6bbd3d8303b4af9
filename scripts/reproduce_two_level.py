"""Reproduce the two-level scheduler's experiment (seeds 000/001) and print it next to the paper's.

The ``two-level`` preset (4 clusters of 120/60/30/15 machines, 5000 jobs) for
``t_a`` (mean inter-arrival) in {0, 5, 10, 15} and three cases:

- ``MS``: meta ``two-level``, local ``flexible[priority=ms]`` (the paper's "MS heuristics");
- ``LS``: meta ``two-level``, local ``flexible[priority=ls]`` ("LS heuristics");
- ``none``: meta ``two-level[heuristics=none]`` (every job priority 0), local ``easy``.

Prints the workload share per cluster against seed 001's Table 1, then, at
``t_a = 5`` as the paper shows them, per cluster: late %, mean slowdown of jobs
without deadline, system usage, license usage, each with the paper's claim
about it (its figures give no numbers in the text we have) and whether ours
agrees. Saves the plots as PNG in ``--out``. All runs go in parallel
(``--workers``, default: every CPU).

    python scripts/reproduce_two_level.py [--seeds 20] [--jobs 5000] [--workers N] [--out DIR] [--load X]
        [--quick]

``--load X`` runs the same ``t_a`` columns at offered load X for ``t_a = 5`` (10 and 15
in the paper's ratios: X/2, X/3), the operating point the paper's text describes
(docs/reproductions.md); by default the stated ``t_a`` give 8, 4 and 2.7.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from reproduce_common import (
    Runs,
    Series,
    add_quick,
    apply_quick,
    bar_figure,
    fmt,
    relative,
    run_interarrivals,
    table,
)

from workloads import presets

TA = [0.0, 5.0, 10.0, 15.0]
CASES = [
    Series("MS", ['meta.policy="two-level"', 'local.policy="flexible[priority=ms]"']),
    Series("LS", ['meta.policy="two-level"', 'local.policy="flexible[priority=ls]"']),
    Series("none", ['meta.policy="two-level[heuristics=none]"', 'local.policy="easy"']),
]
CLUSTERS = ["cluster1", "cluster2", "cluster3", "cluster4"]
OPTIMAL = [0.52, 0.26, 0.13, 0.07]  # machines of each cluster / all machines (the paper's "optimal")
TABLE1 = {  # seed 001, Table 1: workload share per cluster
    0.0: [0.25, 0.25, 0.25, 0.25],
    5.0: [0.53, 0.23, 0.14, 0.08],
    10.0: [0.63, 0.24, 0.09, 0.05],
    15.0: [0.67, 0.25, 0.07, 0.01],
}
FIGURES = [  # (metric key, title, scale, what the paper says about it at t_a = 5)
    (
        "late_percent",
        "late jobs %",
        1.0,
        "MS and LS heuristics below no heuristics; c1 hundreds late, c4 few",
    ),
    ("mean_slowdown_no_deadline", "slowdown, jobs without deadline", 1.0, "above 1, growing from c1 to c4"),
    ("system_usage", "system usage %", 100.0, "50-100%, similar for all cases, lower on smaller clusters"),
    ("license_usage", "license usage %", 100.0, "50-100%, similar for all cases, lower on smaller clusters"),
]
FIGURE_TA = 5.0  # the t_a of the paper's per-cluster figures (the last one given when 5 is not run)


def per_cluster(metric: str, cluster: str):
    return lambda summary: summary["clusters"][cluster][metric]


def share_section(runs: Runs) -> str:
    lines = ["Workload share per cluster (seed 001, Table 1: the meta-scheduler's dispatch)"]
    for ta in TA:
        paper = TABLE1.get(ta)
        rows = [["paper", *(f"{v:.2f}" for v in paper)]] if paper else []
        for case in CASES:
            shares = [runs.mean(case.label, ta, per_cluster("workload_share", c)) for c in CLUSTERS]
            rows.append([case.label, *map(fmt, shares)])
        if paper:
            ms = [runs.mean("MS", ta, per_cluster("workload_share", c)) for c in CLUSTERS]
            rows.append(["MS - paper", *(relative(m and m[0], p) for m, p in zip(ms, paper, strict=True))])
        lines += ["", f"t_a = {ta:g}", table(["case", *CLUSTERS], rows)]
    lines += ["", "optimal (machines per cluster): " + ", ".join(f"{v:.2f}" for v in OPTIMAL)]
    return "\n".join(lines)


def figure_section(runs: Runs) -> str:
    lines = [f"Per cluster at t_a = {FIGURE_TA:g} (seed 000, Figures 4 and 5)"]
    for metric, title, scale, claim in FIGURES:
        rows = [
            [
                case.label,
                *(fmt(runs.mean(case.label, FIGURE_TA, per_cluster(metric, c)), 2, scale) for c in CLUSTERS),
            ]
            for case in CASES
        ]
        lines += ["", f"{title}; paper: {claim}", table(["case", *CLUSTERS], rows)]
    late = {
        case.label: [runs.mean(case.label, FIGURE_TA, per_cluster("late_jobs", c)) for c in CLUSTERS]
        for case in CASES
    }
    counts = ", ".join(f"{c} {fmt(v, 0)}" for c, v in zip(CLUSTERS, late["MS"], strict=True))
    lines += ["", f"late jobs (count), MS: {counts}"]
    return "\n".join(lines)


def plots(runs: Runs, out: Path) -> list[Path]:
    """Workload share per t_a (MS vs the paper), and each per-cluster metric at t_a = 5 by case."""
    out.mkdir(parents=True, exist_ok=True)
    saved = []
    for ta in TA:
        paper = TABLE1.get(ta, [math.nan] * len(CLUSTERS))
        bars = {"paper": [(v, 0.0) for v in paper], "optimal": [(v, 0.0) for v in OPTIMAL]}
        for case in CASES:
            bars[case.label] = [runs.mean(case.label, ta, per_cluster("workload_share", c)) for c in CLUSTERS]
        saved.append(
            bar_figure(out / f"share-ta{ta:g}.png", f"workload share, t_a = {ta:g}", CLUSTERS, bars, "share")
        )
    for metric, title, scale, _ in FIGURES:
        bars = {}
        for case in CASES:
            values = [runs.mean(case.label, FIGURE_TA, per_cluster(metric, c)) for c in CLUSTERS]
            bars[case.label] = [v and (v[0] * scale, v[1] * scale) for v in values]
        saved.append(
            bar_figure(out / f"{metric}.png", f"{title}, t_a = {FIGURE_TA:g}", CLUSTERS, bars, title)
        )
    return saved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="repetitions per point (paper: 20)")
    parser.add_argument("--jobs", type=int, default=5000, help="jobs per run (paper: 5000)")
    parser.add_argument("--workers", type=int, default=None, help="parallel processes (default: CPUs)")
    parser.add_argument("--out", type=Path, default=Path("runs/reproduce-two-level"), help="PNG folder")
    parser.add_argument("--ta", default="0,5,10,15", help="mean inter-arrival times (paper: 0,5,10,15)")
    parser.add_argument(
        "--load",
        type=float,
        default=None,
        help="offered load at the least positive t_a, the others in the paper's ratios (default: as stated)",
    )
    add_quick(parser, {"seeds": 4})
    args = apply_quick(parser, parser.parse_args(argv))
    TA[:] = [float(v) for v in args.ta.split(",")]
    global FIGURE_TA
    FIGURE_TA = FIGURE_TA if FIGURE_TA in TA else TA[-1]
    scenario = presets.path("two-level")
    fixed = [f"workload.jobs={args.jobs}"]
    total = len(CASES) * len(TA) * args.seeds
    print(
        f"two-level: {total} runs ({len(CASES)} cases x {len(TA)} t_a x {args.seeds} seeds, {args.jobs} jobs)"
    )
    runs = run_interarrivals(scenario, CASES, TA, args.load, args.seeds, args.workers, fixed)
    print(share_section(runs), end="\n\n")
    print(figure_section(runs), end="\n\n")
    for failure in runs.failures:
        print("FAILED", failure, file=sys.stderr)
    saved = plots(runs, args.out)
    done = total - len(runs.failures)
    print(f"{done}/{total} runs in {runs.wall_seconds:.0f} s; plots: {args.out}/ ({len(saved)} PNG)")
    return 1 if runs.failures else 0


if __name__ == "__main__":
    sys.exit(main())
