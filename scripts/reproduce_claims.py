"""What :mod:`reproduce_all` measures: each paper's claims, as effects computed per seed from run summaries.

A :class:`Claim` names the runs it reads (one :class:`reproduce_common.Runs` of
its paper, by name) and its effect: a function of one seed's summaries
(``get(label, x)``), usually a :func:`difference` or a :func:`gain` between
two :class:`Term`. Every policy of one seed sees the same workload, so the
effect is paired by seed; its mean and 95% half-width over seeds are what the
verdict rule judges (:mod:`reproduce_verdicts`). The claims of each paper live
in ``reproduce_claims_<paper>.py``; :data:`DIAGRAMS` are the rows no run
measures (figures that are diagrams, and the worked example).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

from reproduce_common import Runs
from reproduce_doc import Row
from reproduce_verdicts import Expect

from emulator.engine.sweep import mean_ci

Summary = dict
Getter = Callable[[str, object], Summary]
Effect = Callable[[Getter], float | None]


@dataclass(frozen=True)
class Size:
    """Seeds and jobs per run of each paper's runs."""

    name: str
    seeds: dict[str, int]
    jobs: dict[str, int]

    def describe(self) -> str:
        return "; ".join(f"{p}: {self.seeds[p]} seeds x {self.jobs[p]} jobs" for p in self.seeds)


SIZES = {
    "reduced": Size(
        "reduced",
        {"two-level": 4, "cs2": 3, "mcrs": 5, "muscle": 3},
        {"two-level": 1000, "cs2": 1500, "mcrs": 1000, "muscle": 1000},
    ),
    "tiny": Size(
        "tiny",
        {"two-level": 2, "cs2": 2, "mcrs": 2, "muscle": 2},
        {"two-level": 60, "cs2": 60, "mcrs": 60, "muscle": 60},
    ),
}


class Term(NamedTuple):
    """One number of one seed's run: series ``label`` at x value ``x``, read by ``value``."""

    label: str
    x: object
    value: Callable[[Summary], float | None]

    def of(self, get: Getter) -> float | None:
        return self.value(get(self.label, self.x))


def difference(a: Term, b: Term) -> Effect:
    """``a - b``, in the metric's own unit."""

    def effect(get: Getter) -> float | None:
        va, vb = a.of(get), b.of(get)
        return None if va is None or vb is None else va - vb

    return effect


def gain(ours: Term, other: Term, lower_better: bool) -> Effect:
    """Ours ahead of ``other``, % of other's: ``(other - ours) / other`` when lower is better
    (MUSCLE's "outperforms by", MCRS's TTR), ``(ours - other) / other`` when higher is."""

    def effect(get: Getter) -> float | None:
        mine, theirs = ours.of(get), other.of(get)
        if mine is None or theirs is None or not theirs:
            return None
        return 100.0 * ((theirs - mine) if lower_better else (mine - theirs)) / theirs

    return effect


def change(first: Effect, then: Effect) -> Effect:
    """``then - first``: how an effect moves between two points (a trend)."""

    def effect(get: Getter) -> float | None:
        a, b = first(get), then(get)
        return None if a is None or b is None else b - a

    return effect


@dataclass(frozen=True)
class Claim:
    """One row: where the paper says it, what is measured, at which load, the paper's side."""

    seed: str
    figure: str
    claim: str
    load: str
    expect: Expect
    section: str
    runs: str  # the name of the Runs it reads
    effect: Effect

    def row(self, measured: dict[str, Runs]) -> Row:
        values = per_seed(measured[self.runs], self.effect)
        found = mean_ci(values) if len(values) >= 2 else None  # one seed has no spread to judge by
        ours = None if found is None else (found[0], found[1], len(values))
        return Row(self.seed, self.figure, self.claim, self.load, self.expect, ours, self.section)


def per_seed(runs: Runs, effect: Effect) -> list[float]:
    """The effect of each seed; none at all when a run failed (seeds could pair wrongly)."""
    if runs.failures:
        return []
    seeds = max((len(v) for v in runs.summaries.values()), default=0)
    values = []
    for i in range(seeds):
        value = effect(lambda label, x, i=i: runs.at(label, x)[i])
        if value is not None and math.isfinite(value):
            values.append(value)
    return values


@dataclass(frozen=True)
class Paper:
    """A paper's runs (``run(size, workers)`` -> Runs by name) and the claims read from them."""

    run: Callable[[Size, int | None], dict[str, Runs]]
    claims: list[Claim]


DIAGRAMS = [
    Row(
        "000",
        "Figs. 1, 2",
        "the two-level architecture; the deadline margin's sub-intervals",
        "-",
        None,
        None,
        "Two-level",
        "meta `two-level`, `tests/test_two_level.py`",
    ),
    Row(
        "003",
        "Fig. 1",
        "a grid scheduler linked to heterogeneous clusters",
        "-",
        None,
        None,
        "MCRS",
        "meta partition and links, `tests/test_mcrs.py`",
    ),
    Row(
        "004",
        "Fig. 1",
        "multicluster job management: MUSCLE above one TITAN per cluster",
        "-",
        None,
        None,
        "MUSCLE",
        "meta `muscle`, local `titan`, `tests/test_muscle.py`",
    ),
    Row(
        "004",
        "Fig. 2",
        "TITAN's coding of a schedule and its execution map",
        "-",
        None,
        None,
        "MUSCLE",
        "`emulator/core/genetic.py`, `tests/test_titan.py`",
    ),
    Row(
        "004",
        "Tables 1, 2, Fig. 3",
        "the worked example: composition table and the schedules of C1, C2",
        "-",
        None,
        None,
        "MUSCLE",
        "reproduced exactly by `tests/test_muscle.py`",
    ),
]
