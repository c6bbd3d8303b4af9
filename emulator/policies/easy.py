"""EASY backfilling: FCFS plus a reservation for the blocked head, from estimated ends.

A later job may start now only if it does not delay the head's reservation:
it ends (by its estimate) before the reserved time, or it uses only CPUs and
license copies the reservation leaves spare. Reservations are made over
machines (not just CPU counts) and license copies.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ..model import SINGLE, Job
from ..placement import Reservation, Scratch, reserve, speed
from .local_base import Decision, LocalPolicy
from .registry import LOCAL


@LOCAL.register("easy")
class Easy(LocalPolicy):
    """EASY backfilling (see the module docstring).

    The reservation is computed only when some later job could start now:
    when nothing fits, it could not change the decision.
    """

    def schedule(self, view) -> list[Decision]:
        return backfill(view, iter(view.queue.values()), Scratch(view.resources))


def backfill(view, queue: Iterator[Job], scratch: Scratch) -> list[Decision]:
    """One EASY pass over ``queue``, the jobs in the order the policy ranks them, on ``scratch``.

    Jobs start in order while they fit; the first that does not gets the
    reservation (placed by ``scratch.order``, like every plan of the pass); each
    later one starts now only if it does not delay it. EASY passes arrival
    order; Flexible backfilling its priority order and fastest machines first.
    ``queue`` may leave out jobs after the first one that cannot fit now (they
    could not start anyway).
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
    now, res = view.now, view.resources
    reservation = None
    for job in queue:
        if job.cpus > scratch.total or (job.placement == SINGLE and job.cpus > scratch.widest()):
            continue  # cannot fit now at all (the common case on a busy cluster): skip cheaply
        if reservation is None:
            reservation = reserve(head, now, scratch, _ends(view, starts))
            if reservation is None:
                if res.up_cpus == view.cluster.cpus:
                    return starts
                # Machines are down (stress tests: failures) and the head fits only once one is back,
                # at a time nobody knows: no reservation to protect, every job that fits now starts.
                reservation = Reservation(math.inf, (), np.zeros_like(scratch.free), {})
            spare, spare_licenses = reservation.spare_cpus, dict(reservation.spare_licenses)
        work = job.estimate * job.bench
        # Jobs that end after the reservation even on the fastest machine go straight to the
        # spare-resource check; the others are placed now and checked at their plan's speed.
        plan = None if now + work / res.fastest(job.licenses) > reservation.time else scratch.fit(job)
        if plan is None or now + work / speed(plan, res.mips) > reservation.time:
            plan = scratch.fit(job, cap=spare, pool=spare_licenses)
            if plan is None:
                continue
            _take_spare(scratch, job, plan, spare, spare_licenses)
        scratch.take(job, plan)
        starts.append((job, plan))
    return starts


def _ends(view, starts: list[Decision]):
    """Estimated ends of the running jobs and of the jobs this pass has started, soonest first."""
    ends = view.estimated_ends()
    if starts:
        now, mips = view.now, view.resources.mips
        ends += [(now + j.estimate * j.bench / speed(p, mips), p, j.licenses) for j, p in starts]
        ends.sort(key=lambda end: end[0])
    return ends


def _take_spare(scratch: Scratch, job, plan, spare: np.ndarray, spare_licenses: dict[str, int]) -> None:
    """A backfilled job that outlives the reservation uses up spare resources."""
    for m, n in plan:
        spare[m] -= n
    for lic, n in scratch.res.license_need(job, plan, fresh=True).items():
        spare_licenses[lic] = spare_licenses.get(lic, 0) - n
