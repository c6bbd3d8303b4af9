"""Stress perturbations of a job stream: load scaling, arrival bursts, the runtime estimates schedulers see.

A scenario's ``[stress]`` table (see ``docs/stress.md``) asks for them; they
apply to every workload source (generators, traces, Arrow replays and explicit
``gridlets``) after the source has built its jobs table, in this order:

1. **Load scaling** (``load``): every gap between consecutive submit times is
   divided by ``load``, the earliest submit time staying put
   (:func:`workloads.transform.scale_interarrival` with ``1 / load``); a stream
   starting at 0 has its submit times divided by ``load``.
2. **Bursts** (``[[stress.bursts]]``): within each window ``[start, end)`` of
   the emulation's clock (after load scaling) the arrival rate is ``factor``
   times the stream's: the window receives the jobs the stream had in
   ``[start', start' + factor x (end - start))``, its gaps divided by
   ``factor``, and every later job arrives ``(factor - 1) x (end - start)``
   earlier (later, for a lull: ``factor < 1``). A deterministic, monotone,
   piecewise-linear time warp (:func:`warp_bursts`): no job is added, dropped
   or reordered, and none is invented; a burst borrows the stream's own later
   jobs.
3. **Deadlines** move with their jobs: each keeps its margin over its submit time.
4. **Estimates** (``[stress.estimates]``): the runtime estimate the schedulers
   see, the actual runtime never changing (:func:`estimates`). Deadlines do not
   follow estimates: a deadline is the user's need, not their guess.

Steps 1-3 draw nothing; the estimate models draw from their own random stream
(:data:`ESTIMATE_STREAM`, from the scenario seed), so adding a perturbation
never changes another's draws, the workload's or the policies'.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from emulator.core.config import ScenarioError, Table

from .transform import scale_interarrival

__all__ = [
    "ESTIMATE_MODELS",
    "ESTIMATE_STREAM",
    "Burst",
    "Estimates",
    "WorkloadStress",
    "apply",
    "estimates",
    "read",
    "tsafrir_histogram",
    "warp_bursts",
]

ESTIMATE_KEYS = {
    "trace": (),
    "exact": (),
    "factor": ("distribution", "range", "mu", "sigma"),
    "f-model": ("f",),
    "tsafrir": ("max_estimate",),
}
"""Estimate models and their keys."""
ESTIMATE_MODELS = tuple(ESTIMATE_KEYS)
FACTOR_DISTRIBUTIONS = ("uniform", "lognormal")
ESTIMATE_STREAM = (1 << 30, 1)
"""Spawn key of the estimate models' random stream: a sub-stream of the workload's (``(1 << 30,)``)."""


@dataclass(frozen=True)
class Burst:
    """Within ``[start, end)`` (emulation clock) jobs arrive ``factor`` times as fast as in the stream."""

    start: float
    end: float
    factor: float


@dataclass(frozen=True)
class Estimates:
    """How the estimate schedulers see is made from the actual runtime (``model``; see :func:`estimates`)."""

    model: str = "trace"
    distribution: str = "uniform"
    range: tuple[float, float] = (1.0, 1.0)
    mu: float = 0.0
    sigma: float = 0.0
    f: float = 0.0
    max_estimate: int = 0


@dataclass(frozen=True)
class WorkloadStress:
    """The workload perturbations of ``[stress]``; the defaults change nothing."""

    load: float = 1.0
    bursts: tuple[Burst, ...] = ()
    estimates: Estimates = field(default_factory=Estimates)

    @property
    def active(self) -> bool:
        return self.load != 1.0 or bool(self.bursts) or self.estimates.model != "trace"


# --- reading [stress] ------------------------------------------------------------------------------


def read(stress: Table) -> WorkloadStress:
    """The workload keys of ``[stress]``: ``load``, ``[[stress.bursts]]``, ``[stress.estimates]``.

    Reads only its own keys; the caller checks the table for unknown keys once
    every reader of ``[stress]`` has read its own.
    """
    load = _finite(stress, "load", 1.0, low=0.0, strict=True)
    bursts = _bursts(stress.tables("bursts", []))
    table = stress.table("estimates", {})
    spec = _estimates(table)
    table.done()
    return WorkloadStress(load, bursts, spec)


def _bursts(tables: list[Table]) -> tuple[Burst, ...]:
    bursts = []
    for t in tables:
        start = t.number("start", low=0.0)
        end = t.get("end", float, check=lambda v, s=start: v > s, expected=f"a number > start ({start})")
        factor = _finite(t, "factor", low=0.0, strict=True)
        t.done()
        bursts.append((Burst(start, end, factor), t))
    bursts.sort(key=lambda item: item[0].start)
    for (before, first), (burst, second) in itertools.pairwise(bursts):
        if burst.start < before.end:
            raise second.fail(
                "start",
                burst.start,
                f"a window not overlapping {first.path} ([{before.start}, {before.end}))",
            )
    return tuple(burst for burst, _ in bursts)


def _estimates(t: Table) -> Estimates:
    model = t.choose("model", ESTIMATE_KEYS, "trace")
    if model == "factor":
        distribution = t.choice("distribution", FACTOR_DISTRIBUTIONS, "uniform")
        if distribution == "uniform":
            return Estimates(model, distribution, range=_range(t))
        mu = _finite(t, "mu", 0.0)
        sigma = _finite(t, "sigma", low=0.0)
        return Estimates(model, distribution, mu=mu, sigma=sigma)
    if model == "f-model":
        return Estimates(model, f=_finite(t, "f", low=0.0))
    if model == "tsafrir":
        longest = t.get(
            "max_estimate",
            int,
            0,
            check=lambda v: v == 0 or v >= HOUR,
            expected=f"0 (the longest runtime rounded up to whole hours) or an integer >= {HOUR} seconds",
        )
        return Estimates(model, max_estimate=longest)
    return Estimates(model)


def _finite(t: Table, name: str, *default: float, low: float = -math.inf, strict: bool = False) -> float:
    """A finite number ``>= low`` (``> low`` if ``strict``); required unless a default is given."""
    return t.number(name, *default, low=low, strict_low=strict, finite=True)


def _range(t: Table) -> tuple[float, float]:
    """``range = [low, high]``: required, ``0 < low <= high``."""
    if not t.has("range"):
        raise ScenarioError(f"{t.source}: missing key '{t.key('range')}' ([low, high] factors, 0 < low)")
    low, high = t.pair("range", (1.0, 1.0))
    if not (low > 0 and math.isfinite(high)):
        raise t.fail("range", [low, high], "[low, high] with 0 < low <= high (finite numbers)")
    return low, high


# --- applying them to a jobs table -----------------------------------------------------------------


def apply(table: pa.Table, stress: WorkloadStress, seed: int) -> pa.Table:
    """``table`` with its submit times, deadlines and estimates perturbed; rows and other columns kept.

    ``seed`` is the scenario seed: the estimate models draw from
    ``SeedSequence(seed, spawn_key=ESTIMATE_STREAM)``.
    """
    if not stress.active or table.num_rows == 0:
        return table
    names = table.column_names
    if stress.load != 1.0 or stress.bursts:
        submit = table.column("submit").to_numpy()
        moved = scale_interarrival(submit, 1.0 / stress.load) if stress.load != 1.0 else submit
        moved = warp_bursts(moved, stress.bursts)
        table = table.set_column(names.index("submit"), "submit", pa.array(moved))
        deadline = table.column("deadline")
        if deadline.null_count < len(deadline):
            margin = deadline.to_numpy(zero_copy_only=False) - submit  # null -> NaN -> stays null
            kept = moved + margin
            table = table.set_column(
                names.index("deadline"), "deadline", pa.array(kept, pa.float64(), mask=np.isnan(kept))
            )
    if stress.estimates.model != "trace":
        runtime = table.column("runtime").to_numpy()
        rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=ESTIMATE_STREAM))
        new = estimates(runtime, stress.estimates, rng)
        table = table.set_column(names.index("estimate"), "estimate", pa.array(new))
        if "swf_req_time" in names:  # an export writes the estimate the run used (field 9 falls back to it)
            column = pa.nulls(table.num_rows, pa.float64())
            table = table.set_column(names.index("swf_req_time"), "swf_req_time", column)
    return table


def warp_bursts(submit: np.ndarray, bursts: tuple[Burst, ...] | list[Burst]) -> np.ndarray:
    """Submit times after the burst windows (sorted, not overlapping, in the output clock).

    The warp maps the stream's time ``s`` to ``t``: before the first window
    ``t = s``; window ``k`` (``[a, b)``, factor ``f``) takes the stream's
    ``[a', a' + f (b - a))`` with ``t = a + (s - a') / f``, where ``a'`` is
    ``a`` in the stream's clock (``a`` plus what the earlier windows
    shifted); after it ``t = b + (s - b')``. Continuous and non-decreasing,
    so the order of the jobs (and equal submit times) is kept.
    """
    if not len(bursts) or submit.size == 0:
        return submit
    starts = np.array([b.start for b in bursts])
    ends = np.array([b.end for b in bursts])
    factors = np.array([b.factor for b in bursts])
    source_start = np.empty(len(bursts))
    source_end = np.empty(len(bursts))
    shift = 0.0  # stream time - emulation time, before window k
    for k, burst in enumerate(bursts):
        source_start[k] = burst.start + shift
        source_end[k] = source_start[k] + burst.factor * (burst.end - burst.start)
        shift = source_end[k] - burst.end
    edges = np.column_stack([source_start, source_end]).ravel()
    segment = np.searchsorted(edges, submit, side="right")  # 0: before; 2k+1: in window k; 2k+2: after it
    window = (segment - 1) // 2
    k = np.maximum(window, 0)
    inside = segment % 2 == 1
    next_start = np.append(starts[1:], np.inf)
    warped = np.where(
        inside,
        np.minimum(starts[k] + (submit - source_start[k]) / factors[k], ends[k]),
        np.minimum(ends[k] + (submit - source_end[k]), next_start[k]),
    )
    return np.where(segment == 0, submit, warped)


# --- estimate models -------------------------------------------------------------------------------


def estimates(runtime: np.ndarray, spec: Estimates, rng: np.random.Generator) -> np.ndarray:
    """The estimates schedulers see, from the actual runtimes (seconds on the reference machine).

    - ``exact``: the runtime itself (perfect estimates).
    - ``factor``: runtime x a factor drawn per job, ``uniform`` in ``range =
      [low, high]`` or ``lognormal`` (``ln factor ~ N(mu, sigma)``); factors
      below 1 underestimate.
    - ``f-model``: the "badness factor" model of Mu'alem & Feitelson
      (*Utilization, predictability, workloads, and user runtime estimates in
      scheduling the IBM SP2 with backfilling*, IEEE TPDS 12(6), 2001), as
      Tsafrir & Feitelson state it (*The dynamics of backfilling*, IPDPS
      2006): the estimate is uniform in ``[r, (f + 1) r]`` for runtime ``r``,
      ``f >= 0`` (``f = 0``: exact).
    - ``tsafrir``: the modal user estimates of Tsafrir, Etsion & Feitelson
      (*Modeling user runtime estimates*, JSSPP 2005, LNCS 3834):
      see :func:`tsafrir_histogram`. Each job draws its estimate from the
      histogram's values at or above its runtime, with the histogram's
      weights; a job longer than the maximal estimate gets the maximal
      estimate (a site's wall-clock limit; whether it is then killed is
      the run's ``kill_at_estimate``).

    Proportional models give a zero-runtime job a zero estimate.
    """
    n = runtime.size
    if spec.model == "exact":
        return runtime.astype(float, copy=True)
    if spec.model == "factor":
        if spec.distribution == "uniform":
            return runtime * rng.uniform(spec.range[0], spec.range[1], n)
        return runtime * rng.lognormal(spec.mu, spec.sigma, n)
    if spec.model == "f-model":
        return runtime * rng.uniform(1.0, spec.f + 1.0, n)
    if spec.model == "tsafrir":
        longest = spec.max_estimate or auto_max_estimate(runtime)
        times, weights = tsafrir_histogram(n, longest, rng)
        return draw_at_least(runtime, times, weights, rng)
    raise ValueError(f"unknown estimate model {spec.model!r}; accepted: {', '.join(ESTIMATE_MODELS)}")


def auto_max_estimate(runtime: np.ndarray) -> int:
    """The longest runtime rounded up to whole hours (at least one hour): no job exceeds it."""
    longest = float(runtime.max()) if runtime.size else 0.0
    return max(1, math.ceil(longest / HOUR)) * HOUR


def draw_at_least(
    runtime: np.ndarray, times: np.ndarray, weights: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Per job, one of ``times`` (ascending) >= its runtime, drawn with ``weights`` restricted to those.

    One uniform per job: ``u`` in the cumulative weights above the job's
    lowest admissible value. Runtimes above every value get the largest.
    """
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    lowest = np.searchsorted(times, runtime, side="left")
    base = np.where(lowest > 0, cdf[np.maximum(lowest - 1, 0)], 0.0)
    u = base + rng.random(runtime.size) * (1.0 - base)
    chosen = np.searchsorted(cdf, u, side="right")
    chosen = np.clip(chosen, np.minimum(lowest, len(times) - 1), len(times) - 1)
    return times[chosen].astype(float)


# --- Tsafrir, Etsion & Feitelson (JSSPP 2005): the histogram of user estimates ----------------------

MINUTE, HOUR = 60, 3600
HEAD = 20
"""The most popular estimates (the "head"): about 90% of the jobs use one of 20 values."""
JOINT = tuple(m * MINUTE for m in (5, 10, 15, 20, 30, 60, 120, 180, 240, 300, 360, 480, 600, 720, 1080))
"""The 15 head values found in all four traces the paper models (SDSC SP2, CTC SP2, KTH SP2, SDSC Blue)."""
ROUND = tuple(s * MINUTE for s in (200 * 60, 100 * 60, 50 * 60, 10 * 60, 5 * 60, 2 * 60, 60, 20, 10, 5))
"""Round steps whose multiples, from the maximum down, complete the head to 20 values."""
HEAD_SHARE = 89.0
"""Percent of the jobs using a head value."""
HEAD_SIZE = (14.0491, -0.177531, 0.462513)
"""Percent of jobs using the head value of popularity rank x = 2..20: a e^(b x) + c (rank 1 gets the rest)."""
TAIL_SIZE = (795.6, -2.267)
"""Popularity of the tail values, rank x = 21, 22...: a x^b, scaled to 100 - HEAD_SHARE percent."""
TAIL_TIME = (12.1039, -0.6026)
"""Tail times: y = (a - 1) x / (a - x), x = time rank / count, y = time / max; a = 1 + p K^q, K values."""
TAIL_OFFSETS = (0, 30, -30, 20, -20, 10, -10)
"""Seconds tried, in order, to move a tail time (whole minutes) off a value already taken."""
BIN_COUNT = ((0, 0), (20, 10), (200, 20), (1000, 35), (10000, 90), (70000, 340), (250000, 565))
"""(jobs, distinct estimate values): the number of values grows piecewise linearly with the jobs."""
TIME_RANK_TO_POPULARITY = (
    (3, 1, 1, 1),
    (1, 3, 4, 6),
    (4, 4, 10, 5),
    (17, 2, 14, 3),
    (13, 12, 20, 7),
    (7, 9, 2, 2),
    (8, 8, 3, 18),
    (18, 18, 7, 19),
    (2, 6, 12, 4),
    (6, 7, 6, 11),
    (16, 11, 19, 20),
    (10, 20, 5, 9),
    (5, 16, 18, 10),
    (15, 5, 16, 14),
    (14, 14, 9, 13),
    (19, 13, 17, 16),
    (11, 10, 15, 15),
    (12, 15, 13, 17),
    (9, 17, 8, 8),
    (20, 19, 11, 12),
)
"""Row: head time rank (0: the maximum, then ascending values); columns: its popularity rank in each trace."""


def tsafrir_histogram(
    jobs: int, max_estimate: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """The estimate values (seconds, ascending) and their weights (sum 1) for ``jobs`` jobs.

    Tsafrir, Etsion & Feitelson, *Modeling user runtime estimates*, JSSPP 2005
    (the parameters are the paper's, as in the authors' ``est_model.cc``):

    - **head**: ``max_estimate`` (the most popular value), the paper's 15
      values common to all traces below it (5, 10, 15, 20, 30 min; 1, 2, 3,
      4, 5, 6, 8, 10, 12, 18 h), completed to 20 with multiples of round
      steps (200 h, 100 h, ... 1 h, 20, 10, 5 min) from the maximum down. The
      head holds 89% of the jobs; popularity rank x >= 2 holds
      ``14.0491 e^(-0.177531 x) + 0.462513`` percent, rank 1 (the maximum)
      the rest. Which value gets which rank follows the four traces' table
      (:data:`TIME_RANK_TO_POPULARITY`): going up the values, a rank is due
      by the last position any trace had it, else the smaller of two random
      picks among the ranks seen so far.
    - **tail**: the other values up to the number the job count calls for
      (:data:`BIN_COUNT`), at ``max x (a - 1) x / (a - x)`` (whole minutes,
      nudged off values already taken), holding 11% of the jobs with a
      power law ``795.6 x^-2.267`` over popularity ranks matched to them at random.

    The histogram is a distribution: estimates are drawn per job
    (:func:`draw_at_least`) rather than assigned as exact counts.
    """
    head = _head_times(max_estimate)
    head_sizes = _head_sizes(len(head), rng)
    tail = _tail_times(_bin_count(jobs), max_estimate, head)
    a, b = TAIL_SIZE
    tail_sizes = a * (HEAD + 1 + np.arange(len(tail), dtype=float)) ** b
    if len(tail):
        tail_sizes *= (100.0 - HEAD_SHARE) / tail_sizes.sum()
        tail_sizes = rng.permutation(tail_sizes)
    times = np.array(head + tail, dtype=np.int64)
    sizes = np.concatenate([head_sizes, tail_sizes])
    order = np.argsort(times, kind="stable")
    return times[order], sizes[order] / sizes.sum()


def _head_times(max_estimate: int) -> list[int]:
    """The maximum, then the other head values ascending (at most 20 in all)."""
    values = [max_estimate, *(v for v in JOINT if v < max_estimate)]
    taken = set(values)
    for step in ROUND:
        for value in range((max_estimate // step) * step, 0, -step):
            if len(values) >= HEAD:
                break
            if value not in taken:
                values.append(value)
                taken.add(value)
    return [values[0], *sorted(values[1:HEAD])]


def _head_sizes(count: int, rng: np.random.Generator) -> np.ndarray:
    """Percent of jobs of each head value, in :func:`_head_times` order."""
    a, b, c = HEAD_SIZE
    by_rank = a * np.exp(b * np.arange(2, count + 1)) + c
    by_rank = np.concatenate([[HEAD_SHARE - by_rank.sum()], by_rank])
    by_rank[::-1].sort()  # descending: rank 1 first
    ranks = np.asarray(_popularity_ranks(rng)[:count])
    dense = np.argsort(np.argsort(ranks))  # fewer than 20 values: ranks among those used
    return by_rank[dense]


def _popularity_ranks(rng: np.random.Generator) -> list[int]:
    """Popularity rank (1..20) of each head time rank (0 = the maximum, which is rank 1)."""
    due = {}
    for time_rank in range(HEAD - 1, -1, -1):
        for rank in TIME_RANK_TO_POPULARITY[time_rank]:
            due.setdefault(rank, time_rank)  # the last time rank any trace gave it
    chosen: list[int] = []
    pool: list[int] = []
    for time_rank, row in enumerate(TIME_RANK_TO_POPULARITY):
        pool += [rank for rank in row if rank not in chosen]
        if time_rank == 0:
            rank = 1
        else:
            overdue = [r for r in range(1, HEAD + 1) if due[r] <= time_rank and r not in chosen]
            if overdue:
                rank = overdue[0]
            elif pool:
                rank = min(pool[int(rng.integers(len(pool)))], pool[int(rng.integers(len(pool)))])
            else:
                rank = min(set(range(1, HEAD + 1)) - set(chosen))
        chosen.append(rank)
        pool = [r for r in pool if r != rank]
    return chosen


def _bin_count(jobs: int) -> int:
    xs, ys = zip(*BIN_COUNT, strict=True)
    return math.floor(float(np.interp(jobs, xs, ys)) + 0.5)


def _tail_times(values: int, max_estimate: int, head: list[int]) -> list[int]:
    """The tail's times (``values`` in all, head included), ascending time rank; fewer if nudging fails."""
    count = values - len(head)
    if count <= 0:
        return []
    p, q = TAIL_TIME
    a = 1.0 + p * values**q
    tail: list[int] = []
    used = set(head)
    for i in range(1, count + 1):
        x = i / count
        seconds = math.floor((a - 1.0) * x / (a - x) * max_estimate / MINUTE + 0.5) * MINUTE
        for offset in TAIL_OFFSETS:
            value = seconds + offset
            if 0 < value < max_estimate and value not in used:
                tail.append(value)
                used.add(value)
                break
    return tail
