"""The papers' generators: job streams and platforms, every distribution a parameter.

Two registries map a name to a generator: :data:`WORKLOADS` (``[workload]
source = NAME`` in a scenario file) and :data:`PLATFORMS` (``[platform]
source = NAME``). Each generator is a pure function of its parameters (a
frozen dataclass whose defaults are the paper's values) and a numpy random
generator seeded from the scenario seed alone; it returns a jobs table
(:mod:`workloads.table`) or cluster tables (the ``[[clusters]]`` of a
scenario file, validated like hand-written ones).

| name | jobs | platform |
|---|---|---|
| ``synthetic`` | :mod:`workloads.synthetic` (quickstart's ranges) | - |
| ``two-level`` | the same model, seeds 000/001's ranges | 120/60/30/15 SMP machines, 20 licenses |
| ``cs2`` | the same model, seed 002's ranges | 150 machines, 20 licenses, 90% suitability |
| ``mcrs`` | rigid jobs in MI with input/output files | 10-50 clusters of 1-CPU nodes, per-link bandwidth |
| ``muscle`` | bounded-Pareto rigid jobs, deadline ratios | 20/16/12/10 CPUs at service rates 1.0-1.6 |
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from emulator.core.model import Platform

from .. import synthetic
from . import cs2, licensed_grid, mcrs, muscle, two_level

__all__ = ["PLATFORMS", "WORKLOADS", "PlatformGenerator", "WorkloadGenerator"]


@dataclass(frozen=True)
class WorkloadGenerator:
    """A job-stream generator: ``draw(params, rng, platform) -> jobs table``."""

    summary: str
    defaults: Any
    draw: Callable[[Any, np.random.Generator, Platform], pa.Table]


@dataclass(frozen=True)
class PlatformGenerator:
    """A platform generator: ``draw(params, rng) -> [cluster tables]``."""

    summary: str
    defaults: Any
    draw: Callable[[Any, np.random.Generator], list[dict]]


def _with_licenses(spec: synthetic.SyntheticSpec, rng: np.random.Generator, platform: Platform) -> pa.Table:
    """The synthetic model asks for the license types the platform's clusters hold."""
    names = sorted({lic for cluster in platform.clusters for lic in cluster.licenses})
    return synthetic.columns(spec, rng, names)


WORKLOADS: dict[str, WorkloadGenerator] = {
    "synthetic": WorkloadGenerator(
        "uniform ranges, exponential arrivals", synthetic.SyntheticSpec(), _with_licenses
    ),
    "two-level": WorkloadGenerator(two_level.__doc__.splitlines()[0], two_level.JOBS, _with_licenses),
    "cs2": WorkloadGenerator(cs2.__doc__.splitlines()[0], cs2.JOBS, _with_licenses),
    "mcrs": WorkloadGenerator(mcrs.__doc__.splitlines()[0], mcrs.McrsJobs(), mcrs.jobs),
    "muscle": WorkloadGenerator(muscle.__doc__.splitlines()[0], muscle.MuscleJobs(), muscle.jobs),
}
PLATFORMS: dict[str, PlatformGenerator] = {
    "two-level": PlatformGenerator(two_level.__doc__.splitlines()[0], two_level.GRID, licensed_grid.clusters),
    "cs2": PlatformGenerator(cs2.__doc__.splitlines()[0], cs2.GRID, licensed_grid.clusters),
    "mcrs": PlatformGenerator(mcrs.__doc__.splitlines()[0], mcrs.McrsGrid(), mcrs.clusters),
    "muscle": PlatformGenerator(muscle.__doc__.splitlines()[0], muscle.MuscleGrid(), muscle.clusters),
}
