"""Seed 004's claims (MUSCLE) as :mod:`reproduce_all` measures them.

MUSCLE (its default: collecting, Algorithm 4) against DLL and WRAND, MCP and PB
as ``reproduce_muscle.py`` reads them. Workload levels 40 and 100 at the
calibrated gaps ("stated": 1.22 and 1.06 s, calibrated at 4,000 jobs, so
shorter runs sit lower) and at the steady offered loads 0.80 and 0.90 that
docs/reproductions.md infers from Sec. 5.1's text; Fig. 5's deadline ranges and
Fig. 6's weights at the gaps; Fig. 7 at 4 and 10 clusters with the log size law
at offered load 1.0 (our choice: the paper holds its queue-to-capacity ratio
without saying how).
"""

from __future__ import annotations

import json

from reproduce_claims import Claim, Paper, Size, Term, change, difference, gain
from reproduce_common import Runs, run_series
from reproduce_muscle import FIG7_LOAD, INTERARRIVALS, KEY, POLICIES, SINGLE, WEIGHTS, fig7_points
from reproduce_verdicts import less, more

from emulator.data.offered_load import interarrival_for_load
from workloads import presets

LEVEL_GAPS = {40: INTERARRIVALS[0], 100: INTERARRIVALS[2]}
STEADY = {40: 0.80, 100: 0.90}
LOADS_STEADY = "inferred 0.80, 0.90"
FIG7 = "chosen 1.0"
FIG7_COUNTS = (4, 10)  # the smallest and the largest multicluster
SECTION = "MUSCLE"


def run(size: Size, workers: int | None) -> dict[str, Runs]:
    seeds, scenario = size.seeds["muscle"], presets.path("muscle")
    fixed = [f"workload.jobs={size.jobs['muscle']}", 'workload.size_law="uniform"']

    def sweep(series, key, xs, extra=()) -> Runs:
        return run_series(scenario, series, key, xs, seeds, workers, [*fixed, *extra])

    steady = [round(interarrival_for_load(scenario, STEADY[level], fixed), 6) for level in (40, 100)]
    gaps = list(LEVEL_GAPS.values())
    out = {
        "stated": sweep([*POLICIES, SINGLE], KEY, gaps),
        LOADS_STEADY: relabel(sweep([*POLICIES, SINGLE], KEY, steady), dict(zip(steady, gaps, strict=True))),
        "deadline": sweep(
            POLICIES, "workload.deadline_ratio", [[0.0, 1.0], [0.0, 5.0]], [f"{KEY}={gaps[1]}"]
        ),
        "weights": sweep(POLICIES, KEY, gaps, [f"platform.policies={json.dumps(WEIGHTS)}"]),
    }
    clusters = Runs()
    for n, gap, sets in fig7_points(FIG7_LOAD, fixed):
        if n not in FIG7_COUNTS:
            continue
        found = sweep(POLICIES, KEY, [gap], sets)
        clusters.failures += found.failures
        clusters.summaries.update(relabel(found, {gap: n}).summaries)
    out[FIG7] = clusters
    return out


def relabel(runs: Runs, xs: dict) -> Runs:
    """``runs`` keyed by ``xs[x]`` instead of ``x`` (the steady loads' gaps as the levels they stand for)."""
    runs.summaries = {(label, xs[x]): v for (label, x), v in runs.summaries.items()}
    return runs


def grid(metric: str):
    return lambda summary: summary["grid"][metric]


def ahead(other: str, x, metric: str = "mcp") -> object:
    """MUSCLE's MCP (or PB) gain over ``other`` at ``x``, % (the paper's "outperforms by")."""
    return gain(Term("MUSCLE", x, grid(metric)), Term(other, x, grid(metric)), lower_better=True)


def levels(load: str) -> list[Claim]:
    def claim(figure, what, expect, effect) -> Claim:
        return Claim("004", figure, what, load, expect, SECTION, load, effect)

    x40, x100 = LEVEL_GAPS[40], LEVEL_GAPS[100]
    return [
        claim("Table 3, Fig. 4a", "MUSCLE's MCP gain over DLL %, level 40", more(12.1), ahead("DLL", x40)),
        claim("Table 3, Fig. 4a", "MUSCLE's MCP gain over DLL %, level 100", more(56.7), ahead("DLL", x100)),
        claim("Table 3, Fig. 4a", "MUSCLE's MCP gain over WRAND %, level 40", more(8.4), ahead("WRAND", x40)),
        claim(
            "Table 3, Fig. 4a", "MUSCLE's MCP gain over WRAND %, level 100", more(48.9), ahead("WRAND", x100)
        ),
        claim(
            "Fig. 4a",
            "MUSCLE's MCP gain over DLL, level 100 minus level 40 (points)",
            more(44.6),
            change(ahead("DLL", x40), ahead("DLL", x100)),
        ),
        claim(
            "Fig. 4b",
            "PB, DLL minus MUSCLE, level 40 ('slightly worse' below 60 jobs)",
            less(),
            difference(Term("DLL", x40, grid("pb")), Term("MUSCLE", x40, grid("pb"))),
        ),
        claim(
            "Fig. 4b",
            "PB, DLL minus MUSCLE, level 100",
            more(),
            difference(Term("DLL", x100, grid("pb")), Term("MUSCLE", x100, grid("pb"))),
        ),
        claim(
            "Sec. 5.1",
            "MUSCLE's MCP gain % over itself never collecting (threshold = inf), level 100",
            more(),
            ahead(SINGLE.label, x100),
        ),
    ]


def others() -> list[Claim]:
    def claim(figure, what, expect, runs, effect, load="stated") -> Claim:
        return Claim("004", figure, what, load, expect, SECTION, runs, effect)

    urgent, loose = [0.0, 1.0], [0.0, 5.0]
    return [
        claim(
            "Fig. 5",
            "MUSCLE's MCP gain over DLL, dr in [0, 1] minus [0, 5], level 100 (points)",
            more(),
            "deadline",
            change(ahead("DLL", loose), ahead("DLL", urgent)),
        ),
        claim(
            "Fig. 6",
            "MUSCLE's MCP gain over DLL %, level 40, weights per cluster",
            more(15.6),
            "weights",
            ahead("DLL", LEVEL_GAPS[40]),
        ),
        claim(
            "Fig. 6",
            "MUSCLE's MCP gain over DLL %, level 100, weights per cluster",
            more(57.5),
            "weights",
            ahead("DLL", LEVEL_GAPS[100]),
        ),
        *(
            claim(
                "Fig. 7",
                f"MUSCLE's MCP gain over DLL %, {n} clusters (log sizes)",
                more(),
                FIG7,
                ahead("DLL", n),
                FIG7,
            )
            for n in FIG7_COUNTS
        ),
        claim(
            "Fig. 7",
            "MUSCLE's MCP gain over WRAND, 10 minus 4 clusters (points)",
            more(),
            FIG7,
            change(ahead("WRAND", 4), ahead("WRAND", 10)),
            FIG7,
        ),
        *(
            claim(
                "Fig. 7",
                f"PB, DLL minus MUSCLE, {n} clusters",
                more(),
                FIG7,
                difference(Term("DLL", n, grid("pb")), Term("MUSCLE", n, grid("pb"))),
                FIG7,
            )
            for n in FIG7_COUNTS
        ),
    ]


PAPER = Paper(run, [*levels("stated"), *levels(LOADS_STEADY), *others()])
