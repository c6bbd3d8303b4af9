"""Shared fixtures: where ``shared/`` (GridSim references, traces) is, and small scenario builders."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from emulator.data.metrics import cluster_codes

SHARED = Path(os.environ.get("GRIDEMU_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def shared_path(*parts: str) -> Path:
    """A file under ``shared/``; the test is skipped, saying why, when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: set GRIDEMU_SHARED to the shared/ folder to run this test")
    return path


def machine(cpus: int, mips: float = 1.0, count: int = 1, licenses: list[str] | None = None) -> dict:
    m = {"cpus": cpus, "mips": mips, "count": count}
    if licenses is not None:
        m["licenses"] = licenses
    return m


def job(id: int, submit: float, cpus: int, runtime: float, estimate: float | None = None, **extra) -> dict:
    """A gridlet table; ``bench`` defaults to 1 so durations on a 1-MIPS machine equal the runtime."""
    return {
        "id": id,
        "submit": submit,
        "cpus": cpus,
        "runtime": runtime,
        "estimate": runtime if estimate is None else estimate,
        **extra,
    }


def run_scenario(
    tmp_path: Path,
    clusters: list[dict],
    jobs: list[dict],
    meta: str = "least-load",
    seed: int = 1,
    **workload,
) -> dict[int, dict]:
    """Run a small scenario; each job's row of ``jobs.arrow`` by id."""
    from emulator import run
    from emulator.data.scenario import parse

    raw = {
        "name": "t",
        "seed": seed,
        "meta": {"policy": meta},
        "clusters": clusters,
        "workload": {"source": "gridlets", "gridlets": jobs, **workload},
    }
    result = run(parse(raw, "test scenario"), tmp_path / "run")
    return {row["id"]: row for row in result.jobs.to_pylist()}


def one_cluster(policy: str, machines: list[dict], licenses: dict | None = None, **extra) -> list[dict]:
    """A single cluster named ``c`` that jobs enter directly (``site = "c"``)."""
    return [{"name": "c", "policy": policy, "machines": machines, "licenses": licenses or {}, **extra}]


def indexed(events: pa.Table) -> list[dict]:
    """The event rows as dicts, each with its cluster's index in the platform (-1: none), as the tests
    that list rows compare them (``events.cluster`` holds the names)."""
    codes = cluster_codes(events).tolist()
    return [row | {"cluster": code} for row, code in zip(events.to_pylist(), codes, strict=True)]
