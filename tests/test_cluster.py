"""The cluster partition's event loop (emulator/partitions/cluster.py), on hand-checked runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from emulator.core.messages import ARRIVE, FINISH, START, SUBMIT
from emulator.core.model import Cluster, Job, Link, LinkClock, Machine
from emulator.core.resources import Resources
from emulator.core.runs import Run
from emulator.partitions.cluster import ClusterPartition
from emulator.policies.fcfs import Fcfs
from emulator.state.cluster_state import INDEXES, ClusterState
from emulator.state.views import ClusterView


def test_direct_jobs_enter_in_time_then_kind_then_submit_order_through_the_feed():
    # Direct entries wait in a sorted feed and enter the event heap one at a time: the rows must be
    # those of one heap holding them all. One CPU, fcfs; a link of latency 1 makes each job's submit
    # and arrival two events. J2 and J3 submit at 0 (J3 listed first: the sort by submit keeps that
    # order), J1 at 1; J3's arrival at 1 comes before J1's submit at 1 (arrive events first), and J3
    # starts in the pass after every event of that time.
    cluster = Cluster("c", (Machine(1, 1.0),), Link(1.0), policy="fcfs")
    jobs = [Job(3, 0.0, 1, 2.0), Job(2, 0.0, 1, 1.0), Job(1, 1.0, 1, 1.0)]
    part = ClusterPartition(1, cluster, np.random.SeedSequence(1), jobs, LinkClock(Link(1.0)), report=False)
    _, _, rows, busy, _, _ = part.advance(math.inf, [])
    assert [(t, kind, job) for t, kind, job, *_ in rows] == [
        (0.0, SUBMIT, 3),
        (0.0, SUBMIT, 2),
        (1.0, ARRIVE, 3),
        (1.0, ARRIVE, 2),
        (1.0, SUBMIT, 1),
        (1.0, START, 3),
        (2.0, ARRIVE, 1),
        (3.0, FINISH, 3),
        (3.0, START, 2),
        (4.0, FINISH, 2),
        (4.0, START, 1),
        (5.0, FINISH, 1),
    ]
    assert not busy and part.next_time == math.inf


class _FcfsKeepingIndexes(Fcfs):
    indexes = INDEXES


def test_fcfs_without_the_state_indexes_runs_as_with_them():
    # Fcfs asks its state to keep no queue columns and no estimated ends: the rows must be those of
    # the same policy with both kept, on spread and single jobs over machines of several sizes.
    rng = np.random.default_rng(5)
    machines = (Machine(1, 1.0), Machine(2, 1.0), Machine(4, 1.0), Machine(1, 1.0))
    jobs = [
        Job(
            i,
            float(rng.integers(0, 50)),
            int(rng.integers(1, 5)),
            float(rng.integers(1, 20)),
            placement=("spread", "single")[i % 2],
        )
        for i in range(200)
    ]

    def rows(policy: type) -> list[tuple]:
        cluster = Cluster("c", machines, Link(1.0), policy="fcfs")
        part = ClusterPartition(1, cluster, np.random.SeedSequence(1), jobs, report=False)
        part.policy = policy()
        part.state = ClusterState(cluster, Resources(cluster), policy.indexes)
        part.view = ClusterView(part.state)
        return part.advance(math.inf, [])[2]

    fast = rows(Fcfs)
    assert Fcfs.indexes == frozenset() and fast == rows(_FcfsKeepingIndexes)
    assert len({row[2] for row in fast if row[1] == FINISH}) == len(jobs)


def test_a_view_says_which_index_its_state_does_not_keep():
    cluster = Cluster("c", (Machine(1, 1.0),), Link(1.0))
    view = ClusterView(ClusterState(cluster, Resources(cluster), frozenset()))
    with pytest.raises(AttributeError, match="estimated_ends"):
        view.estimated_ends()
    with pytest.raises(AttributeError, match="columns"):
        view.columns.after(None)


def test_estimated_ends_are_sorted_when_read_and_kept_in_step_while_jobs_wait():
    # Built from the running jobs at the first read, by (estimated end, start sequence); runs that
    # start or stop while jobs are queued update it; once the queue empties it is let go, and the
    # next read sorts the running jobs again.
    cluster = Cluster("c", (Machine(4, 1.0),), Link(1.0))
    state = ClusterState(cluster, Resources(cluster))
    view = ClusterView(state)
    runs = []
    for seq, job in enumerate([Job(1, 0.0, 1, 30.0), Job(2, 0.0, 1, 10.0)]):
        run = Run(job, 0.0, ((0, 1),), (0,), (seq,), 1.0)
        run.seq = seq + 1
        state.start(run)
        state.expect(run)
        runs.append(run)
    waiting = Job(3, 0.0, 4, 5.0)
    state.enqueue(waiting)
    assert state.ends is None  # (nothing read yet)
    assert [end for end, _, _ in view.estimated_ends()] == [10.0, 30.0]
    late = Run(Job(4, 0.0, 1, 10.0), 0.0, ((0, 1),), (0,), (2,), 1.0)
    late.seq = 3
    state.start(late)
    state.expect(late)
    state.finish(runs[0])
    assert [end for end, _, _ in view.estimated_ends()] == [10.0, 10.0]
    assert state.ends.values[1][0] == late.estimated_end and state.ends._keys == [(10.0, 2), (10.0, 3)]
    state.dequeue(waiting)
    assert state.ends is None
    assert [end for end, _, _ in view.estimated_ends()] == [10.0, 10.0]
