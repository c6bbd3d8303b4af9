"""TITAN (seed 004): a genetic algorithm reorders the waiting jobs at every scheduling event.

At each event the waiting jobs are rescheduled by :func:`emulator.core.genetic.evolve`
(CP over makespan, idle time and over-deadline, see :mod:`emulator.core.genetic`);
the jobs the best schedule starts *now* are started, the others wait for the
next event. Running jobs are never moved: their CPUs count as busy until their
estimated end. When nothing changed since the last schedule (the same jobs
wait and, replayed on the cluster as it is now, it starts each of them when it
said: the jobs that ended did so on their estimates), that schedule stands
without a new GA run, which would search the very same problem again.

Seed schedule: the order the previous event's best schedule gave the jobs
still waiting, then the newcomers in the meta-scheduler's order: highest
``view.priority`` first (MUSCLE sends its seed schedule that way), then
arrival order (``seed = "arrival"`` ignores priorities). Readings:

- the cluster is taken as identical CPUs at its slowest machine's MIPS
  (exact for the paper's homogeneous clusters); a job's execution time is
  its *estimate* there, as a scheduler knows it;
- the GA knows nothing of license copies or of machine boundaries: a job it
  plans to start now starts if a first fit finds room (always, for ``spread``
  jobs without licenses on a homogeneous cluster); otherwise it waits;
- a running job past its estimate frees its CPUs "now" in the plan, and the
  first fit finds them busy: the plan is redone at the next event.

Parameters: ``population``, the generation cap ``generations``, the stopping
rule (best CP improved by less than ``tolerance``, relative, over
``patience`` generations), ``crossover`` and ``mutation`` rates, and the CP
weights ``w_over``, ``w_idle``, ``w_makespan``: the paper's ``(W_o, W_m,
W_i)``, default ``(4, 3, 1)``, named by the terms eq. 1 gives them. The GA
draws from the partition's seeded stream only.

``pairing``: which of ``W_m`` and ``W_i`` weighs makespan and which idle
time. The paper says both:

- ``"eq1"`` (default), Sec. 3, eq. (1): "CP = (W_i Gamma + W_m omega + W_o
  theta) / (W_i + W_m + W_o) ... where Gamma, omega and theta are makespan,
  idle-time and over-deadline, and W_i, W_m and W_o are their weights":
  makespan x ``W_i`` (``w_makespan``), idle x ``W_m`` (``w_idle``); with
  (4, 3, 1) idle time weighs 3 and makespan 1.
- ``"text"``, Sec. 5: "The combination of the weights for the over-deadline,
  the makespan and the idle-time is denoted by (W_o, W_m, W_i)": makespan x
  ``W_m`` (``w_idle``'s value), idle x ``W_i`` (``w_makespan``'s); with
  (4, 3, 1) makespan weighs 3 and idle time 1.

The same triple, e.g. Fig. 6's ``titan[w_over=12.0]`` for (12, 3, 1), thus
means either; :func:`cp_weights` maps it, and ``emulator/data/metrics.py`` judges
the cluster's CP with the pairing of its TITAN.
"""

from __future__ import annotations

import numpy as np

from ..core.genetic import Evolved, Waiting, Weights, cost, evolve
from ..core.model import Cluster
from ..state.placement import Scratch
from .local_base import Decision, LocalPolicy
from .params import Param
from .registry import LOCAL, PolicyError

SEEDS = ("priority", "arrival")
PAIRINGS = ("eq1", "text")


def cp_weights(w_makespan: float, w_idle: float, w_over: float, pairing: str = "eq1") -> Weights:
    """The CP weight of each term from the paper's ``(W_o, W_m, W_i) = (w_over, w_idle, w_makespan)``.

    ``pairing = "eq1"``: makespan x ``W_i``, idle x ``W_m`` (eq. 1); ``"text"``: makespan x ``W_m``,
    idle x ``W_i`` (Sec. 5's "(W_o, W_m, W_i)" for over-deadline, makespan, idle-time).
    """
    if pairing not in PAIRINGS:
        raise PolicyError(
            f"local policy 'titan' parameter 'pairing' = {pairing!r}: expected one of {PAIRINGS}"
        )
    if pairing == "text":
        return Weights(makespan=w_idle, idle=w_makespan, over=w_over)
    return Weights(makespan=w_makespan, idle=w_idle, over=w_over)


@LOCAL.register(
    "titan",
    seed=Param(choices=SEEDS),
    pairing=Param(choices=PAIRINGS),
    population=Param(low=1),
    patience=Param(low=1),
    generations=Param(low=0),
    w_makespan=Param(low=0),
    w_idle=Param(low=0),
    w_over=Param(low=0),
)
class Titan(LocalPolicy):
    """TITAN's GA over the waiting jobs' order; starts what the best schedule starts now."""

    def __init__(
        self,
        *,
        population: int = 20,
        generations: int = 100,
        patience: int = 5,
        tolerance: float = 0.001,
        crossover: float = 0.8,
        mutation: float = 0.2,
        w_makespan: float = 1.0,
        w_idle: float = 3.0,
        w_over: float = 4.0,
        pairing: str = "eq1",
        seed: str = "priority",
        rng: np.random.Generator | None = None,
        cluster: Cluster | None = None,
    ) -> None:
        super().__init__(rng=rng, cluster=cluster)
        if w_makespan + w_idle + w_over <= 0:
            raise PolicyError("local policy 'titan': CP weights must not be all 0")
        self.settings = dict(
            population=population,
            generations=generations,
            patience=patience,
            tolerance=tolerance,
            crossover=crossover,
            mutation=mutation,
        )
        self.weights = cp_weights(w_makespan, w_idle, w_over, pairing)
        self.by_priority = seed == "priority"
        self.mips = min(m.mips for m in cluster.machines) if cluster is not None else 1.0
        self._plan: dict[int, float] = {}  # the last best schedule: job id -> planned start, in order

    def schedule(self, view) -> list[Decision]:
        now = view.now
        jobs = self.seed_order(view)
        if view.resources.up_cpus < view.cluster.cpus:  # machines down (failures): plan on those up
            jobs = [j for j in jobs if j.cpus <= view.resources.up_cpus]  # the others wait for repairs
            if not jobs:
                return []
        waiting = Waiting(
            np.array([j.cpus for j in jobs], dtype=np.int64),
            np.array([j.estimate * j.bench / self.mips for j in jobs]),
            np.array([j.deadline for j in jobs]),
        )
        free = self.free_times(view)
        seed = np.arange(len(jobs))
        best = self._replay(jobs, waiting, free, now)
        if best is None:
            best = evolve(seed, waiting, free, now, self.weights, self.rng, **self.settings)
        order, start = best.order.tolist(), best.costs.start[0].tolist()
        self._plan = {jobs[i].id: begin for i, begin in zip(order, start, strict=True)}
        scratch = Scratch(view.resources)
        starts: list[Decision] = []
        due = now + 1e-9 * max(1.0, abs(now))
        for i, begin in zip(order, start, strict=True):
            if begin <= due:
                job = jobs[i]
                plan = scratch.fit(job)
                if plan is not None:
                    scratch.take(job, plan)
                    starts.append((job, plan))
        return starts

    def _replay(self, jobs: list, waiting: Waiting, free: np.ndarray, now: float) -> Evolved | None:
        """The last best schedule if it still stands: the same jobs wait and, replayed on the
        cluster as it is now, it starts each of them when it said it would (jobs ended on their
        estimates). A GA run on that unchanged problem could only find what the last one missed."""
        plan = self._plan
        if not jobs or len(jobs) > len(plan) or any(j.id not in plan for j in jobs):
            return None
        order = np.arange(len(jobs))
        costs = cost(order[None, :], waiting, free, now, self.weights)
        if not np.allclose(costs.start[0], [plan[j.id] for j in jobs], rtol=1e-12, atol=1e-9):
            return None
        return Evolved(order, costs, 0)

    def seed_order(self, view) -> list:
        """The waiting jobs in seed order: the last best order, then newcomers by priority, arrival."""
        queue = view.queue
        kept = [queue[i] for i in self._plan if i in queue]
        seen = {j.id for j in kept}
        new = [j for j in queue.values() if j.id not in seen]
        if self.by_priority and view.priority:
            new.sort(key=lambda j: -view.priority.get(j.id, 0))  # stable: arrival order among equals
        return kept + new

    def free_times(self, view) -> np.ndarray:
        """When each CPU is free: now for free ones, the estimated end of the job holding the others."""
        now, running = view.now, view.running.values()
        busy = np.repeat([max(r.estimated_end, now) for r in running], [r.job.cpus for r in running])
        free = np.full(max(view.resources.free_cpus, 0), now)
        return np.concatenate([free, busy]) if busy.size else free
