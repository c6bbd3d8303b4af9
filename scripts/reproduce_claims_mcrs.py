"""Seed 003's claims (MCRS) as :mod:`reproduce_all` measures them.

MCRS against LARS, PARS and BARS (their paper definitions, ``load = false``),
improvements as ``reproduce_mcrs.py`` computes them. Grid size (S = 10, 50) and
job-to-resource ratio (Rjr = 10) with the literal lengths and ``least_ttr``;
deadline (d = 20, 50, 70) with lengths 1e3-1e4 MI and ``reject``, the reading
under which deadlines can be met (docs/reproductions.md, MCRS). Each at the
preset's 10 s gaps ("stated": the paper gives no arrival process) and at
offered load 1 on the 40-cluster grid, the load docs/reproductions.md infers
from the text of the job-to-resource experiment.
"""

from __future__ import annotations

from reproduce_claims import Claim, Paper, Size, Term, change, gain
from reproduce_common import Runs, run_series
from reproduce_mcrs import FIXED_CLUSTERS, METRICS, OTHERS, policies
from reproduce_mcrs import PAPER as TABLES
from reproduce_verdicts import more, near_zero

from emulator.data.offered_load import interarrival_for_load
from workloads import presets

LOADS = {"stated": None, "inferred 1.0": 1.0}
SECTION = "MCRS"
REJECT = ["workload.length=[1e3,1e4]"]
SHORT = {"TTR s": "TTR", "throughput jobs/s": "throughput", "utilization": "utilization"}


def arrivals(load: float | None, reading: list[str]) -> list[str]:
    """The inter-arrival override of ``load`` on the 40-cluster grid (none: the preset's)."""
    if load is None:
        return []
    reference = [*reading, f"platform.clusters={FIXED_CLUSTERS}"]
    return [f"workload.mean_interarrival={interarrival_for_load(presets.path('mcrs'), load, reference)}"]


def run(size: Size, workers: int | None) -> dict[str, Runs]:
    seeds, jobs, scenario = size.seeds["mcrs"], size.jobs["mcrs"], presets.path("mcrs")
    literal, rejecting = policies("least_ttr"), policies("reject")
    grid40 = f"platform.clusters={FIXED_CLUSTERS}"
    out = {}
    for load, value in LOADS.items():
        fixed = [f"workload.jobs={jobs}", *arrivals(value, [])]
        out[f"size {load}"] = run_series(
            scenario, literal, "platform.clusters", [10, 50], seeds, workers, fixed
        )
        ratio = [grid40, *arrivals(value, [])]
        out[f"ratio {load}"] = run_series(
            scenario, literal, "workload.jobs", [10 * FIXED_CLUSTERS], seeds, workers, ratio
        )
        deadline = [*REJECT, grid40, f"workload.jobs={jobs}", *arrivals(value, REJECT)]
        xs = [[d, d] for d in (20, 50, 70)]
        out[f"deadline {load}"] = run_series(
            scenario, rejecting, "workload.deadline", xs, seeds, workers, deadline
        )
    return out


def metric(name: str):
    return lambda summary: summary["grid"][name]


def improvement(x, label: str, other: str) -> object:
    """MCRS ahead of ``other`` on METRICS's ``label`` at ``x``, %."""
    key, higher = next((m, h) for lb, m, h in METRICS if lb == label)
    return gain(Term("MCRS", x, metric(key)), Term(other, x, metric(key)), lower_better=not higher)


def table(experiment: str, x, load: str) -> list[Claim]:
    """The paper's improvement table of ``experiment`` (Tables 2-4): 9 rows."""
    title, _, numbers = TABLES[experiment]
    figure = title.split("(")[1].rstrip(")")
    at = title.split(" (")[0]
    return [
        Claim(
            "003",
            figure,
            f"MCRS's {SHORT[label]} gain over {other} %, {at}",
            load,
            more(paper[k]),
            SECTION,
            f"{experiment} {load}",
            improvement(x, label, other),
        )
        for label, paper in numbers.items()
        for k, other in enumerate(OTHERS)
    ]


def text(load: str) -> list[Claim]:
    """What the paper's text says beside its tables."""

    def claim(figure, what, expect, runs, effect) -> Claim:
        return Claim("003", figure, what, load, expect, SECTION, f"{runs} {load}", effect)

    own = metric("throughput"), metric("utilization")
    return [
        claim(
            "Fig. 2",
            "MCRS's TTR gain over PARS %, S = 10",
            more(78),
            "size",
            improvement(10, "TTR s", "PARS"),
        ),
        claim(
            "Fig. 2",
            "MCRS's TTR gain over BARS %, S = 10",
            more(75),
            "size",
            improvement(10, "TTR s", "BARS"),
        ),
        claim(
            "Fig. 2",
            "MCRS's TTR gain over LARS %, S = 10 ('close to each other'; band ours)",
            near_zero(10),
            "size",
            improvement(10, "TTR s", "LARS"),
        ),
        *(
            claim(
                "Fig. 3",
                f"MCRS's throughput gain over {other} %, S = 10 ('closely behind'; band ours)",
                near_zero(10),
                "size",
                improvement(10, "throughput jobs/s", other),
            )
            for other in OTHERS
        ),
        *(
            claim(
                "Fig. 4",
                f"MCRS's utilization gain over {other}, S = 50 minus S = 10 (points; 'more pronounced')",
                more(),
                "size",
                change(improvement(10, "utilization", other), improvement(50, "utilization", other)),
            )
            for other in OTHERS
        ),
        claim(
            "Fig. 9",
            "MCRS's throughput, d = 50 over d = 20, %",
            more(39),
            "deadline",
            gain(Term("MCRS", [50, 50], own[0]), Term("MCRS", [20, 20], own[0]), lower_better=False),
        ),
        claim(
            "Fig. 9",
            "MCRS's throughput, d = 70 over d = 20, %",
            more(52),
            "deadline",
            gain(Term("MCRS", [70, 70], own[0]), Term("MCRS", [20, 20], own[0]), lower_better=False),
        ),
        claim(
            "Fig. 10",
            "MCRS's utilization, d = 70 over d = 20, %",
            more(24),
            "deadline",
            gain(Term("MCRS", [70, 70], own[1]), Term("MCRS", [20, 20], own[1]), lower_better=False),
        ),
    ]


def claims_at(load: str) -> list[Claim]:
    return [
        *table("size", 50, load),
        *table("ratio", 10 * FIXED_CLUSTERS, load),
        *table("deadline", [70, 70], load),
        *text(load),
    ]


PAPER = Paper(run, [c for load in LOADS for c in claims_at(load)])
