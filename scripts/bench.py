"""Benchmark whole ``gridemu run`` commands, the way a user sees them.

Each row runs one scenario in a fresh ``python -m emulator.cli run SCENARIO
--out TMP --quiet`` subprocess and times it from outside, so the wall time
covers everything the user waits for: Python start-up and imports, reading
the trace or generating the jobs, the emulation, and writing ``events.arrow``,
``jobs.arrow``, ``scenario.toml`` and ``summary.json``.

Columns: ``jobs`` in the workload and ``events`` written to ``events.arrow``
(both from the run's ``summary.json``), the coordinator's ``rounds`` and
``start-up s`` (opening the backend and building the partitions) and ``shut-down s`` (closing it:
Ray stopping its processes); ``wall s`` of the whole command;
``events/s`` and ``jobs/s`` = those counts / wall s; ``peak RSS MB`` = the
child's maximum resident set size (kernel accounting for that one process,
``os.wait4``). ``--repeat N`` keeps the fastest of N runs. Children run with Python's bytecode
caches (``USER_ENV``), as on a user's machine.

Rows:
- ``kth-sp2-fcfs``, ``kth-sp2-easy``: the full KTH-SP2 trace (PWA, 28,476
  jobs; the pwa rules skip the one with no processor count) on one cluster of
  100 single-CPU machines of 1 MIPS, ``rules = "pwa"`` and rating 1 (estimate
  = requested time, actual = run time), ``spread`` placement, jobs entering
  the cluster directly; local policy fcfs / easy.
- ``kth-sp2-easy-2x``: the same with EASY at twice the load (``interarrival_scale = 0.5``: thousands
  of jobs queued, mean wait ~1e6 s), where a backfill pass that walked every queued job at every
  event cost most. Target (issue 17): <= 3 s; AccaSim 1.1.3 takes 127 s on this stream.
- ``kth-sp2-gridsim-easy``: the same trace as GridSim's parallel package runs
  it (the reference scenarios in ``gridsim-ref/parallel``): 100 machines of
  one 100-MIPS PE, ``rules = "gridsim"``, rating 100, run time from field 4
  (``runtime_field = 4``), local policy gridsim-easy. Target (issue 10): the
  whole command in under 10 s.
- ``lcg-2005-1``, ``lcg-2005-1-sites``, ``lcg-2005-1-sites-ray2``: the LCG-2005-1 trace (188,041
  jobs) as ``gridemu run --swf`` reads it, on one cluster, and with ``--sites partition`` (170
  clusters, one per site: nothing can reach any of them, so each runs free) in-process and on 2
  Ray actors (whose ``start-up s``, Ray's start and the actors building their partitions, is
  included in ``wall s``). Targets (issue 17): <= 8 s for the first two; Ray >= 1.6x faster
  than in-process, start-up apart: printed under the table for the emulation itself (see
  :func:`running_seconds`).
- ``lcg-2005-1-meta``: LCG-2005-1's 170 sites with every job going through the meta-scheduler
  (``workload.direct = false``, ``least-load``, 1 s links): the grid's partitions no longer run
  free but take turns with the meta partition, ~419,000 partition calls (issue 31: 38 s when each
  was a coordinator's round).
- ``grid1000``: 1,000 clusters of 32 machines x 4 CPUs (200-350 MIPS), 0.5 s links, least-load
  over EASY, 1,000,000 synthetic jobs (``synthetic-16-clusters``' jobs, arriving 62.5 times as
  often: as loaded); ``--jobs N`` runs the first N at the same rate.
- ``wide-1000x8``: 1,000 machines x 8 CPUs, 10,000 spread jobs of 8-2,048 CPUs, EASY: rows that
  list hundreds of machines and PEs (``output MB``: events.arrow + jobs.arrow). Targets (issue
  17): output at most 1/4 of the uncompressed 241 MB, peak RSS under 600 MB.
- ``deep-448k``: 1,024 machines x 8 CPUs, 448,000 spread jobs of 1-64 CPUs, EASY, offered at about
  the machines' capacity (0.98), so the queue runs deep:
  stands in for issue 31's 448k-job log with a deep queue (111.8 s, 1.14 GB; targets <= 45 s,
  <= 800 MB), which the project does not hold.
- ``quickstart``: the built-in example scenario.
- ``synthetic-16-clusters``: 16 clusters x 32 machines x 4 CPUs, 20,000
  synthetic jobs, least-load meta policy, easy local policy.
- ``two-level-ms``, ``two-level-ls``, ``two-level-none``: the ``two-level``
  preset as shipped (4 clusters, 225 SMP machines, 5000 jobs, t_a = 10, so
  the queues grow to hundreds of jobs) under the paper's three cases: meta
  ``two-level`` with local ``flexible[priority=ms]`` / ``flexible[priority=ls]``,
  and ``two-level[heuristics=none]`` with ``easy``. Target (issue 5): one
  emulation with ``flexible`` + ``ls`` in under 5 s; the whole reproduction
  (``scripts/reproduce_two_level.py``, 240 such runs) in under 10 minutes on
  2 cores.

Targets (issue 2), for the whole command on KTH-SP2: >= 15,000 jobs/s with
fcfs, >= 8,000 jobs/s with easy, peak RSS < 400 MB. For scale, on a 2-core
machine the Python peer AccaSim 1.1.3 does 655 (FCFS) and 1,305 (EASY) jobs/s
on this trace.

``--markdown [FILE]`` also writes the table into FILE's ``bench.py`` region (default
``docs/performance.md``; ``scripts/bench_markdown.py``).

    python scripts/bench.py [--only NAME ...] [--repeat N] [--jobs N] [--json] [--shared DIR]
                            [--markdown [FILE]]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

import tomli_w
from bench_markdown import Region, add_option, bullets, measured_on, not_reached, table

from emulator.cli_workloads import trace_scenario
from workloads import presets

KTH = "traces/KTH-SP2-1996-2.1-cln.swf.gz"
LCG = "traces/LCG-2005-1.swf.gz"
DEFAULT_SHARED = Path(os.environ.get("GRIDEMU_SHARED", Path(__file__).resolve().parents[2] / "shared"))
USER_ENV = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
"""Children run as a user's shell runs them: with Python's bytecode caches (a machine that sets
``PYTHONDONTWRITEBYTECODE``, as CI images often do, recompiles ~100 modules on every command: ~0.1 s)."""
RSS_UNIT = 2**20 if sys.platform == "darwin" else 2**10  # ru_maxrss: bytes on macOS, KiB on Linux


def kth(policy: str, shared: Path, interarrival_scale: float = 1.0) -> dict:
    """KTH-SP2 on its 100 CPUs; ``interarrival_scale`` < 1 compresses the arrivals (0.5: twice the load)."""
    document = {
        "name": f"kth-sp2-{policy}",
        "clusters": [{"name": "kth", "policy": policy, "machines": [{"count": 100, "cpus": 1, "mips": 1}]}],
        "workload": {
            "source": "swf",
            "path": str(shared / KTH),
            "rules": "pwa",
            "rating": 1,
            "placement": "spread",
            "site": "kth",
        },
    }
    if interarrival_scale != 1.0:
        document["name"] += f"-{1 / interarrival_scale:g}x"
        document["workload"]["interarrival_scale"] = interarrival_scale
    return document


def lcg(shared: Path, sites: str | None = None, meta: bool = False) -> dict:
    """LCG-2005-1 as ``gridemu run --swf`` reads it: one cluster, or one per site (``--sites``);
    ``meta``: every job through the meta-scheduler (``--set workload.direct=false``)."""
    document = trace_scenario(shared / LCG, sites=sites)
    if meta:
        document["workload"]["direct"] = False
    return document


def wide(shared: Path) -> dict:
    """One cluster of 1,000 machines x 8 CPUs, 10,000 spread jobs of 8-2,048 CPUs (LLNL-Atlas-like rows
    listing hundreds of machines and PEs), EASY, about 80% busy."""
    machines = [{"count": 1000, "cpus": 8, "mips": 100.0}]
    workload = {"source": "synthetic", "jobs": 10_000, "cpus": [8, 2048], "placement": "spread"}
    workload |= {"mean_interarrival": 600.0, "estimate": [600.0, 7200.0], "site": "wide"}
    return {
        "name": "wide-1000x8",
        "local": {"policy": "easy"},
        "clusters": [{"name": "wide", "machines": machines}],
        "workload": workload,
    }


def kth_gridsim_easy(shared: Path) -> dict:
    machines = [{"count": 100, "cpus": 1, "mips": 100}]
    return {
        "name": "kth-sp2-gridsim-easy",
        "clusters": [{"name": "kth", "policy": "gridsim-easy", "machines": machines}],
        "workload": {
            "source": "swf",
            "path": str(shared / KTH),
            "rules": "gridsim",
            "rating": 100,
            "runtime_field": 4,
            "site": "kth",
        },
    }


def synthetic(shared: Path) -> dict:
    clusters = [
        {
            "name": f"c{i:02d}",
            "latency": 0.5,
            "machines": [{"count": 32, "cpus": 4, "mips": 200 + 50 * (i % 4)}],
        }
        for i in range(16)
    ]
    # 2,048 CPUs; about 2.5 CPUs x 1,050 s per job every 1.6 s keeps them roughly 80% busy.
    workload = {"source": "synthetic", "jobs": 20_000, "mean_interarrival": 1.6, "estimate": [100.0, 2000.0]}
    workload |= {"runtime_factor": [0.5, 1.0], "cpus": [1, 4], "bench": [200.0, 500.0]}
    return {
        "name": "synthetic-16-clusters",
        "meta": {"policy": "least-load"},
        "local": {"policy": "easy"},
        "clusters": clusters,
        "workload": workload,
    }


def deep(shared: Path) -> dict:
    """448,000 jobs at about the capacity of 1,024 machines x 8 CPUs of 300 MIPS (the jobs' bench is
    100-500, their CPU-seconds 0.98 of the machines'), EASY: a queue of thousands all run long."""
    machines = [{"count": 1024, "cpus": 8, "mips": 300.0}]
    workload = {"source": "synthetic", "jobs": 448_000, "mean_interarrival": 40.0, "cpus": [1, 64]}
    workload |= {"estimate": [60.0, 36000.0], "runtime_factor": [0.1, 1.0], "placement": "spread"}
    return {
        "name": "deep-448k",
        "local": {"policy": "easy"},
        "clusters": [{"name": "deep", "machines": machines}],
        "workload": workload | {"site": "deep"},
    }


def grid1000(shared: Path) -> dict:
    """1,000 clusters like ``synthetic``'s, 1,000,000 of its jobs 62.5 times as often: as loaded."""
    clusters = [
        {
            "name": f"c{i:04d}",
            "latency": 0.5,
            "machines": [{"count": 32, "cpus": 4, "mips": 200 + 50 * (i % 4)}],
        }
        for i in range(1000)
    ]
    workload = {"source": "synthetic", "jobs": 1_000_000, "mean_interarrival": 0.0256}
    workload |= {
        "estimate": [100.0, 2000.0],
        "runtime_factor": [0.5, 1.0],
        "cpus": [1, 4],
        "bench": [200.0, 500.0],
    }
    return {
        "name": "grid1000",
        "meta": {"policy": "least-load"},
        "local": {"policy": "easy"},
        "clusters": clusters,
        "workload": workload,
    }


TWO_LEVEL_CASES = {  # the paper's cases: (meta policy, local policy)
    "ms": ("two-level", "flexible[priority=ms]"),
    "ls": ("two-level", "flexible[priority=ls]"),
    "none": ("two-level[heuristics=none]", "easy"),
}


def two_level(case: str) -> dict:
    """The two-level preset under one of the paper's three cases."""
    document = tomllib.loads(presets.path("two-level").read_text())
    meta, local = TWO_LEVEL_CASES[case]
    return document | {"name": f"two-level-{case}", "meta": {"policy": meta}, "local": {"policy": local}}


# name -> scenario document (None: a built-in scenario, run by name)
SCENARIOS = {
    "kth-sp2-fcfs": lambda shared: kth("fcfs", shared),
    "kth-sp2-easy": lambda shared: kth("easy", shared),
    "kth-sp2-easy-2x": lambda shared: kth("easy", shared, interarrival_scale=0.5),
    "kth-sp2-gridsim-easy": kth_gridsim_easy,
    "lcg-2005-1": lcg,
    "lcg-2005-1-sites": lambda shared: lcg(shared, "partition"),
    "lcg-2005-1-sites-ray2": lambda shared: lcg(shared, "partition"),
    "lcg-2005-1-meta": lambda shared: lcg(shared, "partition", meta=True),
    "wide-1000x8": wide,
    "deep-448k": deep,
    "quickstart": lambda shared: None,
    "synthetic-16-clusters": synthetic,
    "grid1000": grid1000,
    "two-level-ms": lambda shared: two_level("ms"),
    "two-level-ls": lambda shared: two_level("ls"),
    "two-level-none": lambda shared: two_level("none"),
}
BACKENDS = {"lcg-2005-1-sites-ray2": ["--backend", "ray", "--partitions", "2"]}
"""More ``gridemu run`` arguments for some rows (the rest run in-process)."""
TRACES = {"kth": KTH, "lcg": LCG}
"""The shared trace each row family needs (rows are skipped, saying so, without it)."""
COLUMNS = [  # title, key of a row, format, width
    ("scenario", "scenario", "{}", 22),
    ("jobs", "jobs", "{:,}", 7),
    ("events", "events", "{:,}", 9),
    ("wall s", "wall_s", "{:.2f}", 7),
    ("events/s", "events_per_s", "{:,}", 9),
    ("jobs/s", "jobs_per_s", "{:,}", 7),
    ("peak RSS MB", "peak_rss_mb", "{:.0f}", 11),
    ("output MB", "output_mb", "{:.1f}", 9),
    ("rounds", "rounds", "{:,}", 7),
    ("start-up s", "startup_s", "{:.2f}", 10),
    ("shut-down s", "shutdown_s", "{:.2f}", 11),
]
SPEEDUPS = {"lcg-2005-1-sites-ray2": "lcg-2005-1-sites"}
"""Ray rows and the in-process row they are compared with, once each has started (and before Ray stops)."""


def table_line(cells: list[str]) -> str:
    return "  ".join(
        cell.ljust(width) if i == 0 else cell.rjust(width)
        for i, (cell, (_, _, _, width)) in enumerate(zip(cells, COLUMNS, strict=True))
    )


def run_once(name: str, document: dict | None, work: Path) -> dict:
    """One ``gridemu run`` in a fresh interpreter: its counts, wall time and peak RSS."""
    scenario = name
    if document is not None:
        scenario = work / f"{name}.toml"
        scenario.write_text(tomli_w.dumps(document))
    out = Path(tempfile.mkdtemp(dir=work, prefix=f"{name}-run-"))
    argv = [sys.executable, "-m", "emulator.cli", "run", str(scenario), "--out", str(out), "--quiet"]
    argv += BACKENDS.get(name, [])
    with open(out.parent / f"{out.name}.log", "w+b") as log:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=USER_ENV)
        _, status, usage = os.wait4(child.pid, 0)  # this child's own rusage, unlike RUSAGE_CHILDREN
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode != 0:
            log.seek(0)
            sys.exit(f"{name}: gridemu run failed (exit {child.returncode}):\n{log.read().decode()}")
    summary = json.loads((out / "summary.json").read_text())
    jobs, events = summary["jobs"]["total"], summary["run"]["events"]
    return {
        "scenario": name,
        "jobs": jobs,
        "events": events,
        "wall_s": round(wall, 3),
        "events_per_s": round(events / wall),
        "jobs_per_s": round(jobs / wall),
        "peak_rss_mb": round(usage.ru_maxrss / RSS_UNIT, 1),
        "output_mb": sum((out / name).stat().st_size for name in ("events.arrow", "jobs.arrow")) / 2**20,
        "rounds": summary["run"]["rounds"],
        "startup_s": summary["run"]["startup_seconds"],
        "shutdown_s": summary["run"].get("shutdown_seconds", 0.0),  # (not timed before issue 17)
        "run_s": summary["run"]["wall_seconds"],
    }


def running_seconds(row: dict) -> float:
    """Seconds of a row's emulation: the run (``summary.json``'s ``run.wall_seconds``: the rounds,
    writing the trace, the metrics) apart from its backend's start-up and shut-down. Python's
    start-up and reading the trace, the same whatever the backend, are left out too."""
    return row["run_s"] - row["startup_s"] - row["shutdown_s"]


def speedup_lines(rows: dict[str, dict]) -> list[str]:
    """Each Ray row's speed-up over its in-process row, start-up and shut-down apart (issue 17)."""
    return [
        f"{ray}: {running_seconds(rows[inproc]) / running_seconds(rows[ray]):.2f}x in-process "
        f"({running_seconds(rows[ray]):.2f} s vs {running_seconds(rows[inproc]):.2f} s of emulation; "
        f"Ray's start-up {rows[ray]['startup_s']:.2f} s and shut-down {rows[ray]['shutdown_s']:.2f} s apart)"
        for ray, inproc in SPEEDUPS.items()
        if ray in rows and inproc in rows
    ]


def measure(name: str, args: argparse.Namespace, work: Path) -> dict:
    """One row: its scenario (synthetic ones shortened by ``--jobs``), the fastest of ``--repeat`` runs."""
    document = SCENARIOS[name](args.shared)
    if args.jobs and document and document["workload"]["source"] == "synthetic":
        document["workload"]["jobs"] = args.jobs
    return min(
        (run_once(name, document, work) for _ in range(max(args.repeat, 1))), key=lambda r: r["wall_s"]
    )


def markdown(rows: dict[str, dict], left_out: list[str]) -> str:
    """The rows as a Markdown table, then the speed-ups and the rows left out."""
    cells = [[fmt.format(row[key]) for _, key, fmt, _ in COLUMNS] for row in rows.values()]
    titles = [title for title, _, _, _ in COLUMNS]
    return table(titles, cells) + "\n\n" + bullets(speedup_lines(rows) + left_out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=list(SCENARIOS), metavar="NAME", help="repeatable")
    parser.add_argument("--json", action="store_true", help="one JSON object per row instead of a table")
    parser.add_argument("--repeat", type=int, default=1, metavar="N", help="best (fastest) of N runs")
    parser.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="synthetic rows: their first N jobs, at the same rate (grid1000)",
    )
    parser.add_argument(
        "--shared", type=Path, default=DEFAULT_SHARED, help=f"shared folder (default {DEFAULT_SHARED})"
    )
    add_option(parser)
    args = parser.parse_args(argv)
    region = Region.of(args.markdown, "bench.py")
    header = measured_on("bench.py", sys.argv[1:] if argv is None else argv)
    names = args.only or list(SCENARIOS)
    skipped: list[str] = []
    done: dict[str, dict] = {}
    if not args.json:
        print(table_line([title for title, _, _, _ in COLUMNS]))
    with tempfile.TemporaryDirectory(prefix="gridemu-bench-") as tmp:
        for i, name in enumerate(names):
            trace = TRACES.get(name[:3])
            if trace and not (args.shared / trace).is_file():
                skipped.append(f"{name}: skipped, {args.shared / trace} not found (see --shared)")
                print(skipped[-1], file=sys.stderr)
            else:
                row = done[name] = measure(name, args, Path(tmp))
                if args.json:
                    print(json.dumps(row), flush=True)
                else:
                    print(table_line([fmt.format(row[key]) for _, key, fmt, _ in COLUMNS]), flush=True)
            if region:
                region.replace(header, markdown(done, skipped + not_reached(names[i + 1 :])))
    if not args.json:
        print("\n".join(speedup_lines(done)))
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
