"""Seed 004's MCP and PB per round (eqs. 7 and 8), from a run's jobs table.

``summary.json``'s ``mcp`` judges each cluster's whole realized schedule
(:func:`emulator.data.metrics.cluster_cp`). The paper instead records each
cluster's CP "each time MUSCLE sends seed schedules", takes ``MCP = sum_i CP_i
p_i / p`` over that round's jobs (eq. 7) and plots "the average of the MCP
calculated each time". Here a round is ``batch`` consecutive jobs in
submission order, the same rounds for every meta policy (DLL and WRAND send
one job at a time, so the paper can only have judged them on the rounds its
collector made); ``CP_i`` is the CP of the round's jobs on cluster ``i``:
makespan from their first start to their last finish, idle time the CPU time
within it they leave unused (other rounds' jobs on those CPUs count as idle:
the seed schedule is judged on its own packing), and their summed
over-deadline, with the cluster's weights (:func:`emulator.data.metrics.cp_weights_of`).
Only finished jobs count.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.model import Platform
from .metrics import cp_weights_of

__all__ = ["round_mcp_pb"]


def round_mcp_pb(jobs: pa.Table, platform: Platform, batch: int) -> tuple[float | None, float | None]:
    """Mean over rounds of ``batch`` jobs of eq. 7's MCP and eq. 8's PB (None without a round)."""
    names = [c.name for c in platform.clusters]
    finished = jobs.filter(pc.equal(jobs.column("status"), "finished")).sort_by("submit")
    if finished.num_rows == 0:
        return None, None
    col = {k: finished.column(k).to_numpy(zero_copy_only=False) for k in ("start", "finish", "deadline")}
    cpus = finished.column("cpus").to_numpy().astype(float)
    cluster = np.array([names.index(c) for c in finished.column("cluster").to_pylist()])
    rounds = np.arange(finished.num_rows) // batch
    cps = _round_cp(rounds, cluster, cpus, col, platform)  # rounds x clusters, NaN where no job
    counts = np.zeros_like(cps)
    np.add.at(counts, (rounds, cluster), 1.0)
    mcp = np.nansum(cps * counts, axis=1) / counts.sum(axis=1)
    used = (counts > 0).sum(axis=1) > 1
    pb = np.nanstd(cps[used], axis=1, ddof=1) if used.any() else np.array([])
    return float(mcp.mean()), (float(pb.mean()) if pb.size else None)


def _round_cp(rounds: np.ndarray, cluster: np.ndarray, cpus: np.ndarray, col: dict, platform: Platform):
    """CP of each (round, cluster)'s jobs, NaN where the round sent the cluster none."""
    shape = (int(rounds.max()) + 1, len(platform.clusters))
    first, last = np.full(shape, np.inf), np.full(shape, -np.inf)
    np.minimum.at(first, (rounds, cluster), col["start"])
    np.maximum.at(last, (rounds, cluster), col["finish"])
    busy, over = np.zeros(shape), np.zeros(shape)
    np.add.at(busy, (rounds, cluster), cpus * (col["finish"] - col["start"]))
    np.add.at(over, (rounds, cluster), np.maximum(0.0, np.nan_to_num(col["finish"] - col["deadline"])))
    with np.errstate(invalid="ignore"):  # inf - inf where a round sent a cluster nothing
        makespan = np.where(np.isfinite(first), last - first, np.nan)
    size = np.array([c.cpus for c in platform.clusters], dtype=float)
    idle = np.maximum(0.0, size * makespan - busy)
    weights = np.array([cp_weights_of(c) for c in platform.clusters])  # clusters x (makespan, idle, over)
    total = weights[:, 0] * makespan + weights[:, 1] * idle + weights[:, 2] * over
    return total / weights.sum(axis=1)
