"""MUSCLE experiment (seed 004): clusters of 20/16/12/10 CPUs, 20000 rigid jobs with soft deadlines.

The paper's numbers: cluster sizes 20, 16, 12, 10 with service-rate ratios
1.0, 1.2, 1.4, 1.6; Poisson arrivals; execution times on cluster C1
bounded-Pareto with ``e_l / e_u = 5/100``; sizes uniform 1..10; deadline
``arrival + max_c(e_jc) x (1 + dr)``, ``dr`` uniform [0, 5]. Readings: the
Pareto shape (the paper does not give it) is 1.0; ``max_c`` runs over the
clusters large enough for the job, with ``e_jc`` the execution time there;
the mean inter-arrival time (the paper varies the load) defaults to 1.5,
about 80% of the grid's capacity; CPUs are 1-CPU machines (rigid jobs
spread over them) rated ``mips x ratio``.

``size_law`` picks the job-size law: ``"uniform"`` on ``size`` (Figs. 4-6,
"MIN S/MAX S = 1/10 (uniform distribution)") or ``"log"``, Fig. 7's:
"the probability that a job requests fewer than m_MAX resources is
proportional to log m_MAX" (citing Downey's "the probability that a job uses
fewer than n processors is roughly proportional to log n"). We read it as
``P(size < n) = log(n / low) / log((high + 1) / low)`` for ``n`` in
``low..high + 1``: the floor of a log-uniform draw on ``[low, high + 1)``,
so every size in ``size`` can occur and small ones are the most frequent.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from emulator.core.model import Platform

from ..table import job_table


@dataclass(frozen=True)
class MuscleJobs:
    """Job parameters (each a key of ``[workload]``)."""

    jobs: int = 20000
    mean_interarrival: float = 1.5
    execution: tuple[float, float] = (5.0, 100.0)  # bounded Pareto limits, on a machine of `bench` MIPS
    pareto_shape: float = 1.0
    size: tuple[int, int] = (1, 10)
    size_law: str = "uniform"  # or "log" (Fig. 7): see the module docstring
    deadline_ratio: tuple[float, float] = (0.0, 5.0)
    bench: float = 1.0
    placement: str = "spread"


@dataclass(frozen=True)
class MuscleGrid:
    """Platform parameters (each a key of ``[platform]``)."""

    sizes: tuple[int, ...] = (20, 16, 12, 10)
    rates: tuple[float, ...] = (1.0, 1.2, 1.4, 1.6)
    mips: float = 1.0
    latency: float = 0.1
    policies: tuple[str, ...] = ()  # a local policy spec per cluster (Fig. 6: TITAN's weights); (): [local]


def bounded_pareto(rng: np.random.Generator, low: float, high: float, shape: float, n: int) -> np.ndarray:
    """Inverse-CDF draws from the Pareto law of ``shape`` truncated to [low, high]."""
    u = rng.random(n)
    ratio = (low / high) ** shape
    return low / (1.0 - u * (1.0 - ratio)) ** (1.0 / shape)


SIZE_LAWS = ("uniform", "log")


def job_sizes(rng: np.random.Generator, bounds: tuple[int, int], law: str, n: int) -> np.ndarray:
    """``n`` sizes on ``bounds`` (inclusive) under ``law`` (see the module docstring)."""
    low, high = bounds
    if law == "uniform":
        return rng.integers(low, high + 1, n)
    if law == "log":
        return np.minimum(np.floor(low * ((high + 1) / low) ** rng.random(n)), high).astype(np.int64)
    raise ValueError(f"size_law: {law!r} is not one of {SIZE_LAWS}")


def size_mean(bounds: tuple[int, int], law: str) -> float:
    """The expected size under ``law``, which the offered load needs.

    ``log``: the sum of ``k x P(size = k)``, ``P(size = k) = log((k + 1) / k) / log((high + 1) / low)``.
    """
    low, high = bounds
    if law == "log":
        k = np.arange(low, high + 1)
        return float(np.sum(k * np.log((k + 1) / k)) / np.log((high + 1) / low))
    return (low + high) / 2


def jobs(spec: MuscleJobs, rng: np.random.Generator, platform: Platform) -> pa.Table:
    n = spec.jobs
    gaps = rng.exponential(spec.mean_interarrival, n) if spec.mean_interarrival > 0 else np.zeros(n)
    submit = np.cumsum(gaps) - (gaps[0] if n else 0.0)
    estimate = bounded_pareto(rng, *spec.execution, spec.pareto_shape, n)
    size = job_sizes(rng, spec.size, spec.size_law, n)
    ratio = rng.uniform(*spec.deadline_ratio, n)
    cpus = np.array([c.cpus for c in platform.clusters])
    slowest = np.array([min(m.mips for m in c.machines) for c in platform.clusters])
    # the longest execution time among the clusters that can hold the job (the job's own time if none)
    times = np.where(cpus[None, :] >= size[:, None], spec.bench / slowest[None, :], 0.0).max(axis=1)
    longest = estimate * np.where(times > 0, times, 1.0)
    return job_table(
        np.arange(1, n + 1),
        submit,
        size,
        estimate,
        bench=spec.bench,
        deadline=submit + longest * (1.0 + ratio),
        placement=spec.placement,
    )


def clusters(spec: MuscleGrid, rng: np.random.Generator) -> list[dict]:
    if len(spec.sizes) != len(spec.rates):
        raise ValueError(
            f"sizes ({len(spec.sizes)}) and rates ({len(spec.rates)}) must have one entry per cluster"
        )
    if spec.policies and len(spec.policies) != len(spec.sizes):
        raise ValueError(
            f"policies ({len(spec.policies)}) must have one entry per cluster ({len(spec.sizes)}) or none"
        )
    tables = [
        {
            "name": f"C{i}",
            "latency": spec.latency,
            "machines": [{"count": int(size), "cpus": 1, "mips": float(spec.mips * rate)}],
        }
        for i, (size, rate) in enumerate(zip(spec.sizes, spec.rates, strict=True), 1)
    ]
    for table, policy in zip(tables, spec.policies, strict=False):
        table["policy"] = policy
    return tables
