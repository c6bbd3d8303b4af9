"""What partitions send each other, and the trace rows they hand the driver.

Messages are plain tuples (fast to build, msgpack-able as they are) ordered by
``(time, src, seq)``: the delivery order every transport must use.
"""

from __future__ import annotations

from typing import NamedTuple

META = 0
"""Partition id of the meta-scheduler; cluster ``i`` (0-based) is partition ``i + 1``."""

DISPATCH = 0
"""meta -> cluster: payload ``(job tuple, priority)``."""
STATUS = 1
"""cluster -> meta: payload a :class:`Status` tuple."""


class Message(NamedTuple):
    time: float  # delivery time: send time + link latency (+ transfer time)
    src: int
    seq: int  # per-source sequence number, the deterministic tie-break
    dst: int
    kind: int
    payload: tuple


class Status(NamedTuple):
    """A cluster's compact report to the meta-scheduler, sent after each scheduling event.

    ``arrived``/``started``/``finished``/``rejected`` list the job ids that changed
    since the last report; ``local`` the ids that entered directly (not dispatched).
    """

    queued: int
    running: int
    free_cpus: int
    queued_work: float  # MI of queued jobs (estimates)
    arrived: tuple[int, ...]
    started: tuple[int, ...]
    finished: tuple[int, ...]
    rejected: tuple[int, ...]
    local: tuple[int, ...]


# Trace rows: (time, kind, job, cluster, cpus, machines, pes, info). Kinds >= FINISH end a job.
SUBMIT, DISPATCHED, ARRIVE, START, FINISH, REJECT = range(6)
EVENT_KINDS = ("submit", "dispatch", "arrive", "start", "finish", "reject")
NO_CPUS: tuple[int, ...] = ()
