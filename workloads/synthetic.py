"""A synthetic job stream in the style of the papers' generators, vectorized with numpy.

Exponential inter-arrival times; estimates, CPUs and benchmarks uniform in
ranges; actual runtime = estimate x a uniform factor (traces show estimates
that are rarely exact); a share of jobs needs licenses, a share has deadlines
``submit + estimate + margin``. Every draw comes from the generator passed in,
so the stream is a function of the scenario seed alone.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from emulator.model import PLACEMENTS, USER_CLASSES, Job


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


def generate(spec: SyntheticSpec, rng: np.random.Generator, license_names: list[str]) -> list[Job]:
    """Draw ``spec.jobs`` jobs; ``license_names`` are the license types jobs may ask for."""
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
    licenses = _licenses(spec, rng, license_names, n)
    return [
        Job(
            id=i + 1,
            submit=float(submit[i]),
            cpus=int(cpus[i]),
            estimate=float(estimate[i]),
            runtime=float(runtime[i]),
            bench=float(bench[i]),
            licenses=licenses[i],
            deadline=float(deadline[i]),
            in_bytes=float(in_bytes[i]),
            out_bytes=float(out_bytes[i]),
            user=int(user[i]),
            user_class=USER_CLASSES[user_class[i]],
            checkpointable=bool(checkpointable[i]),
            placement=spec.placement,
        )
        for i in range(n)
    ]


def _licenses(
    spec: SyntheticSpec, rng: np.random.Generator, names: list[str], n: int
) -> list[tuple[str, ...]]:
    """Each job needing licenses asks for distinct types, sorted (so equal needs compare equal)."""
    needs = rng.random(n) < spec.license_share
    counts = rng.integers(spec.licenses_per_job[0], spec.licenses_per_job[1] + 1, n)
    keys = rng.random((n, len(names))) if names else np.zeros((n, 0))
    result: list[tuple[str, ...]] = []
    for i in range(n):
        if not needs[i] or not names:
            result.append(())
            continue
        chosen = np.argsort(keys[i])[: min(int(counts[i]), len(names))]
        result.append(tuple(sorted(names[k] for k in chosen)))
    return result
