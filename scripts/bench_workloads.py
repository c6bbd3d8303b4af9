"""Benchmark the workload layer: parsing and converting real traces, generating the papers' streams.

Each row runs in a fresh ``python scripts/bench_workloads.py --child NAME``
process. The child imports what it needs, notes its resident set size, then
times the work alone (``seconds``: wall time of the work, Python start-up and
imports excluded) and reports; the parent reads the child's peak RSS from the
kernel (``os.wait4``). Columns: ``jobs`` produced; ``seconds``; ``jobs/s`` =
jobs / seconds; ``peak RSS MB`` of the child; ``bytes/job`` = (peak RSS - RSS
after imports) / jobs, the memory the work itself needed per job. ``--repeat
N`` keeps the fastest of N runs.

Rows:
- ``parse-lcg``, ``parse-gaia``: read LCG-2005-1 (188,041 jobs) / UniLu-Gaia-2014-2
  (51,987 lines, 51,959 jobs) with the ``pwa`` rules into a jobs table.
- ``convert-lcg-arrow``, ``convert-lcg-swf``, ``convert-gaia-arrow``: read and
  write the jobs table as Arrow / SWF (``gridemu convert``'s work).
- ``jobs-lcg``: read LCG and build the emulator's Job objects (what ``run`` does).
- ``two-level-250k``, ``-500k``, ``-1m``: generate that many ``two-level`` jobs as
  a jobs table (the preset's platform, for its license names); the three rows show
  that peak memory grows with the job count.
- ``two-level-1m-jobs``: the same 1M jobs, then their Job objects.
- ``stress-1m``: the ``[stress]`` workload perturbations (``workloads/perturb.py``) on
  1M two-level jobs: load 1.5, two bursts, Tsafrir estimates. ``seconds`` times the
  perturbation alone (generating the jobs is not timed, but is in the peak RSS).

Targets (issue 3): parse + convert >= 300,000 jobs/s; 1M two-level jobs in < 5 s.
Issue 9: the workload perturbations of 1M jobs well under a second.

``--markdown [FILE]`` also writes the table into FILE's ``bench_workloads.py`` region (default
``docs/performance.md``; ``scripts/bench_markdown.py``).

    python scripts/bench_workloads.py [--only NAME ...] [--repeat N] [--json] [--shared DIR]
                                      [--markdown [FILE]]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_markdown import Region, add_option, bullets, measured_on, not_reached, table

DEFAULT_SHARED = Path(os.environ.get("GRIDEMU_SHARED", Path(__file__).resolve().parents[2] / "shared"))
RSS_UNIT = 2**20 if sys.platform == "darwin" else 2**10  # ru_maxrss: bytes on macOS, KiB on Linux
LCG = "traces/LCG-2005-1.swf.gz"
GAIA = "traces/UniLu-Gaia-2014-2.swf.gz"


def _parse(trace: str):
    def work(shared: Path, tmp: Path) -> int:
        from workloads.swf import read_swf

        return read_swf(shared / trace, rules="pwa").table.num_rows

    return work, [trace]


def _convert(trace: str, suffix: str):
    def work(shared: Path, tmp: Path) -> int:
        from workloads.convert import convert

        return convert(shared / trace, tmp / f"out{suffix}", rules="pwa").table.num_rows

    return work, [trace]


def _jobs(shared: Path, tmp: Path) -> int:
    from workloads.swf import read_swf

    return len(read_swf(shared / LCG, rules="pwa").jobs)


def _two_level(count: int, objects: bool = False):
    def work(shared: Path, tmp: Path) -> int:
        if objects:  # the whole scenario: platform, jobs table, Job objects
            from emulator.data.scenario import load
            from workloads import presets

            return len(load(presets.path("two-level"), [f"workload.jobs={count}"]).jobs)
        from dataclasses import replace

        import numpy as np

        from workloads.generators import licensed_grid, two_level
        from workloads.synthetic import columns

        names = licensed_grid.license_names(two_level.GRID.licenses)
        return columns(replace(two_level.JOBS, jobs=count), np.random.default_rng(1), names).num_rows

    return work, []


def _stress(count: int):
    def work(shared: Path, tmp: Path) -> tuple[int, float]:
        from dataclasses import replace

        import numpy as np

        from workloads import perturb
        from workloads.generators import licensed_grid, two_level
        from workloads.synthetic import columns

        names = licensed_grid.license_names(two_level.GRID.licenses)
        table = columns(replace(two_level.JOBS, jobs=count), np.random.default_rng(1), names)
        bursts = (perturb.Burst(3600.0, 7200.0, 5.0), perturb.Burst(20000.0, 30000.0, 3.0))
        stress = perturb.WorkloadStress(1.5, bursts, perturb.Estimates("tsafrir"))
        started = time.perf_counter()
        rows = perturb.apply(table, stress, seed=1).num_rows
        return rows, time.perf_counter() - started

    return work, []


ROWS = {
    "parse-lcg": _parse(LCG),
    "parse-gaia": _parse(GAIA),
    "convert-lcg-arrow": _convert(LCG, ".arrow"),
    "convert-lcg-swf": _convert(LCG, ".swf"),
    "convert-gaia-arrow": _convert(GAIA, ".arrow"),
    "jobs-lcg": (_jobs, [LCG]),
    "two-level-250k": _two_level(250_000),
    "two-level-500k": _two_level(500_000),
    "two-level-1m": _two_level(1_000_000),
    "two-level-1m-jobs": _two_level(1_000_000, objects=True),
    "stress-1m": _stress(1_000_000),
}
COLUMNS = [  # title, key, format, width
    ("row", "row", "{}", 19),
    ("jobs", "jobs", "{:,}", 9),
    ("seconds", "seconds", "{:.3f}", 7),
    ("jobs/s", "jobs_per_s", "{:,}", 9),
    ("peak RSS MB", "peak_rss_mb", "{:.0f}", 11),
    ("bytes/job", "bytes_per_job", "{:,}", 9),
]


def child(name: str, shared: Path) -> None:
    """Run one row's work in this process and print its counts as JSON."""
    work, _ = ROWS[name]
    import numpy  # noqa: F401  (imports before the baseline)
    import pyarrow  # noqa: F401

    import emulator.data.scenario  # noqa: F401
    import workloads.convert
    import workloads.generators  # noqa: F401

    with tempfile.TemporaryDirectory(prefix="gridemu-bench-") as tmp:
        baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        jobs = work(shared, Path(tmp))
        seconds = time.perf_counter() - started
    if isinstance(jobs, tuple):  # the row timed its own part of the work
        jobs, seconds = jobs
    print(json.dumps({"jobs": jobs, "seconds": seconds, "baseline": baseline}))


def run_row(name: str, shared: Path) -> dict:
    argv = [sys.executable, __file__, "--child", name, "--shared", str(shared)]
    with tempfile.TemporaryFile() as out:
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).parents[1])
        _, status, usage = os.wait4(process.pid, 0)
        out.seek(0)
        text = out.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{name} failed:\n{text}")
    result = json.loads(text.strip().splitlines()[-1])
    peak = usage.ru_maxrss * RSS_UNIT
    jobs = result["jobs"]
    return {
        "row": name,
        "jobs": jobs,
        "seconds": round(result["seconds"], 3),
        "jobs_per_s": round(jobs / result["seconds"]),
        "peak_rss_mb": round(peak / 2**20, 1),
        "bytes_per_job": round((peak - result["baseline"] * RSS_UNIT) / max(jobs, 1)),
    }


def table_line(cells: list[str]) -> str:
    return "  ".join(
        cell.ljust(width) if i == 0 else cell.rjust(width)
        for i, (cell, (_, _, _, width)) in enumerate(zip(cells, COLUMNS, strict=True))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=list(ROWS), metavar="NAME", help="repeatable")
    parser.add_argument("--json", action="store_true", help="one JSON object per row instead of a table")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="best (fastest) of N runs")
    parser.add_argument("--shared", type=Path, default=DEFAULT_SHARED, help=f"default {DEFAULT_SHARED}")
    parser.add_argument("--child", choices=list(ROWS), help=argparse.SUPPRESS)
    add_option(parser)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child, args.shared)
        return 0
    region = Region.of(args.markdown, "bench_workloads.py")
    header = measured_on("bench_workloads.py", sys.argv[1:] if argv is None else argv)
    skipped, cells = [], []
    names = args.only or list(ROWS)
    if not args.json:
        print(table_line([title for title, _, _, _ in COLUMNS]))
    for i, name in enumerate(names):
        needs = [args.shared / f for f in ROWS[name][1]]
        if not all(p.is_file() for p in needs):
            skipped.append(f"{name}: skipped, {needs[0]} not found (see --shared)")
            print(skipped[-1], file=sys.stderr)
        else:
            row = min(
                (run_row(name, args.shared) for _ in range(max(args.repeat, 1))), key=lambda r: r["seconds"]
            )
            cells.append([fmt.format(row[k]) for _, k, fmt, _ in COLUMNS])
            print(json.dumps(row) if args.json else table_line(cells[-1]))
        if region:
            notes = bullets(skipped + not_reached(names[i + 1 :]))
            region.replace(header, table([title for title, _, _, _ in COLUMNS], cells), notes)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    sys.exit(main())
