"""EASY backfilling: FCFS plus a reservation for the blocked head, from estimated ends.

A later job may start now only if it does not delay the head's reservation:
it ends (by its estimate) before the reserved time, or it uses only CPUs and
license copies the reservation leaves spare. Reservations are made over
machines (not just CPU counts) and license copies.
"""

from __future__ import annotations

import numpy as np

from ..placement import Scratch, reserve, speed
from .local_base import Decision, LocalPolicy
from .registry import LOCAL


@LOCAL.register("easy")
class Easy(LocalPolicy):
    def schedule(self, view) -> list[Decision]:
        scratch = Scratch(view.resources)
        starts: list[Decision] = []
        queue = iter(view.queue.values())
        for head in queue:
            plan = scratch.fit(head)
            if plan is None:
                break
            scratch.take(head, plan)
            starts.append((head, plan))
        else:
            return starts
        now, mips = view.now, view.resources.mips
        ends = view.estimated_ends()
        if starts:
            ends += [(now + j.estimate * j.bench / speed(p, mips), p, j.licenses) for j, p in starts]
            ends.sort(key=lambda end: end[0])
        reservation = reserve(head, now, scratch, ends)
        if reservation is None:
            return starts
        spare, spare_licenses = reservation.spare_cpus, dict(reservation.spare_licenses)
        for job in queue:
            plan = scratch.fit(job)
            if plan is None:
                continue
            if now + job.estimate * job.bench / speed(plan, mips) > reservation.time:
                plan = scratch.fit(job, cap=spare, pool=_min_pool(scratch.licenses, spare_licenses))
                if plan is None:
                    continue
                _take_spare(view.resources, job, plan, spare, spare_licenses)
            scratch.take(job, plan)
            starts.append((job, plan))
        return starts


def _min_pool(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {lic: min(n, b.get(lic, 0)) for lic, n in a.items()}


def _take_spare(res, job, plan, spare: np.ndarray, spare_licenses: dict[str, int]) -> None:
    """A backfilled job that outlives the reservation uses up spare resources."""
    for m, n in plan:
        spare[m] -= n
    for lic, n in res.license_need(job, plan).items():
        spare_licenses[lic] = spare_licenses.get(lic, 0) - n
