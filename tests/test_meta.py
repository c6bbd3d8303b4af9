"""The meta partition's event loop: reports absorbed in order, observed only by policies that keep
an account of them, and the choices' shared instances."""

from __future__ import annotations

import numpy as np

from emulator.core.messages import DISPATCH, DISPATCHED, META, STATUS, SUBMIT, Message, Status
from emulator.core.model import Cluster, Job, Link, Machine, Platform
from emulator.partitions.meta import MetaPartition
from emulator.policies.meta_base import Dispatch, dispatch_to
from emulator.policies.meta_simple import LeastLoad

GRID = Platform(tuple(Cluster(name, (Machine(4, 1.0),), Link(1.0)) for name in ("a", "b", "c")))


def report(time: float, c: int, queued: int, seq: int) -> Message:
    """Cluster ``c``'s status, due at ``time``: ``queued`` jobs waiting, nothing else."""
    status = Status(queued, 0, 4, 0.0, (), (), (), (), (), time - 1.0)
    return Message(time, c + 1, seq, META, STATUS, status)


class Watching(LeastLoad):
    """Least-load that writes down every report it is shown, as ``(time, cluster, queued)``."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.seen: list[tuple[float, int, int]] = []

    def observe(self, cluster: int, status: Status) -> None:
        self.seen.append((status.time + 1.0, cluster, status.queued))


def test_reports_are_absorbed_before_the_submission_at_their_time():
    # a reports 5 queued at t=2, b 3 at t=2, c 1 at t=4 and 9 at t=5: the job submitted at 4 sees
    # c's first report (reports at a time come before its submissions), not its second: c.
    part = MetaPartition(GRID, "least-load", np.random.SeedSequence(1), [Job(7, 4.0, 1, 10.0)])
    inbox = [report(2.0, 0, 5, 1), report(2.0, 1, 3, 1), report(4.0, 2, 1, 1), report(5.0, 2, 9, 2)]
    out, next_time, rows, busy, promise, reacts = part.advance(10.0, inbox)
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [(4.0, SUBMIT, 7, -1), (4.0, DISPATCHED, 7, 2)]
    assert [(m.time, m.dst, m.kind) for m in out] == [(5.0, 3, DISPATCH)]
    assert part.view.queued.tolist() == [5, 3, 10]  # c: 9 reported + the job, which no report lists
    assert (next_time, busy, promise, reacts) == (float("inf"), False, float("inf"), False)


def test_a_policy_that_observes_sees_every_report_in_order_and_least_load_is_not_called():
    part = MetaPartition(GRID, "least-load", np.random.SeedSequence(1), [Job(7, 4.0, 1, 10.0)])
    part.policy = watching = Watching()
    inbox = [report(2.0, 0, 5, 1), report(2.0, 1, 3, 1), report(4.0, 2, 1, 1), report(5.0, 2, 9, 2)]
    part.advance(10.0, inbox)
    assert watching.seen == [(2.0, 0, 5), (2.0, 1, 3), (4.0, 2, 1), (5.0, 2, 9)]
    assert "observe" not in vars(LeastLoad) and "observe" in vars(Watching)


def test_dispatch_to_shares_one_choice_per_cluster():
    assert dispatch_to(3) is dispatch_to(3)
    assert dispatch_to(3) == Dispatch(3) and dispatch_to(3).priority == 0
    assert dispatch_to(2) != dispatch_to(3)
