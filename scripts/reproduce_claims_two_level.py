"""Seeds 000/001's claims (the two-level scheduler) as :mod:`reproduce_all` measures them.

MS heuristics (and no heuristics, for the late jobs) at ``t_a = 5`` and 15,
at the stated inter-arrivals and at offered load 1.0 at ``t_a = 5``, the load
docs/reproductions.md infers from the text around Table 1 (so the shares are
compared at a load read from the same paragraph that reports them).
"""

from __future__ import annotations

from reproduce_claims import Claim, Paper, Size, Term, change, difference
from reproduce_common import Runs, run_interarrivals
from reproduce_two_level import CASES
from reproduce_verdicts import more, near_zero

from workloads import presets

MS, NONE = CASES[0], CASES[2]
TA = [5.0, 15.0]
LOADS = {"stated": None, "inferred 1.0": 1.0}
SECTION = "Two-level"


def run(size: Size, workers: int | None) -> dict[str, Runs]:
    fixed = [f"workload.jobs={size.jobs['two-level']}"]
    seeds, scenario = size.seeds["two-level"], presets.path("two-level")
    return {
        load: run_interarrivals(scenario, [MS, NONE], TA, value, seeds, workers, fixed)
        for load, value in LOADS.items()
    }


def cluster(metric: str, c: int, scale: float = 1.0):
    """Cluster ``c``'s ``metric`` (x ``scale``), or ``None`` where the run has none."""

    def value(summary: dict) -> float | None:
        found = summary["clusters"][f"cluster{c}"][metric]
        return None if found is None else found * scale

    return value


def at(label: str, ta: float, metric: str, c: int, scale: float = 1.0) -> Term:
    return Term(label, ta, cluster(metric, c, scale))


def claims_at(load: str) -> list[Claim]:
    share = "workload_share"

    def claim(figure: str, what: str, expect, effect, seed: str = "000") -> Claim:
        return Claim(seed, figure, what, load, expect, SECTION, load, effect)

    return [
        claim(
            "Table 1",
            "share of cluster 1 minus cluster 4, t_a = 5 (0.53 - 0.08)",
            more(0.45),
            difference(at("MS", 5.0, share, 1), at("MS", 5.0, share, 4)),
            seed="001",
        ),
        claim(
            "Table 1",
            "cluster 1's share, t_a = 15 minus t_a = 5 (0.67 - 0.53)",
            more(0.14),
            difference(at("MS", 15.0, share, 1), at("MS", 5.0, share, 1)),
            seed="001",
        ),
        claim(
            "Fig. 4 left",
            "slowdown of jobs without deadline, cluster 4 minus cluster 1 (MS, t_a = 5)",
            more(),
            difference(
                at("MS", 5.0, "mean_slowdown_no_deadline", 4), at("MS", 5.0, "mean_slowdown_no_deadline", 1)
            ),
        ),
        claim(
            "Fig. 4 right",
            "late %, no heuristics minus MS, cluster 1 (t_a = 5)",
            more(),
            difference(at("none", 5.0, "late_percent", 1), at("MS", 5.0, "late_percent", 1)),
        ),
        claim(
            "Fig. 4 right",
            "late jobs, cluster 1 minus cluster 4 ('hundreds' against 'few'; MS, t_a = 5)",
            more(),
            difference(at("MS", 5.0, "late_jobs", 1), at("MS", 5.0, "late_jobs", 4)),
        ),
        claim(
            "Fig. 5",
            "system usage %, MS minus no heuristics, cluster 1 ('similar for all cases'; band ours)",
            near_zero(10),
            difference(at("MS", 5.0, "system_usage", 1, 100.0), at("none", 5.0, "system_usage", 1, 100.0)),
        ),
        claim(
            "Fig. 5",
            "license usage %, cluster 1 minus cluster 4 ('lower on smaller clusters'; MS)",
            more(),
            difference(at("MS", 5.0, "license_usage", 1, 100.0), at("MS", 5.0, "license_usage", 4, 100.0)),
        ),
    ]


def trend(load: str) -> Claim:
    """Table 1's mechanism as one effect: how much cluster 1 gains over its capacity share from 5 to 15."""
    first = difference(at("MS", 5.0, "workload_share", 1), at("MS", 5.0, "workload_share", 4))
    then = difference(at("MS", 15.0, "workload_share", 1), at("MS", 15.0, "workload_share", 4))
    return Claim(
        "001",
        "Table 1",
        "cluster 1 minus cluster 4, t_a = 15 minus t_a = 5 (0.66 - 0.45)",
        load,
        more(0.21),
        SECTION,
        load,
        change(first, then),
    )


PAPER = Paper(run, [c for load in LOADS for c in [*claims_at(load), trend(load)]])
