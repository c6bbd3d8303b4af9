"""Seed 002's claims (Convergent Scheduling 2.0) as :mod:`reproduce_all` measures them.

The six schedulers of ``reproduce_cs2.py`` at ``Ta`` = 1, 4, 6, 12, at the stated
inter-arrivals (the load docs/reproductions.md infers from the Fig. 1 paragraph
is the stated one, so Fig. 1's rows are compared at a load read from Fig. 1's
own text). Fig. 1's counts come from each run's ``jobs.arrow``
(:func:`reproduce_cs2.in_system`), attached to its summary as ``fig1``.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
from reproduce_claims import Claim, Paper, Size, Term, difference
from reproduce_common import Runs, run_interarrivals
from reproduce_cs2 import SERIES, in_system
from reproduce_verdicts import more, near_zero

from workloads import presets

TA = [1.0, 4.0, 6.0, 12.0]
LOAD = "stated"
SECTION = "CS 2.0"


def fig1(jobs_arrow: bytes) -> dict[str, float]:
    """Jobs in the system: the peak, and the growth while jobs arrive (%, from an eighth of the
    arrival period to the last arrival)."""
    jobs = pa.ipc.open_file(pa.BufferReader(jobs_arrow)).read_all()
    last = float(np.nanmax(jobs.column("submit").to_numpy(zero_copy_only=False)))
    early, late = in_system(jobs_arrow, np.array([last / 8, last]))
    peak = in_system(jobs_arrow, np.linspace(0.0, 4 * last, 400)).max()
    return {"peak": float(peak), "growth": 100.0 * (late - early) / max(early, 1)}


def run(size: Size, workers: int | None) -> dict[str, Runs]:
    curves: dict[tuple[str, float, int], dict] = {}

    def keep(label: str, x, seed: int, files: dict[str, bytes]) -> None:
        curves[(label, float(x), seed)] = fig1(files["jobs.arrow"])

    fixed = [f"workload.jobs={size.jobs['cs2']}"]
    runs = run_interarrivals(presets.path("cs2"), SERIES, TA, None, size.seeds["cs2"], workers, fixed, keep)
    for (label, x), summaries in runs.summaries.items():
        seeds = sorted(seed for (lb, xb, seed) in curves if (lb, xb) == (label, float(x)))
        for summary, seed in zip(summaries, seeds, strict=True):
            summary["fig1"] = curves[(label, float(x), seed)]
    return {LOAD: runs}


def grid(metric: str, scale: float = 1.0):
    return lambda summary: summary["grid"][metric] * scale


def scheduler(metric: str):
    return lambda summary: summary["scheduler"][metric]


def fig(key: str):
    return lambda summary: summary["fig1"][key]


def claim(figure: str, what: str, expect, effect) -> Claim:
    return Claim("002", figure, what, LOAD, expect, SECTION, LOAD, effect)


def beats(metric: str, other: str, ta: float, scale: float = 1.0) -> Claim:
    """CS 2.0 below ``other`` on ``metric`` at ``ta`` (late %: fewer is better)."""
    effect = difference(Term(other, ta, grid(metric, scale)), Term("CS 2.0", ta, grid(metric, scale)))
    return claim("Fig. 2", f"late %, {other} minus CS 2.0, Ta = {ta:g}", more(), effect)


def licenses(other: str, ta: float) -> Claim:
    lu = grid("license_usage", 100.0)
    effect = difference(Term("CS 2.0", ta, lu), Term(other, ta, lu))
    return claim("Fig. 5", f"license usage %, CS 2.0 minus {other}, Ta = {ta:g}", more(), effect)


CLAIMS = [
    claim(
        "Fig. 1",
        "peak jobs in the system, Ta = 1 minus Ta = 12 (CS 2.0)",
        more(),
        difference(Term("CS 2.0", 1.0, fig("peak")), Term("CS 2.0", 12.0, fig("peak"))),
    ),
    claim(
        "Fig. 1",
        "jobs in the system at Ta = 12, growth % while jobs arrive ('almost constant'; band ours)",
        near_zero(20),
        Term("CS 2.0", 12.0, fig("growth")).of,
    ),
    *(beats("late_percent", other, ta) for ta in (1.0, 4.0) for other in ("EASY BF", "Flexible BF")),
    beats("late_percent", "Flexible BF", 12.0),
    claim(
        "Fig. 3",
        "slowdown of CS 2.0 minus 1, Ta = 4 ('equal or very close to 1'; band ours)",
        near_zero(0.1),
        lambda get: get("CS 2.0", 4.0)["grid"]["mean_slowdown"] - 1.0,
    ),
    claim(
        "Fig. 4",
        "100 minus machine usage % of CS 2.0, Ta = 4 ('every machine busy'; band ours)",
        near_zero(5),
        lambda get: 100.0 - 100.0 * get("CS 2.0", 4.0)["grid"]["system_usage"],
    ),
    *(licenses(other, ta) for ta in (1.0, 4.0, 6.0) for other in ("EASY BF", "Flexible BF")),
    claim(
        "Fig. 6",
        "ms per plan, CS 2.0 minus Flexible BF, Ta = 1",
        more(),
        difference(Term("CS 2.0", 1.0, scheduler("mean_ms")), Term("Flexible BF", 1.0, scheduler("mean_ms"))),
    ),
    *(
        claim(
            "Fig. 7",
            f"total scheduling time s, {other} minus CS 2.0 Cs Td, Ta = {ta:g}",
            more(),
            difference(
                Term(other, ta, scheduler("total_seconds")),
                Term("CS 2.0 Cs Td", ta, scheduler("total_seconds")),
            ),
        )
        for ta in (1.0, 12.0)
        for other in ("CS 2.0 Td", "CS 2.0 Cs")
    ),
    claim(
        "Fig. 8",
        "ms per plan, CS 2.0 minus CS 2.0 Cs, Ta = 1 (the sweep's plans, not Fig. 8's set-up)",
        more(),
        difference(Term("CS 2.0", 1.0, scheduler("mean_ms")), Term("CS 2.0 Cs", 1.0, scheduler("mean_ms"))),
    ),
]

PAPER = Paper(run, CLAIMS)
