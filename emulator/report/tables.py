"""The report's text: the facts line under the title and the tables before the figures.

A run's summary table has every metric of ``summary.json`` per cluster and for the
grid; a sweep's comparison table is the one ``gridemu sweep`` prints (means with
95% confidence half-widths over seeds), with every point listed below it.
"""

from __future__ import annotations

from html import escape

import pyarrow as pa

from ..data.metrics import METRICS, jobs_sentence
from ..engine.sweep import METRICS as SWEEP_METRICS
from ..engine.sweep import compare, varied_keys
from .data import RunData
from .page import html_table


def run_facts(run: RunData) -> list[str]:
    info = run.summary.get("run", {})
    return [
        jobs_sentence(run.summary),
        f"{len(run.clusters)} clusters, {sum(c.cpus for c in run.clusters):,} CPUs",
        f"{run.events.num_rows:,} events",
        f"backend {info.get('backend', '?')}, {info.get('wall_seconds', 0):.2f} s wall",
        str(run.path),
    ]


SHORT = {
    "jobs_finished": "jobs",
    "mean_wait": "wait",
    "max_wait": "max wait",
    "mean_turnaround": "turnaround",
    "mean_slowdown": "slowdown",
    "mean_slowdown_no_deadline": "slowdown (no deadline)",
    "mean_bounded_slowdown": "bsld",
    "late_jobs": "late",
    "late_percent": "late %",
    "over_deadline": "over deadline",
    "makespan": "makespan",
    "throughput": "throughput",
    "system_usage": "SU",
    "license_usage": "LU",
    "workload_share": "share",
    "utilization": "utilization",
    "mcp": "CP (MCP)",
    "pb": "PB",
}
"""Column titles of the summary table (the CLI's, where it has them); summary.json keys in the legend."""


def run_tables(run: RunData) -> list[tuple[str, str]]:
    rows = [[name, *(_number(m.get(k)) for k in METRICS)] for name, m in run.summary["clusters"].items()]
    rows.append(["grid", *(_number(run.summary["grid"].get(k)) for k in METRICS)])
    legend = "; ".join(f"{SHORT.get(k, k)} = {k}" for k in METRICS if SHORT.get(k, k) != k)
    table = html_table(["cluster", *(SHORT.get(k, k) for k in METRICS)], rows, total_last=True)
    return [("Summary", f'{table}<p class="facts">summary.json keys: {escape(legend)}; times in seconds</p>')]


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
        [*(str(g[k]) for k in others), str(g["runs"]), *(_interval(g[m]) for m in SWEEP_METRICS)]
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


def _interval(value: tuple[float, float] | None) -> str:
    return "-" if value is None else f"{_number(value[0])} ± {value[1]:.2g}"


def _number(value) -> str:
    """A metric for a table: integers with separators, large floats rounded, others to 3 digits."""
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.3g}"
