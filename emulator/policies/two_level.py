"""The two-level Meta-Scheduler (seeds 000/001): a priority per job, dispatch by Load and Ordering.

Priority levels ``0..P`` (``levels``). A job's priority combines three parts
(``heuristics``), each in ``0..P``:

- **Deadline** (:func:`deadline_part`): where the job's margin falls in
  ``[0, 2 E[margin]]`` split into ``P`` exponentially growing sub-intervals,
  ``E[margin]`` the mean margin of the last ``window`` jobs with deadlines
  seen before it, then refined by ``r = margin / estimate``.
- **Licenses** (:func:`licenses_part`): the number of license copies asked
  for, on ``[0, |L|]`` split into ``P`` equal sub-intervals.
- **User**: gold ``user_gold * P``, silver ``user_silver * P``, regular
  ``user_regular * P``.

``combine`` (the two papers disagree; both readings are kept):
``"mean"`` (default): the rounded mean of the parts (halves round up), seed
001: "MS computes the priority p_j of a job j by averaging the results of
three heuristics"; ``"sum"``: their rounded sum, seed 000 (Sec. 3): "The job
priority is computed summing the partial priority values Delta_{p,j}
computed by each heuristics". Either is clipped to ``0..P``, so under
``"sum"`` two mid-range parts already reach the top level while under
``"mean"`` a job needs every part high. ``heuristics = "none"`` gives every
job priority 0 (the paper's "no heuristics" case: Load and Ordering still
balance the clusters, in arrival order).

Dispatch: per cluster, ``Load_c[p]`` is the workload (``estimate * bench``)
and ``Order_c[p]`` the number of the jobs this meta-scheduler dispatched to
``c`` with priority ``>= p`` that the cluster has not reported started (or
rejected). A job of priority ``p`` goes to the first eligible cluster, in
cluster order, with ``Load_c[p] == 0``; otherwise to the least ``Load_c[p]``;
ties go to the least ``Order_c[p]``, remaining ties to a seeded random pick.
Loads within a relative 1e-9 of each other tie (sums of floats in different
orders). The priority travels with the job (``Dispatch(cluster, priority)``)
for a Flexible backfilling local scheduler with ``priority = "ms"``.

Readings where the papers are loose: the window holds margins of jobs with
deadlines only, negative ones included (they were seen); a negative margin
scores 0 ("hopeless"), a margin at or beyond ``2 E[margin]`` scores 0; the
``r < 1`` refinement adds ``w`` for ``r in [2^-(w+1), 2^-w)`` without the
paper's cap ``w <= P - 1`` (the sum is clipped to ``P`` anyway; ``r = 0``
adds ``P``); the licenses part is ``ceil(n * P / |L|)`` clipped to ``P``
(sub-intervals closed on the right, so any request scores at least 1), ``n``
the copies the job asks for and ``|L|`` the license types of the platform
(``licenses_total`` overrides it).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import deque

import numpy as np

from ..core.model import Job, Platform
from .meta_base import Choice, Dispatch, MetaPolicy, no_cluster
from .params import Param
from .registry import META, PolicyError

HEURISTICS = ("deadline", "licenses", "user")
COMBINE = ("mean", "sum")


def margin(job: Job) -> float:
    """``(deadline - estimate) - submit``: how long the job may wait; inf without a deadline."""
    return (job.deadline - job.estimate) - job.submit


def interval_bounds(mean_margin: float, levels: int) -> list[float]:
    """``S_1..S_P`` over ``[0, 2 E[margin]]``: ``S_k = S_{k-1} + u 2^k``, ``u = 2E / sum_{k=1..P} 2^k``."""
    unit = 2.0 * mean_margin / (2 ** (levels + 1) - 2)
    return [unit * (2 ** (k + 1) - 2) for k in range(1, levels + 1)]


def deadline_part(job_margin: float, estimate: float, mean_margin: float, levels: int) -> int:
    """The Deadline heuristic's part, ``0..levels`` (see the module docstring)."""
    if not math.isfinite(job_margin) or job_margin < 0:
        return 0
    bounds = interval_bounds(mean_margin, levels)
    # margin in [S_k, S_{k+1}) scores P - k (S_0 = 0); at or beyond S_P = 2 E[margin] it scores 0
    part = 0 if job_margin >= bounds[-1] else levels - bisect_right(bounds, job_margin)
    r = job_margin / estimate
    if r >= 1.0:
        return max(part - math.floor(r), 0)
    w = levels if r == 0.0 else -math.frexp(r)[1]  # r = m 2^e, m in [1/2, 1): r in [2^-(w+1), 2^-w)
    return min(part + w, levels)


def licenses_part(copies: int, license_types: int, levels: int) -> int:
    """The Licenses heuristic's part: ``ceil(copies * P / |L|)``, clipped to ``P``; 0 for none."""
    if copies <= 0 or license_types <= 0:
        return 0
    return min(math.ceil(copies * levels / license_types), levels)


@META.register("two-level", levels=Param(low=1), window=Param(low=1), combine=Param(choices=COMBINE))
class TwoLevel(MetaPolicy):
    """The Meta-Scheduler of the two-level scheduler (see the module docstring)."""

    def __init__(
        self,
        *,
        levels: int = 8,
        window: int = 100,
        combine: str = "mean",
        heuristics: str = "deadline+licenses+user",
        user_gold: float = 1.0,
        user_silver: float = 0.5,
        user_regular: float = 0.0,
        licenses_total: int = 0,
        rng: np.random.Generator | None = None,
        platform: Platform | None = None,
    ) -> None:
        super().__init__(rng=rng)
        used = [] if heuristics == "none" else heuristics.split("+")
        unknown = [h for h in used if h not in HEURISTICS]
        if unknown or len(set(used)) != len(used):
            raise PolicyError(
                f"two-level: heuristics {heuristics!r}: expected 'none' or names from "
                f"{', '.join(HEURISTICS)} joined by '+'"
            )
        self.levels, self.combine, self.heuristics = levels, combine, tuple(used)
        self.user = {
            "gold": user_gold * levels,
            "silver": user_silver * levels,
            "regular": user_regular * levels,
        }
        if licenses_total <= 0 and platform is not None:
            licenses_total = len({lic for c in platform.clusters for lic in c.licenses})
        self.license_types = licenses_total
        self.margins: deque[float] = deque(maxlen=window)
        n = len(platform.clusters) if platform is not None else 0
        self.load = np.zeros((n, levels + 1))  # workload queued per cluster and exact priority
        self.count = np.zeros((n, levels + 1), dtype=np.int64)
        self.queued: dict[int, tuple[int, int, float]] = {}  # job id -> (cluster, priority, workload)

    def priority(self, job: Job) -> int:
        """The job's MS priority; updates the E[margin] window (call once per job, in submit order)."""
        if not self.heuristics:
            return 0
        parts = []
        if "deadline" in self.heuristics:
            m = margin(job)
            if math.isfinite(m):
                mean = sum(self.margins) / len(self.margins) if self.margins else m
                parts.append(deadline_part(m, job.estimate, mean, self.levels))
                self.margins.append(m)
            else:
                parts.append(0)
        if "licenses" in self.heuristics:
            parts.append(licenses_part(len(job.licenses), self.license_types, self.levels))
        if "user" in self.heuristics:
            parts.append(self.user.get(job.user_class, 0.0))
        combined = sum(parts) if self.combine == "sum" else sum(parts) / len(parts)
        return min(max(math.floor(combined + 0.5), 0), self.levels)  # user weights may push it out

    def choose(self, job: Job, view) -> Choice:
        p = self.priority(job)
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)
        c = self.dispatch(p, eligible)
        work = job.length
        self.load[c, p] += work
        self.count[c, p] += 1
        self.queued[job.id] = (c, p, work)
        return Dispatch(c, p)

    def dispatch(self, p: int, eligible: np.ndarray) -> int:
        """Load, then Ordering, then a seeded random pick, over the eligible clusters."""
        count = self.count[:, p:].sum(axis=1)
        idle = np.flatnonzero(eligible & (count == 0))
        if idle.size:
            return int(idle[0])
        load = np.where(eligible, self.load[:, p:].sum(axis=1), np.inf)
        least = load <= load.min() * (1 + 1e-9)
        order = np.where(least, count, np.iinfo(np.int64).max)
        tied = np.flatnonzero(order == order.min())
        return int(tied[0] if tied.size == 1 else tied[self.rng.integers(tied.size)])

    def observe(self, cluster: int, status) -> None:
        for ids in (status.started, status.rejected):
            for job_id in ids:
                entry = self.queued.pop(job_id, None)
                if entry is None:
                    continue
                c, p, work = entry
                self.count[c, p] -= 1
                self.load[c, p] = self.load[c, p] - work if self.count[c, p] else 0.0
