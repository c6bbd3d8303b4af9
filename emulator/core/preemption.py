"""Preemption as data: the decision a local policy returns, and what a preempted job keeps.

Three kinds (seed 002, after Thain et al.'s taxonomy):

- ``suspend``: the job stops using its CPUs and keeps its progress; it may
  resume only on the machine(s) it ran on.
- ``checkpoint``: progress is kept and the job may restart anywhere; only for
  jobs marked ``checkpointable``.
- ``stop``: progress is lost; the job restarts from zero, anywhere.

A preempted job frees its CPUs and license copies at once and goes back to the
cluster's queue; when a policy starts it again that is a *resume* (trace row
``resume``). A ``stop`` decision for a job already preempted (queued) drops
the progress it kept, so a suspended job may then restart from zero on
another machine. Each preemption may carry an ``overhead`` in seconds: the job
holds its new CPUs that long before it makes progress again (the cost of
resuming, restoring a checkpoint or re-staging a stopped job). The trace
records the kind on the ``preempt`` row and the kind the job resumes from
(``stop``: from zero) and the overhead on the ``resume`` row, so a job's wasted
CPU time (overheads, and progress thrown away) can be read back from the events
alone (:func:`parse_resume`).
"""

from __future__ import annotations

from typing import NamedTuple

SUSPEND, CHECKPOINT, STOP = "suspend", "checkpoint", "stop"
KINDS = (SUSPEND, CHECKPOINT, STOP)
KEEPS_PROGRESS = frozenset((SUSPEND, CHECKPOINT))


class PreemptionError(RuntimeError):
    """A policy asked for a preemption or a resume the model does not allow (a policy bug)."""


class Preempt(NamedTuple):
    """Decision: preempt running job ``job`` (its id) now, by ``kind``; ``overhead`` s on its next resume.

    >>> Preempt(7, "checkpoint", 2.5)
    Preempt(job=7, kind='checkpoint', overhead=2.5)
    """

    job: int
    kind: str
    overhead: float = 0.0


class Held:
    """A preempted job waiting in the queue: how it was preempted and what it keeps."""

    __slots__ = ("done", "kind", "machines", "overhead", "queued_work")

    def __init__(
        self, kind: str, done: float, machines: tuple[int, ...], overhead: float, queued_work: float
    ) -> None:
        self.kind = kind
        self.done = done  # MI executed and kept (0 after a stop)
        self.machines = machines  # machines of the plan it ran on (a suspended job resumes only there)
        self.overhead = overhead  # seconds its next run spends before making progress
        self.queued_work = queued_work  # estimated MI it adds to the queue while waiting

    def drop_progress(self, length: float, overhead: float) -> None:
        """Forget the progress kept: the job will restart from zero, anywhere, after ``overhead`` s."""
        self.kind, self.done, self.overhead, self.queued_work = STOP, 0.0, overhead, length

    def check_resume(self, job_id: int, plan: tuple[tuple[int, int], ...]) -> None:
        """A suspended job must resume on the very machines it ran on."""
        if self.kind == SUSPEND and tuple(m for m, _ in plan) != self.machines:
            where = [m for m, _ in plan]
            raise PreemptionError(
                f"job {job_id} was suspended on machine(s) {list(self.machines)} and can resume only "
                f"there, not on {where} (a stop decision first drops its progress)"
            )


def resume_info(kind: str, overhead: float) -> str:
    """The ``info`` of a ``resume`` row: the kind, and the overhead when there is one.

    >>> resume_info("stop", 0.0), resume_info("checkpoint", 2.5)
    ('stop', 'checkpoint overhead=2.5')
    """
    return kind if not overhead else f"{kind} overhead={overhead!r}"


def parse_resume(info: str | None) -> tuple[str, float]:
    """``(kind, overhead)`` from a ``resume`` row's ``info`` (inverse of :func:`resume_info`).

    >>> parse_resume("checkpoint overhead=2.5")
    ('checkpoint', 2.5)
    """
    kind, _, rest = (info or "").partition(" overhead=")
    return kind, float(rest) if rest else 0.0
