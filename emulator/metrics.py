"""A run's metrics (POLICIES.md, "Metrics"), computed from its jobs and events tables.

Traces can hold millions of rows, so everything is vectorized with numpy: the only
Python loops are over clusters. The result is plain JSON (``summary.json``):
numbers are Python ``int``/``float``, and a metric that is undefined (no finished
job, no deadline job, no license, zero-length span) is ``None``, never NaN or inf.

Per-job metrics (wait, slowdown, deadlines, makespan, utilization) come from the
jobs table; system and license usage come from the events, whose arrive, start and
finish rows (joined to the jobs by id for CPUs and licenses) give the time series.
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .model import Cluster, Platform

BOUND = 10.0
"""Bounded slowdown's runtime floor (s): the field's usual value, so tiny jobs don't dominate."""

ENTER, LEAVE = ("arrive",), ("finish", "reject")
"""Event kinds that bring a job into a cluster's system (queued or running) or take it out."""

RUN, STOP = ("start", "resume"), ("finish", "preempt")
"""Event kinds that make a job's CPUs and license copies busy, or free them."""

FLOAT, INT = pa.float64(), pa.int64()

METRICS = (
    "jobs_finished",
    "mean_wait",
    "max_wait",
    "mean_turnaround",
    "mean_slowdown",
    "mean_slowdown_no_deadline",
    "mean_bounded_slowdown",
    "late_jobs",
    "late_percent",
    "over_deadline",
    "makespan",
    "throughput",
    "system_usage",
    "license_usage",
    "workload_share",
    "utilization",
)
"""The keys of the grid's and of each cluster's metrics, in output order."""


def summarize(jobs: pa.Table, events: pa.Table, platform: Platform) -> dict:
    """The run's metrics: job counts, then the same metrics for the grid and per cluster.

    ``{"jobs": {"total", "finished", "rejected"}, "grid": {...}, "clusters": {name: {...}}}``,
    clusters in platform order; see :func:`_job_metrics` and :func:`_usage` for the metrics.
    License usage counts one copy per license a job needs (``len(licenses)``), per job,
    even on clusters with ``license_per_machine`` (CS 2.0 counts one per machine used):
    that subtlety is ignored here.
    """
    cols = _job_columns(jobs)
    series = _usage_deltas(events, cols)
    clusters = platform.clusters
    total_work = cols["work"][cols["reached"]].sum()
    grid = _job_metrics(cols, np.ones(len(jobs), dtype=bool), sum(c.cpus for c in clusters))
    grid |= _usage_metrics(series, series["cluster"] >= 0, clusters)
    grid["workload_share"] = 1.0 if total_work > 0 else None
    grid = {key: grid[key] for key in METRICS}
    per_cluster = {}
    for index, cluster in enumerate(clusters):
        on = _equals(jobs, "cluster", cluster.name)
        metrics = _job_metrics(cols, on, cluster.cpus)
        metrics |= _usage_metrics(series, series["cluster"] == index, (cluster,))
        metrics["workload_share"] = _ratio(cols["work"][on].sum(), total_work)
        per_cluster[cluster.name] = {key: metrics[key] for key in METRICS}
    return {
        "jobs": {
            "total": len(jobs),
            "finished": int(cols["finished"].sum()),
            "rejected": int(_equals(jobs, "status", "rejected").sum()),
        },
        "grid": grid,
        "clusters": per_cluster,
    }


def _job_columns(jobs: pa.Table) -> dict[str, np.ndarray]:
    """The jobs columns the metrics need, as numpy (nulls as NaN, so arithmetic stays vectorized)."""
    lengths = pc.fill_null(pc.list_value_length(jobs.column("licenses")), 0)
    return {
        "id": numbers(jobs, "id", INT),
        "submit": numbers(jobs, "submit"),
        "start": numbers(jobs, "start"),
        "finish": numbers(jobs, "finish"),
        "deadline": numbers(jobs, "deadline"),
        "cpus": numbers(jobs, "cpus", INT),
        "licenses": np.asarray(lengths.to_numpy(), dtype=np.int64),
        "work": numbers(jobs, "estimate") * numbers(jobs, "bench"),
        "finished": _equals(jobs, "status", "finished"),
        "reached": pc.is_valid(jobs.column("cluster")).to_numpy(),
    }


def _job_metrics(cols: dict[str, np.ndarray], selected: np.ndarray, cpus: int) -> dict:
    """Per-job metrics over the finished jobs among ``selected`` (rejected ones have no times).

    Slowdown ``(Tw + Te) / Te`` is undefined for a job with ``Te == 0``; such jobs are left
    out of the slowdown means (bounded slowdown still counts them). Deadlines are null
    (NaN here) or inf when a job has none.
    """
    done = selected & cols["finished"]
    submit, start, finish, deadline = (cols[k][done] for k in ("submit", "start", "finish", "deadline"))
    wait, run = start - submit, finish - start
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = (wait + run) / run
    bounded = bounded_slowdown(wait, run)
    has_deadline = np.isfinite(deadline)
    late = has_deadline & (finish > deadline)
    makespan = finish.max() - start.min() if done.any() else math.nan
    cpu_seconds = (cols["cpus"][done] * run).sum()
    return {
        "jobs_finished": int(done.sum()),
        "mean_wait": _mean(wait),
        "max_wait": _num(wait.max()) if done.any() else None,
        "mean_turnaround": _mean(finish - submit),
        "mean_slowdown": _mean(slowdown),
        "mean_slowdown_no_deadline": _mean(slowdown[~has_deadline]),
        "mean_bounded_slowdown": _mean(bounded),
        "late_jobs": int(late.sum()),
        "late_percent": _ratio(100.0 * late.sum(), has_deadline.sum()),
        "over_deadline": float(np.maximum(0.0, finish - deadline)[has_deadline].sum()),
        "makespan": _num(makespan),
        "throughput": _ratio(done.sum(), makespan),
        "utilization": _ratio(cpu_seconds, cpus * makespan),
    }


def bounded_slowdown(wait: np.ndarray, run: np.ndarray) -> np.ndarray:
    """``max(1, (Tw + Te) / max(Te, BOUND))`` per job: one definition for the metric and the plots."""
    return np.maximum(1.0, (wait + run) / np.maximum(run, BOUND))


def usage_series(jobs: pa.Table, events: pa.Table) -> dict[str, np.ndarray]:
    """The per-event usage changes behind system and license usage (see :func:`_usage_deltas`).

    Public so that the report's usage plots draw exactly what the SU and LU metrics integrate.
    """
    return _usage_deltas(events, _job_columns(jobs))


def _usage_deltas(events: pa.Table, cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each cluster event's change to CPUs/license copies in use and wanted, sorted by time.

    "Wanted" = needed by jobs in the cluster's system (arrived, not yet finished). A reject
    or finish takes a job out only if it had arrived at that cluster, so a job refused
    before arriving cannot drive a count negative.
    """
    kind = events.column("kind")
    cluster = numbers(events, "cluster", INT)
    keep = (cluster >= 0) & pc.is_in(kind, pa.array(ENTER + LEAVE + RUN + STOP)).to_numpy()
    events = events.filter(pa.array(keep))
    kind, cluster = events.column("kind"), cluster[keep]
    rows = rows_of(cols["id"], numbers(events, "job", INT))
    arrived_at = rows * (cluster.max(initial=0) + 1) + cluster  # one key per (job, cluster)
    is_arrive = is_in(kind, ENTER)
    leave = is_in(kind, LEAVE) & np.isin(arrived_at, arrived_at[is_arrive])
    wanted = is_arrive.astype(np.int64) - leave
    used = is_in(kind, RUN).astype(np.int64) - is_in(kind, STOP)
    time = numbers(events, "time")
    order = np.argsort(time, kind="stable")  # already sorted in traces; cheap insurance
    cpus, licenses = cols["cpus"][rows], cols["licenses"][rows]
    series = {
        "time": time,
        "cluster": cluster,
        "cpus_used": used * cpus,
        "cpus_wanted": wanted * cpus,
        "licenses_used": used * licenses,
        "licenses_wanted": wanted * licenses,
    }
    return {name: values[order] for name, values in series.items()}


def _usage_metrics(
    series: dict[str, np.ndarray], selected: np.ndarray, clusters: tuple[Cluster, ...]
) -> dict:
    """System and license usage of ``clusters`` together, from their events (``selected``)."""
    time = series["time"][selected]
    copies = sum(sum(c.licenses.values()) for c in clusters)
    return {
        "system_usage": _usage(
            time,
            series["cpus_used"][selected],
            series["cpus_wanted"][selected],
            sum(c.cpus for c in clusters),
        ),
        "license_usage": _usage(
            time, series["licenses_used"][selected], series["licenses_wanted"][selected], copies
        ),
    }


def _usage(time: np.ndarray, used: np.ndarray, wanted: np.ndarray, capacity: int) -> float | None:
    """``sum_i U(t_i) (t_{i+1} - t_i) / (t_n - t_0)``, ``U = used / min(capacity, wanted)``.

    Sampled after every event; several events at one time leave zero-length steps, so
    only the state after the last of them weighs. ``U = 0`` when nothing is wanted (0/0).
    None when there is no capacity (no licenses) or no time span.
    """
    if capacity <= 0 or len(time) < 2 or time[-1] <= time[0]:
        return None
    busy, demand = np.cumsum(used), np.minimum(capacity, np.cumsum(wanted))
    level = np.divide(busy, demand, out=np.zeros(len(time)), where=demand > 0)
    return _num((level[:-1] * np.diff(time)).sum() / (time[-1] - time[0]))


def rows_of(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Row index in the jobs table of each id in ``wanted`` (the events-to-jobs join)."""
    order = np.argsort(ids, kind="stable")
    found = np.searchsorted(ids[order], wanted).clip(0, max(len(ids) - 1, 0))
    if len(wanted) and (len(ids) == 0 or np.any(ids[order][found] != wanted)):
        raise ValueError("events name jobs that are not in the jobs table")
    return order[found]


def numbers(table: pa.Table, name: str, kind: pa.DataType = FLOAT) -> np.ndarray:
    """A numeric column as numpy; float nulls become NaN ("none": no deadline, never started)."""
    column = table.column(name).cast(kind)
    if pa.types.is_floating(kind):
        column = pc.fill_null(column, math.nan)
    return np.asarray(column.to_numpy(), dtype=kind.to_pandas_dtype())


def _equals(table: pa.Table, name: str, value: str) -> np.ndarray:
    """Mask of rows whose string column equals ``value`` (null never does)."""
    return is_in(table.column(name), (value,))


def is_in(column: pa.ChunkedArray, values: tuple[str, ...]) -> np.ndarray:
    """Mask of rows whose string is one of ``values`` (null is none of them)."""
    return np.asarray(pc.is_in(column, pa.array(values, pa.string())).to_numpy(), dtype=bool)


def _mean(values: np.ndarray) -> float | None:
    """Mean of the finite values (undefined ones, e.g. 0/0 slowdowns, left out); None if none."""
    values = values[np.isfinite(values)]
    return float(values.mean()) if len(values) else None


def _ratio(top: float, bottom: float) -> float | None:
    """``top / bottom``, None when undefined (zero or NaN denominator)."""
    return _num(top / bottom) if bottom > 0 else None


def _num(value: float) -> float | None:
    """A JSON-safe float: NaN and inf become None."""
    return float(value) if math.isfinite(value) else None
