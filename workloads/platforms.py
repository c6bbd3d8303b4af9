"""Platforms from traces: the machines a trace ran on, as scenario cluster tables.

A trace says little about its machine, and what it says differs by source:

- an SWF header's ``MaxNodes`` and ``MaxProcs``: one cluster of ``MaxNodes``
  machines sharing ``MaxProcs`` CPUs as evenly as they divide (Gaia's 2004
  CPUs on 151 nodes: 41 machines of 14, 110 of 13); with ``MaxProcs`` only,
  that many 1-CPU machines (SWF counts processors);
- an Alea ``.machines`` file: one cluster per line;
- a grid log whose jobs name their sites (LCG's partitions, GWF's site
  fields): one cluster per site, as large as the most CPUs that site's jobs
  used at once in the trace (start = submit + wait, wait taken as 0 when
  unknown), and at least its largest job, made of 1-CPU machines. The log's
  own schedule then fits the platform.

Every function returns ``[[clusters]]`` tables for :mod:`emulator.data.scenario`
(validated like hand-written ones). ``mips`` rates the machines (Alea:
``speed x mips``); ``latency`` and ``bandwidth`` are each cluster's link.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pyarrow as pa

from .alea import AleaCluster

__all__ = ["from_machines", "from_sites", "from_swf_header", "trace_name"]


def trace_name(path: str) -> str:
    """A name from a trace's file name: ``KTH-SP2-1996-2.1-cln.swf.gz`` -> ``KTH-SP2-1996-2.1-cln``."""
    name = re.sub(r"(\.(swf|gwf|txt|gz|zip|arrow))+$", "", path.rsplit("/", 1)[-1], flags=re.IGNORECASE)
    return name or "trace"


def _link(table: dict, latency: float, bandwidth: float) -> dict:
    table["latency"] = latency
    if math.isfinite(bandwidth):
        table["bandwidth"] = bandwidth
    return table


def from_swf_header(
    header: dict[str, str], name: str, *, mips: float = 1.0, latency: float = 1.0, bandwidth: float = math.inf
) -> list[dict]:
    """One cluster from ``MaxNodes``/``MaxProcs``; ValueError when the header gives neither."""
    nodes, procs = _count(header, "MaxNodes"), _count(header, "MaxProcs")
    if procs is None and nodes is None:
        raise ValueError("the trace's header has neither MaxProcs nor MaxNodes; list the clusters instead")
    if nodes is None or procs is None or procs < nodes:
        machines = [{"count": procs or nodes, "cpus": 1, "mips": mips}]
    else:
        per, extra = divmod(procs, nodes)
        machines = [{"count": extra, "cpus": per + 1, "mips": mips}] if extra else []
        machines.append({"count": nodes - extra, "cpus": per, "mips": mips})
    return [_link({"name": name, "machines": machines}, latency, bandwidth)]


def _count(header: dict[str, str], key: str) -> int | None:
    value = header.get(key, "").split("\n")[0].strip()
    return int(value) if value.isdigit() and int(value) > 0 else None


def from_machines(
    clusters: list[AleaCluster], *, mips: float = 1.0, latency: float = 1.0, bandwidth: float = math.inf
) -> list[dict]:
    """One cluster per line of an Alea ``.machines`` file."""
    return [
        _link(
            {
                "name": c.name,
                "machines": [{"count": c.nodes, "cpus": c.cpus_per_node, "mips": c.speed * mips}],
            },
            latency,
            bandwidth,
        )
        for c in clusters
    ]


def from_sites(
    table: pa.Table, *, mips: float = 1.0, latency: float = 1.0, bandwidth: float = math.inf
) -> list[dict]:
    """One cluster per site the jobs name, sized by the site's peak CPUs in use (module docstring)."""
    sites = table.column("site").combine_chunks().dictionary_encode()
    names = sites.dictionary.to_pylist()
    code = sites.indices.to_numpy(zero_copy_only=False)
    named = np.array([bool(n) for n in names], bool)
    if not named.any():
        raise ValueError("no job names a site; choose the sites field, or list the clusters instead")
    submit = table.column("submit").to_numpy()
    wait = _column(table, "swf_wait", 0.0)
    run = _column(table, "swf_run_time", None)
    run = np.where(np.isnan(run) | (run < 0), table.column("runtime").to_numpy(), run)
    cpus = table.column("cpus").to_numpy().astype(np.int64)
    start = submit + np.where(np.isnan(wait) | (wait < 0), 0.0, wait)
    peak = _peaks(code, start, start + run, cpus, len(names))
    largest = np.zeros(len(names), np.int64)
    np.maximum.at(largest, code, cpus)
    size = np.maximum(peak, largest)
    order = sorted((n, i) for i, n in enumerate(names) if named[i])
    return [
        _link({"name": n, "machines": [{"count": int(size[i]), "cpus": 1, "mips": mips}]}, latency, bandwidth)
        for n, i in order
    ]


def _column(table: pa.Table, name: str, default: float | None) -> np.ndarray:
    if name not in table.column_names:
        return np.full(table.num_rows, np.nan if default is None else default)
    return table.column(name).to_numpy().astype(float)  # nulls become NaN


def _peaks(code: np.ndarray, start: np.ndarray, end: np.ndarray, cpus: np.ndarray, groups: int) -> np.ndarray:
    """Per group, the most CPUs in use at once (a job ending at t frees its CPUs before one starting at t)."""
    times = np.concatenate([start, end])
    delta = np.concatenate([cpus, -cpus])
    group = np.concatenate([code, code])
    order = np.lexsort((delta, times, group))  # by group, then time, ends (negative) first
    group, delta = group[order], delta[order]
    running = np.cumsum(delta)
    firsts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    running -= np.repeat(running[firsts] - delta[firsts], np.diff(np.r_[firsts, group.size]))
    peak = np.zeros(groups, np.int64)
    np.maximum.at(peak, group, running)
    return peak
