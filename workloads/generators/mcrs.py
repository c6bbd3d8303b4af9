"""MCRS experiment (seed 003): 10-50 clusters of 1-CPU nodes, rigid jobs with input and output files.

The paper's Table 1: 10 to 50 clusters of 4 to 12 nodes, one CPU per node
at 277-577 MIPS, one queue per cluster; jobs need 4 to 8 nodes, length
1,000,000-10,000,000 MI, input and output files of 5000-7000 (KB), deadline
10-100 s, bandwidth 100 KB/s-1 MB/s; 100 to 1000 jobs. Readings: a cluster's
nodes share one MIPS rating and its link one bandwidth (the scheduler's view
of "a resource"); the deadline is counted from submission; arrivals are
exponential with a mean the paper does not give. With the literal lengths,
runs last hours and few deadlines can be met; the paper's TTR figures
suggest lengths a thousand times smaller (``--set workload.length=[1e3,1e4]``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from emulator.core.model import Platform

from ..table import job_table


@dataclass(frozen=True)
class McrsJobs:
    """Job parameters (each a key of ``[workload]``)."""

    jobs: int = 1000
    mean_interarrival: float = 10.0
    length: tuple[float, float] = (1e6, 1e7)  # MI
    bench: float = 1.0  # MIPS of the reference machine: estimate = length / bench
    nodes: tuple[int, int] = (4, 8)
    in_bytes: tuple[float, float] = (5e6, 7e6)
    out_bytes: tuple[float, float] = (5e6, 7e6)
    deadline: tuple[float, float] = (10.0, 100.0)  # after submission
    placement: str = "spread"


@dataclass(frozen=True)
class McrsGrid:
    """Platform parameters (each a key of ``[platform]``)."""

    clusters: int = 10
    nodes: tuple[int, int] = (4, 12)
    cpus_per_node: int = 1
    mips: tuple[float, float] = (277.0, 577.0)
    bandwidth: tuple[float, float] = (1e5, 1e6)  # bytes/s
    latency: float = 0.1


def jobs(spec: McrsJobs, rng: np.random.Generator, platform: Platform) -> pa.Table:
    n = spec.jobs
    gaps = rng.exponential(spec.mean_interarrival, n) if spec.mean_interarrival > 0 else np.zeros(n)
    submit = np.cumsum(gaps) - (gaps[0] if n else 0.0)
    estimate = rng.uniform(*spec.length, n) / spec.bench
    cpus = rng.integers(spec.nodes[0], spec.nodes[1] + 1, n)
    in_bytes = rng.uniform(*spec.in_bytes, n)
    out_bytes = rng.uniform(*spec.out_bytes, n)
    deadline = submit + rng.uniform(*spec.deadline, n)
    return job_table(
        np.arange(1, n + 1),
        submit,
        cpus,
        estimate,
        bench=spec.bench,
        deadline=deadline,
        in_bytes=in_bytes,
        out_bytes=out_bytes,
        placement=spec.placement,
    )


def clusters(spec: McrsGrid, rng: np.random.Generator) -> list[dict]:
    nodes = rng.integers(spec.nodes[0], spec.nodes[1] + 1, spec.clusters)
    mips = rng.uniform(*spec.mips, spec.clusters)
    bandwidth = rng.uniform(*spec.bandwidth, spec.clusters)
    return [
        {
            "name": f"cluster{i:02d}",
            "latency": spec.latency,
            "bandwidth": float(bw),
            "machines": [{"count": int(count), "cpus": spec.cpus_per_node, "mips": float(m)}],
        }
        for i, (count, m, bw) in enumerate(zip(nodes, mips, bandwidth, strict=True), 1)
    ]
