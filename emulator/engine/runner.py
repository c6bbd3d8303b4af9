"""Running a scenario: build the partitions, drive them, write the run directory.

This is the driver. It owns the trace files; partitions only hand it rows.
"""

from __future__ import annotations

import json
import os
import time
import tomllib
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pyarrow as pa
import tomli_w

from ..core.config import ScenarioError, Table
from ..core.heap import freeze, frozen_heap, long_lived
from ..core.model import Job, LinkClock, Platform, platform_of
from ..data import rundir
from ..data.metrics import EVENT_COLUMNS, MetricOptions, summarize
from ..data.scenario import Scenario, build_platform
from ..data.scenario import _metric_options as read_metric_options
from ..data.trace import EVENT_SCHEMA, PLACEMENT_COLUMNS, TraceWriter
from ..partitions.cluster import ClusterPartition
from ..partitions.meta import MetaPartition
from ..sync import coordinator, sequential
from ..sync.horizons import Links

SKIPPED_SHOWN = 100
"""Skipped trace lines listed in summary.json (all are counted)."""


@dataclass
class RunResult:
    """A finished run: its directory, its summary and the coordinator's counts."""

    out_dir: Path
    summary: dict
    stats: coordinator.RunStats

    @cached_property
    def jobs(self) -> pa.Table:
        """``jobs.arrow``'s table, read when first asked for: the run does not hold it, with its machine
        and PE lists, while its summary is built (a 448,000-job run's peak)."""
        with pa.OSFile(str(self.out_dir / "jobs.arrow")) as file:
            return pa.ipc.open_file(file).read_all()


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
    claim = rundir.claim(out_dir, overwrite)
    try:  # the claim is held (its lock) while the run goes on, and let go of however it ends
        with _naming_run_files(out_dir):
            result = _run_claimed(scenario, out_dir, on_progress, backend, backend_name)
        claim.finish()
        return result
    finally:
        claim.release()


def _run_claimed(
    scenario: Scenario,
    out_dir: Path,
    on_progress: Callable[[Progress], None] | None,
    backend: Backend,
    backend_name: str,
) -> RunResult:
    """:func:`run` in its claimed directory: scenario.toml first (so a run stopped after its traces
    can still be summarized: :func:`summarize_stopped`), then the traces, then summary.json."""
    _write_text(out_dir / "scenario.toml", tomli_w.dumps(scenario.effective))
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
        tick = None if report is None else lambda: report(writer.jobs_ended)
        costs = _drive(scenario, backend, writer, stats, tick)
    except BaseException:
        writer.close(ok=False)
        raise
    # No metric reads the machine and PE lists: they go before the summary (RunResult.jobs reads the file).
    jobs = writer.close(ok=True, end=stats.end_time).drop_columns(list(PLACEMENT_COLUMNS))
    workload = {
        "jobs": len(scenario.jobs),
        "skipped_lines": len(scenario.skipped),
        "skipped": scenario.skipped[:SKIPPED_SHOWN],
    }
    run = {
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
        "wall_seconds": None,  # (timed last, below)
    }
    summary = build_summary(
        out_dir, jobs, scenario.platform, scenario.metrics, workload, run, scheduler_cost(costs, scenario)
    )
    run["wall_seconds"] = round(time.perf_counter() - started, 3)
    write_summary(out_dir, summary)
    return RunResult(out_dir, summary, stats)


def _drive(
    scenario: Scenario,
    backend: Backend,
    writer: TraceWriter,
    stats: coordinator.RunStats,
    tick: Callable[[], None] | None,
) -> dict:
    """Open the backend, run its partitions to the end, close it: the scheduler's costs per partition.
    The partitions are let go on return, before the jobs table and the metrics are built.

    The scenario's jobs are hidden from the collector from the start: a backend's start-up makes
    objects by the thousand (a Ray backend pickles what each actor builds from), and every full
    collection it set off scanned a million jobs. What start-up built joins them for the run."""
    opening = time.perf_counter()
    with frozen_heap(), backend(scenario) as transport:
        stats.startup_seconds = time.perf_counter() - opening
        freeze()
        links = Links.of_platform(scenario.platform)
        drive = sequential.driver(transport)  # (in one process: no rounds; InRounds: the rounds)
        drive(transport, links, writer, stats, tick, tail=_tail(scenario))
        costs = transport.policy_stats() if hasattr(transport, "policy_stats") else {}
        closing = time.perf_counter()
    stats.shutdown_seconds = time.perf_counter() - closing
    return costs


def build_summary(
    out_dir: Path,
    jobs: pa.Table,
    platform: Platform,
    options: MetricOptions,
    workload: dict,
    run: dict,
    scheduler: dict | None = None,
) -> dict:
    """summary.json: the metrics of the run directory's ``jobs`` and ``events.arrow``
    (:func:`~emulator.data.metrics.summarize`), then its ``workload``, ``run`` and ``scheduler`` blocks
    (a run's own, or what :func:`summarize_stopped` can know afterwards)."""
    summary = summarize(jobs, _events_for_metrics(out_dir / "events.arrow", platform), platform, options)
    summary["workload"] = workload
    summary["run"] = run
    if scheduler is not None:
        summary["scheduler"] = scheduler
    return summary


def write_summary(out_dir: Path, summary: dict) -> None:
    _write_text(out_dir / "summary.json", json.dumps(summary, indent=2) + "\n")


def summarize_stopped(out_dir: Path) -> dict:
    """Finish a run stopped after its traces were complete (``gridemu inspect --summarize``): write its
    summary.json from ``events.arrow``, ``jobs.arrow`` and ``scenario.toml``, then drop its marker.

    The metrics are the run's own (the platform and ``[metrics]`` from scenario.toml, checked against
    the clusters jobs.arrow records); the ``run`` block has only what the files tell (no wall-clock
    times, rounds or scheduler cost) and says ``"summarized_after_stop": true``. A directory a live run
    holds is refused (:class:`~emulator.data.rundir.RunDirError`); one whose summary.json was written
    before the stop only loses its marker.
    """
    out_dir = Path(out_dir)
    missing = [n for n in rundir.SUMMARIZED_FROM if not rundir.complete(out_dir / n)]
    if missing:
        what = rundir.describe(out_dir) if out_dir.is_dir() and any(out_dir.iterdir()) else "not a run"
        raise FileNotFoundError(f"{out_dir}: cannot summarize: no complete {', '.join(missing)} ({what})")
    if (out_dir / "summary.json").is_file() and not (out_dir / rundir.MARKER).exists():
        raise rundir.RunDirError(f"{out_dir}: holds a finished run (summary.json): nothing to summarize")
    claim = rundir.adopt(out_dir)
    try:
        rundir.promote(out_dir)
        if (out_dir / "summary.json").is_file():  # stopped between its summary and dropping the marker
            summary = json.loads((out_dir / "summary.json").read_text())
        else:
            summary = _summary_after_stop(out_dir)
            with _naming_run_files(out_dir):
                write_summary(out_dir, summary)
        claim.finish()
        return summary
    finally:
        claim.release()


def _summary_after_stop(out_dir: Path) -> dict:
    source = out_dir / "scenario.toml"
    try:
        config = tomllib.loads(source.read_text())
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{source}: not a readable scenario.toml ({err})") from None
    platform = build_platform(config, str(source), out_dir)
    options = read_metric_options(Table(config, str(source)).table("metrics", {}))
    with pa.memory_map(str(out_dir / "jobs.arrow")) as file:
        jobs = pa.ipc.open_file(file).read_all()
    recorded = platform_of(jobs)
    rebuilt = [(c.name, [m.cpus for m in c.machines]) for c in platform.clusters]
    if recorded is not None and recorded != rebuilt:
        raise ScenarioError(
            f"{source}: its clusters are not those {out_dir / 'jobs.arrow'} was emulated on "
            f"({', '.join(name for name, _ in recorded)})"
        )
    with pa.memory_map(str(out_dir / "events.arrow")) as file:
        reader = pa.ipc.open_file(file)
        events = sum(reader.get_batch(i).num_rows for i in range(reader.num_record_batches))
    run = {
        "scenario": config.get("name"),
        "seed": config.get("seed"),
        "backend": config.get("backend"),
        "events": events,
        "summarized_after_stop": True,
    }
    return build_summary(out_dir, jobs, platform, options, {"jobs": jobs.num_rows}, run)


@contextmanager
def _naming_run_files(out_dir: Path) -> Iterator[None]:
    """An OSError naming no file (pyarrow's: a full disk's) names the run's file being written: the
    ``.part`` there (jobs.arrow's after events.arrow's), else the run directory."""
    try:
        yield
    except OSError as err:
        if err.filename is not None:
            raise
        parts = [out_dir / f"{n}.part" for n in ("summary.json", "jobs.arrow", "events.arrow")]
        written = next((p for p in parts if p.exists()), out_dir)
        with rundir.naming(written):
            raise


def _events_for_metrics(path: Path, platform: Platform) -> pa.Table:
    """``events.arrow``'s columns the metrics read (:data:`~emulator.data.metrics.EVENT_COLUMNS`): not
    ``pes``, which is most of a wide trace (decompressing it for nothing took ~200 MB on 1,000 machines x
    8 CPUs), nor ``machines`` unless some cluster counts license copies per machine."""
    wanted = EVENT_COLUMNS + (("machines",) if any(c.license_per_machine for c in platform.clusters) else ())
    fields = [i for i, name in enumerate(EVENT_SCHEMA.names) if name in wanted]
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
