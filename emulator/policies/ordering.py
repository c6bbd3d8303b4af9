"""Queue orderings: the order in which ``fcfs``, ``easy`` and ``conservative`` consider queued jobs.

One mechanism for the three policies (parameter ``order``, e.g. ``easy[order=sjf]``).
Every ordering ranks the whole queue at each scheduling pass; ties are broken
by arrival order (the queue's own order: a stable sort), so runs are
deterministic. ``length`` below is the job's estimated length in MI
(``estimate x bench``); on a trace, whose jobs share one ``bench``, it orders
as the requested time does.

- ``fcfs``: arrival order (the default: the policies' original behaviour).
- ``sjf`` / ``ljf``: shortest / longest estimated length first.
- ``saf`` / ``laf``: smallest / largest estimated area first (``cpus x length``).
- ``wfp``: WFP3 (Tang et al., 2009), highest ``(wait / length)^3 x cpus`` first,
  ``wait = now - submit``: long-waiting jobs, short and wide ones, go first.
- ``fairshare``: the user with the least decayed usage first (see :class:`FairShare`).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.model import Job
from .params import Param

ORDERS = ("fcfs", "sjf", "ljf", "saf", "laf", "wfp", "fairshare")
HALF_LIFE = 7 * 86400.0
"""Default half-life of a user's decayed usage, in seconds (Slurm's ``PriorityDecayHalfLife``: 7 days)."""
ORDER_CHECKS = {"order": Param(choices=ORDERS), "half_life": Param(above=0, finite=True)}
"""The declared checks of ``order`` and ``half_life``, for every policy that ranks its queue so."""


class QueueOrder:
    """Ranks a cluster's queue by ``name`` (one of :data:`ORDERS`).

    ``ranked(view)`` gives the queued jobs in the order the policy considers
    them; a policy tells ``started(view, starts)`` which jobs it started (only
    ``fairshare`` keeps anything: the usage it charges their users).

    >>> QueueOrder("sjf").name, QueueOrder("fcfs").arrival
    ('sjf', True)
    """

    def __init__(self, name: str = "fcfs", half_life: float = HALF_LIFE) -> None:
        self.name = name
        self.arrival = name == "fcfs"
        self.fairshare = FairShare(half_life) if name == "fairshare" else None

    def ranked(self, view) -> list[Job]:
        """The queued jobs in this ordering (ties: arrival order)."""
        jobs = list(view.queue.values())
        if self.arrival or len(jobs) < 2:
            return jobs
        rank = np.argsort(self.keys(view, jobs), kind="stable")
        return [jobs[i] for i in rank.tolist()]

    def keys(self, view, jobs: list[Job]) -> np.ndarray:
        """Sort keys of ``jobs`` (in queue order), smallest first."""
        name = self.name
        if name == "fairshare":
            return self.fairshare.usage_of(view, jobs)
        length = np.fromiter((j.estimate * j.bench for j in jobs), float, len(jobs))
        if name in ("sjf", "ljf"):
            return length if name == "sjf" else -length
        cpus = np.fromiter((j.cpus for j in jobs), float, len(jobs))
        if name in ("saf", "laf"):
            return cpus * length if name == "saf" else -(cpus * length)
        wait = view.now - np.fromiter((j.submit for j in jobs), float, len(jobs))
        tiny = np.finfo(float).tiny  # a zero estimate: the ratio is huge, not a division by zero
        return -((np.maximum(wait, 0.0) / np.maximum(length, tiny)) ** 3 * cpus)

    def started(self, view, starts) -> None:
        """The policy started ``starts`` (``(job, plan, ...)`` decisions) now."""
        if self.fairshare is not None and starts:
            self.fairshare.started(view, starts)


class FairShare:
    """Decayed usage per user, as Slurm's (classic) and Maui's fair-share define it.

    A user's usage is the CPU-seconds their jobs consumed on this cluster, each
    second weighted by ``2^(-age / half_life)`` (``age``: how long ago it was
    consumed), so ``U_u(t) = sum over the user's jobs of cpus x integral over
    its run up to t of 2^(-(t - s) / half_life) ds``. The fair-share factor is
    Slurm's ``F_u = 2^(-(U_u / U) / S_u)``, with ``U`` the decayed usage of all
    users and ``S_u = 1/n`` the equal target share of the ``n`` users seen. With
    equal shares ``F_u`` falls as ``U_u`` grows, so jobs are ranked by their
    user's decayed usage, least first (users with none first); ties by arrival.

    Usage is what an accounting system records: a job's CPUs from its start to
    its end as the engine runs it (the end its run reports; for a job that ended
    between two passes, its start plus its actual length at its plan's pace),
    never later than now: nothing is charged ahead of time.
    """

    def __init__(self, half_life: float) -> None:
        self.half_life = half_life
        self.usage: dict[int, float] = {}  # user -> decayed CPU-seconds as of self.at
        self.at = 0.0
        self.active: dict[int, list] = {}  # job id -> [user, cpus, charged until, end]

    def share_factor(self, user: int) -> float:
        """Slurm's ``F = 2^(-(U_u/U) / S)`` with ``S = 1/n`` (1.0 when nobody has used anything)."""
        total = sum(self.usage.values())
        if total <= 0.0:
            return 1.0
        return 2.0 ** (-(self.usage.get(user, 0.0) / total) * len(self.usage))

    def usage_of(self, view, jobs: list[Job]) -> np.ndarray:
        """Each job's user's decayed usage now (charging what ran since the last pass first)."""
        self.charge(view)
        usage = self.usage
        return np.fromiter((usage.get(j.user, 0.0) for j in jobs), float, len(jobs))

    def charge(self, view) -> None:
        """Decay the usage to now and add what the started jobs consumed since the last charge."""
        now = view.now
        if now <= self.at:
            return
        decay = 2.0 ** (-(now - self.at) / self.half_life)
        for user in self.usage:
            self.usage[user] *= decay
        scale = self.half_life / math.log(2.0)
        running, done = view.running, []
        for job_id, entry in self.active.items():
            user, cpus, since, end = entry
            run = running.get(job_id)
            if run is not None and math.isfinite(run.end):
                end = entry[3] = run.end
            elif run is None and job_id in view.queue:  # stopped and requeued: its run is over
                end = since
            until = min(end, now)
            if until > since:  # cpus x integral of 2^(-(now - s)/h) over [since, until]
                weight = 2.0 ** (-(now - until) / self.half_life) - 2.0 ** (-(now - since) / self.half_life)
                self.usage[user] = self.usage.get(user, 0.0) + cpus * scale * weight
            entry[2] = max(since, until)
            if end <= now:
                done.append(job_id)
            self.usage.setdefault(user, 0.0)
        for job_id in done:
            del self.active[job_id]
        self.at = now

    def started(self, view, starts) -> None:
        self.charge(view)
        now, speed = view.now, view.resources.speed
        for job, plan, *_ in starts:
            end = now + job.runtime * job.bench / speed(plan)
            self.active[job.id] = [job.user, job.cpus, now, end]
            self.usage.setdefault(job.user, 0.0)
