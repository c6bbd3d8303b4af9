"""Flexible backfilling (seed 000): EASY with the queue ranked by a priority recomputed at every event.

At each scheduling event the queued jobs are ranked by priority (highest
first; ties: earlier submit, then lower id). Jobs start in that order while
they fit; the first that cannot gets the reservation; later ones backfill when
they do not delay it (the EASY pass of :func:`emulator.policies.easy.backfill`,
reused as it is). Every plan, the reservation's too, takes the fastest
eligible machines first (ties: lowest machine index).

Priority sources (``priority``):

- ``"ms"``: the priority the meta-scheduler attached to the job (the paper's
  "MS heuristics" case; 0 for jobs that entered directly);
- ``"ls"``: the sum of four local heuristics (the "LS heuristics" case), see
  :func:`ls_priority`.

The paper leaves every constant to "the system administrator". Defaults:
``deadline_max = 15``, ``w_licenses = 5`` and ``w_wait = 8`` are the values the
same authors use for the matching heuristics of CS 2.0 (seed 002);
``deadline_min = 1`` so a job with a deadline never ranks below an otherwise
equal one without; ``k = 2`` (the paper's over-estimation factor of ``nxt``:
the deadline score starts to rise two fastest-machine run times before the
last moment to start); ``w_aging = 0.001`` per second, so an hour of waiting
is worth 3.6 points, about a quarter of a job at its deadline.
"""

from __future__ import annotations

import numpy as np

from ..state.placement import Scratch
from .easy import backfill
from .local_base import Decision, LocalPolicy
from .params import Param
from .queue_table import QueueTable
from .registry import LOCAL

PRIORITIES = ("ms", "ls")
MACHINE_ORDERS = ("fastest", "index")


@LOCAL.register("flexible", priority=Param(choices=PRIORITIES), machine_order=Param(choices=MACHINE_ORDERS))
class Flexible(LocalPolicy):
    """Flexible backfilling with ``priority = "ms" | "ls"`` (see the module docstring).

    ``machine_order = "index"`` places like EASY (lowest machine index first)
    instead of fastest first. The queue is kept as numpy columns
    (:class:`QueueTable`), the ranking and the heuristics are vectorized over
    it, and jobs that cannot fit on what is free now are skipped in one
    vectorized test, so a pass costs Python steps only for jobs that might start.
    """

    def __init__(
        self,
        *,
        priority: str = "ls",
        w_aging: float = 0.001,
        deadline_min: float = 1.0,
        deadline_max: float = 15.0,
        k: float = 2.0,
        w_licenses: float = 5.0,
        w_wait: float = 8.0,
        machine_order: str = "fastest",
        rng=None,
        cluster=None,
    ) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.priority = priority
        self.weights = dict(
            w_aging=w_aging,
            deadline_min=deadline_min,
            deadline_max=deadline_max,
            k=k,
            w_licenses=w_licenses,
            w_wait=w_wait,
        )
        self.machine_order = machine_order
        self.table: QueueTable | None = None

    def _setup(self, view) -> None:
        cluster = view.cluster
        self.license_names = sorted(cluster.licenses)
        self.copies = np.array([cluster.licenses[n] for n in self.license_names], dtype=float)
        self.table = QueueTable(self.license_names)
        mips = view.resources.mips
        self.bench_max = float(mips.max())
        self.order = np.argsort(-mips, kind="stable") if self.machine_order == "fastest" else None

    def schedule(self, view) -> list[Decision]:
        if self.table is None:
            self._setup(view)
        table = self.table
        table.sync(view.queue, view.priority)
        rows = table.rows()
        if self.priority == "ms":
            score = table.ms_priority[rows]
        else:
            score = ls_priority(
                view.now,
                table.submit[rows],
                table.estimate[rows],
                table.bench[rows],
                table.deadline[rows],
                table.licenses[rows],
                self.copies,
                self.bench_max,
                **self.weights,
            )
        ranked = rows[np.lexsort((table.id[rows], table.submit[rows], -score))]
        starts = backfill(view, self._candidates(view, ranked), Scratch(view.resources, self.order))
        table.remove(job.id for job, _ in starts)
        return starts

    def _candidates(self, view, ranked: np.ndarray):
        """The ranked jobs up to the first that cannot fit on what is free now, then only those that can.

        "Can fit" is a necessary condition checked on all jobs at once: enough
        free CPUs on some machine (single) or in the cluster (spread), and a
        free copy of each license (copies counted per job). A job failing it
        cannot start in this pass (resources only shrink), so the EASY pass
        loses nothing by not seeing it after the reservation's job.
        """
        table, res = self.table, view.resources
        free = res.free
        room = np.where(table.single[ranked], free.max(initial=0), res.free_cpus)
        fits = table.cpus[ranked] <= room
        if self.license_names and not res.per_machine:
            free_copies = np.array([res.free_licenses.get(n, 0) for n in self.license_names])
            fits &= (table.licenses[ranked] <= free_copies).all(axis=1)
        misses = np.flatnonzero(~fits)
        if misses.size:
            first = int(misses[0])
            ranked = np.concatenate((ranked[: first + 1], ranked[first + 1 :][fits[first + 1 :]]))
        jobs = table.jobs
        return (jobs[r] for r in ranked.tolist())


def ls_priority(
    now: float,
    submit: np.ndarray,
    estimate: np.ndarray,
    bench: np.ndarray,
    deadline: np.ndarray,
    licenses: np.ndarray,
    copies: np.ndarray,
    bench_max: float,
    *,
    w_aging: float,
    deadline_min: float,
    deadline_max: float,
    k: float,
    w_licenses: float,
    w_wait: float,
) -> np.ndarray:
    """The LS priority of each queued job: Aging + Deadline + Licenses + Wait minimization.

    Arrays are per queued job (``licenses``: jobs x license types, copies asked;
    ``copies``: the cluster's copies of each type; ``deadline`` inf for none):

    - Aging ``w_aging * (now - submit)``.
    - Deadline: ``nxt = estimate * bench / bench_max``, ``ext = now + nxt``,
      ``t = deadline - k * nxt``; ``deadline_min`` if ``ext <= t`` or
      ``ext > deadline``, else ``deadline_min + a * (ext - t)`` with ``a`` the
      slope from ``(t, deadline_min)`` to ``(deadline, deadline_max)``; 0 without
      a deadline.
    - Licenses: ``rho_l`` = queued jobs asking for ``l`` / copies of ``l``;
      critical when ``rho_l > 1``; ``w_licenses * (sum of rho_l over the job's
      non-critical licenses + d * sum over its critical ones)``, ``d`` = the
      number of distinct non-critical licenses asked for in the queue (at least 1).
    - Wait minimization ``w_wait * min(estimate) / estimate``.
    """
    aging = w_aging * (now - submit)
    nxt = estimate * bench / bench_max
    ext = now + nxt
    start = deadline - k * nxt
    rising = (start < ext) & (ext <= deadline)
    with np.errstate(divide="ignore", invalid="ignore"):
        ramp = deadline_min + (deadline_max - deadline_min) * (ext - start) / (deadline - start)
    score = aging + np.where(np.isfinite(deadline), np.where(rising, ramp, deadline_min), 0.0)
    if licenses.shape[1]:
        asking = licenses > 0
        requests = asking.sum(axis=0)
        rho = np.divide(requests, copies, out=np.zeros(len(copies)), where=copies > 0)
        critical = rho > 1.0
        d = max(int(((requests > 0) & ~critical).sum()), 1)
        score += w_licenses * (asking @ np.where(critical, d * rho, rho))
    if len(estimate):
        score += w_wait * estimate.min() / estimate
    return score
