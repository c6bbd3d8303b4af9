"""The report's text: the facts line under the title and the tables before the figures.

A run's summary is ``summary.json``'s metrics in a few narrow tables, a row per
cluster (and the grid's, with several), durations in human units, columns that
say nothing about the run left out. Several runs compare side by side, with each
one's difference from the first. A sweep's comparison table is the one ``gridemu
sweep`` prints (means with 95% confidence half-widths over seeds), with every
point listed below it.
"""

from __future__ import annotations

from html import escape

import pyarrow as pa

from ..data.metrics import jobs_sentence
from ..engine.sweep import METRICS as SWEEP_METRICS
from ..engine.sweep import compare, varied_keys
from .data import RunData
from .page import html_table
from .units import duration, metric_cell, signed_cell


def run_facts(run: RunData) -> list[str]:
    info = run.summary.get("run", {})
    measured = measured_sentence(run)
    return [
        jobs_sentence(run.summary) + (f" ({measured})" if measured else ""),
        f"{_plural(len(run.clusters), 'cluster')}, {sum(c.cpus for c in run.clusters):,} CPUs",
        f"{run.events.num_rows:,} events",
        f"backend {info.get('backend', '?')}, {info.get('wall_seconds', 0):.2f} s wall",
        str(run.path),
    ]


def measured_sentence(run: RunData) -> str:
    """Why the tables count fewer jobs than the run has: the warm-up and cool-down left out ("" if none).

    >>> from emulator.data.metrics import MetricOptions
    >>> summary = {"jobs": {"total": 2596, "measured": 2372}}
    >>> measured_sentence(RunData(None, summary, None, None, (), MetricOptions(10, 86400)))
    'the per-job metrics take 2,372 of 2,596 jobs: those submitted in the first 24 h (warm-up) are left out'
    """
    jobs, options = run.summary["jobs"], run.options
    if "measured" not in jobs:
        return ""
    windows = [
        f"the {edge} {duration(seconds)} ({name})"
        for edge, seconds, name in (
            ("first", options.warmup, "warm-up"),
            ("last", options.cooldown, "cool-down"),
        )
        if seconds
    ]
    return (
        f"the per-job metrics take {jobs['measured']:,} of {jobs['total']:,} jobs: "
        f"those submitted in {' and '.join(windows)} are left out"
    )


GROUPS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Wait and turnaround",
        (
            ("jobs_finished", "jobs finished"),
            ("mean_wait", "mean wait"),
            ("p50_wait", "p50"),
            ("p90_wait", "p90"),
            ("p95_wait", "p95"),
            ("p99_wait", "p99"),
            ("max_wait", "max"),
            ("mean_turnaround", "mean turnaround"),
        ),
    ),
    (
        "Slowdown",
        (
            ("mean_slowdown", "mean slowdown"),
            ("mean_slowdown_no_deadline", "mean slowdown, no deadline"),
            ("mean_bounded_slowdown", "mean bounded slowdown"),
            ("p50_bounded_slowdown", "p50"),
            ("p90_bounded_slowdown", "p90"),
            ("p95_bounded_slowdown", "p95"),
            ("p99_bounded_slowdown", "p99"),
        ),
    ),
    (
        "Usage",
        (
            ("utilization", "utilization"),
            ("system_usage", "system usage (SU)"),
            ("license_usage", "license usage (LU)"),
            ("makespan", "makespan"),
            ("throughput", "throughput"),
            ("workload_share", "workload share"),
        ),
    ),
    (
        "Deadlines and CP",
        (
            ("late_jobs", "late jobs"),
            ("late_percent", "late %"),
            ("over_deadline", "over deadline"),
            ("mcp", "CP (MCP)"),
            ("pb", "PB"),
        ),
    ),
    (
        "Preemptions and failures",
        (
            ("preemptions", "preemptions"),
            ("preemptions_per_job", "per job"),
            ("wasted_cpu_seconds", "wasted CPU time"),
            ("jobs_killed", "jobs killed"),
            ("jobs_killed_at_estimate", "at estimate"),
            ("jobs_lost", "lost"),
            ("jobs_returned", "returned"),
        ),
    ),
)
"""The summary's metrics in tables of a few columns each (so a page's width holds them), titled."""

DEADLINES = ("late_jobs", "late_percent", "over_deadline", "mean_slowdown_no_deadline")
"""Metrics that say nothing when no job has a deadline (then ``late_percent`` is None everywhere)."""

NOTHING_WHEN_ZERO = frozenset(key for key, _ in GROUPS[-1][1])
"""Counts that carry no information when zero everywhere (a run without preemptions or failures)."""


def informative(key: str, rows: list[dict], clusters: int | None = None) -> bool:
    """Whether a metric says anything about these rows (of ``clusters`` clusters, default one a row).

    Left out: a metric None in every row, deadline metrics when no job has a deadline,
    preemption and failure counts that are all zero, and the workload share of one cluster (1).
    """
    values = [m.get(key) for m in rows]
    if all(v is None for v in values):
        return False
    if key in DEADLINES:
        return any(m.get("late_percent") is not None for m in rows)
    if key in NOTHING_WHEN_ZERO:
        return any(values)
    return key != "workload_share" or (len(rows) if clusters is None else clusters) > 1


def run_tables(run: RunData) -> list[tuple[str, str]]:
    """The summary: a table per group of metrics, a row per cluster and, with several, the grid's.

    Columns that carry no information for this run are left out (:func:`informative`);
    each header's tooltip names its ``summary.json`` key.
    """
    clusters = list(run.summary["clusters"].items())
    rows = clusters if len(clusters) == 1 else [*clusters, ("grid", run.summary["grid"])]
    tables = []
    for caption, columns in GROUPS:
        shown = [(key, title) for key, title in columns if informative(key, [m for _, m in clusters])]
        if shown:
            body = [[name, *(metric_cell(key, m.get(key)) for key, _ in shown)] for name, m in rows]
            header = [("cluster", ""), *((title, f"summary.json: {key}") for key, title in shown)]
            tables.append(html_table(header, body, total_last=len(rows) > 1, caption=caption))
    return [("Summary", _side_by_side(tables) + _note(run.options.bsld_threshold, measured_sentence(run)))]


def runs_facts(runs: list[tuple[str, RunData]]) -> list[str]:
    """A line per run: its name and how its jobs ended."""
    return [f"{name}: {jobs_sentence(run.summary)}" for name, run in runs]


def runs_tables(runs: list[tuple[str, RunData]]) -> list[tuple[str, str]]:
    """The runs' grid metrics side by side, a row per metric, then each run's difference from the first.

    A metric is shown when it says something about some run (:func:`informative`).
    """
    first, grids = runs[0][0], [run.summary["grid"] for _, run in runs]
    header = [("metric", ""), *((name, "") for name, _ in runs)]
    header += [
        (f"change from {first}" if len(runs) == 2 else f"{name} − {first}", "") for name, _ in runs[1:]
    ]
    tables = []
    for caption, columns in GROUPS:
        body = [
            [
                _row_title(key, title),
                *(metric_cell(key, g.get(key)) for g in grids),
                *(signed_cell(key, g.get(key), grids[0].get(key)) for g in grids[1:]),
            ]
            for key, title in columns
            if informative(key, grids, clusters=1)  # a grid's share is all of it
        ]
        if body:
            tables.append(html_table(header, body, caption=caption))
    sentences = {name: measured_sentence(run) for name, run in runs}
    if len(set(sentences.values())) == 1:  # the runs agree: said once
        measured = sentences[first]
    else:
        measured = "; ".join(f"{name}: {s}" for name, s in sentences.items() if s)
    threshold = runs[0][1].options.bsld_threshold
    return [("Comparison of the runs (grid)", _side_by_side(tables) + _note(threshold, measured))]


CONTEXTUAL = frozenset({"p50", "p90", "p95", "p99", "max", "per job", "at estimate", "lost", "returned"})
"""Column titles that lean on their neighbours; a metric's own row says its key in words instead."""


def _row_title(key: str, title: str) -> str:
    """A metric's title on a row of its own: "p95 wait", not "p95"."""
    return key.replace("_", " ") if title in CONTEXTUAL else title


def _side_by_side(tables: list[str]) -> str:
    """Tables in a row as far as the page's width goes, the rest below (CSS ``.tables``)."""
    return f'<div class="tables">{"".join(tables)}</div>'


def _note(threshold: float, measured: str = "") -> str:
    note = f"Percentiles by nearest rank; bounded slowdown with a runtime floor of {threshold:g} s."
    if measured:
        note += f" {measured[0].upper()}{measured[1:]}."
    return f'<p class="facts">{escape(note)}</p>'


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


def sweep_facts(rows: pa.Table) -> list[str]:
    status = rows.column("status").to_pylist()
    keys = varied_keys(rows)
    return [
        f"{len(status)} runs, {status.count('ok')} ok, {status.count('failed')} failed",
        "varied: " + ", ".join(keys),
    ]


def sweep_tables(rows: pa.Table) -> list[tuple[str, str]]:
    """The comparison table (as ``gridemu sweep`` prints it), then every point, folded away."""
    keys = varied_keys(rows)
    others = [k for k in keys if k != "seed"]
    body = [
        [*(str(g[k]) for k in others), str(g["runs"]), *(_interval(m, g[m]) for m in SWEEP_METRICS)]
        for g in compare(rows, keys)
    ]
    points = [
        [f"point-{p['point']:03d}", *(str(p[k]) for k in keys), p["status"], _last_line(p["error"])]
        for p in rows.to_pylist()
    ]
    listing = html_table(["run", *keys, "status", "error"], points)
    return [
        (
            "Comparison (mean ± 95% CI over seeds)",
            html_table([*others, "runs", *SWEEP_METRICS], body)
            + f"<details><summary>all {len(points)} points</summary>{listing}</details>",
        )
    ]


def _last_line(text: str | None) -> str:
    return text.strip().splitlines()[-1] if text and text.strip() else ""


def _interval(key: str, value: tuple[float, float] | None) -> str:
    """A mean and its 95% half-width, each in its unit: ``2.88 h ± 14.5 min``."""
    return "-" if value is None else f"{metric_cell(key, value[0])} ± {metric_cell(key, value[1])}"
