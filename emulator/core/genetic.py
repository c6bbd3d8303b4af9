"""TITAN's genetic algorithm (seed 004, section 3): schedules of rigid parallel jobs on identical CPUs.

A schedule is an order of the waiting jobs. It is decoded by list scheduling:
in order, each job of ``s`` CPUs takes the ``s`` CPUs that become free
earliest (given the jobs before it) and starts when the last of them is free.
That is the paper's two-dimensional coding (an order plus a CPU allocation
per job) with the allocation chosen greedily: on identical CPUs no other
allocation lets the job start earlier or leaves less idle time before it.

Its cost is the paper's comprehensive performance

    CP = (W_i * makespan + W_m * idle + W_o * overdeadline) / (W_i + W_m + W_o)

with ``makespan`` = last planned end - now, ``idle`` = CPU time the schedule
leaves unused *before* its jobs (on each CPU a job takes, from when the CPU is
free to the job's start; what is left after a CPU's last job is free for
later arrivals and not counted), ``overdeadline`` = sum of
``max(0, end - deadline)``. The weights are named by their terms
(:class:`Weights`); the paper's default ``(W_o, W_m, W_i) = (4, 3, 1)``.

:func:`cost` evaluates a whole population at once: a Python loop over the
positions of the order, numpy over the population (each step sorts a
``population x CPUs`` matrix of CPU free times). :func:`evolve` is the GA:
the seed plus random permutations, fitness ``(CP_max - CP_k) / (CP_max -
CP_min)``, roulette selection, order crossover, swap mutation, the best
schedule kept (elitism), stopping when the best CP improved by less than
``tolerance`` (relative) over ``patience`` generations, or at ``generations``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Weights:
    """CP weights by term: the paper's ``W_i`` (makespan), ``W_m`` (idle time), ``W_o`` (over-deadline)."""

    makespan: float = 1.0
    idle: float = 3.0
    over: float = 4.0

    def cp(self, makespan, idle, over):
        return (self.makespan * makespan + self.idle * idle + self.over * over) / (
            self.makespan + self.idle + self.over
        )


@dataclass(frozen=True)
class Waiting:
    """The jobs to schedule: CPUs, execution time on this cluster, deadline (``inf``: none)."""

    size: np.ndarray
    runtime: np.ndarray
    deadline: np.ndarray


@dataclass(frozen=True)
class Costs:
    """Per schedule of a population: CP and its terms, and each position's planned start."""

    cp: np.ndarray
    makespan: np.ndarray
    idle: np.ndarray
    over: np.ndarray
    start: np.ndarray  # (population, jobs): start of the job at each position of the order


def cost(orders: np.ndarray, jobs: Waiting, free: np.ndarray, now: float, weights: Weights) -> Costs:
    """CP of each order (rows of ``orders``: permutations of job indices) from CPU free times ``free``.

    ``free``: when each CPU of the cluster is free (``now`` for idle ones; the
    running jobs' estimated ends for the others).

    >>> jobs = Waiting(np.array([2, 1]), np.array([3.0, 1.0]), np.array([np.inf, 2.0]))
    >>> c = cost(np.array([[0, 1], [1, 0]]), jobs, np.zeros(2), 0.0, Weights())
    >>> c.start.tolist()  # positions in each order; [1, 0] leaves a CPU idle from 0 to 1
    [[0.0, 3.0], [0.0, 1.0]]
    >>> c.cp.tolist()  # (4 + 4 * 2 late) / 8 against (4 + 3 * 1 idle) / 8
    [1.5, 0.875]
    """
    population, n = orders.shape
    cpus = free.size
    times = np.tile(np.sort(free), (population, 1))
    sizes, runtimes = jobs.size[orders], jobs.runtime[orders]
    # Per position, for all schedules at once (hoisted out of the loop, which is the hot path):
    # the flat index of the size-th CPU to be free in each row, and which CPUs the job takes.
    nth = (np.arange(population)[:, None] * cpus + sizes - 1).T.copy()
    taken = (np.arange(cpus) < sizes[..., None]).transpose(1, 0, 2).copy()
    steps = runtimes.T.copy()
    start = np.empty((n, population))
    for k in range(n):
        begin = times.take(nth[k])  # the times stay sorted per row
        np.copyto(times, (begin + steps[k])[:, None], where=taken[k])
        times.sort(axis=1)
        start[k] = begin
    start = start.T
    end = start + runtimes
    # A CPU's free time only moves when a job takes it, by the idle gap plus the job's run:
    # what the free times moved in all, less the jobs' CPU time, is the idle time.
    idle = times.sum(axis=1) - free.sum() - (sizes * runtimes).sum(axis=1)
    makespan = end.max(axis=1, initial=now) - now
    over = np.maximum(0.0, end - jobs.deadline[orders]).sum(axis=1)
    return Costs(weights.cp(makespan, idle, over), makespan, idle, over, start)


@dataclass(frozen=True)
class Evolved:
    """The GA's answer: the best order, its costs, how many generations ran."""

    order: np.ndarray
    costs: Costs  # of the best order alone (population of one)
    generations: int


def evolve(
    seed: np.ndarray,
    jobs: Waiting,
    free: np.ndarray,
    now: float,
    weights: Weights,
    rng: np.random.Generator,
    *,
    population: int = 20,
    generations: int = 100,
    patience: int = 10,
    tolerance: float = 1e-3,
    crossover: float = 0.8,
    mutation: float = 0.2,
) -> Evolved:
    """The best order found from ``seed`` (a permutation of job indices); never worse than the seed.

    The seed is individual 0 and stays the answer unless a strictly better
    order turns up. Fewer than two jobs, or fewer than two individuals, need
    no search.
    """
    n = seed.size
    if n < 2 or population < 2:
        return Evolved(seed.copy(), cost(seed[None, :], jobs, free, now, weights), 0)
    pop = np.empty((population, n), dtype=np.int64)
    pop[0] = seed
    pop[1:] = rng.permuted(np.tile(np.arange(n), (population - 1, 1)), axis=1)
    cp = cost(pop, jobs, free, now, weights).cp
    best = int(np.argmin(cp))
    best_order, best_cp = pop[best].copy(), float(cp[best])
    history = [best_cp]
    ran = 0
    while ran < generations:
        ran += 1
        pop = _offspring(pop, cp, rng, crossover, mutation)
        pop[0] = best_order  # elitism: the best so far always survives
        cp = cost(pop, jobs, free, now, weights).cp
        k = int(np.argmin(cp))
        if cp[k] < best_cp:
            best_order, best_cp = pop[k].copy(), float(cp[k])
        history.append(best_cp)
        if ran >= patience and history[-1 - patience] - best_cp <= tolerance * abs(history[-1 - patience]):
            break
    return Evolved(best_order, cost(best_order[None, :], jobs, free, now, weights), ran)


def _offspring(
    pop: np.ndarray, cp: np.ndarray, rng: np.random.Generator, crossover: float, mutation: float
) -> np.ndarray:
    """Roulette selection on ``(CP_max - CP) / (CP_max - CP_min)``, order crossover, swap mutation."""
    size, n = pop.shape
    span = cp.max() - cp.min()
    fitness = (cp.max() - cp) / span if span > 0 else np.ones(size)
    wheel = np.cumsum(fitness)
    parents = np.searchsorted(wheel, rng.random((size, 2)) * wheel[-1], side="right").clip(max=size - 1)
    children = pop[parents[:, 0]]
    crossed = rng.random(size) < crossover
    if crossed.any():
        children[crossed] = order_crossover(children[crossed], pop[parents[crossed, 1]], rng)
    mutated = np.flatnonzero(rng.random(size) < mutation)
    i, j = rng.integers(0, n, (2, mutated.size))
    children[mutated, i], children[mutated, j] = children[mutated, j], children[mutated, i]
    return children


def order_crossover(first: np.ndarray, second: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """OX, one child per pair of rows: a random segment of ``first`` kept in place, the other
    positions filled, left to right, with the remaining jobs in ``second``'s order.

    Vectorized over the rows: two stable argsorts, one ranking ``second``'s jobs
    (outside the segment first, in its order; then the segment's in ``first``'s
    order), one ranking positions (outside the segment first, then the segment).
    """
    size, n = first.shape
    rows = np.arange(size)[:, None]
    a, b = rng.integers(0, n, (2, size))
    low, high = np.minimum(a, b)[:, None], np.maximum(a, b)[:, None]
    positions = np.arange(n)
    segment = (positions >= low) & (positions <= high)  # by position
    where = np.empty_like(first)
    where[rows, first] = positions  # each job's position in `first`
    kept = segment[rows, where[rows, second]]  # second's jobs that the segment keeps
    rank = np.where(kept, 1 + where[rows, second], 0)
    jobs = np.take_along_axis(second, np.argsort(rank, axis=1, kind="stable"), axis=1)
    child = np.empty_like(first)
    child[rows, np.argsort(segment, axis=1, kind="stable")] = jobs
    return child
