"""EASY backfilling: FCFS plus a reservation for the blocked head, from estimated ends.

A later job may start now only if it does not delay the head's reservation:
it ends (by its estimate) before the reserved time, or it uses only CPUs and
license copies the reservation leaves spare. Reservations are made over
machines (not just CPU counts) and license copies. The queue is in arrival
order unless ``order`` ranks it otherwise (:mod:`emulator.policies.ordering`):
the first job of that order that cannot start gets the reservation.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..core.model import SINGLE, Job
from ..core.resources import Plan
from ..state.placement import Reservation, Scratch, reserve
from .local_base import Decision, LocalPolicy
from .ordering import HALF_LIFE, ORDER_CHECKS, QueueOrder
from .registry import LOCAL


@LOCAL.register("easy", **ORDER_CHECKS)
class Easy(LocalPolicy):
    """EASY backfilling (see the module docstring).

    The reservation is computed only when some later job could start now:
    when nothing fits, it could not change the decision.
    """

    def __init__(self, *, order: str = "fcfs", half_life: float = HALF_LIFE, rng=None, cluster=None) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.order = QueueOrder(order, half_life)

    def schedule(self, view) -> list[Decision]:
        if self.order.arrival:
            deep = len(view.queue) > DEEP
            return backfill(view, iter(view.queue.values()), Scratch(view.resources), in_queue_order=deep)
        starts = backfill(view, iter(self.order.ranked(view)), Scratch(view.resources))
        self.order.started(view, starts)
        return starts


DEEP = 64
"""Queued jobs from which a pass finds its later candidates with one numpy mask (:func:`_candidates`);
on shorter queues walking them costs less than setting the mask up."""


def backfill(view, queue: Iterator[Job], scratch: Scratch, in_queue_order: bool = False) -> list[Decision]:
    """One EASY pass over ``queue``, the jobs in the order the policy ranks them, on ``scratch``.

    Jobs start in order while they fit; the first that does not gets the
    reservation (placed by ``scratch.order``, like every plan of the pass); each
    later one starts now only if it does not delay it. EASY passes arrival
    order; Flexible backfilling its priority order and fastest machines first.
    ``queue`` may leave out jobs after the first one that cannot fit now (they
    could not start anyway). ``in_queue_order``: ``queue`` is the cluster's
    queue in its own order, so the later jobs are found in ``view.columns``
    with one mask (:func:`_candidates`) instead of one by one.
    """
    starts: list[Decision] = []
    for head in queue:
        plan = scratch.fit(head)
        if plan is None:
            break
        scratch.take(head, plan)
        starts.append((head, plan))
    else:
        return starts
    pass_ = _Pass(view, head, scratch, starts)
    later = _candidates(view.columns, head, pass_) if in_queue_order else _narrow_enough(queue, scratch)
    for job in later:
        if not pass_.try_later(job):
            break
    return starts


class _Pass:
    """The backfilling part of a pass: the head's reservation (made when a later job could start at all)
    and the spare CPUs and copies it leaves."""

    def __init__(self, view, head: Job, scratch: Scratch, starts: list[Decision]) -> None:
        self.view, self.head, self.scratch, self.starts = view, head, scratch, starts
        self.reservation: Reservation | None = None
        self._spare: np.ndarray | None = None  # (see spare)

    def reserve(self) -> bool:
        """Make the reservation; False if there is none to protect and nothing may start."""
        view, scratch = self.view, self.scratch
        reservation = reserve(self.head, view.now, scratch, _ends(view, self.starts))
        if reservation is None:
            if view.resources.up_cpus == view.cluster.cpus:
                return False
            # Machines are down (stress tests: failures) and the head fits only once one is back,
            # at a time nobody knows: no reservation to protect, every job that fits now starts.
            reservation = Reservation(math.inf, np.zeros_like(scratch.free), {}, 0)
        self.reservation = reservation
        self.spare_licenses = dict(reservation.spare_licenses)
        self.spare_total = reservation.spare_total  # the sum of spare, kept in step with it
        return True

    @property
    def spare(self) -> np.ndarray:
        """The CPUs per machine the reservation leaves spare, less what backfilled jobs that outlive it
        took; read from the reservation when first needed (most passes never need them)."""
        if self._spare is None:
            self._spare = self.reservation.spare_cpus
        return self._spare

    def try_later(self, job: Job) -> bool:
        """Start ``job`` now if it does not delay the reservation; False: stop the pass.

        ``job`` asks no more CPUs than are free (the callers' filter: :func:`_narrow_enough`,
        :func:`_candidates`)."""
        scratch = self.scratch
        if job.placement == SINGLE and job.cpus > scratch.widest():
            return True  # cannot fit now at all: skip cheaply
        if self.reservation is None and not self.reserve():
            return False
        now, res, shadow = self.view.now, self.view.resources, self.reservation.time
        work = job.estimate * job.bench
        # Jobs that end after the reservation even on the fastest machine go straight to the
        # spare-resource check; the others are placed now and checked at their plan's speed.
        plan = None if now + work / res.fastest(job.licenses) > shadow else scratch.fit(job)
        if plan is None or now + work / res.speed(plan) > shadow:
            if job.cpus > self.spare_total:  # (the fit within the spare CPUs would fail)
                return True
            plan = scratch.fit(job, cap=self.spare, pool=self.spare_licenses)
            if plan is None:
                return True
            self._take_spare(job, plan)
        scratch.take(job, plan)
        self.starts.append((job, plan))
        return True

    def _take_spare(self, job: Job, plan: Plan) -> None:
        """A backfilled job that outlives the reservation uses up spare resources."""
        spare = self.spare
        if not spare.flags.writeable:  # the reservation's own (shared with reserve's memo)
            spare = self._spare = spare.copy()
        for m, n in plan:
            spare[m] -= n
        self.spare_total -= sum(n for _, n in plan)
        for lic, n in self.view.resources.license_need(job, plan, fresh=True).items():
            self.spare_licenses[lic] = self.spare_licenses.get(lic, 0) - n


def _narrow_enough(queue: Iterator[Job], scratch: Scratch) -> Iterator[Job]:
    """The jobs of ``queue`` asking no more CPUs than are free at their turn: the others cannot start
    now (most jobs, on a busy cluster), and a generator skips them for less than a call each."""
    return (job for job in queue if job.cpus <= scratch.total)


def _candidates(columns, head: Job, pass_: _Pass) -> Iterator[Job]:
    """The queued jobs after ``head`` that could start in this pass, in queue order.

    Free CPUs, spare CPUs and the shadow only shrink during a pass, so a job
    that fails these bounds at its start fails them at its turn: too wide for
    the free CPUs, or ending after the shadow on the fastest machine it could
    use while too wide for the spare CPUs. Those :meth:`_Pass.try_later`
    would skip; the rest it checks exactly, as without the columns.
    """
    start, cpus, work, fastest = columns.after(head.id)
    jobs = columns.jobs
    last = -1
    for last in (cpus <= pass_.scratch.total).nonzero()[0]:  # until the reservation is made
        yield jobs[start + last]
        if pass_.reservation is not None:
            break
    else:
        return
    first = int(last) + 1
    ends = pass_.view.now + work[first:] / fastest[first:]  # on the fastest machine each job could use
    shadow, scratch, cpus = pass_.reservation.time, pass_.scratch, cpus[first:]
    rest = None  # every job after ``first``, until a start shrinks the bounds
    while True:
        total = scratch.total
        spare = int(np.minimum(scratch.free, np.maximum(pass_.spare, 0)).sum())  # spare and free now
        c, e = (cpus, ends) if rest is None else (cpus[rest], ends[rest])
        keep = ((c <= total) & ((e <= shadow) | (c <= spare))).nonzero()[0]
        rest = keep if rest is None else rest[keep]
        for k, i in enumerate(rest.tolist()):
            yield jobs[start + first + i]
            if scratch.total != total:  # it started: the bounds shrank, filter the rest again
                rest = rest[k + 1 :]
                break
        else:
            return
        if not rest.size:
            return


def _ends(view, starts: list[Decision]):
    """Estimated ends of the running jobs and of the jobs this pass has started, soonest first."""
    ends = view.estimated_ends()
    if starts:
        now, speed = view.now, view.resources.speed
        ends += [(now + j.estimate * j.bench / speed(p), p, j.licenses) for j, p in starts]
        ends.sort(key=lambda end: end[0])
    return ends
