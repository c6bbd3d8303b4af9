"""TITAN (seed 004): CP of schedules, the GA's guarantees, and the policy in runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.core.genetic import Waiting, Weights, cost, evolve, order_crossover

from .conftest import job, machine, run_scenario
from .test_properties import (
    SETTINGS,
    check_allocations,
    check_job_lifecycles,
    check_sorted,
    grid_scenarios,
    run_raw,
)


def test_cp_of_a_hand_built_schedule():
    # 4 CPUs at now = 0; a running job holds two of them until 2: free times [0, 0, 2, 2].
    # A: 3 CPUs, 4 s, due 5. B: 1 CPU, 3 s, due 2. C: 2 CPUs, 1 s, due 10. Order A, B, C:
    #   A takes the 3 earliest CPUs (0, 0, 2): starts at 2, ends 6; idle 2 + 2 + 0 = 4.
    #     free: [2, 6, 6, 6]
    #   B takes the CPU free at 2: starts 2, ends 5; idle 0.           free: [5, 6, 6, 6]
    #   C takes the CPUs free at 5 and 6: starts 6, ends 7; idle 1.    free: [6, 6, 7, 7]
    # makespan 7 - 0 = 7; idle 5; over-deadline (6 - 5) + (5 - 2) = 4.
    # CP = (W_i * 7 + W_m * 5 + W_o * 4) / 8 with (W_o, W_m, W_i) = (4, 3, 1): (7 + 15 + 16) / 8.
    jobs = Waiting(np.array([3, 1, 2]), np.array([4.0, 3.0, 1.0]), np.array([5.0, 2.0, 10.0]))
    c = cost(np.array([[0, 1, 2]]), jobs, np.array([0.0, 0.0, 2.0, 2.0]), 0.0, Weights())
    assert c.start.tolist() == [[2.0, 2.0, 6.0]]
    assert (c.makespan[0], c.idle[0], c.over[0]) == (7.0, 5.0, 4.0)
    assert c.cp[0] == 38 / 8
    # Other weights, the same terms: (1, 1, 1) is their mean.
    assert cost(np.array([[0, 1, 2]]), jobs, np.array([0.0, 0.0, 2.0, 2.0]), 0.0, Weights(1, 1, 1)).cp[
        0
    ] == pytest.approx(16 / 3)


def test_cost_of_a_population_is_each_order_alone():
    rng = np.random.default_rng(5)
    jobs = Waiting(rng.integers(1, 5, 8), rng.uniform(1, 20, 8), rng.uniform(0, 60, 8))
    free = np.array([0.0, 3.0, 3.0, 7.0, 1.0])
    orders = np.array([rng.permutation(8) for _ in range(6)])
    together = cost(orders, jobs, free, 0.0, Weights())
    for k, order in enumerate(orders):
        alone = cost(order[None, :], jobs, free, 0.0, Weights())
        assert alone.cp[0] == pytest.approx(together.cp[k]) and np.allclose(alone.start, together.start[k])


@st.composite
def problems(draw):
    cpus = draw(st.integers(1, 8))
    n = draw(st.integers(0, 12))
    size = np.array([draw(st.integers(1, cpus)) for _ in range(n)], dtype=np.int64)
    runtime = np.array([draw(st.sampled_from((1.0, 2.5, 4.0, 10.0))) for _ in range(n)])
    deadline = np.array([draw(st.sampled_from((3.0, 8.0, 20.0, np.inf))) for _ in range(n)])
    free = np.array([draw(st.sampled_from((0.0, 0.0, 1.5, 6.0))) for _ in range(cpus)])
    seed = np.array(draw(st.permutations(range(n))), dtype=np.int64)
    return Waiting(size, runtime, deadline), free, seed, draw(st.integers(0, 2**32 - 1))


@settings(max_examples=60, deadline=None)
@given(problems())
def test_the_ga_never_returns_a_schedule_worse_than_its_seed(problem):
    jobs, free, seed, rng_seed = problem
    weights = Weights()
    best = evolve(seed, jobs, free, 0.0, weights, np.random.default_rng(rng_seed), generations=15)
    assert sorted(best.order.tolist()) == list(range(seed.size))  # a permutation of the jobs
    assert best.costs.cp[0] <= cost(seed[None, :], jobs, free, 0.0, weights).cp[0]
    assert best.costs.cp[0] == cost(best.order[None, :], jobs, free, 0.0, weights).cp[0]


def test_same_seed_same_schedule():
    rng = np.random.default_rng(11)
    jobs = Waiting(rng.integers(1, 11, 30), rng.uniform(5, 100, 30), rng.uniform(0, 400, 30))
    free = np.sort(rng.uniform(0, 30, 20))
    runs = [
        evolve(np.arange(30), jobs, free, 0.0, Weights(), np.random.default_rng(seed), generations=30)
        for seed in (3, 3, 4)
    ]
    assert runs[0].order.tolist() == runs[1].order.tolist() and runs[0].generations == runs[1].generations
    assert runs[0].costs.cp[0] < cost(np.arange(30)[None, :], jobs, free, 0.0, Weights()).cp[0]
    assert runs[0].order.tolist() != runs[2].order.tolist()  # another stream searches elsewhere


def test_the_stopping_rule_and_the_generation_cap():
    rng = np.random.default_rng(2)
    jobs = Waiting(rng.integers(1, 11, 25), rng.uniform(5, 100, 25), rng.uniform(0, 300, 25))
    free = np.zeros(20)
    capped = evolve(np.arange(25), jobs, free, 0.0, Weights(), np.random.default_rng(1), generations=3)
    assert capped.generations == 3
    # Everything fits at once: every order has the same CP, so it stops after `patience`.
    easy = Waiting(np.ones(5, dtype=np.int64), np.ones(5), np.full(5, np.inf))
    flat = evolve(np.arange(5), easy, free, 0.0, Weights(), np.random.default_rng(1), patience=4)
    assert flat.generations == 4 and flat.order.tolist() == [0, 1, 2, 3, 4]


def test_order_crossover_keeps_a_segment_of_the_first_parent_and_the_order_of_the_second():
    rng = np.random.default_rng(0)
    first = np.array([rng.permutation(9) for _ in range(50)])
    second = np.array([rng.permutation(9) for _ in range(50)])
    child = order_crossover(first, second, np.random.default_rng(1))
    a, b = np.random.default_rng(1).integers(0, 9, (2, 50))  # the segments order_crossover drew
    for k in range(50):
        low, high = min(a[k], b[k]), max(a[k], b[k])
        assert sorted(child[k]) == list(range(9))
        assert child[k, low : high + 1].tolist() == first[k, low : high + 1].tolist()
        outside = [g for g in second[k] if g not in first[k, low : high + 1]]
        assert np.concatenate([child[k, :low], child[k, high + 1 :]]).tolist() == outside


# -- the policy in runs --------------------------------------------------------------------------------


def titan_cluster(cpus: int, **params) -> list[dict]:
    policy = {"policy": "titan", "params": params} if params else {"policy": "titan"}
    return [{"name": "c", "latency": 1.0, "machines": [machine(1, count=cpus)], **policy}]


def test_titan_reorders_waiting_jobs_for_deadlines(tmp_path):
    # 2 CPUs busy with J1 until 10. J2 (2 CPUs, 10 s, no deadline) arrives before J3 (1 CPU, 2 s,
    # due at 13). Arrival order would start J2 at 10 and J3 at 20 (9 s late: CP 56 / 8); TITAN
    # starts J3 first, at 10 (on time), and J2 at 12 (2 idle CPU-s: CP (20 + 3 * 2) / 8).
    jobs = [
        job(1, 0, 2, 10, placement="spread", site="c"),
        job(2, 1, 2, 10, placement="spread", site="c"),
        job(3, 2, 1, 2, placement="spread", site="c", deadline=13.0),
    ]
    rows = run_scenario(tmp_path, titan_cluster(2), jobs)
    assert [rows[i]["start"] for i in (1, 2, 3)] == [0, 12, 10]


def test_titan_starts_jobs_as_its_seed_says_with_a_population_of_one(tmp_path):
    # A population of one is the seed schedule itself: arrival order here (nothing reorders it).
    jobs = [
        job(1, 0, 2, 10, placement="spread", site="c"),
        job(2, 1, 2, 10, placement="spread", site="c"),
        job(3, 2, 1, 2, placement="spread", site="c", deadline=13.0),
    ]
    rows = run_scenario(tmp_path, titan_cluster(2, population=1), jobs)
    assert [rows[i]["start"] for i in (1, 2, 3)] == [0, 10, 20]


@SETTINGS
@given(
    grid_scenarios(policies=("titan",)),
    st.sampled_from(("muscle", "muscle[threshold=4.0]", "dll", "round-robin")),  # 4 s: collects often
)
def test_titan_and_muscle_keep_the_emulators_invariants(raw, meta):
    raw["meta"] = {"policy": meta}
    trace = run_raw(raw)
    check_sorted(trace)
    check_job_lifecycles(trace)
    check_allocations(trace)
