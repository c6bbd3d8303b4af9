"""Placement helpers against plain-Python definitions: first fit from the first free machine, the
first free machine kept through allocations, and reservations given again from their memo."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.core.model import SINGLE, SPREAD, Cluster, Job, Link, Machine
from emulator.core.resources import Resources
from emulator.policies import LOCAL
from emulator.state.placement import Scratch, _walk, first_fit, reserve
from emulator.state.views import ClusterView, ResourcesView
from tests.states import cluster_state


def reference_first_fit(cpus: int, placement: str, free: list[int], eligible: list[bool]):
    """First fit by machine index, one machine at a time (the definition)."""
    if placement == SINGLE:
        for m, (f, ok) in enumerate(zip(free, eligible, strict=True)):
            if ok and f >= cpus:
                return ((m, cpus),)
        return None
    plan, left = [], cpus
    for m, (f, ok) in enumerate(zip(free, eligible, strict=True)):
        if ok and f and left:
            plan.append((m, min(f, left)))
            left -= min(f, left)
    return tuple(plan) if not left else None


machines_strategy = st.lists(st.integers(0, 4), min_size=1, max_size=300)


@settings(max_examples=300, deadline=None)
@given(
    free=machines_strategy,
    cpus=st.integers(1, 12),
    placement=st.sampled_from([SINGLE, SPREAD]),
    seed=st.integers(0, 2**32 - 1),
)
def test_first_fit_from_the_first_free_machine_is_first_fit(free, cpus, placement, seed):
    eligible = np.random.default_rng(seed).random(len(free)) < 0.8
    array = np.array(free, dtype=np.int64)
    low = int(np.flatnonzero(array)[0]) if array.any() else array.size
    job = Job(1, 0.0, cpus, 10.0, placement=placement)
    expected = reference_first_fit(cpus, placement, free, eligible.tolist())
    assert first_fit(job, array, eligible) == expected
    assert first_fit(job, array, eligible, low=low) == expected
    everywhere = reference_first_fit(cpus, placement, free, [True] * len(free))  # (eligible None)
    assert first_fit(job, array, None) == first_fit(job, array, None, low=low) == everywhere


def cluster(cpus: list[int]) -> Cluster:
    return Cluster("c", tuple(Machine(n, 100.0) for n in cpus), Link(1.0))


@settings(max_examples=200, deadline=None)
@given(
    cpus=st.lists(st.integers(1, 3), min_size=1, max_size=200),
    steps=st.lists(st.tuples(st.sampled_from(["take", "give", "fail", "repair"]), st.integers(0, 10**6))),
)
def test_first_free_is_the_lowest_machine_with_a_free_cpu(cpus, steps):
    res = Resources(cluster(cpus))
    running: list[tuple] = []
    for i, (step, pick) in enumerate(steps):
        if step == "take" and res.free_cpus:
            job = Job(i, 0.0, 1, 1.0)
            plan = first_fit(job, res.free, np.ones(len(cpus), dtype=bool), low=res.first_free())
            running.append((job, plan, *res.allocate(job, plan)))
        elif step == "give" and running:
            res.release(*running.pop(pick % len(running)))
        elif step in ("fail", "repair"):
            m = pick % len(cpus)
            if step == "repair":
                res.repair(m)
            elif all(m not in plan_machines for _, _, plan_machines, _ in running):
                res.fail(m)
        nonzero = np.flatnonzero(res.free)
        assert res.first_free() == (int(nonzero[0]) if nonzero.size else len(cpus))


def test_a_reservation_is_given_again_until_its_inputs_change_or_its_time_comes():
    resources = Resources(cluster([2, 2]))
    running = [Job(1, 0.0, 2, 10.0), Job(2, 0.0, 2, 30.0)]
    for job, m in zip(running, (0, 1), strict=True):
        resources.allocate(job, ((m, 2),))
    res = ResourcesView(resources)
    ends = [(10.0, ((0, 2),), ()), (30.0, ((1, 2),), ())]
    head = Job(3, 0.0, 4, 5.0, placement=SPREAD)

    first = reserve(head, 1.0, Scratch(res), ends)
    assert (first.time, first.spare_cpus.tolist()) == (30.0, [0, 0])
    with pytest.raises(ValueError):  # shared with the memo: callers copy it before using it up
        first.spare_cpus[0] = 99
    again = reserve(head, 5.0, Scratch(res), ends)
    assert again is first and again.spare_cpus.tolist() == [0, 0]
    assert res.reservation_memo[1] == 1.0  # given from the memo, not walked again at 5

    later = [(35.0, ((0, 2),), ()), (30.0, ((1, 2),), ())]
    moved = reserve(head, 6.0, Scratch(res), sorted(later))
    assert moved.time == 35.0 and res.reservation_memo[1] == 6.0  # other ends: walked again
    assert reserve(head, 40.0, Scratch(res), sorted(later)).time == 40.0  # its time came: walked again


@settings(max_examples=200, deadline=None)
@given(
    ends=st.lists(st.tuples(st.floats(0, 100), st.integers(0, 3), st.integers(1, 2)), max_size=8),
    cpus=st.integers(1, 8),
    placement=st.sampled_from([SINGLE, SPREAD]),
    nows=st.lists(st.floats(0, 120), min_size=1, max_size=5),
)
def test_the_memo_answers_what_a_fresh_walk_answers(ends, cpus, placement, nows):
    resources = Resources(cluster([2, 2, 2, 2]))
    res = ResourcesView(resources)
    taken = np.zeros(4, dtype=np.int64)
    running = []
    for end, m, n in ends:
        if taken[m] + n <= 2:
            taken[m] += n
            resources.allocate(Job(len(running), 0.0, n, 1.0), ((m, n),))
            running.append((end, ((m, n),), ()))
    running.sort(key=lambda e: e[0])
    head = Job(99, 0.0, cpus, 5.0, placement=placement)
    for now in sorted(nows):
        got, fresh = reserve(head, now, Scratch(res), running), _walk(head, now, Scratch(res), running)
        assert (got is None) == (fresh is None)
        if got is not None:
            assert (got.time, got.spare_cpus.tolist(), got.spare_total) == (
                fresh.time,
                fresh.spare_cpus.tolist(),
                fresh.spare_total,
            )
            assert fresh.spare_total == int(fresh.spare_cpus.sum())  # (EASY refuses wider jobs on it)


@settings(max_examples=300, deadline=None)
@given(
    cpus=st.lists(st.integers(1, 4), min_size=1, max_size=12),
    ends=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 11), st.integers(1, 4)), max_size=12),
    want=st.integers(1, 20),
    placement=st.sampled_from([SINGLE, SPREAD]),
    now=st.integers(0, 10),
)
def test_a_reservation_leaves_what_first_fit_leaves_at_the_first_end_it_fits_after(
    cpus, ends, want, placement, now
):
    resources = Resources(cluster(cpus))
    running = []
    for end, m, n in ends:
        m = m % len(cpus)
        n = min(n, int(resources.free[m]))
        if n:
            resources.allocate(Job(len(running), 0.0, n, 1.0), ((m, n),))
            running.append((float(end), ((m, n),), ()))
    running.sort(key=lambda e: e[0])
    head = Job(99, 0.0, want, 5.0, placement=placement)
    got = _walk(head, float(now), Scratch(ResourcesView(resources)), running)
    # What is free now, then at each end (ends already due release at now, after the first look).
    steps = [(float(now), -math.inf)] + [(t, t) for t in sorted({max(e, now) for e, _, _ in running})]
    for time, released in steps:
        free = resources.free.tolist()
        for end, plan, _ in running:
            for m, n in plan:
                free[m] += n if end <= released else 0
        plan = reference_first_fit(want, placement, free, [True] * len(free))
        if plan is not None:
            for m, n in plan:
                free[m] -= n
            assert (got.time, got.spare_cpus.tolist(), got.spare_total) == (time, free, sum(free))
            return
    assert got is None


def test_a_backfill_into_spare_cpus_leaves_the_memo_s_reservation_as_it_was():
    """EASY uses up the reservation's spare CPUs on a copy: the memo gives the same reservation again,
    so a second pass on the same state decides the same (a policy is a function of its view)."""
    policy = LOCAL.create("easy", cluster=Cluster("c", tuple(Machine(1, 1.0) for _ in range(4)), Link(1.0)))
    running = [(Job(1, 0.0, 2, 10.0, placement=SPREAD), ((0, 1), (1, 1))), (Job(2, 0.0, 1, 100.0), ((2, 1),))]
    head, late = Job(3, 0.0, 2, 5.0, placement=SPREAD), Job(4, 0.0, 1, 50.0)
    view = ClusterView(cluster_state(policy, running, [head, late]))
    # The head waits for 10 on machines 0 and 1; machine 3 stays spare, and job 4 (ending at 50) takes it.
    first = [(job.id, plan) for job, plan in policy.schedule(view)]
    assert first == [(4, ((3, 1),))]
    assert [(job.id, plan) for job, plan in policy.schedule(view)] == first
    assert view.resources.reservation_memo[-1].spare_cpus.tolist() == [0, 0, 0, 1]
