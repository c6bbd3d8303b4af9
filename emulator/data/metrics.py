"""A run's metrics (POLICIES.md, "Metrics"), computed from its jobs and events tables.

Traces can hold millions of rows, so everything is vectorized with numpy: the only
Python loops are over clusters, each over its own rows (grouped once, by one sort, so a
run's cost does not grow with clusters x rows). The result is plain JSON (``summary.json``):
numbers are Python ``int``/``float``, and a metric that is undefined (no finished
job, no deadline job, no license, zero-length span) is ``None``, never NaN or inf.

Per-job metrics (wait, slowdown, deadlines, makespan, utilization) come from the
jobs table; system and license usage come from the events, whose arrive, start and
finish rows (joined to the jobs by id for CPUs and licenses) give the time series.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.failures import ESTIMATE, LOST
from ..core.model import Cluster, Platform

BOUND = 10.0
"""Bounded slowdown's runtime floor (s): the field's usual value, so tiny jobs don't dominate."""

ENTER, LEAVE = ("arrive",), ("finish", "reject", "return")
"""Event kinds that bring a job into a cluster's system (queued or running) or take it out (and a
``kill`` at the job's estimate; a kill by a failure or an outage requeues it)."""

RUN, STOP = ("start", "resume"), ("finish", "preempt", "kill")
"""Event kinds that make a job's CPUs and license copies busy, or free them."""

FLOAT, INT = pa.float64(), pa.int64()

EVENT_COLUMNS = ("time", "kind", "job", "cluster", "info")
"""The columns of ``events.arrow`` :func:`summarize` reads (and ``machines`` when a cluster counts license
copies per machine): a run's summary reads only these."""

METRICS = (
    "jobs_finished",
    "mean_wait",
    "p50_wait",
    "p90_wait",
    "p95_wait",
    "p99_wait",
    "max_wait",
    "mean_turnaround",
    "mean_slowdown",
    "mean_slowdown_no_deadline",
    "mean_bounded_slowdown",
    "p50_bounded_slowdown",
    "p90_bounded_slowdown",
    "p95_bounded_slowdown",
    "p99_bounded_slowdown",
    "late_jobs",
    "late_percent",
    "over_deadline",
    "makespan",
    "throughput",
    "system_usage",
    "license_usage",
    "workload_share",
    "utilization",
    "mcp",
    "pb",
    "preemptions",
    "preemptions_per_job",
    "wasted_cpu_seconds",
    "jobs_killed",
    "jobs_killed_at_estimate",
    "jobs_lost",
    "jobs_returned",
)
"""The keys of the grid's and of each cluster's metrics, in output order."""

PERCENTILES = (50, 90, 95, 99)
"""Percentiles of wait and bounded slowdown in the metrics (``p95_wait``...; :func:`percentiles`)."""

FAILURE_METRICS = ("jobs_killed", "jobs_killed_at_estimate", "jobs_lost", "jobs_returned")
"""Counted from the events (:func:`_failure_counts`): ``kill`` rows (every kill: by a machine failure,
an outage, or at the job's estimate), those at the estimate (the job ends there), jobs lost (rejected
after more than ``max_kills`` kills) and ``return`` rows (jobs an outage sent back to the meta-scheduler)."""

CP_WEIGHTS = {"w_makespan": 1.0, "w_idle": 3.0, "w_over": 4.0}
"""Seed 004's CP weights (its ``W_i``, ``W_m``, ``W_o``, named by the terms eq. 1 gives them): a
cluster whose local policy takes these parameters (``titan``) is judged with its own, and with its
``pairing`` (``"eq1"`` or ``"text"``: Sec. 5 swaps the makespan and idle weights; see
:mod:`emulator.policies.titan`)."""


@dataclass(frozen=True)
class MetricOptions:
    """How the job metrics are taken (a scenario's ``[metrics]`` table).

    ``bsld_threshold``: the run time below which bounded slowdown counts a job as
    this long (10 s by default, as Feitelson's; some papers use 60 s).
    ``warmup`` / ``cooldown``: seconds of the workload's submit span, from its
    first / before its last submission, whose jobs are run but left out of the
    per-job metrics (wait, slowdowns, late jobs, makespan, utilisation): a
    window or a replayed trace starts on an empty machine and ends draining
    it, and those jobs see no steady queue. ``summary.json``'s job counts stay whole
    (``measured``: how many the per-job metrics took).
    """

    bsld_threshold: float = BOUND
    warmup: float = 0.0
    cooldown: float = 0.0

    def measured(self, submit: np.ndarray) -> np.ndarray:
        """Which jobs the per-job metrics take: those submitted outside the warm-up and cool-down."""
        if not submit.size or not (self.warmup or self.cooldown):
            return np.ones(submit.size, dtype=bool)
        return (submit >= submit.min() + self.warmup) & (submit <= submit.max() - self.cooldown)


def summarize(
    jobs: pa.Table, events: pa.Table, platform: Platform, options: MetricOptions = MetricOptions()
) -> dict:
    """The run's metrics: job counts, then the same metrics for the grid and per cluster.

    ``{"jobs": {"total", "finished", "rejected"[, "killed"]}, "grid": {...}, "clusters": {name: {...}}}``,
    clusters in platform order; see :func:`_job_metrics` and :func:`_usage` for the metrics.
    License copies in use count one per license a job needs (``len(licenses)``), per job;
    on clusters with ``license_per_machine`` (CS 2.0) one per (machine, license) pair that
    some running job holds, as the cluster allocates them. Copies wanted count per job.
    """
    cols = _job_columns(jobs)
    series = _usage_deltas(events, cols, tuple(c.license_per_machine for c in platform.clusters))
    clusters = platform.clusters
    total_work = cols["work"][cols["reached"]].sum()
    measured = options.measured(cols["submit"])
    grid = _job_metrics(cols, measured, sum(c.cpus for c in clusters), options.bsld_threshold)
    grid |= _usage_metrics(series, slice(None), clusters)  # (every event of the series is a cluster's)
    grid["workload_share"] = 1.0 if total_work > 0 else None
    grid["mcp"] = grid["pb"] = None  # from the clusters' CP, below
    failures = _failure_counts(events, len(clusters))
    grid |= {key: int(counts.sum()) for key, counts in failures.items()}
    grid = {key: grid[key] for key in METRICS}
    per_cluster = {}
    job_order, job_bounds = _groups(_cluster_index(jobs, clusters), len(clusters))
    by_cluster = _rows(cols | {"measured": measured}, job_order)
    # Events stay indices: gathering the whole series in cluster order, as the jobs are, measured slower.
    event_order, event_bounds = _groups(series["cluster"], len(clusters))
    for index, cluster in enumerate(clusters):
        mine = _rows(by_cluster, slice(job_bounds[index], job_bounds[index + 1]))
        metrics = _job_metrics(mine, mine["measured"], cluster.cpus, options.bsld_threshold)
        events_of = event_order[event_bounds[index] : event_bounds[index + 1]]
        metrics |= _usage_metrics(series, events_of, (cluster,))
        metrics["workload_share"] = _ratio(mine["work"].sum(), total_work)
        metrics["mcp"], metrics["pb"] = cluster_cp(metrics, cluster), None
        metrics |= {key: int(counts[index]) for key, counts in failures.items()}
        per_cluster[cluster.name] = {key: metrics[key] for key in METRICS}
    grid["mcp"], grid["pb"] = mcp_pb(list(per_cluster.values()))
    counts = {
        "total": len(jobs),
        "finished": int(cols["finished"].sum()),
        "rejected": int(_equals(jobs, "status", "rejected").sum()),  # lost jobs too (grid's jobs_lost)
    }
    if not measured.all():
        counts["measured"] = int(measured.sum())  # the per-job metrics' jobs, after warm-up and cool-down
    killed = int(_equals(jobs, "status", "killed").sum())
    if killed:  # killed at their estimate (kill_at_estimate): total = finished + rejected + killed
        counts["killed"] = killed
    return {
        "jobs": counts,
        "grid": grid,
        "clusters": per_cluster,
    }


def jobs_sentence(summary: dict) -> str:
    """How the jobs ended, in one line: the CLI's run table and the report say it the same way.

    Lost jobs (killed by failures more than ``max_kills`` times) are among the
    rejected ones; the sentence says how many, so a failure run's rejections
    are not read as admission errors.
    """
    jobs, lost = summary["jobs"], summary.get("grid", {}).get("jobs_lost", 0)
    text = f"{jobs['total']:,} jobs: {jobs['finished']:,} finished, {jobs['rejected']:,} rejected"
    if lost:
        text += f" ({lost:,} of them lost to failures)"
    if jobs.get("killed"):
        text += f", {jobs['killed']:,} killed at their estimate"
    return text


def cluster_cp(metrics: dict, cluster: Cluster) -> float | None:
    """Seed 004's CP of a cluster's realized schedule (None when nothing finished there).

    ``CP = (W_i * makespan + W_m * idle + W_o * over_deadline) / (W_i + W_m + W_o)`` over the
    whole run: makespan from the first start to the last finish there, idle = the CPU time
    within it no job used (``cpus * makespan * (1 - utilization)``), over-deadline summed.
    The paper averages the CP of each round of seed schedules instead; a run's own schedule
    is what every policy is judged on here, whichever meta policy fed the cluster. With
    ``titan[pairing=text]`` makespan takes ``W_m`` and idle ``W_i`` (seed 004, Sec. 5).
    """
    makespan = metrics["makespan"]
    if makespan is None:
        return None
    w_makespan, w_idle, w_over = cp_weights_of(cluster)
    idle = cluster.cpus * makespan * (1.0 - (metrics["utilization"] or 0.0))
    total = w_makespan * makespan + w_idle * idle + w_over * metrics["over_deadline"]
    return _num(total / (w_makespan + w_idle + w_over))


def cp_weights_of(cluster: Cluster) -> tuple[float, float, float]:
    """The CP weights of makespan, idle time and over-deadline a cluster is judged with: its
    local policy's (``titan``'s), with its ``pairing``, else :data:`CP_WEIGHTS`."""
    params = cluster.policy.params
    w_makespan, w_idle, w_over = (float(params.get(k, v)) for k, v in CP_WEIGHTS.items())
    if params.get("pairing") == "text":  # Sec. 5: (W_o, W_m, W_i) for over-deadline, makespan, idle
        w_makespan, w_idle = w_idle, w_makespan
    return w_makespan, w_idle, w_over


def mcp_pb(clusters: list[dict]) -> tuple[float | None, float | None]:
    """MCP (the clusters' CP weighted by their finished jobs) and PB (the CPs' sample standard
    deviation, over clusters where a job finished; None below two)."""
    cp = np.array([m["mcp"] for m in clusters if m["mcp"] is not None], dtype=float)
    jobs = np.array([m["jobs_finished"] for m in clusters if m["mcp"] is not None], dtype=float)
    mcp = _ratio((cp * jobs).sum(), jobs.sum())
    return mcp, (_num(cp.std(ddof=1)) if cp.size > 1 else None)


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
        "license_names": jobs.column("licenses"),
        **_preemption_columns(jobs),
    }


def _cluster_index(jobs: pa.Table, clusters: tuple[Cluster, ...]) -> np.ndarray:
    """Each job's cluster as its index in the platform (-1: it reached none)."""
    names = pa.array([c.name for c in clusters], pa.string())
    index = pc.index_in(jobs.column("cluster").cast(pa.string()), value_set=names)
    return np.asarray(pc.fill_null(index, -1).to_numpy(), dtype=np.int64)


def _groups(keys: np.ndarray, count: int) -> tuple[np.ndarray, list[int]]:
    """The rows ordered by key, and where each key ``k`` in ``0..count-1`` starts and ends in that
    order (``bounds[k]:bounds[k + 1]``; other keys: in none).

    One stable sort instead of one mask over all rows per key (170 clusters x 752,164 events on
    LCG-2005-1's sites), and each column gathered once in that order, a cluster's rows then a
    slice of it. Each group's rows ascend, so it selects exactly what the mask ``keys == k``
    did, in the same order: sums over it are the same to the last bit.
    """
    if count < np.iinfo(np.int16).max:  # numpy sorts 16-bit keys stably by radix: 15x faster here
        keys = np.clip(keys, -1, count).astype(np.int16)
    order = np.argsort(keys, kind="stable")
    return order, np.searchsorted(keys[order], np.arange(count + 1)).tolist()


def _rows(cols: dict[str, np.ndarray], rows: np.ndarray | slice) -> dict[str, np.ndarray]:
    """The numeric job columns (:func:`_job_columns`) of ``rows`` only."""
    return {name: values[rows] for name, values in cols.items() if isinstance(values, np.ndarray)}


def _preemption_columns(jobs: pa.Table) -> dict[str, np.ndarray]:
    """Preemptions, seconds on CPUs and wasted CPU-seconds per job (none, for tables without them).

    ``stopped``: preempted, or killed by a failure or an outage (its runs are what ``run_time`` sums).
    """
    if "preemptions" not in jobs.column_names:
        zeros = np.zeros(len(jobs))
        return {"preemptions": zeros.astype(np.int64), "run_time": zeros, "wasted": zeros, "stopped": zeros}
    preemptions = numbers(jobs, "preemptions", INT)
    kills = numbers(jobs, "kills", INT) if "kills" in jobs.column_names else 0
    return {
        "preemptions": preemptions,
        "run_time": numbers(jobs, "run_time"),
        "wasted": numbers(jobs, "wasted_cpu_seconds"),
        "stopped": preemptions + kills,
    }


def _job_metrics(cols: dict[str, np.ndarray], selected: np.ndarray, cpus: int, bound: float = BOUND) -> dict:
    """Per-job metrics over the finished jobs among ``selected`` (rejected ones have no times).

    Slowdown ``(Tw + Te) / Te`` is undefined for a job with ``Te == 0``; such jobs are left
    out of the slowdown means (bounded slowdown still counts them). Deadlines are null
    (NaN here) or inf when a job has none. For a preempted job ``Te`` is its time on CPUs
    (``run_time``) and ``Tw`` all the rest, waiting to start and to resume (seed 002);
    ``wait`` stays the wait for its first start.
    """
    done = selected & cols["finished"]
    submit, start, finish, deadline = (cols[k][done] for k in ("submit", "start", "finish", "deadline"))
    wait, run = start - submit, finish - start
    preempted = cols["stopped"][done] > 0
    if preempted.any():
        run = np.where(preempted, cols["run_time"][done], run)
        tw = np.where(preempted, finish - submit - run, wait)
    else:
        tw = wait
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = (tw + run) / run
    bounded = bounded_slowdown(tw, run, bound)
    has_deadline = np.isfinite(deadline)
    late = has_deadline & (finish > deadline)
    makespan = finish.max() - start.min() if done.any() else math.nan
    cpu_seconds = (cols["cpus"][done] * run).sum()
    return {
        "jobs_finished": int(done.sum()),
        "mean_wait": _mean(wait),
        **percentiles(wait, "wait"),
        "max_wait": _num(wait.max()) if done.any() else None,
        "mean_turnaround": _mean(finish - submit),
        "mean_slowdown": _mean(slowdown),
        "mean_slowdown_no_deadline": _mean(slowdown[~has_deadline]),
        "mean_bounded_slowdown": _mean(bounded),
        **percentiles(bounded, "bounded_slowdown"),
        "late_jobs": int(late.sum()),
        "late_percent": _ratio(100.0 * late.sum(), has_deadline.sum()),
        "over_deadline": float(np.maximum(0.0, finish - deadline)[has_deadline].sum()),
        "makespan": _num(makespan),
        "throughput": _ratio(done.sum(), makespan),
        "utilization": _ratio(cpu_seconds, cpus * makespan),
        "preemptions": int(cols["preemptions"][selected].sum()),
        "preemptions_per_job": _ratio(cols["preemptions"][done].sum(), done.sum()),
        "wasted_cpu_seconds": float(cols["wasted"][selected].sum()),
    }


def _failure_counts(events: pa.Table, clusters: int) -> dict[str, np.ndarray]:
    """Per cluster, the counts of :data:`FAILURE_METRICS` (all zero in a run without failures)."""
    kind = events.column("kind")
    counts = {key: np.zeros(clusters, dtype=np.int64) for key in FAILURE_METRICS}
    if events.num_rows == 0:
        return counts
    cluster = cluster_codes(events)
    info = pc.fill_null(events.column("info"), "") if "info" in events.column_names else None

    def per_cluster(mask: np.ndarray) -> np.ndarray:
        at = cluster[mask]
        return np.bincount(at[at >= 0], minlength=clusters)[:clusters]

    kills = is_in(kind, ("kill",))
    if kills.any():
        counts["jobs_killed"] = per_cluster(kills)
        if info is not None:
            counts["jobs_killed_at_estimate"] = per_cluster(kills & is_in(info, (ESTIMATE,)))
    rejects = is_in(kind, ("reject",))
    if rejects.any() and info is not None:
        counts["jobs_lost"] = per_cluster(rejects & np.asarray(pc.starts_with(info, LOST).to_numpy(), bool))
    counts["jobs_returned"] = per_cluster(is_in(kind, ("return",)))
    return counts


def percentiles(values: np.ndarray, name: str) -> dict[str, float | None]:
    """``p50_<name>``... (:data:`PERCENTILES`) of the finite ``values``, by nearest rank.

    Nearest rank (numpy's ``inverted_cdf``): the p-th percentile is the smallest value at least p% of
    the jobs do not exceed, always some job's own value, and what the report's CDFs read at p%. An
    interpolated one would be a wait no job had, and would move with the method chosen. None when no
    value is finite.
    """
    values = values[np.isfinite(values)]
    if not len(values):
        return {f"p{p}_{name}": None for p in PERCENTILES}
    found = np.percentile(values, PERCENTILES, method="inverted_cdf")
    return {f"p{p}_{name}": float(v) for p, v in zip(PERCENTILES, found, strict=True)}


def bounded_slowdown(wait: np.ndarray, run: np.ndarray, bound: float = BOUND) -> np.ndarray:
    """``max(1, (Tw + Te) / max(Te, bound))`` per job: one definition for the metric and the plots."""
    return np.maximum(1.0, (wait + run) / np.maximum(run, bound))


def usage_series(
    jobs: pa.Table, events: pa.Table, per_machine: tuple[bool, ...] = ()
) -> dict[str, np.ndarray]:
    """The per-event usage changes behind system and license usage (see :func:`_usage_deltas`).

    Public so that the report's usage plots draw exactly what the SU and LU metrics integrate
    (``per_machine``: each cluster's ``license_per_machine``, in platform order).
    """
    return _usage_deltas(events, _job_columns(jobs), per_machine)


def _usage_deltas(
    events: pa.Table, cols: dict[str, np.ndarray], per_machine: tuple[bool, ...] = ()
) -> dict[str, np.ndarray]:
    """Each cluster event's change to CPUs/license copies in use and wanted, sorted by time.

    "Wanted" = needed by jobs in the cluster's system (arrived, not yet finished). A reject
    or finish takes a job out only if it had arrived at that cluster, so a job refused
    before arriving cannot drive a count negative. Clusters flagged in ``per_machine``
    count copies in use per (machine, license) (:func:`_machine_copies`).

    Works on numpy columns selected once (filtering the Arrow table, then testing kinds one
    mask at a time, took most of the 0.2 s it cost on LCG-2005-1's 752k events).
    """
    kind = kind_index(events.column("kind"), _USAGE_KINDS)
    cluster = cluster_codes(events)
    keep = np.flatnonzero((cluster >= 0) & (kind >= 0))
    kind, cluster = kind[keep], cluster[keep]
    rows = rows_of(cols["id"], numbers(events, "job", INT)[keep])
    is_arrive, leave = _kinds_in(kind, ENTER), _kinds_in(kind, LEAVE)
    kills = np.flatnonzero(_kinds_in(kind, ("kill",)))
    if kills.size:  # a job killed at its estimate leaves; one killed by a failure waits to restart
        info = pc.fill_null(events.column("info").take(pa.array(keep[kills])), "")
        leave[kills[is_in(info, (ESTIMATE,))]] = True
    leave &= _arrived(rows, cluster, is_arrive, len(cols["id"]))
    wanted = is_arrive.astype(np.int64) - leave
    used = _kinds_in(kind, RUN).astype(np.int64) - _kinds_in(kind, STOP)
    time = numbers(events, "time")[keep]
    cpus = cols["cpus"][rows]
    licensed = bool(cols["licenses"].any())
    if licensed:
        licenses = cols["licenses"][rows]
        licenses_used, licenses_wanted = used * licenses, wanted * licenses
    else:  # (zeros the kernel maps on demand: a run without licenses touches none of them)
        licenses_used, licenses_wanted = np.zeros(len(rows), np.int64), np.zeros(len(rows), np.int64)
    if licensed and any(per_machine):
        shared = np.array(per_machine, dtype=bool)[cluster] & (used != 0) & (licenses > 0)
        if shared.any():
            at = np.flatnonzero(shared)
            names = cols["license_names"].take(pa.array(rows[at]))
            licenses_used[at] = _machine_copies(
                events.column("machines").take(pa.array(keep[at])), names, cluster[at], used[at]
            )
    series = {
        "time": time,
        "cluster": cluster,
        "cpus_used": used * cpus,
        "cpus_wanted": wanted * cpus,
        "licenses_used": licenses_used,
        "licenses_wanted": licenses_wanted,
    }
    if not np.any(time[1:] < time[:-1]):  # sorted, as a trace is
        return series
    order = np.argsort(time, kind="stable")
    return {name: values[order] for name, values in series.items()}


_USAGE_KINDS = tuple(dict.fromkeys(ENTER + LEAVE + RUN + STOP + ("kill",)))
"""The event kinds usage counts: :func:`kind_index`'s names for :func:`_usage_deltas`."""


def _kinds_in(index: np.ndarray, names: tuple[str, ...]) -> np.ndarray:
    """Mask of the rows (:func:`kind_index` over :data:`_USAGE_KINDS`) whose kind is in ``names``."""
    return np.isin(index, [_USAGE_KINDS.index(name) for name in names])


def _arrived(rows: np.ndarray, cluster: np.ndarray, is_arrive: np.ndarray, jobs: int) -> np.ndarray:
    """Whether each event's job arrived at the event's cluster (at any time in the run).

    Most jobs arrive once: their cluster is looked up by job; only jobs that arrived more
    than once (sent on by an outage) are matched by (job, cluster) pairs, whose ``np.isin``
    over every event was a quarter of the usage metrics' time.
    """
    arrivals = rows[is_arrive]
    count = np.bincount(arrivals, minlength=jobs)
    only = np.full(jobs, -1, dtype=cluster.dtype)
    only[arrivals] = cluster[is_arrive]  # (exact where a job arrived once)
    arrived = only[rows] == cluster
    again = np.flatnonzero(count[rows] > 1)
    if again.size:
        key = rows * (int(cluster.max(initial=0)) + 1) + cluster  # one key per (job, cluster)
        arrived[again] = np.isin(key[again], key[is_arrive])
    return arrived


def _machine_copies(
    machines: pa.ChunkedArray, names: pa.ChunkedArray, cluster: np.ndarray, sign: np.ndarray
) -> np.ndarray:
    """Copies taken (+1) or given back (-1) by each run/stop event when copies count per machine.

    Event ``k`` (in trace order) starts (``sign`` +1) or stops (-1) a job holding the
    licenses ``names[k]`` on ``machines[k]``. Every (cluster, machine, license) triple it
    touches counts its holders; a copy is taken when that count leaves 0 and given back
    when it returns to 0. Vectorized: each event's machines x licenses, sorted by
    (triple, event), counted with one cumulative sum.
    """
    machines, names = _combined(machines), _combined(names)
    flat_machines = pc.list_flatten(machines).to_numpy().astype(np.int64)
    width = int(flat_machines.max(initial=0)) + 1
    pairs = np.unique(pc.list_parent_indices(machines).to_numpy() * width + flat_machines)
    m_event, m_machine = np.divmod(pairs, width)
    codes = pc.list_flatten(names).dictionary_encode()
    kinds = len(codes.dictionary) + 1
    pairs = np.unique(pc.list_parent_indices(names).to_numpy() * kinds + codes.indices.to_numpy())
    l_event, l_code = np.divmod(pairs, kinds)
    n = len(sign)
    per_event = np.bincount(l_event, minlength=n)  # licenses of each event, then its machines x them
    first_license = np.cumsum(per_event) - per_event
    repeat = per_event[m_event]
    event = np.repeat(m_event, repeat)
    offset = np.arange(len(event)) - np.repeat(np.cumsum(repeat) - repeat, repeat)
    triple = (cluster[event] * width + np.repeat(m_machine, repeat)) * kinds + l_code[
        first_license[event] + offset
    ]
    order = np.lexsort((event, triple))
    triple, event = triple[order], event[order]
    step = sign[event]
    holders = np.cumsum(step)
    starts = np.flatnonzero(np.concatenate(([True], triple[1:] != triple[:-1])))
    holders -= np.repeat(holders[starts] - step[starts], np.diff(np.append(starts, len(triple))))
    change = (holders > 0).astype(np.int64) - ((holders - step) > 0)
    return np.bincount(event, weights=change, minlength=n).astype(np.int64)


def _combined(column: pa.ChunkedArray | pa.Array) -> pa.Array:
    return column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column


def _usage_metrics(
    series: dict[str, np.ndarray], selected: np.ndarray, clusters: tuple[Cluster, ...]
) -> dict:
    """System and license usage of ``clusters`` together, from their events (``selected``: a mask,
    or their rows in ascending order)."""
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
    demand = np.cumsum(wanted)
    np.minimum(demand, capacity, out=demand)
    level = np.divide(np.cumsum(used), demand, out=np.zeros(len(time)), where=demand > 0)
    del demand
    steps = np.diff(time)
    steps *= level[:-1]  # (in place: a million-job grid's series are tens of MB each)
    return _num(steps.sum() / (time[-1] - time[0]))


def rows_of(ids: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """Row index in the jobs table of each id in ``wanted`` (the events-to-jobs join)."""
    if len(ids) and ids[-1] - ids[0] == len(ids) - 1 and np.all(ids[1:] > ids[:-1]):
        rows = wanted - ids[0]  # consecutive ids, as most traces number their jobs: no search
        if len(rows) and (rows.min() < 0 or rows.max() >= len(ids)):
            raise ValueError("events name jobs that are not in the jobs table")
        return rows
    order = np.argsort(ids, kind="stable")
    found = np.searchsorted(ids[order], wanted).clip(0, max(len(ids) - 1, 0))
    if len(wanted) and (len(ids) == 0 or np.any(ids[order][found] != wanted)):
        raise ValueError("events name jobs that are not in the jobs table")
    return order[found]


def cluster_codes(events: pa.Table) -> np.ndarray:
    """Each event's cluster as its index in the platform, -1 for none (the meta-scheduler's rows).

    ``events.cluster`` holds names, a dictionary column whose dictionary is the platform's clusters
    in order, so its codes are the indices; a trace written before it held names holds the indices.
    """
    column = events.column("cluster")
    if not pa.types.is_dictionary(column.type):
        return numbers(events, "cluster", INT)
    codes = [np.asarray(pc.fill_null(chunk.indices, -1)) for chunk in column.chunks]
    return np.concatenate(codes).astype(np.int32, copy=False) if codes else np.empty(0, np.int32)


def numbers(table: pa.Table, name: str, kind: pa.DataType = FLOAT) -> np.ndarray:
    """A numeric column as numpy; float nulls become NaN ("none": no deadline, never started)."""
    column = table.column(name).cast(kind)
    if pa.types.is_floating(kind) and column.null_count:
        column = pc.fill_null(column, math.nan)
    return np.asarray(column.to_numpy(), dtype=kind.to_pandas_dtype())


def _equals(table: pa.Table, name: str, value: str) -> np.ndarray:
    """Mask of rows whose string column equals ``value`` (null never does)."""
    return is_in(table.column(name), (value,))


def is_in(column: pa.ChunkedArray, values: tuple[str, ...]) -> np.ndarray:
    """Mask of rows whose string is one of ``values`` (null is none of them)."""
    if pa.types.is_dictionary(column.type):  # (the trace's kind: a test on its codes, not every row's string)
        return kind_index(column, values) >= 0
    return np.asarray(pc.is_in(column, pa.array(values, pa.string())).to_numpy(), dtype=bool)


def kind_index(column: pa.ChunkedArray | pa.Array, names: tuple[str, ...]) -> np.ndarray:
    """Each row's string as its index in ``names`` (fewer than 128; -1: none of them, or null), in
    one pass over a dictionary column's codes: one small-int array that every later mask tests
    cheaply, where ``pc.is_in`` decodes every row (and its first call in a process costs ~15 ms)."""
    parts = [np.zeros(0, np.int8)]
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        if not pa.types.is_dictionary(chunk.type):
            chunk = chunk.dictionary_encode()
        words = chunk.dictionary.to_pylist()
        lookup = np.array([names.index(w) if w in names else -1 for w in words] + [-1], dtype=np.int8)
        codes = pc.fill_null(chunk.indices, len(words)).to_numpy(zero_copy_only=False)
        parts.append(lookup[codes])
    return np.concatenate(parts)


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
