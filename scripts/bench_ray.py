"""Benchmark the Ray backend against the in-process one, and sweeps against sequential runs.

Four tables:

1. ``barrier``: rounds/s of an empty barrier (partitions with one event per
   round and nothing to do) hosted one per actor, for 1, 2, 4 and 16
   partitions, for each way of calling the actors (plain Ray calls, direct
   lines, a compiled graph), next to the bare cost of one round of parallel
   calls that way with a tiny payload (``bare round ms``: Ray's own calls or
   graph, or frames echoed over the lines), each the median of three runs
   taken in turn. ``overhead`` = our round / the bare round - 1.
2. ``backends``: wall seconds in-process vs Ray (2 actors: direct lines with
   rebalancing every 200 rounds, the same with the static grouping only, plain
   Ray calls, and a compiled graph) for (a) 4 clusters x 50 machines, 20k jobs, EASY and (b) 8
   clusters x 150 machines, 10k jobs, CS 2.0 (a plan over every job in the
   cluster at each event: real per-event work), with the rounds, mean
   partition compute and mean barrier overhead per round. Ray pays a fraction
   of a millisecond to a millisecond per round whatever the work, in-process
   pays nothing: Ray wins only when a round's compute is well above that (many
   busy clusters, a per-event policy that costs milliseconds, a long
   lookahead). In (b) a round (1 s links: the lookahead) holds about one job's arrival or end:
   one plan, in one cluster, so there is nothing to run in parallel. Case (c) is (b) with 10 s
   links: each round carries ten times the events, spread over the clusters. Case (d) is heavier:
   16 clusters of the cs2 preset's heterogeneous machines, jobs arriving 4 a second, 10 s links
   (about 11 ms of scheduling a round). ``migrations``: partitions that rebalancing moved.
   Ray's rounds turn pipelined once they hold ~2 ms of work (``actors.transport.PIPELINE_FROM``):
   each actor's call then covers one link latency and is a "round" of its own, with ``no
   barrier`` (so there are up to three times as many, and no barrier time is measured).
   The ``ceiling`` columns bound what 2 actors could give at all, from the in-process run's
   compute per round and partition, as if the barrier cost nothing: the best split of the
   partitions between the actors kept for the run, and a best split chosen afresh every round
   (``actors.grouping.two_actor_ceilings``). Ray's rows fall short of them by the barrier and by
   the CPU the driver and Ray's own processes take from the actors.
3. ``weak scaling``: 8, 32 and 128 clusters of 50 machines (EASY, least-load dispatch, 400 jobs per
   cluster, arrivals proportional to the clusters), with 1 s links (a dispatch as fast as a LAN's) and
   30 s links (a grid middleware's: a WMS takes tens of seconds to hand a job to a site's CE), and
   512 clusters with 30 s links (``WEAK_LARGE``: where the driver's share shows).
   The link is the lookahead: a round spans about one link latency of virtual time whatever the
   grid's size, so 1 s links give ~14k rounds of well under a millisecond of work each, and 30 s
   links thirty times fewer, each thirty times heavier. Rounds, mean compute per round,
   wall seconds in-process and on 2 Ray actors after start-up (each the fastest of ``--repeat``
   runs, the backends taking turns; Ray's start-up and shut-down,
   seconds whatever the run, are given apart in ``ray start+stop s``); the driver's CPU seconds
   in that Ray run (``driver s``), of which its meta partition's compute (``driver meta s``), over
   the in-process run's partition compute (``driver share``) and per job; the measured speed-up,
   and the speed-up N actors on N cores could reach
   (``actors.grouping.projected_speedup``: each round's measured compute by partition, the
   partitions grouped by LPT, plus the round's cost for N actors on direct lines, fitted on
   rounds measured here; the meta partition runs in the driver, so a round holding it alone pays
   no Ray round; the driver's CPU beyond it, as measured, is its turn after each round's replies,
   which pipelined rounds (from ``PIPELINE_FROM`` of compute a round) overlap with the actors'
   next round; and the actors and the driver share the N cores),
   so users see what a 16- or 64-core machine would give, which a 2-core one cannot show.
   ``projected 2 cores`` sits beside the measured speed-up: how far apart they are says how far
   to trust the others.
4. ``sweep``: 20 independent quickstart runs (10k jobs each) one after another vs a process
   pool vs Ray tasks; the target is >= 1.8x faster than sequential.

``--markdown [FILE]`` also writes the tables into FILE's ``bench_ray.py`` region (default
``docs/performance.md``; ``scripts/bench_markdown.py``).

    python scripts/bench_ray.py [--only barrier|backends|weak|sweep] [--cases abcd] [--weak 8 32 128]
                                [--weak-latency 1 30] [--repeat N] [--rounds N] [--barrier 1 2 4 16]
                                [--calls plain direct compiled] [--json] [--markdown [FILE]]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import secrets
import shutil
import statistics
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import ray
from bench_markdown import Region, add_option, bullets, measured_on, not_reached
from bench_markdown import table as markdown_table

from actors import RayTransport, ray_backend
from actors.calls import HostCalls
from actors.channel import connect, handshake, serve
from actors.compiled import CompiledRounds
from actors.grouping import projected_speedup, round_work, two_actor_ceilings
from actors.host import PartitionHost
from actors.session import init_local
from actors.transport import PIPELINE_FROM
from emulator import load_scenario, run
from emulator.core.messages import META
from emulator.data.scenario import Scenario, parse
from emulator.engine.runner import build_partitions
from emulator.engine.sweep import points, run_point
from emulator.engine.sweep_pool import process_pool
from emulator.sync import coordinator
from emulator.sync.horizons import Links

PARTITIONS = (1, 2, 4, 16)
REPEATS = 3
"""Barrier measurements per row, ours and Ray's alternating, the median kept: with more processes
spinning than cores (compiled graphs), one measurement of either can be off by a third."""
SWEEP_JOBS = 10_000
"""Jobs per sweep run (~2 s each): Ray's worker start-up and task overhead (~1-2 s) dwarf shorter runs."""
B_INTERARRIVAL = 1.0
"""Case (b)'s mean inter-arrival (s): 8 x 150 machines of 4 CPUs kept busy, queues of tens of jobs."""


class Ticker:
    """A partition with one event per time unit and nothing else: the barrier's bare cost."""

    def __init__(self, pid: int, rounds: int) -> None:
        self.pid, self.left, self.now = pid, rounds, 0.0

    @property
    def next_time(self) -> float:
        return self.now if self.left else math.inf

    @property
    def busy(self) -> bool:
        return bool(self.left)

    @property
    def promise(self) -> float:
        return self.next_time  # as if it could send at every tick: every partition waits for the others

    reacts = True

    def advance(self, horizon, inbox, budget):
        while self.left and self.now < horizon:
            self.now += 1.0
            self.left -= 1
        return [], self.next_time, [], self.busy, self.promise, self.reacts


class TickerHost(PartitionHost):
    def __init__(self, rounds: int, pids: list[int]) -> None:
        self.local = coordinator.InProcess([Ticker(pid, rounds) for pid in pids])


class Echo:
    def ping(self, data: bytes) -> bytes:
        return data

    def line(self, secret: bytes, driver: int) -> str:
        return serve(self.ping, secret, driver)

    def advance_batch(self, batches: dict, h: int) -> bytes | None:
        return batches.get(h)


CALLS = ("plain", "direct", "compiled")
"""The ways a round can call the actors (``gridemu run --ray-calls``)."""


def barrier_rows(rounds: int, sizes=PARTITIONS, ways=CALLS, repeats: int = REPEATS) -> list[dict]:
    """The barrier table: ``sizes`` partitions, one per actor, called each way of ``ways``."""
    rows = []
    for n in sizes:
        for calls in ways:
            ours, raw = [], []
            for _ in range(repeats):
                ours.append(our_round(n, rounds, calls))
                raw.append(bare_round(n, rounds, calls))
            ours, raw = statistics.median(ours), statistics.median(raw)
            rows.append(
                {
                    "table": "barrier",
                    "partitions": n,
                    "calls": calls,
                    "rounds/s": 1 / ours,
                    "round ms": ours * 1e3,
                    "bare round ms": raw * 1e3,
                    "overhead": f"{ours / raw - 1:+.0%}",
                }
            )
    return rows


def our_round(n: int, rounds: int, calls: str) -> float:
    """Seconds per round of our coordinator over ``n`` Ticker partitions, one per actor, the actors
    called ``calls`` (:data:`CALLS`)."""
    return our_round_costs(n, rounds, calls)[0]


def our_round_costs(n: int, rounds: int, calls: str) -> tuple[float, float]:
    """:func:`our_round`'s seconds per round, and the driver's CPU seconds per round."""
    groups = [[pid] for pid in range(n)]
    transport = RayTransport(
        rounds,
        groups,
        checkpoint_every=0,
        host=TickerHost,
        compiled=calls == "compiled",
        rebalance_every=0,
        direct=calls == "direct",
    )
    transport.states()  # the actors are up: their start is not a round's cost
    links = Links({(src, dst): 1.0 for src in range(n) for dst in range(n) if src != dst})
    started, cpu = time.perf_counter(), time.process_time()
    stats = coordinator.run(transport, links, lambda watermark, results: 0)
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    transport.close()
    return elapsed / stats.rounds, cpu / stats.rounds


def bare_round(n: int, rounds: int, calls: str) -> float:
    """Seconds per round of a parallel call to ``n`` actors with a tiny payload, made ``calls``: Ray's
    own calls or compiled graph, or frames echoed over direct lines."""
    cpus = min(1.0, ray.cluster_resources().get("CPU", 1.0) / n)  # as RayTransport asks for its actors
    actors = [ray.remote(Echo).options(num_cpus=cpus).remote() for _ in range(n)]
    ray.get([a.ping.remote(b"") for a in actors])
    graph = lines = None
    if calls == "compiled":
        graph = CompiledRounds(actors)
        call = graph.call
    elif calls == "direct":
        secret = secrets.token_bytes(32)
        paths = ray.get([a.line.remote(secret, os.getpid()) for a in actors])
        lines = HostCalls(actors, [handshake(connect(path), secret) for path in paths])

        def call(batches: dict) -> list:
            for h, data in batches.items():
                lines.send(h, data)
            return [lines.answer(h, None) for h in batches]
    else:

        def call(batches: dict) -> list:
            return ray.get([actors[h].ping.remote(data) for h, data in batches.items()])

    batch = {h: b"x" * 16 for h in range(n)}
    call(batch)
    started = time.perf_counter()
    for _ in range(rounds):
        call(batch)
    elapsed = time.perf_counter() - started
    if graph is not None:
        graph.close()
    if lines is not None:
        lines.close()
    for actor in actors:
        ray.kill(actor)
    return elapsed / rounds


def grid(
    clusters: int, machines: int, jobs: int, interarrival: float, policy: str, latency: float = 1.0
) -> dict:
    return {
        "name": f"{clusters}x{machines}",
        "local": {"policy": policy},
        "clusters": [
            {
                "name": f"c{i}",
                "latency": latency,
                "machines": [{"count": machines, "cpus": 4, "mips": 100.0 + 50 * i}],
            }
            for i in range(clusters)
        ],
        "workload": {
            "source": "synthetic",
            "jobs": jobs,
            "mean_interarrival": interarrival,
            "cpus": [1, 4],
            "estimate": [500.0, 5000.0],
        },
    }


def heavy_cs2() -> Scenario:
    """Case (d): 16 clusters of the cs2 preset's machines (1-8 CPUs, 200-600 MIPS, licenses), its jobs
    arriving 4 a second (each cluster about as loaded as the paper's Ta = 4), 10 s links."""
    clusters = "platform.clusters=[" + ",".join(["150"] * 16) + "]"
    sets = [clusters, "platform.latency=10.0", "workload.jobs=10000", "workload.mean_interarrival=0.25"]
    return load_scenario("cs2", sets)


CASES = {
    "a: 4x50, 20k jobs, easy": lambda: parse(grid(4, 50, 20_000, 2.0, "easy"), "a"),
    "b: 8x150, 10k jobs, cs2": lambda: parse(grid(8, 150, 10_000, B_INTERARRIVAL, "cs2"), "b"),
    "c: b with 10 s links": lambda: parse(grid(8, 150, 10_000, B_INTERARRIVAL, "cs2", latency=10.0), "c"),
    "d: 16x150 cs2 preset, 10k jobs, 4/s, 10 s links": heavy_cs2,
}
"""The backends table's scenarios, built when their case runs."""


class TimedInProcess(coordinator.InProcess):
    """The in-process transport, keeping every round's compute seconds by partition, and the CPU
    seconds the partitions took in all (``cpu``: on a shared machine, wall seconds count the other
    processes' turns too)."""

    def __init__(self, partitions: list) -> None:
        super().__init__(partitions)
        self.rounds: list[dict[int, float]] = []
        self.cpu = 0.0

    def advance(self, calls, budget):
        started = time.process_time()
        results = super().advance(calls, budget)
        self.cpu += time.process_time() - started
        self.rounds.append(self.partition_seconds)
        return results


def timed_in_process(log: list[TimedInProcess]):
    """An in-process backend that appends its transport to ``log``: the rounds' times, read after the run."""

    @contextmanager
    def backend(scenario: Scenario):
        transport = TimedInProcess(build_partitions(scenario))
        log.append(transport)
        yield transport

    return backend


def backend_rows(wanted: str = "abcd") -> list[dict]:
    rows = []
    timed: list[TimedInProcess] = []
    backends = {
        "inproc": timed_in_process(timed),
        "ray, 2 actors, direct": ray_backend(hosts=2, checkpoint_every=0),
        "ray, 2 actors, direct, static": ray_backend(hosts=2, checkpoint_every=0, rebalance_every=0),
        "ray, 2 actors, plain": ray_backend(hosts=2, checkpoint_every=0, direct=False),
        "ray, 2 actors, compiled": ray_backend(hosts=2, checkpoint_every=0, compiled=True),
    }
    for label, build in CASES.items():
        if label[0] not in wanted:
            continue
        scenario = build()
        inproc_wall = None
        for name, backend in backends.items():
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                result = run(scenario, Path(tmp) / "run", backend=backend)
                wall = time.perf_counter() - started
            inproc_wall = inproc_wall or wall
            stats = result.stats
            split = two_actor_ceilings(round_work(timed.pop().rounds)) if timed else None
            rows.append(
                {
                    "table": "backends",
                    "scenario": label,
                    "backend": name,
                    "wall s": wall,
                    "speed-up": f"{inproc_wall / wall:.2f}x",
                    "rounds": stats.rounds,
                    "no barrier": stats.barrier_free,  # (pipelined: one actor's call each)
                    "compute ms/round": stats.compute_seconds / stats.rounds * 1e3,
                    "barrier ms/round": stats.barrier_seconds / stats.rounds * 1e3,
                    "migrations": getattr(backend, "migrations", 0),
                    "ceiling, one split": f"{split[0]:.2f}x" if split else "",
                    "ceiling, split per round": f"{split[1]:.2f}x" if split else "",
                }
            )
    return rows


WEAK_SIZES = (8, 32, 128)
"""Clusters in the weak-scaling rows."""
WEAK_JOBS = 400
"""Jobs per cluster: the grid's arrival rate grows with its clusters, each cluster's load stays put."""
WEAK_LATENCIES = (1.0, 30.0)
"""Link latencies (s) of the weak-scaling rows (see the module docstring)."""
WEAK_LARGE = ((512, 30.0),)
"""``(clusters, link s)`` rows the default set adds: a grid where the driver's share shows."""
WEAK_CORES = (2, 16, 64)
"""Cores (one actor each) the projection is printed for."""


def weak_cases(sizes=None, latencies=None) -> list[tuple[int, float]]:
    """The weak-scaling rows: ``sizes`` x ``latencies`` (each defaulting to :data:`WEAK_SIZES`,
    :data:`WEAK_LATENCIES`), and :data:`WEAK_LARGE` when neither is given.

    >>> weak_cases()[-2:], weak_cases([8], [1.0])
    ([(128, 30.0), (512, 30.0)], [(8, 1.0)])
    """
    cases = [(n, lat) for lat in latencies or WEAK_LATENCIES for n in sizes or WEAK_SIZES]
    return cases + list(WEAK_LARGE) if sizes is None and latencies is None else cases


def weak_grid(clusters: int, latency: float = 1.0) -> dict:
    """``clusters`` x 50 machines of 4 CPUs at 100 MIPS under EASY, least-load dispatch, links of
    ``latency`` s; one job every 40 s per cluster (about 70% busy), ``WEAK_JOBS`` per cluster."""
    raw = grid(clusters, 50, WEAK_JOBS * clusters, 40.0 / clusters, "easy", latency)
    raw["meta"] = {"policy": "least-load"}
    for cluster in raw["clusters"]:  # alike, so that least-load spreads the jobs over all of them
        cluster["machines"][0]["mips"] = 100.0
    return raw


def round_costs(sizes=(2, 3, 4), rounds: int = 300) -> tuple[float, float]:
    """A round over direct lines for N actors on N cores, as ``base + per_actor * N`` seconds.

    ``per_actor`` is the slope of the driver's CPU per round (packing, writing, reading and
    unpacking one more actor's call), which more actors than cores leave as it is; ``base`` makes
    the 2-actor round what it measured. The wall time of rounds of 3 or 4 actors on this 2-core
    machine would also count actors waiting for a core, which N cores would not. One actor is
    left out: a lone Ticker has no links, so it runs free, in calls that are not barrier rounds.
    Each size is measured twice and the faster kept (a first measurement pays the actors' first
    calls: imports in the workers). The slope is at least 0.
    """
    measured = [
        min((our_round_costs(n, rounds, "direct") for _ in range(2)), key=lambda c: c[0]) for n in sizes
    ]
    per_actor = max(float(np.polyfit(sizes, [cpu for _, cpu in measured], 1)[0]), 0.0)
    return measured[0][0] - per_actor * sizes[0], per_actor


def weak_rows(cases=None, repeat: int = 1) -> list[dict]:
    """Weak scaling: wall times in-process and on 2 Ray actors, and what N actors on N cores could give."""
    base, per_actor = round_costs()
    return [weak_row(n, latency, base, per_actor, repeat) for n, latency in cases or weak_cases()]


class DriverClock:
    """``backend`` with the driver's CPU seconds counted while its transport runs (``seconds``, the
    last run's: the emulation, its start-up and shut-down apart), and of them its own partitions'
    (``meta``: :attr:`actors.driver_host.DriverHost.cpu_seconds`)."""

    def __init__(self, backend) -> None:
        self.backend, self.seconds, self.meta = backend, 0.0, 0.0

    @contextmanager
    def __call__(self, scenario: Scenario):
        with self.backend(scenario) as transport:
            started = time.process_time()
            try:
                yield transport
            finally:
                self.seconds = time.process_time() - started
                self.meta = transport.driver.cpu_seconds


def weak_row(n: int, latency: float, base: float, per_actor: float, repeat: int = 1) -> dict:
    """One weak-scaling row: ``n`` clusters with links of ``latency`` s (Ray's round: ``base +
    per_actor * actors`` s). The speed-up leaves out Ray's start-up and shut-down, given apart.
    ``repeat``: each backend's fastest of that many runs, the two taking turns (a shared machine's
    noise moved single runs by 10%). The driver's columns are those of the fastest Ray run: its CPU
    (``driver s``, of which its meta partition's ``driver meta s``), over the CPU of the partitions
    in the fastest in-process run (``driver share``), and per job."""
    scenario = parse(weak_grid(n, latency), f"weak-{n}")
    timed: list[TimedInProcess] = []
    walls: dict[str, list] = {"inproc": [], "ray": []}
    for _ in range(repeat):
        for name, backend in (
            ("inproc", timed_in_process(timed)),
            ("ray", DriverClock(ray_backend(hosts=2, checkpoint_every=0))),
        ):
            with tempfile.TemporaryDirectory() as tmp:
                started = time.perf_counter()
                result = run(scenario, Path(tmp) / "run", backend=backend)
                stats = result.stats
                emulation = time.perf_counter() - started - stats.startup_seconds - stats.shutdown_seconds
                cpu = (timed[-1].cpu, timed[-1]) if name == "inproc" else (backend.seconds, backend.meta)
                walls[name].append((emulation, stats, *cpu))
    (wall, stats, work_cpu, timed_run), (ray_wall, ray_stats, driver, meta) = (
        min(runs, key=lambda w: w[0]) for runs in walls.values()
    )
    fixed = ray_stats.startup_seconds + ray_stats.shutdown_seconds
    work = round_work(timed_run.rounds)
    overhead = stats.barrier_seconds / max(stats.rounds, 1)  # the coordinator's own work per round
    pipelined = stats.compute_seconds / max(stats.rounds, 1) >= PIPELINE_FROM  # (as the transport turns)
    row = {
        "table": "weak scaling",
        "clusters": n,
        "link s": latency,
        "jobs": len(scenario.jobs),
        "rounds": stats.rounds,
        "compute ms/round": stats.compute_seconds / max(stats.rounds, 1) * 1e3,
        "inproc s": wall,
        "ray 2 actors s": ray_wall,
        "ray start+stop s": fixed,
        "driver s": driver,
        "driver meta s": meta,
        "driver share": f"{driver / work_cpu:.1%}",
        "driver µs/job": driver / len(scenario.jobs) * 1e6,
        "ray speed-up": f"{wall / ray_wall:.2f}x",
    }
    for cores in WEAK_CORES:
        round_cost = base + per_actor * cores
        projected = projected_speedup(
            work, cores, round_cost, overhead, [META], driver=max(driver - meta, 0.0), pipelined=pipelined
        )
        row[f"projected {cores} cores"] = f"{projected:.2f}x"
    return row


def sweep_rows(count: int = 20) -> list[dict]:
    todo = points([("seed", list(range(1, count + 1)))], [f"workload.jobs={SWEEP_JOBS}"])
    timings = {}
    started = time.perf_counter()
    for point in todo:
        run_point("quickstart", point)
    timings["sequential"] = time.perf_counter() - started
    started = time.perf_counter()
    list(process_pool()("quickstart", todo))
    timings["process pool"] = time.perf_counter() - started
    from actors import ray_tasks

    started = time.perf_counter()
    list(ray_tasks()("quickstart", todo))
    timings["ray tasks"] = time.perf_counter() - started
    base = timings["sequential"]
    return [
        {"table": "sweep", "runs": count, "executor": k, "wall s": v, "speed-up": base / v}
        for k, v in timings.items()
    ]


@contextmanager
def local_ray():
    """A private local Ray for one table; its session folder is removed when it ends."""
    temp = tempfile.mkdtemp(prefix="gr-bench-")
    try:
        init_local(_temp_dir=temp)
        yield
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


TITLES = {"barrier": "barrier", "backends": "backends", "weak": "weak scaling", "sweep": "sweep"}
"""Each table's title in the output, by its ``--only`` name."""


def kept_tables(body: str, measuring: list[str]) -> list[str]:
    r"""The tables of a region's ``body`` that this run does not measure (``measuring``: ``--only``
    names), each as it was and under a line saying when and how it was measured: a run of some tables
    replaces only those.

    >>> body = "Measured then.\nCommand: `x`\n\n**sweep**\n\n| a |\n| --- |\n| 1 |\n"
    >>> kept_tables(body, ["weak"])
    ['**sweep**\n\n_Kept from an earlier run (Measured then. Command: `x`)._\n\n| a |\n| --- |\n| 1 |']
    >>> kept_tables(body, ["sweep"])
    []
    """
    header, *sections = re.split(r"^(?=\*\*[^*\n]+\*\*$)", body, flags=re.M)
    said = " ".join(line for line in header.strip().splitlines() if not line.startswith("- "))
    replaced = {TITLES[name] for name in measuring}
    kept = []
    for section in sections:
        title, _, rest = section.strip().partition("\n")
        if title.strip("*") in replaced:
            continue
        rest = rest.strip()
        if said and not rest.startswith("_Kept"):
            rest = f"_Kept from an earlier run ({said})._\n\n{rest}"
        lines = [line for line in rest.splitlines() if not line.startswith("- not measured")]
        kept.append(f"{title}\n\n" + "\n".join(lines).strip())
    return kept


def grouped(rows: list[dict]):
    """Each table's name, column titles and formatted cells, in the order the rows came."""
    for name in dict.fromkeys(r["table"] for r in rows):
        part = [{k: v for k, v in r.items() if k != "table"} for r in rows if r["table"] == name]
        cols = list(part[0])
        yield name, cols, [[_fmt(r[c]) for c in cols] for r in part]


def show(rows: list[dict]) -> None:
    for name, cols, cells in grouped(rows):
        widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
        print(f"\n{name}")
        print("  ".join(c.rjust(w) for c, w in zip(cols, widths, strict=True)))
        for row in cells:
            print("  ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)))


def markdown(rows: list[dict]) -> list[str]:
    """Each table as a bold title and a Markdown table."""
    return [f"**{name}**\n\n{markdown_table(cols, cells)}" for name, cols, cells in grouped(rows)]


def _fmt(value) -> str:
    return f"{value:,.2f}" if isinstance(value, float) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=["barrier", "backends", "weak", "sweep"])
    parser.add_argument("--rounds", type=int, default=1000, help="rounds per barrier measurement")
    parser.add_argument(
        "--barrier", type=int, nargs="+", default=list(PARTITIONS), help="partitions in the barrier rows"
    )
    parser.add_argument(
        "--calls", nargs="+", choices=CALLS, default=list(CALLS), help="ways of calling in the barrier rows"
    )
    parser.add_argument("--cases", default="abcd", help="which backends cases to run (default: abcd)")
    parser.add_argument("--json", action="store_true", help="one JSON object per row")
    parser.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="weak scaling: each backend's fastest of N runs"
    )
    parser.add_argument(
        "--weak",
        type=int,
        nargs="+",
        help=f"clusters in the weak-scaling rows (default {WEAK_SIZES}, plus {WEAK_LARGE}: clusters, link s)",
    )
    parser.add_argument(
        "--weak-latency",
        type=float,
        nargs="+",
        help=f"link latencies (s) of the weak-scaling rows (default {WEAK_LATENCIES})",
    )
    add_option(parser)
    args = parser.parse_args(argv)
    region = Region.of(args.markdown, "bench_ray.py")
    header = measured_on("bench_ray.py", sys.argv[1:] if argv is None else argv)
    wanted = args.only or ["barrier", "backends", "weak", "sweep"]
    tables = {
        "barrier": lambda: barrier_rows(args.rounds, args.barrier, args.calls),
        "backends": lambda: backend_rows(args.cases),
        "weak": lambda: weak_rows(weak_cases(args.weak, args.weak_latency), args.repeat),
        "sweep": sweep_rows,
    }
    rows: list[dict] = []
    names = [name for name in tables if name in wanted]
    kept = kept_tables(region.body(), names) if region else []
    for i, name in enumerate(names):
        with local_ray():  # a fresh Ray for each table: after the barrier table's compiled graphs,
            rows += tables[
                name
            ]()  # every later Ray row ran slower (case d: 9.8 ms of barrier a round, not 2)
        if region:
            region.replace(header, *markdown(rows), bullets(not_reached(names[i + 1 :])), *kept)
    if args.json:
        for row in rows:
            print(json.dumps(row))
    else:
        show(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
