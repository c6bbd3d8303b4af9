"""A synthetic job stream in the style of the papers' generators, vectorized with numpy.

Exponential inter-arrival times; estimates, CPUs and benchmarks uniform in
ranges; actual runtime = estimate x a uniform factor (traces show estimates
that are rarely exact); a share of jobs needs licenses, a share has deadlines
``submit + estimate + margin``. Every draw comes from the generator passed in,
so the stream is a function of the scenario seed alone. The two-level and CS
2.0 experiments use this job model with their own ranges
(:mod:`workloads.generators`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from emulator.core.model import PLACEMENTS, USER_CLASSES, Job

from .table import job_table, labels, to_jobs

LICENSE_ROWS = 1 << 16
"""Jobs whose license draws are sorted at once (bounds memory for million-job streams)."""


@dataclass(frozen=True)
class SyntheticSpec:
    """Parameters of the generator (each a key of ``[workload]`` in a scenario file)."""

    jobs: int = 1000
    mean_interarrival: float = 10.0
    estimate: tuple[float, float] = (100.0, 1000.0)
    runtime_factor: tuple[float, float] = (0.5, 1.0)
    cpus: tuple[int, int] = (1, 4)
    bench: tuple[float, float] = (100.0, 500.0)
    license_share: float = 0.0
    licenses_per_job: tuple[int, int] = (1, 2)
    deadline_share: float = 0.0
    margin: tuple[float, float] = (1000.0, 5000.0)
    in_bytes: tuple[float, float] = (0.0, 0.0)
    out_bytes: tuple[float, float] = (0.0, 0.0)
    placement: str = "single"
    user_classes: tuple[float, float, float] = (1.0, 0.0, 0.0)
    users: int = 10
    checkpointable_share: float = 0.0


def columns(spec: SyntheticSpec, rng: np.random.Generator, license_names: list[str]) -> pa.Table:
    """Draw ``spec.jobs`` jobs as a jobs table; ``license_names`` are the license types jobs may ask for."""
    if spec.placement not in PLACEMENTS:
        raise ValueError(f"placement {spec.placement!r}: expected one of {PLACEMENTS}")
    n = spec.jobs
    gaps = rng.exponential(spec.mean_interarrival, n) if spec.mean_interarrival > 0 else np.zeros(n)
    submit = np.cumsum(gaps) - (gaps[0] if n else 0.0)
    estimate = rng.uniform(*spec.estimate, n)
    runtime = estimate * rng.uniform(*spec.runtime_factor, n)
    cpus = rng.integers(spec.cpus[0], spec.cpus[1] + 1, n)
    bench = rng.uniform(*spec.bench, n)
    deadline = np.where(
        rng.random(n) < spec.deadline_share, submit + estimate + rng.uniform(*spec.margin, n), math.inf
    )
    in_bytes = rng.uniform(*spec.in_bytes, n)
    out_bytes = rng.uniform(*spec.out_bytes, n)
    user = rng.integers(0, max(spec.users, 1), n)
    weights = np.asarray(spec.user_classes, dtype=float)
    user_class = rng.choice(len(USER_CLASSES), n, p=weights / weights.sum())
    checkpointable = rng.random(n) < spec.checkpointable_share
    licenses = pick_licenses(rng, license_names, rng.random(n) < spec.license_share, spec.licenses_per_job)
    return job_table(
        np.arange(1, n + 1),
        submit,
        cpus,
        estimate,
        runtime,
        bench=bench,
        licenses=licenses,
        deadline=deadline,
        in_bytes=in_bytes,
        out_bytes=out_bytes,
        user=user,
        user_class=labels(user_class, USER_CLASSES),
        checkpointable=checkpointable,
        placement=spec.placement,
    )


def generate(spec: SyntheticSpec, rng: np.random.Generator, license_names: list[str]) -> list[Job]:
    """Draw ``spec.jobs`` jobs; ``license_names`` are the license types jobs may ask for."""
    return to_jobs(columns(spec, rng, license_names))


def pick_licenses(
    rng: np.random.Generator, names: list[str], needs: np.ndarray, per_job: tuple[int, int]
) -> pa.Array:
    """Each job in ``needs`` asks for ``per_job`` (uniform) distinct types, listed in name order.

    Draws the count for every job, then one random key per job and license type
    (in blocks of rows, the same numbers as one draw): a job takes the types
    with its smallest keys. Jobs not in ``needs``, or with no types to choose
    from, ask for none.
    """
    n, types = needs.size, len(names)
    counts = rng.integers(per_job[0], per_job[1] + 1, n)
    if not types:
        return pa.ListArray.from_arrays(np.zeros(n + 1, np.int32), pa.array([], pa.string()))
    take = np.where(needs, np.minimum(counts, types), 0)
    name_rank = np.argsort(np.argsort(np.asarray(names, dtype=object)))
    by_rank = np.argsort(name_rank)
    chosen = []
    for first in range(0, n, LICENSE_ROWS):
        rows = slice(first, min(first + LICENSE_ROWS, n))
        order = np.argsort(rng.random((rows.stop - rows.start, types)), axis=1)
        picked = np.where(np.arange(types) < take[rows, None], name_rank[order], types)
        picked.sort(axis=1)
        chosen.append(picked[picked < types])
    values = by_rank[np.concatenate(chosen)] if chosen else np.zeros(0, np.int64)
    offsets = np.zeros(n + 1, np.int32)
    np.cumsum(take, out=offsets[1:])
    return pa.ListArray.from_arrays(offsets, labels(values, names))
