"""Convergent Scheduling 2.0: the matrix entry by entry, the matching, and whole runs, by hand.

Every expected number is worked out in the comments. Weights are the paper's
defaults (W_D 15, W_C 40, W_AA 5, W_L 5, W_WM 8).
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator.policies import LOCAL, PolicySpec
from emulator.policies import cs2_matrix as cs

from .conftest import job, machine, one_cluster, run_scenario

# -- the Job-Machine matrix: 3 jobs x 2 machines at now = 100 ------------------------------------
# M0: 100 MIPS, 4 CPUs; M1: 200 MIPS, 2 CPUs. One copy of license L.
# a: running on M0 since 60 (elapsed 40), 6000 MI left, 2 CPUs, deadline 200, submitted 50, L.
# b: queued, 10000 MI, 4 CPUs (M1 is too small), no deadline, submitted 90.
# c: queued, 2000 MI, 1 CPU, deadline 125, submitted 100, L.
NOW = 100.0
MIPS = np.array([100.0, 200.0])
CAPACITY = np.array([4, 2])
REMT = np.array([[60.0, 30.0], [100.0, 50.0], [20.0, 10.0]])  # remT = MI / MIPS
ELIGIBLE = np.array([[True, True], [True, False], [True, True]])
FLAT = np.flatnonzero(ELIGIBLE)
DEADLINE = np.array([200.0, math.inf, 125.0])
ELAPSED, CURRENT = np.array([40.0, 0.0, 0.0]), np.array([0, -1, -1])
AGE = NOW - np.array([50.0, 90.0, 100.0])
USES, COPIES = np.array([[True], [False], [True]]), np.array([1])


def test_remaining_time():
    # remT = MI / MIPS at the eligible entries: (a,M0) (a,M1) (b,M0) (c,M0) (c,M1).
    entries = cs.Entries.of(ELIGIBLE, cs.Scratch())
    remaining = np.array([6000.0, 10000.0, 2000.0])
    got = cs.remaining_times(entries, remaining, remaining, entries.on(CURRENT), MIPS, cs.Scratch())
    assert got.tolist() == REMT.ravel()[FLAT].tolist() == [60.0, 30.0, 100.0, 20.0, 10.0]
    # Were a not checkpointable, moving to M1 would restart its 8000 MI there: 40 s; 60 s on M0.
    got = cs.remaining_times(
        entries, remaining, [8000.0, 10000.0, 2000.0], entries.on(CURRENT), MIPS, cs.Scratch()
    )
    assert got.tolist() == [60.0, 40.0, 100.0, 20.0, 10.0]


def test_deadline_heuristic():
    # a: slack 100. M0: end 160 > last 140, f = (160 - 140) / 60 = 1/3; M1: end 130 <= last 170, f = 0.
    #    F = (1/3 + 0) / 2 = 1/6: M0 (1 - 1/3) * 1/6 = 1/9, M1 1 * 1/6.
    # b: no deadline, 0. c: slack 25. M0: end 120 in (105, 125], f = 15/20 = 0.75; M1: f = 0.
    #    F = 0.375: M0 0.25 * 0.375 = 0.09375, M1 0.375.
    got = cs.deadline_score(REMT, DEADLINE, NOW, ELIGIBLE)
    np.testing.assert_allclose(got, [[1 / 9, 1 / 6], [0, 0], [0.09375, 0.375]])


def test_deadline_heuristic_at_the_boundaries():
    # remT 10, slack 20: end = last, f = 0 (F = 0); slack 10: end = deadline, f = 1; slack 5: late, 1.
    remt = np.array([[10.0], [10.0], [10.0]])
    f_zero = cs.deadline_score(remt, np.array([20.0, 10.0, 5.0]), 0.0, np.ones((3, 1), bool))
    assert f_zero.tolist() == [[0.0], [0.0], [0.0]]  # (1 - f) * F: 1*0, 0*1, 0*1


def test_overhead_heuristic():
    # Only a runs: elapsed 40 / max(remT 60, 40) = 2/3 on M0; nothing elsewhere.
    got = cs.overhead_score(REMT, ELAPSED, CURRENT)
    np.testing.assert_allclose(got, [[2 / 3, 0], [0, 0], [0, 0]])
    # A job that has run longer than its remaining time scores 1 (elapsed / elapsed).
    assert cs.overhead_score(np.array([[5.0]]), np.array([50.0]), np.array([0])).tolist() == [[1.0]]


def test_license_heuristic():
    # Two jobs ask for L, one copy: rho = 2 (critical); a and c: min(2 / 1, 1) = 1; b: none, 0.
    assert cs.license_score(USES, COPIES).tolist() == [1.0, 0.0, 1.0]
    # Two licenses, 4 copies of each, 2 and 1 jobs asking: rho 0.5, 0.25; the job asking both:
    # (0.5 + 0.25) / 2 = 0.375; the one asking the first: 0.5.
    uses = np.array([[True, True], [True, False]])
    assert cs.license_score(uses, np.array([4, 4])).tolist() == [0.375, 0.5]


def test_wait_minimization_heuristic():
    # Largest eligible remT: 100 (b on M0). 1 - remT / 100.
    got = cs.wait_score(REMT, 100.0)
    np.testing.assert_allclose(got, [[0.4, 0.7], [0.0, 0.5], [0.8, 0.9]])


def test_anti_aging_heuristic():
    # a: age 50: 50/110, 50/80. b: age 10: 10/110, 10/60. c: age 0.
    got = cs.aging_score(REMT, AGE)
    np.testing.assert_allclose(got, [[50 / 110, 50 / 80], [10 / 110, 10 / 60], [0, 0]])


# P at the eligible entries, flat order (a,M0) (a,M1) (b,M0) (c,M0) (c,M1):
# (a,M0) = 15/9 + 40*2/3 + 5*1 + 8*0.4 + 5*50/110 = 38.8061
# (a,M1) = 15/6 +   0    + 5   + 8*0.7 + 5*50/80  = 16.225
# (b,M0) =   0  +   0    + 0   + 8*0   + 5*10/110 =  0.4545
# (c,M0) = 15*0.09375    + 5   + 8*0.8 + 0        = 12.80625
# (c,M1) = 15*0.375      + 5   + 8*0.9 + 0        = 17.825
HAND_P = [
    15 / 9 + 40 * 2 / 3 + 5 + 3.2 + 5 * 50 / 110,
    2.5 + 5 + 5.6 + 5 * 50 / 80,
    5 * 10 / 110,
    15 * 0.09375 + 5 + 6.4,
    15 * 0.375 + 5 + 7.2,
]


def matrix() -> np.ndarray:
    entries = cs.Entries.of(ELIGIBLE, cs.Scratch())
    remt, running = REMT.ravel()[FLAT], entries.on(CURRENT)[:1]  # a runs on M0
    rest = (AGE, USES, COPIES, running, np.array([40.0]), cs.Weights(), cs.Scratch())
    return cs.priorities(remt, entries, NOW, DEADLINE, *rest)


def test_the_matrix_is_the_weighted_sum_at_eligible_entries():
    assert FLAT.tolist() == [0, 1, 2, 4, 5]
    np.testing.assert_allclose(matrix(), HAND_P)


def test_entries_are_the_eligible_ones_in_row_order():
    entries = cs.Entries.of(ELIGIBLE, cs.Scratch())
    assert entries.flat.tolist() == FLAT.tolist() and entries.count.tolist() == [2, 1, 2]
    assert entries.on(np.array([1, 1, -1])).tolist() == [1, -1, -1]  # b cannot use M1
    assert entries.on(np.array([0, 0, 1])).tolist() == [0, 2, 4]


def needs(per_job=((0, 1),)):
    return [per_job, (), per_job]


def descending(values, sort="quick", classes=1024, labels=None):
    """``labels`` (default: positions) in the order the matching visits them: by (sort key, label)."""
    labels = np.arange(len(values)) if labels is None else labels
    return labels[np.lexsort((labels, cs.sort_keys(np.asarray(values, float), sort, classes)))]


def match(order, width, cpus, capacity, per_job, copies, per_machine, rank=None, key=None, walk="merge"):
    """:func:`cs.match` visiting entries ``order[k] = job * width + machine`` in that order.

    The entries' keys are their positions in ``order`` unless ``key`` gives them (in flat order);
    each job's license needs are its own set. ``rank`` (default: machine order) only guides the
    walk: it never changes the plan. ``walk="sort"`` sorts every entry first (``cs2[match=sort]``).
    """
    eligible = np.zeros(len(cpus) * width, dtype=bool)
    eligible[order] = True
    entries = cs.Entries.of(eligible.reshape(len(cpus), width), cs.Scratch())
    if key is None:
        key = np.empty(len(order), dtype=np.uint64)
        key[np.searchsorted(entries.flat, order)] = np.arange(len(order))
    rank = np.arange(width) if rank is None else rank
    table, sets = cs.LicenseNeeds.of(list(per_job)), np.arange(len(cpus))
    order = cs.entry_order(key, "quick", 0) if walk == "sort" else None
    return cs.match(key, entries, rank, cpus, capacity, table, sets, copies, per_machine, order)


def test_matching_shares_a_license_copy_on_one_machine():
    # Order: (a,M0) 38.8, (c,M1) 17.8, (a,M1) 16.2, (c,M0) 12.8, (b,M0) 0.45.
    # a -> M0 (takes the only copy of L, held on M0); c -> M1 needs a new copy: none left;
    # c -> M0 shares M0's copy: placed; b -> M0 needs 4 CPUs, 1 left: not placed.
    order = descending(matrix(), labels=FLAT)
    assert order.tolist() == [0, 5, 1, 4, 2]
    where = match(order, 2, np.array([2, 4, 1]), CAPACITY, needs(), [1], per_machine=True)
    assert where.tolist() == [0, -1, 0]
    # Copies counted per job: c can never get the copy a holds.
    where = match(order, 2, np.array([2, 4, 1]), CAPACITY, needs(), [1], per_machine=False)
    assert where.tolist() == [0, -1, -1]
    # Two copies: c takes M1, its best machine.
    where = match(order, 2, np.array([2, 4, 1]), CAPACITY, needs(), [2], per_machine=True)
    assert where.tolist() == [0, -1, 1]


def test_matching_respects_cpus():
    # Six 1-CPU jobs all prefer machine 0 (3 CPUs) then machine 1 (2 CPUs): 3 + 2 placed, the last
    # one is left out. Entries in order: every job on M0 (jobs 0..5), then every job on M1.
    order = np.array([0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11])  # job * 2 + machine
    where = match(order, 2, np.ones(6, int), np.array([3, 2]), [()] * 6, [], per_machine=True)
    assert where.tolist() == [0, 0, 0, 1, 1, -1]


def test_both_sorts_give_the_same_plan_when_classes_do_not_collide():
    # The five priorities fall in distinct classes of 1024 over [0.45, 38.8].
    values = matrix()
    classes = np.floor((values - values.min()) / (values.max() - values.min()) * 1023)
    assert len(set(classes.tolist())) == len(values)
    assert descending(values, "counting").tolist() == descending(values, "quick").tolist()


def test_coarse_classes_can_change_the_plan():
    # Priorities 0.10, 0.14, 0.20 of jobs 0, 1, 2 on one 2-CPU machine (1 CPU each).
    # quick: 0.20, 0.14, 0.10 -> jobs 2 and 1 run. Two classes over [0.1, 0.2]: 0.10 and 0.14 share
    # class 0 (0.4 rounds down), kept in position order -> 0.20, 0.10, 0.14 -> jobs 2 and 0 run.
    values = np.array([0.10, 0.14, 0.20])
    quick, counting = descending(values, "quick"), descending(values, "counting", classes=2)
    assert quick.tolist() == [2, 1, 0] and counting.tolist() == [2, 0, 1]
    place = [
        match(order, 1, np.ones(3, int), np.array([2]), [()] * 3, [], True) for order in (quick, counting)
    ]
    assert [p.tolist() for p in place] == [[-1, 0, 0], [0, -1, 0]]


def test_exact_ties_go_to_the_earlier_entry():
    values = np.array([1.0, 3.0, 1.0, 3.0, 2.0])
    assert descending(values, "quick").tolist() == [1, 3, 4, 0, 2]
    assert descending(values, "counting").tolist() == [1, 3, 4, 0, 2]


# -- the fast paths against the whole-matrix computation they replace (hypothesis) ---------------
# A plan works on the eligible entries only, in reused buffers, and sorts packed integer keys; it
# must give the very plan the straightforward whole-matrix computation gives, to the last bit.


def whole_matrix_priorities(remt, eligible, now, deadline, elapsed, current, age, uses, copies, w):
    """P at every entry of the matrix, as first written: the reference for :func:`cs.priorities`."""
    flat = np.flatnonzero(eligible)
    top = float(remt.ravel()[flat].max()) if flat.size else 1.0
    p = np.empty_like(remt)
    work = (deadline - now)[:, None] / remt
    np.subtract(2.0, work, out=work)
    np.clip(work, 0.0, 1.0, out=work)
    count = eligible.sum(axis=1)
    mean = np.divide(cs.row_sums(work, eligible), count, out=np.zeros(len(p)), where=count > 0)
    np.subtract(1.0, work, out=work)
    np.multiply(work, (w.deadline * mean)[:, None], out=p)
    np.multiply(remt, -w.wait / (top or 1.0), out=work)
    p += work
    column = np.full(len(p), w.wait)
    if uses.size:
        column += w.licenses * cs.license_score(uses, copies)
    p += column[:, None]
    a = age[:, None]
    np.add(remt, a, out=work)
    np.divide(w.aging * a, work, out=work)
    p += work
    rows = np.flatnonzero((current >= 0) & (elapsed > 0))
    if rows.size:
        cols, el = current[rows], elapsed[rows]
        p[rows, cols] += w.overhead * el / np.maximum(remt[rows, cols], el)
    return p


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 40),
    width=st.integers(1, 160),
    density=st.floats(0.0, 1.0),
    licenses=st.integers(0, 3),
)
def test_priorities_at_the_entries_equal_the_whole_matrix(seed, n, width, density, licenses):
    rng = np.random.default_rng(seed)
    remt = rng.uniform(1e-3, 3.0, (n, 1)) * 10.0 ** rng.integers(-2, 5, (n, 1)) / rng.uniform(1, 4, width)
    remt[rng.random(n) < 0.2] = rng.uniform(0.1, 1e4, width)  # rows of jobs that would restart elsewhere
    eligible = rng.random((n, width)) < density
    now = float(rng.uniform(0, 1e4))
    deadline = np.where(rng.random(n) < 0.3, math.inf, now + rng.uniform(-50, 500, n))
    current = np.where(rng.random(n) < 0.4, rng.integers(0, width, n), -1)
    elapsed = np.where(current >= 0, rng.choice([0.0, 1.0, 100.0], n) * rng.random(n), 0.0)
    age, uses = rng.uniform(0, 1e3, n), rng.random((n, licenses)) < 0.5
    copies, w = rng.integers(0, 3, licenses), cs.Weights(*rng.uniform(0, 50, 5))
    expected = whole_matrix_priorities(remt, eligible, now, deadline, elapsed, current, age, uses, copies, w)
    scratch = cs.Scratch()
    for _ in range(2):  # buffers reused from a larger plan
        cs.priorities(
            rng.random(n * width),
            cs.Entries.of(np.ones((n, width), bool), scratch),
            1.0,
            np.ones(n),
            np.ones(n),
            uses,
            copies,
            np.zeros(0, int),
            np.zeros(0),
            w,
            scratch,
        )
        entries = cs.Entries.of(eligible.copy(), scratch)
        own = entries.on(current)
        run = np.flatnonzero((own >= 0) & (elapsed > 0))
        got = cs.priorities(
            remt.ravel()[entries.flat],
            entries,
            now,
            deadline,
            age,
            uses,
            copies,
            own[run],
            elapsed[run],
            w,
            scratch,
        )
        assert np.array_equal(got, expected.ravel()[entries.flat])


@settings(max_examples=100, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 30), width=st.integers(1, 40))
def test_remaining_times_at_the_entries_equal_the_whole_matrix(seed, n, width):
    rng = np.random.default_rng(seed)
    mips, length = rng.uniform(200, 600, width), rng.uniform(1e3, 1e6, n)
    remaining = np.maximum(length - rng.uniform(0, 1.2, n) * length, 1e-6)
    current = np.where(rng.random(n) < 0.5, rng.integers(0, width, n), -1)
    lossy = (current >= 0) & (rng.random(n) < 0.7)
    expected = remaining[:, None] / mips[None, :]  # lossy jobs restart elsewhere: whole length there
    moving = np.flatnonzero(lossy)
    kept = expected[moving, current[moving]]
    expected[moving] = length[moving, None] / mips[None, :]
    expected[moving, current[moving]] = kept
    entries = cs.Entries.of(rng.random((n, width)) < 0.6, cs.Scratch())
    elsewhere = np.where(lossy, length, remaining)
    got = cs.remaining_times(entries, remaining, elsewhere, entries.on(current), mips, cs.Scratch())
    assert np.array_equal(got, expected.ravel()[entries.flat])


def stable_descending(values, sort, classes):
    """Positions from the highest value to the lowest, ties in position order (numpy's stable sort)."""
    if sort == "counting" and values.size:
        low, high = float(values.min()), float(values.max())
        scale = (classes - 1) / (high - low) if high > low else 0.0
        return np.argsort((classes - 1) - ((values - low) * scale).astype(np.intp), kind="stable")
    return np.argsort(-values, kind="stable")


close_values = st.lists(st.sampled_from([0.0, -0.0, 1.0, 1.0 + 2**-52, 1.0 + 2**-40, 3.5, -2.0, 1e-300]))


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=60) | close_values,
    sort=st.sampled_from(["quick", "counting"]),
    classes=st.integers(2, 1024),
)
def test_sort_keys_order_entries_by_descending_priority(values, sort, classes):
    values = np.array(values, dtype=float)
    assert descending(values, sort, classes).tolist() == stable_descending(values, sort, classes).tolist()


def reference_match(order, width, cpus, capacity, per_job, copies, per_machine):
    """The matching rule entry by entry, in plain Python: the definition the compiled walk keeps."""
    where, free, left, held = [-1] * len(cpus), list(capacity), list(copies), set()
    for flat in order.tolist():
        i, m = divmod(flat, width)
        if where[i] >= 0 or free[m] < cpus[i]:
            continue
        fresh = [(lic, 1) for lic, _ in per_job[i] if (m, lic) not in held] if per_machine else per_job[i]
        if any(left[lic] < count for lic, count in fresh):
            continue
        for lic, count in fresh:
            left[lic] -= count
            held.add((m, lic))
        where[i], free[m] = m, free[m] - cpus[i]
    return where


@settings(max_examples=200, deadline=None)
@given(
    jobs=st.integers(1, 12),
    width=st.integers(1, 5),
    licenses=st.integers(0, 3),
    per_machine=st.booleans(),
    ties=st.sampled_from([2, 5, 1000]),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_compiled_walk_follows_the_matching_rule_whatever_the_machine_ranks(
    jobs, width, licenses, per_machine, ties, seed
):
    rng = np.random.default_rng(seed)
    cpus, capacity = rng.integers(1, 5, jobs), rng.integers(0, 8, width)
    per_job = [
        tuple((lic, int(rng.integers(1, 3))) for lic in range(licenses) if rng.random() < 0.4)
        for _ in range(jobs)
    ]
    copies = rng.integers(0, 3, licenses)
    # Keys from a few values: many ties, which go to the lower flat index.
    eligible = np.flatnonzero(rng.random(jobs * width) < 0.7)
    key = rng.integers(0, ties, len(eligible))
    order = eligible[np.lexsort((eligible, key))]
    args = (order, width, cpus, capacity, per_job, copies.tolist(), per_machine)
    got = match(*args, rank=rng.permutation(width), key=key.astype(np.uint64))
    assert got.tolist() == reference_match(*args)
    assert match(*args, key=key.astype(np.uint64), walk="sort").tolist() == got.tolist()


def test_entry_order_sorts_every_entry_by_key_then_position():
    # Keys 2, 0, 1, 0, 2 at positions 0..4: key 0 at 1, 3; key 1 at 2; key 2 at 0, 4.
    key = np.array([2, 0, 1, 0, 2], dtype=np.uint64)
    for sort in ("quick", "counting"):
        assert cs.entry_order(key, sort, 3).tolist() == [1, 3, 2, 0, 4]


def test_sorted_walk_places_as_the_merged_rows():
    # test_matching_shares_a_license_copy_on_one_machine's case, walked after a global sort.
    order = descending(matrix(), labels=FLAT)
    where = match(order, 2, np.array([2, 4, 1]), CAPACITY, needs(), [1], per_machine=True, walk="sort")
    assert where.tolist() == [0, -1, 0]


def test_scratch_buffers_are_not_pickled():
    scratch = cs.Scratch()
    scratch("key", 10_000)
    assert len(pickle.dumps(scratch)) < 100


# -- whole runs --------------------------------------------------------------------------------
# bench 1: a job of runtime R holds R MI.


def cs2_run(tmp_path, machines, jobs, policy="cs2", **cluster) -> tuple[dict, list[tuple]]:
    rows = run_scenario(tmp_path, one_cluster(policy, machines, **cluster), jobs, site="c")
    events = pa.ipc.open_file(str(tmp_path / "run" / "events.arrow")).read_all().to_pylist()
    trace = [(e["time"], e["kind"], e["job"], e["machines"][:1], e["info"]) for e in events]
    return rows, [t for t in trace if t[1] in ("start", "preempt", "resume", "finish")]


# One machine, 2 CPUs at 1 MIPS. J1 (2 CPUs, 100 s) from 0; J2 (2 CPUs, 10 s, due 30) at 10.
# At 10: J1 has run 10 s, remT 90; J2 remT 10; largest remT 90.
#   J1: overhead 40 * 10/90 = 4.44, wait 8 * (1 - 90/90) = 0, aging 5 * 10/100 = 0.5 -> 4.94
#   J2: deadline: slack 20 = 2 remT, f = 0, F = 0 -> 0; wait 8 * (1 - 10/90) = 7.11 -> 7.11
# J2 wins the machine; J1 is preempted and comes back when J2 ends at 20 (the only job).
ONE = [machine(2, 1.0)]
PAIR = [job(1, 0, 2, 100), job(2, 10, 2, 10, deadline=30.0)]


def test_cs2_suspends_a_running_job_and_resumes_it_with_its_progress(tmp_path):
    # Resumed at 20 with 90 MI left: ends 110.
    rows, trace = cs2_run(tmp_path, ONE, PAIR)
    assert trace == [
        (0.0, "start", 1, [0], None),
        (10.0, "preempt", 1, [0], "suspend"),
        (10.0, "start", 2, [0], None),
        (20.0, "finish", 2, [0], None),
        (20.0, "resume", 1, [0], "suspend"),
        (110.0, "finish", 1, [0], None),
    ]
    assert rows[1]["preemptions"] == 1 and rows[1]["wasted_cpu_seconds"] == 0.0


def test_cs2_suspend_overhead_delays_the_resumed_job(tmp_path):
    # 5 s of overhead after the resume at 20: ends 20 + 5 + 90 = 115; 2 CPUs x 5 s wasted.
    rows, trace = cs2_run(tmp_path, ONE, PAIR, policy="cs2[suspend_overhead=5]")
    assert trace[-2:] == [(20.0, "resume", 1, [0], "suspend overhead=5.0"), (115.0, "finish", 1, [0], None)]
    assert rows[1]["wasted_cpu_seconds"] == 10.0


def test_cs2_stop_restarts_from_zero(tmp_path):
    # preempt = stop: the same plan, but J1 restarts at 20 from zero: ends 120; 10 s x 2 CPUs lost.
    rows, trace = cs2_run(tmp_path, ONE, PAIR, policy="cs2[preempt=stop]")
    assert trace[1] == (10.0, "preempt", 1, [0], "stop")
    assert trace[-2:] == [(20.0, "resume", 1, [0], "stop"), (120.0, "finish", 1, [0], None)]
    assert rows[1]["wasted_cpu_seconds"] == 20.0


# Two machines of 2 CPUs: M0 at 2 MIPS, M1 at 1 MIPS. J1 (2 CPUs, 200 MI) from 0; J2 (2 CPUs,
# 20 MI, due 25) at 10. At 0 J1 alone prefers M0 (wait 8 * (1 - 100/200) = 4 against 0).
# At 10 J1 has done 20 MI: remT 90 on M0, 180 on M1; J2 remT 10, 20; largest 180.
#   J1,M0: overhead 40 * 10/90 + wait 8 * 0.5 + aging 5 * 10/100  = 8.94
#   J1,M1:                 0 + 0              + 5 * 10/190         = 0.26
#   J2,M0: deadline slack 15: f = 0.5 on M0, 1 on M1, F = 0.75: 15 * 0.5 * 0.75 = 5.625,
#          + wait 8 * (1 - 10/180) = 13.18
#   J2,M1: 0 + 8 * (1 - 20/180) = 7.11
# Order: J2,M0  J1,M0 (M0 is full)  J2,M1 (placed)  J1,M1 -> J2 on M0, J1 moves to M1.
TWO = [machine(2, 2.0), machine(2, 1.0)]


def test_cs2_migrates_a_checkpointable_job_with_its_progress(tmp_path):
    # J1 checkpointed at 10 and restarted at once on M1 with 180 MI left at 1 MIPS: ends 190.
    # J2: 20 MI at 2 MIPS, 10..20. At 20 the queue is empty: no plan, J1 stays on M1.
    # (Decisions: preemptions first, then the running jobs' moves, then the queued jobs' starts.)
    jobs = [job(1, 0, 2, 200, checkpointable=True), job(2, 10, 2, 20, deadline=25.0)]
    for policy, run in (
        ("cs2", "merge"),
        ("cs2[match=sort]", "sort"),
        ("cs2[match=sort,sort=counting]", "cs"),
    ):
        _, trace = cs2_run(tmp_path / run, TWO, jobs, policy=policy)  # every matching, the same plan
        assert trace == [
            (0.0, "start", 1, [0], None),
            (10.0, "preempt", 1, [0], "checkpoint"),
            (10.0, "resume", 1, [1], "checkpoint"),
            (10.0, "start", 2, [0], None),
            (20.0, "finish", 2, [0], None),
            (190.0, "finish", 1, [1], None),
        ]


def test_cs2_moves_a_job_that_cannot_checkpoint_by_restarting_it(tmp_path):
    # Not checkpointable: on M1 J1 would start over, remT 200 there (largest now 200):
    #   J1,M0 4.44 + 8 * (1 - 90/200) + 0.5 = 9.34; J1,M1 5 * 10/210 = 0.24;
    #   J2,M0 5.625 + 8 * (1 - 10/200) = 13.23; J2,M1 8 * (1 - 20/200) = 7.2. Same order:
    # J1 is stopped and restarted on M1 from zero: 200 MI at 1 MIPS, ends 210; 20 CPU-s lost.
    jobs = [job(1, 0, 2, 200), job(2, 10, 2, 20, deadline=25.0)]
    rows, trace = cs2_run(tmp_path, TWO, jobs)
    assert trace[1:4] == [
        (10.0, "preempt", 1, [0], "stop"),
        (10.0, "resume", 1, [1], "stop"),
        (10.0, "start", 2, [0], None),
    ]
    assert trace[-1] == (210.0, "finish", 1, [1], None)
    assert rows[1]["wasted_cpu_seconds"] == 20.0


def test_cs2_without_restarts_keeps_a_job_on_its_machine(tmp_path):
    # restart = false: J1 is eligible only on M0, loses it to J2 and is suspended; it resumes on M0
    # at 20 with 180 MI left at 2 MIPS: ends 110.
    jobs = [job(1, 0, 2, 200), job(2, 10, 2, 20, deadline=25.0)]
    _, trace = cs2_run(tmp_path, TWO, jobs, policy="cs2[restart=false]")
    assert trace[1:3] == [(10.0, "preempt", 1, [0], "suspend"), (10.0, "start", 2, [0], None)]
    assert trace[-2:] == [(20.0, "resume", 1, [0], "suspend"), (110.0, "finish", 1, [0], None)]


def test_cs2_never_checkpoints_a_job_that_is_not_checkpointable(tmp_path):
    # A busy little cluster with preemptions of every kind; checkpoints only for flagged jobs.
    jobs = [
        job(
            i,
            i % 7,
            1 + i % 3,
            20 + (i * 37) % 90,
            deadline=(i % 7) + 60.0 if i % 2 else math.inf,
            checkpointable=i % 4 == 0,
        )
        for i in range(1, 41)
    ]
    rows, trace = cs2_run(tmp_path, [*TWO, machine(4, 1.5)], jobs)
    kinds = {(info, rows[j]["checkpointable"]) for _, k, j, _, info in trace if k == "preempt"}
    assert ("checkpoint", False) not in kinds
    assert all(r["status"] == "finished" for r in rows.values())


def test_cs2_jobs_on_one_machine_share_a_license_copy(tmp_path):
    # One copy of L. J1, J2 (1 CPU, 10 MI, L) at 0 both prefer M0 (2 MIPS): equal priorities, J1
    # first takes M0 and the copy, J2 shares M0's copy: both run 0..5. Copies counted per job: J2
    # gets no copy until J1 ends at 5, then runs 5..10 on M0.
    jobs = [job(1, 0, 1, 10, licenses=["L"]), job(2, 0, 1, 10, licenses=["L"])]
    shared = cs2_run(tmp_path / "a", TWO, jobs, licenses={"L": 1}, license_per_machine=True)[0]
    assert [(r["start"], r["finish"]) for r in shared.values()] == [(0.0, 5.0), (0.0, 5.0)]
    per_job = cs2_run(tmp_path / "b", TWO, jobs, licenses={"L": 1})[0]
    assert [(r["start"], r["finish"]) for r in per_job.values()] == [(0.0, 5.0), (5.0, 10.0)]


def test_time_driven_cs2_plans_every_period(tmp_path):
    # period 10, one machine of 2 CPUs. J1 (1 CPU, 5 s) at 3 waits for the planning time 10;
    # J2 (1 CPU, 5 s) arrives at 10, a planning time: both start at 10. J3 (12) starts at 20.
    jobs = [job(1, 3, 1, 5), job(2, 10, 1, 5), job(3, 12, 1, 5)]
    rows, _ = cs2_run(tmp_path, ONE, jobs, policy="cs2[period=10]")
    assert {j: r["start"] for j, r in rows.items()} == {1: 10.0, 2: 10.0, 3: 20.0}


def test_cs2_spec_round_trips_and_checks_its_parameters():
    spec = PolicySpec.parse("cs2[sort=counting,period=10]")
    assert str(spec) == "cs2[period=10,sort=counting]"
    policy = LOCAL.create(spec)
    assert (policy.sort, policy.period) == ("counting", 10.0)
    with pytest.raises(ValueError, match="sort"):
        LOCAL.create("cs2[sort=bubble]")
    with pytest.raises(ValueError, match="preempt"):
        LOCAL.create("cs2[preempt=checkpoint]")
    assert LOCAL.create("cs2[match=sort]").match == "sort"
    with pytest.raises(ValueError, match="match"):
        LOCAL.create("cs2[match=heap]")


def test_cs2_runs_spread_jobs_on_one_machine(tmp_path):
    # A 3-CPU spread job fits no single 2-CPU machine: rejected; a 2-CPU one runs on one machine.
    jobs = [job(1, 0, 3, 5, placement="spread"), job(2, 0, 2, 5, placement="spread")]
    rows, _ = cs2_run(tmp_path, [machine(2, 1.0, count=2)], jobs)
    assert rows[1]["status"] == "rejected" and rows[2]["machines"] == [0, 0]


@pytest.mark.parametrize("policy", ["cs2", "cs2[sort=counting,period=10,preempt=stop]"])
def test_cs2_runs_are_deterministic(tmp_path, policy):
    from emulator import run
    from emulator.data.scenario import load

    sets = [f"local.policy={policy}", "workload.jobs=150", "workload.mean_interarrival=2"]
    first = run(load("cs2", sets), tmp_path / "a")
    run(load("cs2", sets), tmp_path / "b")
    assert first.summary["grid"]["preemptions"] > 0
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
