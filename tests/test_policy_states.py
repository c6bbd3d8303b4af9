"""Every local policy's decisions on hand-built states (tests/states.py): no partition, no files.

Machines run at 1 MIPS and jobs have ``bench = 1``, so a job's estimate is its length in seconds.
Each row's comment works the decision out by hand.
"""

from __future__ import annotations

import pytest

from emulator.core.model import SPREAD, Job

from .states import decide

# Two 2-CPU machines; J1 holds machine 0 until its estimate ends at 10; at t=1 the queue holds J2
# (4 CPUs over both machines, 5 s), J3 (2 CPUs, 5 s) and J4 (2 CPUs, 100 s).
BUSY = {
    "running": [(Job(1, 0.0, 2, 10.0), ((0, 2),))],
    "queued": [Job(2, 0.0, 4, 5.0, placement=SPREAD), Job(3, 0.0, 2, 5.0), Job(4, 0.0, 2, 100.0)],
    "now": 1.0,
}
# The same machines idle; J1 and J2 (2 CPUs, 5 s each) queued.
IDLE = {"queued": [Job(1, 0.0, 2, 5.0), Job(2, 0.0, 2, 5.0)]}
# One 2-CPU machine; J1 (50 s) queued before J2 (5 s), both needing it whole.
ONE = {"queued": [Job(1, 0.0, 2, 50.0), Job(2, 0.0, 2, 5.0)]}

CASES = [
    # fcfs: the head J2 needs 4 CPUs, 2 are free: nothing starts.
    ("fcfs", [2, 2], BUSY, []),
    # easy: J2 is reserved at 10 on all four CPUs; J3 ends at 6 <= 10 on machine 1: backfilled;
    # J4 would end at 101 and the reservation leaves no CPU spare: it waits.
    ("easy", [2, 2], BUSY, [(3, ((1, 2),))]),
    # conservative: J2 reserved at 10; J3 fits in [1, 6) on machine 1 before it; J4 cannot start
    # without overlapping J2's reservation.
    ("conservative", [2, 2], BUSY, [(3, ((1, 2),))]),
    # The GridSim space- and time-shared policies run every gridlet on one PE (admit): J2 and J3
    # take machine 1's two PEs. Space sharing then has no PE left for J4; time sharing puts it on
    # the least loaded PE, machine 0's first (J1 holds each of its PEs once, as machine 1's jobs do).
    ("gridsim-spaceshared", [2, 2], BUSY, [(2, ((1, 1),)), (3, ((1, 1),))]),
    ("gridsim-timeshared", [2, 2], BUSY, [(2, ((1, 1),)), (3, ((1, 1),)), (4, ((0, 1),))]),
    # Idle: each 2-CPU job takes one whole machine, first fit by index.
    *(
        (policy, [2, 2], IDLE, [(1, ((0, 2),)), (2, ((1, 2),))])
        for policy in ("fcfs", "easy", "conservative")
    ),
    *(
        (policy, [2, 2], IDLE, [(1, ((0, 2),)), (2, ((1, 2),))])
        for policy in ("gridsim-easy", "titan", "cs2")
    ),
    ("gridsim-conservative", [2, 2], IDLE, [(1, ((0, 2),)), (2, ((1, 2),))]),
    ("flexible[priority=ms]", [2, 2], IDLE, [(1, ((0, 2),)), (2, ((1, 2),))]),
    # ... and as one PE each under GridSim's SpaceShared: machine 0's two PEs, lowest first.
    ("gridsim-spaceshared", [2, 2], IDLE, [(1, ((0, 1),)), (2, ((0, 1),))]),
    # One machine: arrival order starts J1; the reservation for J2 changes nothing now.
    *((policy, [2], ONE, [(1, ((0, 2),))]) for policy in ("fcfs", "easy", "conservative", "gridsim-easy")),
    ("gridsim-conservative", [2], ONE, [(1, ((0, 2),))]),
    # Queue orders: shortest job (and smallest area: equal CPUs) first start J2; longest, largest
    # area and arrival start J1; WFP3 ranks (wait/estimate)^3 x CPUs at t=10: J2's 16 beats J1's 0.016.
    *(
        (f"easy[order={order}]", [2], ONE | {"now": 10.0}, [(2, ((0, 2),))])
        for order in ("sjf", "saf", "wfp")
    ),
    *(
        (f"easy[order={order}]", [2], ONE | {"now": 10.0}, [(1, ((0, 2),))])
        for order in ("ljf", "laf", "fcfs")
    ),
    ("fcfs[order=sjf]", [2], ONE, [(2, ((0, 2),))]),
    ("conservative[order=sjf]", [2], ONE, [(2, ((0, 2),))]),
    # flexible with the meta-scheduler's priorities: the higher one starts first, whatever the arrival.
    ("flexible[priority=ms]", [2], ONE | {"priority": {2: 3.0, 1: 1.0}}, [(2, ((0, 2),))]),
    ("flexible[priority=ms]", [2], ONE | {"priority": {1: 3.0, 2: 1.0}}, [(1, ((0, 2),))]),
]


@pytest.mark.parametrize(("policy", "cpus", "state", "expected"), CASES)
def test_policy_decides_on_a_hand_built_state(policy, cpus, state, expected):
    assert decide(policy, cpus, **state) == expected


def test_every_local_policy_has_a_state_level_case():
    from emulator.policies import LOCAL

    covered = {policy.split("[")[0] for policy, *_ in CASES}
    assert covered == set(LOCAL.names())


def test_a_policy_cannot_change_the_state_it_reads():
    from emulator.core.model import Cluster, Link, Machine
    from emulator.policies import LOCAL
    from emulator.state.views import ClusterView

    from .states import cluster_state

    cluster = Cluster("c", (Machine(2, 1.0),), Link(1.0))
    view = ClusterView(cluster_state(LOCAL.create("fcfs", cluster=cluster), **ONE))
    with pytest.raises(TypeError):
        view.queue[9] = Job(9, 0.0, 1, 1.0)
    with pytest.raises(ValueError, match="read-only"):
        view.resources.free[0] = 0
    with pytest.raises(AttributeError, match="read-only"):
        view.resources.allocate(Job(9, 0.0, 1, 1.0), ((0, 1),))
    with pytest.raises(TypeError):
        view.resources.free_licenses["x"] = 1
