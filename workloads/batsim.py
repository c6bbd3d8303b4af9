"""A run's schedule as a Batsim jobs CSV, the file evalys' ``JobSet.from_csv`` reads.

Batsim's own ``out_jobs.csv`` columns, in its order and formats: times as C's
``%f`` (six decimals), ``success`` 1 or 0, ``allocated_resources`` an interval
set (``0-3 5``), ``consumed_energy`` -1 (not simulated), ``metadata`` always
quoted; a rejected job has empty times and no resources. The workload is
``w0`` (Batsim's name for its first workload) and ``profile`` is empty.
``final_state``: ``COMPLETED_SUCCESSFULLY`` (finished),
``COMPLETED_WALLTIME_REACHED`` (killed at its estimate),
``COMPLETED_KILLED`` (ran, then lost to failures) or ``REJECTED`` (never ran).
``metadata`` holds the cluster the job was sent to (it ran there, or was rejected there).

Resources are CPUs, numbered from 0 across the whole grid: cluster by cluster
in the scenario's order, machine by machine in the cluster's order, each
machine's CPUs (PEs) in turn; so ``requested_number_of_resources`` (the
job's CPUs) is the size of its ``allocated_resources``. A job's resources are
those of its last placement. Times are rounded to the six decimals written
first, and the columns derived from them computed from the rounded values:
``execution_time = finish_time - starting_time``, ``waiting_time =
starting_time - submission_time``, ``turnaround_time = finish_time -
submission_time``, ``stretch = turnaround_time / execution_time``. A job that
ran but never finished ends at its start plus the seconds it ran.
"""

from __future__ import annotations

from os import PathLike
from pathlib import Path

import numpy as np
import pyarrow as pa

from emulator.core.model import platform_of
from emulator.data.rundir import replacing

__all__ = ["COLUMNS", "intervals", "write_batsim"]

COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)
"""Batsim's ``out_jobs.csv`` header (Batsim 3/4, ``JobsTracer``)."""
WORKLOAD = "w0"
NO_ENERGY = "-1.000000"


def write_batsim(table: pa.Table, path: str | PathLike[str]) -> int:
    """Write a run's jobs table as a Batsim jobs CSV (atomically); returns the job count."""
    path = Path(path)
    resources = _resources(table, path)
    starts, ends, states = _times(table)
    submit = np.round(table.column("submit").to_numpy(), 6)
    rows = zip(
        table.column("id").to_pylist(),
        submit.tolist(),
        table.column("cpus").to_pylist(),
        table.column("estimate").to_pylist(),
        states,
        starts.tolist(),
        ends.tolist(),
        resources,
        table.column("cluster").to_pylist(),
        strict=True,
    )
    lines = [",".join(COLUMNS)] + [_line(*row) for row in rows]
    with replacing(path) as part:
        part.write_text("".join(line + "\n" for line in lines))
    return table.num_rows


def _times(table: pa.Table) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each job's start and end (six decimals; NaN: it never ran) and its Batsim final state."""
    start = table.column("start").to_numpy()
    finish = table.column("finish").to_numpy()
    ran = table.column("run_time").to_numpy()
    started, finished = ~np.isnan(start), ~np.isnan(finish)
    killed = np.asarray(table.column("status").to_pylist(), dtype=object) == "killed"
    start = np.round(start, 6)
    end = np.where(finished, np.round(finish, 6), np.round(start + np.nan_to_num(ran), 6))
    states = np.select(
        [finished, killed, started],
        ["COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "COMPLETED_KILLED"],
        "REJECTED",
    )
    return start, end, states.tolist()


def _line(
    job: int,
    submit: float,
    cpus: int,
    estimate: float,
    state: str,
    start: float,
    end: float,
    resources: str,
    cluster: str | None,
) -> str:
    """One job's CSV line in Batsim's formats."""
    success = int(state == "COMPLETED_SUCCESSFULLY")
    head = f"{job},{WORKLOAD},,{submit:f},{cpus},{estimate:f},{success},{state}"
    metadata = '"' + (cluster or "").replace('"', '""') + '"'
    if state == "REJECTED":
        return f"{head},,,,,,,,,{metadata}"
    run, wait, turnaround = end - start, start - submit, end - submit
    stretch = turnaround / run if run > 0 else float("inf")
    timing = f"{start:f},{run:f},{end:f},{wait:f},{turnaround:f},{stretch:f}"
    return f"{head},{timing},{resources},{NO_ENERGY},{metadata}"


def _resources(table: pa.Table, path: Path) -> list[str]:
    """Each job's CPUs as an interval set of grid-wide resource numbers (module docstring)."""
    platform = platform_of(table)
    if platform is None or "pes" not in table.column_names:
        raise ValueError(
            f"{path}: a Batsim jobs CSV needs a run's jobs table recording its platform "
            "(a run's jobs.arrow; replay an older run to get one)"
        )
    bases = {}  # each machine's first resource number, by cluster
    first = 0
    for name, cpus in platform:
        bases[name] = first + np.concatenate([[0], np.cumsum(cpus, dtype=np.int64)])[:-1]
        first += int(sum(cpus))
    sets = []
    for cluster, machines, pes in zip(
        table.column("cluster").to_pylist(),
        table.column("machines").to_pylist(),
        table.column("pes").to_pylist(),
        strict=True,
    ):
        ids = bases[cluster][np.asarray(machines, dtype=np.int64)] + np.asarray(pes) if pes else None
        sets.append("" if ids is None else intervals(ids))
    return sets


def intervals(resources: np.ndarray) -> str:
    """Resource numbers as Batsim's interval set, runs as ``a-b``, separated by spaces.

    >>> intervals(np.array([5, 0, 1, 2, 3, 9, 10]))
    '0-3 5 9-10'
    """
    ids = np.unique(resources)
    breaks = np.flatnonzero(np.diff(ids) != 1)
    firsts = ids[np.concatenate([[0], breaks + 1])]
    lasts = ids[np.concatenate([breaks, [ids.size - 1]])]
    return " ".join(
        str(a) if a == b else f"{a}-{b}" for a, b in zip(firsts.tolist(), lasts.tolist(), strict=True)
    )
