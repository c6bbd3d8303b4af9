"""What partitions send each other, and the trace rows they hand the driver.

Messages are plain tuples (fast to build, msgpack-able as they are) ordered by
``(time, src, seq)``: the delivery order every transport must use.
"""

from __future__ import annotations

from typing import NamedTuple

META = 0
"""Partition id of the meta-scheduler; cluster ``i`` (0-based) is partition ``i + 1``."""

DISPATCH = 0
"""meta -> cluster: payload ``(job tuple, priority)``; the priority the meta policy attached (0: none)."""
STATUS = 1
"""cluster -> meta: payload a :class:`Status` tuple."""
RETURN_JOB = 2
"""cluster -> meta: payload ``(job tuple, kills)``; an outage sends a queued job back (stress tests).

The meta-scheduler dispatches it again; a DISPATCH of a job that was killed
before carries its kills as a third item: ``(job tuple, priority, kills)``.
"""


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
    since the last report (``finished`` includes jobs killed at their estimate,
    ``rejected`` jobs sent back by an outage: every id that left the cluster for
    good); ``local`` the ids that entered directly (not dispatched).
    ``up_cpus`` and ``down`` say what failures and outages left of the cluster
    (reported only by clusters that have them).
    The backlog fields (see :class:`emulator.state.backlog.Backlog`) let a meta policy
    estimate how long a new job would wait: the work queued, and the work the
    running jobs still have by their estimates at ``time``. ``latency`` and
    ``bandwidth`` are the cluster's link as of ``time``, reported only by
    clusters whose link changes (``[[stress.links]]``): the meta-scheduler
    learns of a change only through them.
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
    time: float = 0.0  # when the cluster sent the report
    queued_cpu_work: float = 0.0  # sum of CPUs x MI over queued jobs (estimates)
    running_work: float = 0.0  # CPU-seconds running jobs still need at `time`, by their estimated ends
    draining_cpus: int = 0  # CPUs of the running jobs counted in running_work (not past their estimate)
    latency: float = 0.0  # the cluster's link at `time` (s), when it can change (stress); 0: not reported
    bandwidth: float = 0.0  # the link's bandwidth at `time` (bytes/s); 0: not reported
    up_cpus: int = -1  # CPUs of the machines up at `time` (failures, outages); -1: not reported (all up)
    down: bool = False  # the cluster is in an outage at `time`


# Trace rows: (time, kind, job, cluster, cpus, machines, pes, info). FINISH and REJECT end a job;
# PREEMPT (info: the kind) frees a running job's CPUs, RESUME (info: kind, overhead) takes new ones.
# Codes are the dictionary indices of the trace's `kind` column: append, never renumber.
# Perturbations (stress tests): FAIL/REPAIR a machine (machines: it), KILL a running job (info: why),
# DOWN/UP a whole cluster (outage), LINK a link's new latency/bandwidth, RETURN a job sent back to the meta.
SUBMIT, DISPATCHED, ARRIVE, START, FINISH, REJECT, PREEMPT, RESUME = range(8)
FAIL, REPAIR, KILL, DOWN, UP, LINK, RETURN = range(8, 15)
EVENT_KINDS = (
    "submit",
    "dispatch",
    "arrive",
    "start",
    "finish",
    "reject",
    "preempt",
    "resume",
    "fail",
    "repair",
    "kill",
    "down",
    "up",
    "link",
    "return",
)
NO_CPUS: tuple[int, ...] = ()
