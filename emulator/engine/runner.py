"""Running a scenario: build the partitions, drive them, write the run directory.

This is the driver. It owns the trace files; partitions only hand it rows.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import tomli_w

from ..core.heap import frozen_heap, long_lived
from ..core.model import Job, LinkClock
from ..data import rundir
from ..data.metrics import summarize
from ..data.scenario import Scenario
from ..data.trace import EVENT_SCHEMA, TraceWriter
from ..partitions.cluster import ClusterPartition
from ..partitions.meta import MetaPartition
from ..sync import coordinator
from ..sync.horizons import Links

SKIPPED_SHOWN = 100
"""Skipped trace lines listed in summary.json (all are counted)."""


@dataclass
class RunResult:
    out_dir: Path
    summary: dict
    jobs: pa.Table
    stats: coordinator.RunStats


def entries(scenario: Scenario) -> tuple[list[list[Job]], list[Job]]:
    """Where the jobs enter: those naming a cluster, by cluster, when ``workload.direct``; the rest
    go through the meta-scheduler (in trace order)."""
    names = {c.name: i for i, c in enumerate(scenario.platform.clusters)}
    direct: list[list[Job]] = [[] for _ in names]
    via_meta = []
    for job in scenario.jobs:
        if scenario.direct and job.site in names:
            direct[names[job.site]].append(job)
        else:
            via_meta.append(job)
    return direct, via_meta


@long_lived()
def build_partitions(scenario: Scenario, pids: Iterable[int] | None = None) -> list:
    """The partitions of ``scenario`` (all, or those in ``pids``), ready to advance.

    Partition 0 is the meta-scheduler; cluster ``i`` is partition ``i + 1``. A
    transport that hosts partitions elsewhere (a Ray actor) builds its own share
    with this, so every backend starts from the same state. Jobs that name one
    of the clusters enter it directly (when ``workload.direct``); the others go
    through the meta-scheduler. When every job enters directly the
    meta-scheduler has nothing to decide, so clusters send it no status reports
    (they could not change any row of the trace, and would double the rounds).
    The partitions live to the run's end: no garbage collection while they are built
    (:mod:`emulator.core.heap`).
    """
    clusters = scenario.platform.clusters
    wanted = set(range(len(clusters) + 1) if pids is None else pids)
    direct, via_meta = entries(scenario)
    via_meta.sort(key=lambda j: j.submit)
    parts: list = []
    if 0 in wanted:
        failures = scenario.failures
        returns = failures is not None and any(failures.cluster(i).returns for i in range(len(clusters)))
        parts.append(
            MetaPartition(scenario.platform, scenario.meta, scenario.seed_sequence(0), via_meta, returns)
        )
    for i, cluster in enumerate(clusters):
        if i + 1 not in wanted:
            continue
        link = LinkClock(scenario.direct_link) if scenario.direct_link else None
        parts.append(
            ClusterPartition(
                i + 1,
                cluster,
                scenario.seed_sequence(i + 1),
                direct[i],
                link,
                bool(via_meta),
                scenario.status_period,
                scenario.failures,
            )
        )
    return parts


@contextmanager
def in_process(scenario: Scenario) -> Iterator[coordinator.InProcess]:
    """The in-process backend: every partition a plain object in this process."""
    yield coordinator.InProcess(build_partitions(scenario))


Backend = Callable[[Scenario], AbstractContextManager]
"""Opens a transport hosting the scenario's partitions (``in_process``, or ``actors.ray_backend(...)``)."""

REBALANCE_EVERY = 200
"""Rounds between two checks of a multi-process backend's balance (``actors``: it may move partitions
between processes): enough rounds to measure a load, few enough to follow it."""


@dataclass
class Progress:
    """What a progress display shows while a run goes on."""

    jobs_done: int
    jobs_total: int
    stats: coordinator.RunStats


def run(
    scenario: Scenario,
    out_dir: Path | None = None,
    on_progress: Callable[[Progress], None] | None = None,
    backend: Backend = in_process,
    backend_name: str = "inproc",
    overwrite: bool = False,
) -> RunResult:
    """Run ``scenario`` and write its run directory (claimed for this run alone: :mod:`emulator.data.rundir`).

    ``overwrite``: replace the run (finished or stranded) already in ``out_dir``.

    ``backend`` hosts the partitions (in this process by default); the trace is
    the same whichever it is. ``on_progress`` is called every few hundred rounds
    and after each trace batch.
    """
    out_dir = Path(out_dir) if out_dir is not None else rundir.default_dir(scenario.name, scenario.seed)
    rundir.claim(out_dir, overwrite)
    started = time.perf_counter()
    stats = coordinator.RunStats()
    report = None
    if on_progress is not None:

        def report(done: int) -> None:
            on_progress(Progress(done, len(scenario.jobs), stats))

    writer = TraceWriter(
        out_dir, scenario.jobs, scenario.platform, report, extra=scenario.extra, inputs=scenario.inputs
    )
    try:
        opening = time.perf_counter()
        with backend(scenario) as transport:
            stats.startup_seconds = time.perf_counter() - opening
            tick = None if report is None else lambda: report(writer.jobs_ended)
            links = Links.of_platform(scenario.platform)
            with frozen_heap():
                coordinator.run(transport, links, writer, stats, tick, tail=_tail(scenario))
            costs = transport.policy_stats() if hasattr(transport, "policy_stats") else {}
            closing = time.perf_counter()
        stats.shutdown_seconds = time.perf_counter() - closing
    except BaseException:
        writer.close(ok=False)
        raise
    jobs = writer.close(ok=True, end=stats.end_time)
    summary = summarize(
        jobs, _events_for_metrics(out_dir / "events.arrow"), scenario.platform, scenario.metrics
    )
    summary["workload"] = {
        "jobs": len(scenario.jobs),
        "skipped_lines": len(scenario.skipped),
        "skipped": scenario.skipped[:SKIPPED_SHOWN],
    }
    summary["run"] = {
        "scenario": scenario.name,
        "seed": scenario.seed,
        "backend": backend_name,
        "events": writer.rows_written,
        "rounds": stats.rounds,
        "barrier_free_rounds": stats.barrier_free,
        "partition_calls": stats.calls,
        "messages": stats.messages,
        "startup_seconds": round(stats.startup_seconds, 3),
        "shutdown_seconds": round(stats.shutdown_seconds, 3),
        "compute_seconds": round(stats.compute_seconds, 3),
        "barrier_seconds": round(stats.barrier_seconds, 3),
        "wall_seconds": round(time.perf_counter() - started, 3),
    }
    summary["scheduler"] = scheduler_cost(costs, scenario)
    _write_text(out_dir / "scenario.toml", tomli_w.dumps(scenario.effective))
    _write_text(out_dir / "summary.json", json.dumps(summary, indent=2) + "\n")
    rundir.finish(out_dir)
    return RunResult(out_dir, summary, jobs, stats)


def _events_for_metrics(path: Path) -> pa.Table:
    """``events.arrow`` without its ``pes`` column, which no metric reads and which is most of a wide
    trace (decompressing it for nothing took ~200 MB on 1,000 machines x 8 CPUs)."""
    fields = [i for i, name in enumerate(EVENT_SCHEMA.names) if name != "pes"]
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source, options=pa.ipc.IpcReadOptions(included_fields=fields)).read_all()


def _tail(scenario: Scenario) -> bool:
    """Whether background events (failures, outages, link changes) may go on after the last job."""
    clusters = scenario.platform.clusters
    failures = scenario.failures
    active = failures is not None and any(failures.cluster(i).active for i in range(len(clusters)))
    return active or any(c.link_changes for c in clusters)


def scheduler_cost(costs: dict[int, dict[str, float]], scenario: Scenario) -> dict:
    """summary.json's ``scheduler``: wall-clock time inside the local policies, in total and per cluster.

    ``calls`` (plans built), ``total_seconds``, ``mean_ms`` and ``max_ms`` per
    call; the grid's line adds every cluster's. Wall clock, so it differs from
    run to run and is kept out of the trace.
    """

    def line(calls: int, seconds: float, most: float) -> dict:
        mean = round(1e3 * seconds / calls, 4) if calls else None
        return {
            "calls": calls,
            "total_seconds": round(seconds, 6),
            "mean_ms": mean,
            "max_ms": round(1e3 * most, 4),
        }

    clusters = {
        c.name: line(costs[i + 1]["calls"], costs[i + 1]["seconds"], costs[i + 1]["max_seconds"])
        for i, c in enumerate(scenario.platform.clusters)
        if i + 1 in costs
    }
    grid = line(
        sum(c["calls"] for c in costs.values()),
        sum(c["seconds"] for c in costs.values()),
        max((c["max_seconds"] for c in costs.values()), default=0.0),
    )
    return {**grid, "clusters": clusters}


def _write_text(path: Path, text: str) -> None:
    """Written under ``.part``, synced, then renamed: a crash never leaves half a file under the name."""
    part = path.with_name(path.name + ".part")
    with part.open("w") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())
    os.replace(part, path)
    rundir.fsync_dir(path.parent)
