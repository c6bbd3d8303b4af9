"""Reproduce the MCRS experiments (seed 003) and print them next to the paper's.

The ``mcrs`` preset (clusters of 4-12 one-CPU nodes at 277-577 MIPS, links of
100 KB/s-1 MB/s, rigid jobs of 4-8 nodes with 5-7 MB in and out, deadlines
10-100 s after submission), with MCRS against LARS (``least-load``), PARS
(``most-power``) and BARS (``most-bandwidth``), FCFS in every cluster:

- ``size``: grid size S in {10, 20, 30, 40, 50} clusters, ``--jobs`` jobs
  (paper: 1000); the paper's Table 2 gives MCRS's improvement at S = 50;
- ``ratio``: job-to-resource ratio Rjr in {0.5, 1, 2, 4, 6, 8, 10} on 40
  clusters (Rjr x 40 jobs; "resource" = cluster, as the paper uses the word;
  ratios needing more than ``--jobs`` jobs are left out); Table 3 at Rjr = 10;
- ``deadline`` (only with ``--experiments ...,deadline``): every job's
  deadline d s after submission, d in {20, ..., 70}, 40 clusters; Table 4 at d = 70.

Metrics (grid): TTR = mean turnaround (submit to finish, the input transfer
included), throughput = jobs finished per second of makespan, utilization =
busy CPU-seconds / (CPUs x makespan). Improvement of MCRS over another policy:
``(other - mcrs) / other`` for TTR, ``(mcrs - other) / other`` for the others.

Readings (see docs/reproductions.md): the preset takes the paper's job length
literally (1e6-1e7 MI: hours of work against 10-100 s deadlines, so no job can
meet its deadline); MCRS then dispatches by least TTR (``on_infeasible =
least_ttr``) instead of discarding every job. ``--length 1e3,1e4`` and
``--on-infeasible reject`` run the other readings. ``--baseline-load`` runs
PARS and BARS with their load term (``most-power[load=true]``,
``most-bandwidth[load=true]``: power or bandwidth over 1 + the jobs waiting,
see ``emulator/policies/most_power.py``) instead of the literal single
criterion.

    python scripts/reproduce_mcrs.py [--seeds 20] [--jobs 1000] [--workers N] [--out DIR]
        [--experiments size,ratio[,deadline]] [--length LOW,HIGH] [--on-infeasible least_ttr|reject]
        [--baseline-load] [--load X]

``--load X`` sets the mean inter-arrival so that the 40-cluster grid (the ratio and
deadline experiments') is offered load X, and keeps it at every point (the grid-size
experiment then runs at X x 40 / S); the preset's 10 s give 24 with the literal
lengths. The paper gives no arrival process; docs/reproductions.md derives X from its text.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from reproduce_common import Runs, Series, fmt, line_figure, report_end, run_series, table

from emulator.data.offered_load import interarrival_for_load, offered_load
from workloads import presets

SIZES = [10, 20, 30, 40, 50]
RATIOS = [0.5, 1, 2, 4, 6, 8, 10]
DEADLINES = [20, 30, 40, 50, 60, 70]
FIXED_CLUSTERS = 40  # the grid of the ratio and deadline experiments (the paper's "40 resources")
OTHERS = ["PARS", "BARS", "LARS"]
METRICS = [  # (label, grid metric, higher is better)
    ("TTR s", "mean_turnaround", False),
    ("throughput jobs/s", "throughput", True),
    ("utilization", "utilization", True),
]
PAPER = {  # improvement of MCRS (%) over PARS, BARS, LARS: TTR, throughput (T), utilization (RU)
    "size": (
        "S = 50 (Table 2)",
        50,
        {"TTR s": (91, 83, 17), "throughput jobs/s": (27, 33, 7), "utilization": (19, 25, 5)},
    ),
    "ratio": (
        "Rjr = 10 (Table 3)",
        10,
        {"TTR s": (80, 76, 13), "throughput jobs/s": (33, 43, 17), "utilization": (33, 39, 17)},
    ),
    "deadline": (
        "d = 70 (Table 4)",
        70,
        {"TTR s": (89, 87, 24), "throughput jobs/s": (18, 24, 7), "utilization": (16, 22, 5)},
    ),
}
PAPER_TEXT = {
    "size": "at S = 10 MCRS's TTR is close to LARS's and 78% / 75% shorter than PARS's / BARS's",
    "ratio": "TTR grows with Rjr, fastest for PARS and BARS; throughput and utilization peak near Rjr = 2",
    "deadline": "longer deadlines admit more jobs: MCRS throughput +39% at d = 50, +52% at d = 70 vs d = 20",
}


def policies(on_infeasible: str, baseline_load: bool = False) -> list[Series]:
    load = "[load=true]" if baseline_load else ""
    return [
        Series("MCRS", [f'meta.policy="mcrs[on_infeasible={on_infeasible}]"']),
        Series("LARS", ['meta.policy="least-load"']),
        Series("PARS", [f'meta.policy="most-power{load}"']),
        Series("BARS", [f'meta.policy="most-bandwidth{load}"']),
    ]


def grid(metric: str):
    return lambda summary: summary["grid"][metric]


def improvement(mcrs: float | None, other: float | None, higher_better: bool) -> float | None:
    if mcrs is None or other is None or other == 0:
        return None
    return 100.0 * ((mcrs - other) if higher_better else (other - mcrs)) / other


def section(name: str, runs: Runs, series: list[Series], xs: list, labels: list) -> str:
    lines = [f"{name}: " + PAPER_TEXT[name]]
    for metric_label, metric, _ in METRICS:
        rows = [
            [
                s.label,
                *(fmt(runs.mean(s.label, x, grid(metric)), 4 if "through" in metric else 2) for x in xs),
            ]
            for s in series
        ]
        lines += ["", metric_label, table(["policy", *map(str, labels)], rows)]
    title, at, paper = PAPER[name]
    if at in labels:
        x = xs[labels.index(at)]
        rows = []
        for metric_label, metric, higher in METRICS:
            mcrs = runs.mean("MCRS", x, grid(metric))
            for other, theirs in zip(OTHERS, paper[metric_label], strict=True):
                value = runs.mean(other, x, grid(metric))
                ours = improvement(mcrs and mcrs[0], value and value[0], higher)
                rows.append(
                    [f"{metric_label} vs {other}", f"{theirs}%", "-" if ours is None else f"{ours:.0f}%"]
                )
        lines += ["", f"MCRS improvement at {title}", table(["", "paper", "ours"], rows)]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="repetitions per point")
    parser.add_argument(
        "--jobs", type=int, default=1000, help="jobs per run (paper: 1000); caps the ratio experiment"
    )
    parser.add_argument("--workers", type=int, default=None, help="parallel processes (default: CPUs)")
    parser.add_argument("--out", type=Path, default=Path("runs/reproduce-mcrs"), help="PNG folder")
    parser.add_argument("--experiments", default="size,ratio", help="any of size, ratio, deadline")
    parser.add_argument(
        "--length", default="", help="job length range in MI, e.g. 1e3,1e4 (default: the preset's)"
    )
    parser.add_argument("--on-infeasible", default="least_ttr", choices=["least_ttr", "reject"])
    parser.add_argument(
        "--baseline-load", action="store_true", help="PARS and BARS with their load term (load=true)"
    )
    parser.add_argument(
        "--load",
        type=float,
        default=None,
        help=f"offered load of the {FIXED_CLUSTERS}-cluster grid, the same arrivals at every point "
        "(default: the preset's mean inter-arrival, 10 s)",
    )
    args = parser.parse_args(argv)
    scenario = presets.path("mcrs")
    series = policies(args.on_infeasible, args.baseline_load)
    fixed = [f"workload.length=[{args.length}]"] if args.length else []
    reference = [*fixed, f"platform.clusters={FIXED_CLUSTERS}"]
    if args.load is not None:
        fixed.append(f"workload.mean_interarrival={interarrival_for_load(scenario, args.load, reference)}")
    stated = offered_load(scenario, [*reference, *fixed])
    reference_grid = f"{FIXED_CLUSTERS}-cluster grid"
    print(f"offered load of the {reference_grid}: {stated:.3g} (of S clusters: x {FIXED_CLUSTERS} / S)")
    length = args.length or "as the preset"
    baselines = "PARS, BARS with load term" if args.baseline_load else "PARS, BARS"
    print(f"mcrs: MCRS[on_infeasible={args.on_infeasible}] vs LARS, {baselines}; length {length}")
    args.out.mkdir(parents=True, exist_ok=True)
    failures, wall, total = [], 0.0, 0
    for name in args.experiments.split(","):
        if name == "size":
            labels, key, xs, extra = SIZES, "platform.clusters", SIZES, [f"workload.jobs={args.jobs}"]
        elif name == "ratio":
            labels = [r for r in RATIOS if r * FIXED_CLUSTERS <= args.jobs]
            key, xs, extra = (
                "workload.jobs",
                [round(r * FIXED_CLUSTERS) for r in labels],
                [f"platform.clusters={FIXED_CLUSTERS}"],
            )
        elif name == "deadline":
            labels, key, xs = DEADLINES, "workload.deadline", [[d, d] for d in DEADLINES]
            extra = [f"platform.clusters={FIXED_CLUSTERS}", f"workload.jobs={args.jobs}"]
        else:
            parser.error(f"--experiments: unknown experiment {name!r}")
        count = len(series) * len(xs) * args.seeds
        print(f"\n{name}: {count} runs", flush=True)
        runs = run_series(scenario, series, key, xs, args.seeds, args.workers, [*fixed, *extra])
        print(section(name, runs, series, xs, labels))
        for label, metric, _ in METRICS:
            lines = {s.label: [runs.mean(s.label, x, grid(metric)) for x in xs] for s in series}
            line_figure(args.out / f"{name}-{metric}.png", f"{label} vs {name}", labels, lines, name, label)
        failures += runs.failures
        wall += runs.wall_seconds
        total += count
    return report_end(failures, total, wall, args.out)


if __name__ == "__main__":
    sys.exit(main())
