"""Offered load of a generated scenario, from its generators' parameters, and the arrival rate for a load.

The papers state their load as a mean inter-arrival time, whose meaning
depends on every other parameter; the reproductions compare operating points
by the *offered load* instead::

    offered load = E[work of a job] / (mean inter-arrival x capacity)
    work of a job = CPUs x estimate x bench        (CPU x MI)
    capacity      = sum over the platform's CPUs of their MIPS   (CPU x MI per second)

that is, the CPU-seconds the jobs request per second over the CPU-seconds the
platform offers per second, CPU-seconds of machines of different speed made
comparable by their MIPS (a job's ``estimate`` is its time on a machine of its
``bench`` MIPS). Above 1 the queues grow for as long as jobs arrive. Both
expectations come from the generators' parameters, not from one seed's draw,
so a load names the same arrival rate for every seed; input and output
transfers are not counted (they use links, not CPUs).
"""

from __future__ import annotations

import math
from functools import singledispatch
from pathlib import Path
from typing import Any

from workloads.generators import PLATFORMS, WORKLOADS
from workloads.generators.licensed_grid import LicensedGrid
from workloads.generators.mcrs import McrsGrid, McrsJobs
from workloads.generators.muscle import MuscleGrid, MuscleJobs, size_mean
from workloads.sources import read_spec
from workloads.synthetic import SyntheticSpec

from ..core.config import Table
from .scenario import apply_override, read_raw

__all__ = ["generator_specs", "interarrival_for_load", "offered_load", "pareto_mean"]


def pareto_mean(low: float, high: float, shape: float) -> float:
    """Mean of the bounded Pareto law of ``shape`` on [low, high] (MUSCLE's execution times)."""
    if shape == 1.0:
        return low * high * math.log(high / low) / (high - low)
    return (
        shape
        * low**shape
        * (low ** (1 - shape) - high ** (1 - shape))
        / ((shape - 1) * (1 - (low / high) ** shape))
    )


def _mean(bounds: tuple[float, float]) -> float:
    """Mean of a uniform range (integer ranges are inclusive, so their mean is the same midpoint)."""
    return (bounds[0] + bounds[1]) / 2


@singledispatch
def job_work(spec: Any) -> float:
    """Expected work of one job, in CPU x MI, from a workload generator's parameters."""
    raise TypeError(f"no offered load for workload parameters {type(spec).__name__}")


@job_work.register
def _(spec: SyntheticSpec) -> float:
    return _mean(spec.cpus) * _mean(spec.estimate) * _mean(spec.bench)  # drawn independently


@job_work.register
def _(spec: McrsJobs) -> float:
    return _mean(spec.nodes) * _mean(spec.length)  # estimate = length / bench: work = length


@job_work.register
def _(spec: MuscleJobs) -> float:
    return size_mean(spec.size, spec.size_law) * pareto_mean(*spec.execution, spec.pareto_shape) * spec.bench


@singledispatch
def capacity(spec: Any) -> float:
    """Expected CPU x MIPS of a platform generator's clusters."""
    raise TypeError(f"no offered load for platform parameters {type(spec).__name__}")


@capacity.register
def _(spec: LicensedGrid) -> float:
    return sum(spec.clusters) * _mean(spec.cpus) * _mean(spec.mips)


@capacity.register
def _(spec: McrsGrid) -> float:
    return spec.clusters * _mean(spec.nodes) * spec.cpus_per_node * _mean(spec.mips)


@capacity.register
def _(spec: MuscleGrid) -> float:
    return spec.mips * sum(size * rate for size, rate in zip(spec.sizes, spec.rates, strict=True))


def generator_specs(scenario: str | Path, overrides: list[str] = ()) -> tuple[Any, Any]:
    """The workload and platform generators' parameters of a scenario after ``--set`` overrides."""
    raw, source, _ = read_raw(scenario)
    for item in overrides:
        apply_override(raw, item)
    specs = []
    for key, registry in (("workload", WORKLOADS), ("platform", PLATFORMS)):
        table = Table(raw.get(key, {}), source, key)
        name = table.data.get("source")
        if name not in registry:
            raise ValueError(f"{source}: [{key}] source {name!r} is not a generator: no offered load")
        specs.append(read_spec(table, registry[name].defaults))
    return specs[0], specs[1]


def offered_load(scenario: str | Path, overrides: list[str] = ()) -> float:
    """The scenario's offered load (module docstring); ``inf`` when every job arrives at once."""
    jobs, platform = generator_specs(scenario, overrides)
    if jobs.mean_interarrival <= 0:
        return math.inf
    return job_work(jobs) / (jobs.mean_interarrival * capacity(platform))


def interarrival_for_load(scenario: str | Path, load: float, overrides: list[str] = ()) -> float:
    """The mean inter-arrival time that gives the scenario (after ``overrides``) offered load ``load``."""
    if load <= 0:
        raise ValueError(f"offered load {load}: expected a number above 0")
    jobs, platform = generator_specs(scenario, overrides)
    return job_work(jobs) / (load * capacity(platform))
