"""Conservative backfilling on user estimates (Mu'alem & Feitelson, 2001), with compression.

Every queued job holds a reservation: a start time and machines (and license
copies) for its estimated duration, made when it is first considered and
kept in a :class:`~emulator.policies.cpu_profile.CpuProfile` with the running
jobs' estimated ends and every other reservation. So a job may start now only
if it fits now for its whole estimate without overlapping any reservation: it
delays no job queued before it.

At each pass the queue is walked in the policy's ``order`` (arrival order by
default, see :mod:`emulator.policies.ordering`):

- compression first: when something freed resources ahead of plan since the
  last pass (a job ending before its estimate, a reserved job leaving the
  queue, a machine back up), each reserved job in turn is taken out of the
  profile and placed again at the earliest slot *before* its reserved start,
  if there is one, else put back where it was; sweeps repeat while one moves
  (its old slot may suit a job considered before it). The old slot is still
  free (everything placed since was placed around it), so no job is ever
  later than it was promised (``promised``: the first start each queued job
  was given), as long as jobs end by their estimates. With a priority order
  the freed room goes to the jobs that rank first;
- then a job without a reservation (an arrival) gets the earliest slot the
  profile has, placed first fit (``single``: one machine; ``spread``: several,
  lowest index first, lasting its slowest machine's pace), with its copies
  free throughout; a job whose slot starts now starts, on its reserved machines.

Jobs that outlive their estimate may end at any moment: the profile frees
their CPUs now, and a reservation they hold up is made again at the next
pass. A job with no slot at all (machines down) is passed over until one
comes back. Licenses and ``single``/``spread`` placement follow ``easy``;
copies counted per machine are booked for every machine of a reservation (a
machine's copy may be shared with a job running there: never fewer than
needed).

``rounding = "gridsim"`` plans and runs every job for GridSim's whole seconds
(``floor(length / rating) + 1`` at the first machine's rating, as
``gridsim-conservative`` does), for comparing the two with exact estimates.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from ..core.model import Job
from ..state import execution
from ..state.placement import Scratch
from .cpu_profile import Block, CpuProfile, Demand
from .local_base import Decision, LocalPolicy
from .ordering import HALF_LIFE, ORDER_CHECKS, QueueOrder
from .params import Param
from .registry import LOCAL

ROUNDINGS = ("none", "gridsim")


@LOCAL.register("conservative", rounding=Param(choices=ROUNDINGS), **ORDER_CHECKS)
class Conservative(LocalPolicy):
    """Conservative backfilling on estimates (see the module docstring).

    ``booked`` maps each queued job's id to its reservation; ``promised`` each
    queued job's id to the first start it was given.
    """

    def __init__(
        self,
        *,
        order: str = "fcfs",
        half_life: float = HALF_LIFE,
        rounding: str = "none",
        rng=None,
        cluster=None,
    ) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.order = QueueOrder(order, half_life)
        self.rounding = rounding
        if rounding == "gridsim":
            self.execution = execution.WholeSeconds
        self.booked: dict[int, Block] = {}
        self.promised: dict[int, float] = {}
        self._ends: dict[int, float] = {}  # estimated ends of the jobs running after the last pass
        self._up = -1  # CPUs up at the last pass
        self._licenses: tuple[str, ...] = ()
        self._vectors: dict[tuple[str, ...], np.ndarray] = {}

    def schedule(self, view) -> list[Decision]:
        now, res = view.now, view.resources
        if not self._licenses and res.free_licenses:
            self._licenses = tuple(res.free_licenses)
        freed = self._forget(view)
        profile = CpuProfile(
            now,
            res.free,
            np.array([res.free_licenses[lic] for lic in self._licenses], dtype=np.int64),
            self._releases(view),
            self.booked.values(),
        )
        ranked = self.order.ranked(view)
        while freed:  # compression, until no reservation moves
            freed = self._compress(view, ranked, profile)
        scratch = Scratch(res)
        starts: list[Decision] = []
        for job in ranked:
            block = self.booked.get(job.id)
            if block is None:
                block = profile.earliest(self._demand(job, res))
                if block is None:
                    continue  # no slot at all while machines are down: passed over until one is back
                profile.take(block)
                self.booked[job.id] = block
                self.promised.setdefault(job.id, block.start)
            if block.start == now and _fits(scratch, job, block.plan):
                scratch.take(job, block.plan)
                starts.append((job, block.plan))
                del self.booked[job.id]
                self.promised.pop(job.id, None)
                self._ends[job.id] = block.end
        self.order.started(view, starts)
        return starts

    def _compress(self, view, ranked: list[Job], profile: CpuProfile) -> bool:
        """Move each reservation, in queue order, to the earliest slot before its start, if any; True
        if one moved (its old slot is free now: a later one may move into it).

        Only the reservations :meth:`CpuProfile.movable` lets through are placed again, and that
        check is made anew for the ones after a reservation that moved.
        """
        now, res, moved = view.now, view.resources, False
        waiting = [job for job in ranked if job.id in self.booked and self.booked[job.id].start > now]
        while waiting:
            blocks = [self.booked[job.id] for job in waiting]
            shortest = np.array([job.estimate * job.bench for job in waiting]) / float(res.mips.max())
            for k in np.flatnonzero(profile.movable(blocks, shortest)).tolist():
                job, block = waiting[k], blocks[k]
                profile.give(block)
                better = profile.earliest(self._demand(job, res), before=block.start)
                profile.take(better or block)
                if better is not None:
                    self.booked[job.id], moved = better, True
                    waiting = waiting[k + 1 :]
                    break
            else:
                break
        return moved

    def _forget(self, view) -> bool:
        """Drop the reservations that no longer stand: of jobs no longer queued, and those a job past
        its estimate held up (their start has passed: made again at this pass, their promise kept).
        True if resources came free ahead of plan since the last pass (a job ended before its
        estimate, a reservation left or passed, a machine came up)."""
        now, running, queue = view.now, view.running, view.queue
        freed = view.resources.up_cpus > self._up >= 0
        self._up = view.resources.up_cpus
        for job_id, end in self._ends.items():
            if end > now and job_id not in running:
                freed = True
                break
        self._ends = {job_id: run.estimated_end for job_id, run in running.items()}
        for job_id, block in list(self.booked.items()):
            if job_id not in queue:
                self.promised.pop(job_id, None)
            elif block.start >= now:
                continue
            del self.booked[job_id]
            freed = True
        return freed

    def _releases(self, view):
        """What running jobs give back at their estimated ends: ``(end, plan, copies vector)``."""
        res, licenses = view.resources, self._licenses
        ends = view.estimated_ends()
        if not licenses:
            return [(end, plan, None) for end, plan, _ in ends]
        if not res.per_machine:
            return [(end, plan, self._vector(held)) for end, plan, held in ends]
        last: dict[tuple[int, str], float] = {}  # a machine's copy comes back with its last holder
        for end, plan, held in ends:
            for lic in set(held):
                for m, _ in plan:
                    last[(m, lic)] = max(end, last.get((m, lic), -math.inf))
        copies = [(end, (), self._vector((lic,))) for (_, lic), end in last.items()]
        return [(end, plan, None) for end, plan, _ in ends] + copies

    def _vector(self, licenses: tuple[str, ...]) -> np.ndarray:
        """Copies of each of the pool's license types in ``licenses`` (one per mention)."""
        vector = self._vectors.get(licenses)
        if vector is None:
            counts = Counter(licenses)
            vector = np.array([counts.get(lic, 0) for lic in self._licenses], dtype=np.int64)
            self._vectors[licenses] = vector
        return vector

    def _demand(self, job: Job, res) -> Demand:
        work = job.estimate * job.bench
        if self.rounding == "gridsim":
            seconds = np.full(res.mips.size, float(execution.whole_seconds(work, float(res.mips[0]))))
        else:
            seconds = work / res.mips
        licenses = tuple(sorted(set(job.licenses))) if res.per_machine else job.licenses
        return Demand(job, seconds, self._vector(licenses), res.per_machine, res.eligible(job.licenses))


def _fits(scratch: Scratch, job: Job, plan) -> bool:
    """Whether ``plan`` is free for ``job`` now, CPUs and copies (a job past its estimate may hold them)."""
    free = scratch.free
    return all(free[m] >= n for m, n in plan) and scratch.licenses_ok(job, plan)
