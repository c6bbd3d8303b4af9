"""Every meta policy's choices on a hand-built MetaState: no partition, no run, no files.

The grid (machines of one CPU): ``a`` 4 x 1 MIPS, link 1 s and 1 MB/s; ``b`` 2 x 3 MIPS, 2 s and
10 MB/s; ``c`` 1 x 2 MIPS, 0.5 s and 4 MB/s. As last reported: ``a`` has 3 jobs queued (30 CPU x MI),
``b`` 5 (50), ``c`` 1 (20); nothing runs and no CPU is free. Jobs are 1-CPU, 12 MI, with no deadline
unless said otherwise. Each case's comment works the choice out by hand.
"""

from __future__ import annotations

import numpy as np
import pytest

from emulator.core.messages import Status
from emulator.core.model import SPREAD, Cluster, Job, Link, Machine, Platform
from emulator.policies import META
from emulator.policies.meta_base import Dispatch, Reject
from emulator.state.meta_view import MetaState, MetaView

GRID = Platform(
    (
        Cluster("a", tuple(Machine(1, 1.0) for _ in range(4)), Link(1.0, 1e6)),
        Cluster("b", tuple(Machine(1, 3.0) for _ in range(2)), Link(2.0, 1e7)),
        Cluster("c", (Machine(1, 2.0),), Link(0.5, 4e6)),
    )
)
REPORTS = [(3, 30.0), (5, 50.0), (1, 20.0)]  # (jobs queued, CPU x MI queued) per cluster


def job(i: int, cpus: int = 1, length: float = 12.0, **extra) -> Job:
    return Job(i, 0.0, cpus, length, placement=SPREAD, **extra)


def choose(spec: str, jobs: list[Job], now: float = 0.0) -> list:
    """The choices of ``spec`` for ``jobs`` (submitted together), each dispatch counted in flight
    before the next is chosen, as the meta partition does: ``(cluster name, priority)``,
    ``"reject"`` or ``"hold"``."""
    state = MetaState(GRID, np.random.default_rng(1))
    for c, (queued, work) in enumerate(REPORTS):
        state.apply(c, Status(queued, 0, 0, work, (), (), (), (), (), 0.0, queued_cpu_work=work))
    state.now = now
    policy = META.create(spec, rng=np.random.default_rng(1), platform=GRID)
    out = []
    for item, choice in zip(jobs, policy.select(jobs, MetaView(state)), strict=True):
        if isinstance(choice, Dispatch):
            state.sent(choice.cluster, item)
            out.append((GRID.clusters[choice.cluster].name, choice.priority))
        else:
            out.append("reject" if isinstance(choice, Reject) else "hold")
    return out


TWO = [job(1), job(2)]
CASES = [
    # round-robin: the clusters in order from the first.
    ("round-robin", TWO, [("a", 0), ("b", 0)]),
    # least-load: queued 3, 5, 1: c; then c counts its job in flight (3, 5, 2): c again.
    ("least-load", TWO, [("c", 0), ("c", 0)]),
    # random and wrand: a 3-CPU job fits only a (4 CPUs); a 5-CPU job fits nowhere.
    ("random", [job(1, cpus=3)], [("a", 0)]),
    ("wrand", [job(1, cpus=3), job(2, cpus=5)], [("a", 0), "reject"]),
    # own-site: the cluster the job names; an unknown site is rejected.
    ("own-site", [job(1, site="c"), job(2, site="z")], [("c", 0), "reject"]),
    # most-power (PARS): MIPS per CPU 1, 3, 2: b. With the load term, / (1 + queued):
    # 1/4, 3/6, 2/2: c. Total power 4, 6, 2: b; per waiting job 4/4, 6/6, 2/2 ties: the first, a.
    ("most-power", TWO, [("b", 0), ("b", 0)]),
    ("most-power[load=true]", [job(1)], [("c", 0)]),
    ("most-power[measure=total]", [job(1)], [("b", 0)]),
    ("most-power[measure=total,load=true]", [job(1)], [("a", 0)]),
    # most-bandwidth (BARS): 1, 10, 4 MB/s: b; per waiting job 0.25, 1.67, 2: c.
    ("most-bandwidth", [job(1)], [("b", 0)]),
    ("most-bandwidth[load=true]", [job(1)], [("c", 0)]),
    # dll: its own allocated load, all 0 at first: a, adding 12/1 x 1/4 = 3; then b (0), adding
    # 12/3 x 1/2 = 2; then c (0), adding 12/2 x 1/1 = 6; then the least of 3, 2, 6: b.
    ("dll", [job(1), job(2), job(3), job(4)], [("a", 0), ("b", 0), ("c", 0), ("b", 0)]),
    # mcrs: TTR = transfers (none) + wait + run. Wait = queued CPU x MI / mean MIPS / CPUs: a 30/1/4
    # = 7.5, b 50/3/2 = 8.33, c 20/2/1 = 10; run 12/1, 12/3, 12/2: TTR 19.5, 12.33, 16: b.
    ("mcrs", [job(1)], [("b", 0)]),
    # With a deadline 10 s away no cluster makes it: the least TTR anyway (b), or rejected.
    ("mcrs", [job(1, deadline=10.0)], [("b", 0)]),
    ("mcrs[on_infeasible=reject]", [job(1, deadline=10.0)], ["reject"]),
    # two-level, the User heuristic alone: regular jobs get priority 0, gold ones 8 (1 x 8 levels).
    # A cluster with no job of its priority or above takes it (Load), the first such: J1 a; J2
    # (gold) a, which has none at 8; J3 b; J4 (20 MI) c; J5: MS loads at priority >= 0 are a 24,
    # b 12, c 20: b.
    (
        "two-level[heuristics=user]",
        [job(1), job(2, user_class="gold"), job(3), job(4, length=20.0), job(5)],
        [("a", 0), ("a", 8), ("b", 0), ("c", 0), ("b", 0)],
    ),
    # muscle: held while every cluster has more than `threshold` s of work per CPU (queued CPU x MI
    # / slowest MIPS / CPUs: a 7.5, b 8.33, c 10); at 8, a is below it: released. A lone job without
    # deadline has slack 5 x its time on each cluster, so e = 1 / (5 m): the most CPUs, a, takes it,
    # first in its seed schedule (priority -1).
    ("muscle[threshold=5]", [job(1)], ["hold"]),
    ("muscle[threshold=8]", [job(1)], [("a", -1)]),
    # With batches of 3, two jobs wait (the grid is not idle); three go.
    ("muscle[batch=3]", TWO, ["hold", "hold"]),
]


@pytest.mark.parametrize(("spec", "jobs", "expected"), CASES)
def test_meta_policy_chooses_on_a_hand_built_state(spec, jobs, expected):
    assert choose(spec, jobs) == expected


def test_a_released_batch_goes_out_whole():
    chosen = choose("muscle[batch=3]", [job(1), job(2), job(3)])
    assert all(isinstance(c, tuple) for c in chosen)
    assert sorted(priority for _, priority in chosen) == [-3, -2, -1]


def test_every_meta_policy_has_a_state_level_case():
    covered = {spec.split("[")[0] for spec, *_ in CASES}
    assert covered == set(META.names())


def test_a_meta_policy_cannot_change_the_state_it_reads():
    state = MetaState(GRID, np.random.default_rng(1))
    view = MetaView(state)
    with pytest.raises(ValueError, match="read-only"):
        view.free_cpus[0] = 4
    state.sent(1, job(1))
    with pytest.raises(TypeError):
        view.in_flight[1][9] = 1.0
    assert view.queued.tolist() == [0, 1, 0] and view.in_flight[1] == {1: 12.0}  # live
