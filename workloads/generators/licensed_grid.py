"""Clusters of SMP machines with random CPUs and MIPS, and license pools sized by a ratio.

The platform of the two-level and CS 2.0 experiments: each cluster has its
number of machines; each machine draws its CPUs and MIPS uniformly and can
run each license type with probability ``license_suitability``; each
cluster's pool of a license type holds ``round(ratio x machines able to run
it)`` copies, ``ratio`` uniform in ``license_ratio`` per cluster and type
("licenses ratio: the maximum number of copies concurrently usable, as a
percentage of the machines able to run it"). A type with no copy left is
left out of the pool (jobs needing it cannot go there).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class LicensedGrid:
    """Parameters (each a key of ``[platform]`` in a scenario file)."""

    clusters: tuple[int, ...] = (120, 60, 30, 15)
    cpus: tuple[int, int] = (4, 32)
    mips: tuple[float, float] = (100.0, 500.0)
    licenses: int = 20
    license_ratio: tuple[float, float] = (0.5, 0.7)
    license_suitability: float = 1.0
    license_per_machine: bool = False
    latency: float = 1.0
    bandwidth: float = math.inf


def license_names(count: int) -> list[str]:
    return [f"lic{i:02d}" for i in range(1, count + 1)]


def clusters(spec: LicensedGrid, rng: np.random.Generator) -> list[dict]:
    """One cluster table per entry of ``spec.clusters``, named ``cluster1``, ``cluster2``..."""
    names = license_names(spec.licenses)
    tables = []
    for index, machines in enumerate(spec.clusters, 1):
        cpus = rng.integers(spec.cpus[0], spec.cpus[1] + 1, machines)
        mips = rng.uniform(*spec.mips, machines)
        able = rng.random((machines, len(names))) < spec.license_suitability
        ratio = rng.uniform(*spec.license_ratio, len(names))
        copies = np.rint(ratio * able.sum(axis=0)).astype(int)
        every = spec.license_suitability >= 1.0
        table = {
            "name": f"cluster{index}",
            "latency": spec.latency,
            "license_per_machine": spec.license_per_machine,
            "licenses": {name: int(c) for name, c in zip(names, copies, strict=True) if c > 0},
            "machines": [
                {"cpus": int(c), "mips": float(m)}
                | ({} if every else {"licenses": [n for n, ok in zip(names, row, strict=True) if ok]})
                for c, m, row in zip(cpus, mips, able, strict=True)
            ],
        }
        if math.isfinite(spec.bandwidth):
            table["bandwidth"] = spec.bandwidth
        tables.append(table)
    return tables
