"""A started job, as its cluster's state and execution model keep it (:class:`Run`).

Apart from the execution models (:mod:`emulator.state.execution`), which decide when
a run ends, so the cluster's state (:mod:`emulator.state.cluster_state`) can hold
runs without importing the models that act on it.
"""

from __future__ import annotations

import math

from .model import Job
from .resources import Plan


class Run:
    """A started job: where it runs, how fast, and when it is expected to end."""

    __slots__ = (
        "done",
        "end",
        "estimated_end",
        "job",
        "machines",
        "overhead",
        "pes",
        "plan",
        "seq",
        "speed",
        "start",
    )

    def __init__(self, job: Job, start: float, plan: Plan, machines: tuple, pes: tuple, speed: float) -> None:
        self.job = job
        self.start = start
        self.plan = plan
        self.machines = machines
        self.pes = pes
        self.speed = speed  # MIPS per CPU: the slowest machine used
        self.estimated_end = start + job.estimate * job.bench / speed
        self.end = math.inf  # set by the execution model when known
        self.done = 0.0  # MI executed so far (models that track progress; Exact: before this start)
        self.overhead = 0.0  # seconds after start before progress resumes (a preempted job's resume cost)
        self.seq = 0

    def resumed(self, done: float, overhead: float) -> None:
        """This run continues a preempted job that had executed ``done`` MI; it pays ``overhead`` s first."""
        self.done = done
        self.overhead = overhead
        self.estimated_end = self.start + overhead + max(0.0, self.job.length - done) / self.speed

    def progress(self, now: float) -> float:
        """MI executed by ``now`` (exact model): the progress kept plus this run's, at most the length."""
        ran = now - self.start - self.overhead
        done = self.done + ran * self.speed if ran > 0 else self.done
        return min(done, self.job.actual_length)
