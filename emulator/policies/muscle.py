"""MUSCLE (seed 004): collect jobs, pack them into each cluster's free spaces, send seed schedules.

Algorithm 4 of the paper, per batch of collected jobs:

1. **Collect.** Jobs are held at the meta-scheduler (:data:`HOLD`) while every
   cluster's expected makespan of the work it still has exceeds
   ``threshold``; the batch is released when some cluster's falls to it. The
   expected makespan of cluster ``c`` is read from its reports (the paper's
   "provided by TITAN"): queued and in-flight work at the cluster's speed
   plus what its running jobs still need by estimate (drained since the
   report), over its CPUs. An idle grid releases at once. Held jobs are
   offered again at each status report or submission. The paper collects
   (Algorithm 4, step 1) and leaves the threshold's value open; the default,
   ``threshold = 100`` s of work per CPU, is the longest execution time of
   its workload (``e_u = 100``, Sec. 5), a number taken from the paper's
   setup, not from any result. ``threshold = inf`` is the option that never
   collects: a batch is then what is submitted at one time.
   (``docs/reproductions.md`` measures both: collecting costs MUSCLE more
   than it gains there.) With ``batch = B`` (> 0) jobs are held instead
   until ``B`` wait, or the whole grid has nothing left to run (so the last
   jobs are never stranded): the paper's batches, the queue it measures its
   workload levels by (40-160 jobs, Sec. 5.1), by count rather than by an
   expected makespan.
2. **Pack.** The composition table of the batch (:mod:`emulator.core.composition`,
   ``m_MAX`` = the largest cluster) fills each cluster's *earliest free
   resource space*: the CPUs of MUSCLE's own plan of the cluster (per CPU,
   when the jobs it sent end by estimate, never before now) free at the
   earliest time. Every cluster that can run a job still unallocated offers
   its earliest space (Algorithm 4 compares ``e`` alone, whenever the space
   is); the least ``e_c = p_c * etSum_c * sizeSum_c / (slkSum_c * m_c)`` takes its
   space (ties: the larger cluster, then a seeded random pick). A space no
   job fits is merged into the next free time of that cluster.
3. **Send.** Each job goes with its rank in its cluster's seed schedule, as the
   dispatch priority: ``-1`` for the first job MUSCLE ever places, ``-2`` for
   the next... so "higher priority first" is the seed order (TITAN seeds its
   GA with it).

Readings: ``p, etSum, sizeSum, slkSum`` run over the jobs MUSCLE sent to the
cluster that it has not heard finish (or be rejected), plus the batch's; the
execution time on ``c`` is the estimate at the MIPS the job would get there
(:meth:`~emulator.partitions.meta.MetaView.speed`); a job's slack is ``deadline - e_jc -
submit``, at least 0, and ``free_slack * e_jc`` for a job without deadline;
``e_c = 0`` for a cluster with no jobs and ``inf`` when its jobs have no slack
left. Jobs no cluster can run are rejected at once. Jobs that entered a
cluster directly are not counted (reports carry only their ids).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..core.composition import CompositionTable
from ..core.model import Job, Platform
from .meta_base import HOLD, Choice, Dispatch, MetaPolicy, no_cluster
from .params import Param
from .registry import META

THRESHOLD = 100.0
"""Default collecting threshold, s of work per CPU: seed 004's longest execution time (``e_u``)."""


class Placed(NamedTuple):
    """One job of a seed schedule: batch index, cluster, planned start, the plan's CPUs."""

    job: int
    cluster: int
    start: float
    cpus: tuple[int, ...]


@dataclass
class Batch:
    """A batch as :func:`allocate` sees it: per job and cluster (``jobs x clusters`` arrays)."""

    sizes: np.ndarray  # CPUs per job
    runtime: np.ndarray  # execution time e_jc
    slack: np.ndarray
    eligible: np.ndarray  # bool: the job can run on the cluster


def allocate(
    batch: Batch, cpus: np.ndarray, free_at: list[np.ndarray], load: np.ndarray, rng: np.random.Generator
) -> list[Placed]:
    """Algorithm 4's inner loop: place every job of ``batch``; the seed schedules, in placement order.

    ``free_at[c]``: when each CPU of cluster ``c`` is free (updated in place);
    ``load[c] = (p, etSum, sizeSum, slkSum)`` of the jobs the cluster has
    (updated in place). Jobs that no cluster can run are left out.
    """
    n = len(batch.sizes)
    table = CompositionTable(batch.sizes, int(cpus.max()))
    blocked = [set(np.flatnonzero(~batch.eligible[:, c]).tolist()) for c in range(cpus.size)]
    left = np.ones(n, dtype=bool)
    placed: list[Placed] = []
    while True:
        open_ = batch.eligible[left].any(axis=0)
        if not open_.any():
            return placed
        c = _least_e(load, cpus, open_, rng)
        times = free_at[c]
        t = times.min()
        space = np.flatnonzero(times <= t + 1e-9 * max(1.0, abs(t)))
        chosen = table.fill(space.size, blocked[c])
        if not chosen:  # nothing fits: the space waits for the next CPUs to free
            later = times[times > t + 1e-9 * max(1.0, abs(t))]
            assert later.size, "an idle cluster that can run a job always has room for it"
            times[space] = later.min()
            continue
        at = 0
        for j in chosen:
            size = int(batch.sizes[j])
            taken = space[at : at + size]
            at += size
            times[taken] = t + batch.runtime[j, c]
            load[c] += (1.0, batch.runtime[j, c], size, batch.slack[j, c])
            left[j] = False
            for b in blocked:
                b.add(j)
            placed.append(Placed(j, c, float(t), tuple(taken.tolist())))


def e_metric(load: np.ndarray, cpus: np.ndarray) -> np.ndarray:
    """``e = p * etSum * sizeSum / (slkSum * m)`` per cluster; 0 without jobs, inf without slack."""
    jobs, runtime, size, slack = load.T
    with np.errstate(divide="ignore", invalid="ignore"):
        e = jobs * runtime * size / (slack * cpus)
    return np.where(jobs == 0, 0.0, np.where(slack > 0, e, np.inf))


def _least_e(load: np.ndarray, cpus: np.ndarray, open_: np.ndarray, rng: np.random.Generator) -> int:
    """The open cluster with the least e; ties: the most CPUs, then a seeded random pick."""
    e = np.where(open_, e_metric(load, cpus), np.nan)
    best = open_ & (e == np.nanmin(e))
    best &= cpus == cpus[best].max()
    candidates = np.flatnonzero(best)
    return int(candidates[0] if candidates.size == 1 else candidates[rng.integers(candidates.size)])


@META.register("muscle", threshold=Param(low=0), batch=Param(low=0), free_slack=Param(low=0))
class Muscle(MetaPolicy):
    """MUSCLE (see the module docstring)."""

    def __init__(
        self,
        *,
        threshold: float = THRESHOLD,
        batch: int = 0,
        free_slack: float = 5.0,
        rng: np.random.Generator | None = None,
        platform: Platform | None = None,
    ) -> None:
        super().__init__(rng=rng)
        self.threshold = threshold
        self.batch = batch
        self.free_slack = free_slack
        clusters = platform.clusters if platform is not None else ()
        self.cpus = np.array([c.cpus for c in clusters], dtype=np.int64)
        self.mips = np.array([min(m.mips for m in c.machines) for c in clusters], dtype=float)
        self.free_at = [np.zeros(c.cpus) for c in clusters]  # MUSCLE's plan of each cluster's CPUs
        self.load = np.zeros((len(clusters), 4))  # p, etSum, sizeSum, slkSum of the jobs at each cluster
        self.sent: dict[int, tuple[int, np.ndarray]] = {}  # job id -> (cluster, its row of load)
        self.rank = 0  # seed-schedule positions given so far

    def release(self, view) -> bool:
        """Whether some cluster's expected makespan of its remaining work is at most ``threshold``."""
        drained = view.draining_cpus * np.maximum(0.0, view.now - view.report_time)
        running = np.maximum(0.0, view.running_work - drained)
        queued = (view.queued_cpu_work + view.in_flight_work) / self.mips
        return bool(((running + queued) / self.cpus <= self.threshold).any())

    def collecting(self, jobs: list[Job], view) -> bool:
        """Whether to hold ``jobs``: until ``batch`` of them wait (an idle grid waits for none),
        or, without ``batch``, while every cluster has more than ``threshold`` of work per CPU."""
        if self.batch:
            return len(jobs) < self.batch and not view.idle()
        return not self.release(view)

    def select(self, jobs: list[Job], view) -> list[Choice]:
        eligible = np.array([view.eligible(job) for job in jobs], dtype=bool).reshape(len(jobs), -1)
        runnable = eligible.any(axis=1)
        if self.collecting(jobs, view):
            return [HOLD if ok else no_cluster(job) for job, ok in zip(jobs, runnable, strict=True)]
        choices: list[Choice] = [no_cluster(job) for job in jobs]
        batch = self._batch(jobs, view, eligible)
        for plan in self.free_at:
            np.maximum(plan, view.now, out=plan)
        for placed in allocate(batch, self.cpus, self.free_at, self.load, self.rng):
            job, c = jobs[placed.job], placed.cluster
            self.rank += 1
            choices[placed.job] = Dispatch(c, -self.rank)
            self.sent[job.id] = (
                c,
                np.array([1.0, batch.runtime[placed.job, c], job.cpus, batch.slack[placed.job, c]]),
            )
        return choices

    def _batch(self, jobs: list[Job], view, eligible: np.ndarray) -> Batch:
        speed = np.array([view.speed(job) for job in jobs]).reshape(len(jobs), -1)
        length = np.array([job.length for job in jobs])[:, None]
        runtime = np.where(eligible, length / np.where(speed > 0, speed, 1.0), np.inf)
        deadline = np.array([job.deadline for job in jobs])[:, None]
        submit = np.array([job.submit for job in jobs])[:, None]
        with np.errstate(invalid="ignore"):  # inf - inf where the job cannot run: never read
            slack = np.where(
                np.isfinite(deadline), np.maximum(0.0, deadline - runtime - submit), self.free_slack * runtime
            )
        sizes = np.array([job.cpus for job in jobs], dtype=np.int64)
        return Batch(sizes, runtime, slack, eligible)

    def observe(self, cluster: int, status) -> None:
        for ids in (status.finished, status.rejected):
            for job_id in ids:
                entry = self.sent.pop(job_id, None)
                if entry is not None:
                    c, row = entry
                    self.load[c] -= row
                    if self.load[c, 0] <= 0:
                        self.load[c] = 0.0  # no float residue once the cluster has no job of ours
