"""Where a job fits: first-fit placement now and EASY-style reservations later.

One mechanism for every policy that places whole jobs on machines: a policy
chooses *which* job, these helpers say *where* (``single``: all CPUs on one
SMP machine; ``spread``: CPUs from several machines of the cluster, lowest
machine index first). Machine order can be changed (e.g. fastest first).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from functools import partial
from itertools import compress
from operator import mul

import numpy as np

from ..core.model import SINGLE, Job
from ..core.resources import Plan
from .views import ResourcesView


def first_fit(
    job: Job,
    free: np.ndarray,
    eligible: np.ndarray | None,
    order: np.ndarray | None = None,
    low: int = 0,
) -> Plan | None:
    """The plan placing ``job`` on the free CPUs ``free`` now, or None if it does not fit.

    ``eligible``: the machines that may run it (None: every machine, which spares reading a mask).
    ``order``: machine indices in preference order (default: ascending index).
    ``low``: without an order, no machine below it has a free CPU (where the search starts).
    """
    if order is not None:
        return _first_fit_ordered(job, free, _mask(eligible, free.size), order)
    if low < free.size and free[low] >= job.cpus and (eligible is None or eligible[low]):
        return ((low, job.cpus),)  # the first machine with a free CPU holds the job (either placement)
    if free.size - low <= SCAN:
        return _scan(job, free[low:].tolist(), None if eligible is None else eligible[low:].tolist(), low)
    eligible = _mask(eligible, free.size)
    if job.placement == SINGLE:
        hits = (eligible[low:] & (free[low:] >= job.cpus)).nonzero()[0]
        return ((int(hits[0]) + low, job.cpus),) if hits.size else None
    usable = _usable_prefix(job.cpus, free[low:], eligible[low:])
    counts = _take_first(job.cpus, usable)
    if counts is None:
        return None
    used = counts.nonzero()[0]
    return tuple(zip((used + low).tolist(), counts[used].tolist(), strict=True))


def _mask(eligible: np.ndarray | None, size: int) -> np.ndarray:
    """``eligible`` as a mask (the vector paths need one; they run on large clusters only)."""
    return np.ones(size, dtype=bool) if eligible is None else eligible


SCAN = 128
"""Up to this many machines from the first free one, :func:`first_fit` walks them as Python lists: on
a small cluster a dozen numpy calls on tiny arrays (microseconds each) cost more than the walk."""


def _scan(job: Job, free: list[int], eligible: list[bool] | None, low: int) -> Plan | None:
    """:func:`first_fit` by index over machines ``low`` on, given as lists (``eligible`` None: all).

    ``compress`` skips the machines with nothing free (or not eligible) in C: on a busy cluster
    most of them, so the Python loop only sees the machines the plan takes."""
    cpus = job.cpus
    if (max(free, default=0) if job.placement == SINGLE else sum(free)) < cpus:
        return None  # (even ignoring eligibility: one C call spares the walk where a backfill fails)
    usable = free if eligible is None else map(mul, free, eligible)  # (n * False == 0)
    machines = compress(range(low, low + len(free)), usable)
    if job.placement == SINGLE:
        for m in machines:
            if free[m - low] >= cpus:
                return ((m, cpus),)
        return None
    plan: list[tuple[int, int]] = []
    for m in machines:
        n = free[m - low]
        if n >= cpus:
            plan.append((m, cpus))
            return tuple(plan)
        plan.append((m, n))
        cpus -= n
    return None


def _first_fit_ordered(job: Job, free: np.ndarray, eligible: np.ndarray, order: np.ndarray) -> Plan | None:
    """:func:`first_fit` taking machines in ``order``; the plan lists them ascending."""
    if job.placement == SINGLE:
        hits = order[(eligible & (free >= job.cpus))[order]]
        return ((int(hits[0]), job.cpus),) if hits.size else None
    counts = _take_first(job.cpus, np.where(eligible, free, 0)[order])
    if counts is None:
        return None
    used = counts.nonzero()[0]
    return tuple(sorted(zip(order[used].tolist(), counts[used].tolist(), strict=True)))


def _take_first(cpus: int, usable: np.ndarray) -> np.ndarray | None:
    """CPUs taken from each of ``usable`` (a fresh array, changed in place), first ones first, or None
    if they hold fewer than ``cpus``."""
    taken = np.cumsum(usable)
    if taken.size == 0 or taken[-1] < cpus:
        return None
    last = int(np.searchsorted(taken, cpus))
    counts = usable[: last + 1]
    counts[last] -= taken[last] - cpus
    return counts


SMALL_PLAN = 64
"""Plans of at most this many machines are taken from the free counts one machine at a time, through a
memoryview (cheaper than a vector over every machine of the cluster)."""

PREFIX = 64
"""Machines a spread first fit looks at first (then four times as many, and so on): on a cluster of
thousands of machines a job is usually placed within its first few free ones."""


def _usable_prefix(cpus: int, free: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Free CPUs of the eligible machines, from the first machine to one whose prefix holds ``cpus``
    (all machines if none does): first fit by index never looks further."""
    size = PREFIX
    while size < free.size:
        usable = np.where(eligible[:size], free[:size], 0)
        if usable.sum() >= cpus:
            return usable
        size *= 4
    return np.where(eligible, free, 0)


def plan_vector(plan: Plan, size: int) -> np.ndarray:
    """CPUs per machine of a plan, as a vector over the cluster's machines."""
    vec = np.zeros(size, dtype=np.int64)
    machines, counts = zip(*plan, strict=True)
    vec[list(machines)] = counts
    return vec


class Reservation:
    """The earliest (estimated) time a blocked job can start, and what its place there leaves.

    ``spare_cpus`` and ``spare_licenses`` are what remains free at ``time`` once
    the job is placed (first fit, in the pass's machine order): a job that would
    still run at ``time`` may only use those.
    ``spare_total`` is the sum of ``spare_cpus``: a job asking more cannot use them
    (one comparison, where most jobs on a busy cluster are refused). :func:`reserve`
    gives the same object again while its inputs hold, so ``spare_cpus`` is
    read-only: a caller that uses up spare CPUs copies it first. ``spare_cpus``
    may be given as a function that makes it, called when it is first read: most
    passes that reserve start nothing that outlives the reservation (KTH-SP2 under
    EASY: making it at every walk was a sixth of the walks' cost).
    """

    __slots__ = ("_spare", "spare_licenses", "spare_total", "time")

    def __init__(
        self,
        time: float,
        spare_cpus: np.ndarray | Callable[[], np.ndarray],
        spare_licenses: dict[str, int],
        spare_total: int,
    ) -> None:
        self.time = time
        self._spare = spare_cpus
        self.spare_licenses = spare_licenses
        self.spare_total = spare_total

    @property
    def spare_cpus(self) -> np.ndarray:
        if callable(self._spare):
            self._spare = self._spare()
            self._spare.flags.writeable = False  # (shared through the memo)
        return self._spare


class Scratch:
    """A policy's working copy of free CPUs and licenses while it builds one decision list.

    Within one pass resources only shrink, so a job shape that did not fit
    cannot fit later in the pass: :meth:`fit` remembers the fewest CPUs that
    failed per (eligible machines, placement, limit) and answers larger
    requests at once. That keeps a scan over a long queue at one dictionary
    lookup per job. License copies are checked apart (before placing, when
    copies are counted per job), so a job short of copies does not mark its
    CPU shape as failed.
    """

    # Built at every scheduling pass (tens of thousands on a trace): slots, and no copy of an empty
    # license pool, keep that under half a microsecond.
    __slots__ = ("_counts", "_failed", "_free", "_own", "_taken", "_widest", "held", "licenses", "low")
    __slots__ += ("order", "res", "total")

    def __init__(self, res: ResourcesView, order: np.ndarray | None = None) -> None:
        self.res = res
        self.order = order  # machines in preference order for every plan of the pass (None: by index)
        self._free = res.free  # the live read-only view until the pass takes something: copied then
        self._taken: list[Plan] = []  # plans taken but not yet subtracted from _free
        self._own = False
        self._counts: memoryview | None = None  # _free's items, once it is this pass's own copy
        self.low = res.first_free() if order is None else 0  # (taking only raises the first free one)
        self.total = res.free_cpus
        self.licenses = dict(res.free_licenses) if res.free_licenses else {}
        self.held: set[tuple[int, str]] = set()
        self._failed: dict[tuple, int] = {}
        self._widest: int | None = None

    @property
    def free(self) -> np.ndarray:
        """Free CPUs per machine as the pass leaves them. Taking only notes the plan: a pass that
        starts one job and stops, the usual one on a large cluster, never copies the free counts."""
        if self._taken:
            if not self._own:
                self._free, self._own = self._free.copy(), True
                self._counts = memoryview(self._free)
            for plan in self._taken:
                if len(plan) <= SMALL_PLAN:
                    counts = self._counts
                    for m, n in plan:
                        counts[m] -= n
                else:
                    self._free -= plan_vector(plan, self._free.size)
            self._taken = []
        return self._free

    def widest(self) -> int:
        """Most CPUs still free on one machine: a single-machine job asking more cannot fit (lazy)."""
        if self._widest is None:
            self._widest = int(self.free.max(initial=0))
        return self._widest

    def license_need(self, job: Job, plan: Plan) -> dict[str, int]:
        return self.res.license_need(job, plan, self.held)

    def licenses_ok(self, job: Job, plan: Plan) -> bool:
        return _enough(self.licenses, self.license_need(job, plan))

    def fit(self, job: Job, cap: np.ndarray | None = None, pool: dict[str, int] | None = None) -> Plan | None:
        """First-fit plan for ``job`` on what is still free (within ``cap`` and ``pool`` if given).

        ``pool`` bounds the copies the job keeps until it ends (counted ``fresh``,
        see :meth:`Resources.license_need`). ``cap`` and ``pool`` must only shrink
        during the pass, like the free resources.
        """
        if job.cpus > self.total:
            return None
        mask = self.res.eligible(job.licenses)
        # Masks are shared between license sets with the same machines (Resources.eligible), so
        # jobs asking for different licenses that every machine runs share one CPU-failure entry.
        key = (id(mask), job.placement, cap is None)
        if job.cpus >= self._failed.get(key, 1 << 62):
            return None
        if job.licenses and not self.res.per_machine and not _enough(self.licenses, self.res.copies(job)):
            return None  # no plan can get the copies; says nothing about the CPUs
        free = self.free if cap is None else np.minimum(self.free, cap)
        plan = first_fit(job, free, None if mask is self.res.everywhere else mask, self.order, self.low)
        if plan is None:
            self._failed[key] = min(job.cpus, self._failed.get(key, 1 << 62))
            return None
        if job.licenses and (
            (self.res.per_machine and not self.licenses_ok(job, plan))
            or (pool is not None and not _enough(pool, self.res.license_need(job, plan, fresh=True)))
        ):
            return None
        return plan

    def take(self, job: Job, plan: Plan) -> None:
        if job.licenses:  # (most jobs hold none: nothing to count)
            for lic, n in self.license_need(job, plan).items():
                self.licenses[lic] -= n
            if self.res.per_machine:
                self.held.update((m, lic) for m, _ in plan for lic in job.licenses)
        self._taken.append(plan)
        self.total -= job.cpus
        self._widest = None


def _enough(pool: dict[str, int], need: dict[str, int]) -> bool:
    return all(pool.get(lic, 0) >= n for lic, n in need.items())


Ends = list[tuple[float, Plan, tuple[str, ...]]]


def reserve(job: Job, now: float, scratch: Scratch, ends: Ends) -> Reservation | None:
    """Reserve for ``job`` from running jobs' estimated ends ``(end, plan, licenses)``, sorted.

    ``ends`` must cover every job holding resources (running, and started in
    this pass). Releases are applied one end time at a time, starting from what
    ``scratch`` says is free now; the reservation is the first end time after
    which the job fits (CPUs and license copies), placed in ``scratch.order``.
    None when the job would not fit even on an idle cluster.

    The answer is kept on the resources and given again (the same object: its spare
    CPUs are read-only) while its inputs are the same (the job, what is free,
    the ends, the machine order) and ``now`` has not reached the reserved time.
    The walk would find the same step then: ends before ``now`` only merge into
    its first steps, where the job did not fit. So on a deep queue the passes
    between two job ends (arrivals only) reserve once.
    """
    res = scratch.res
    memo = res.reservation_memo
    if (
        memo is not None
        and memo[0] is job
        and memo[1] <= now
        and memo[2] is scratch.order
        and memo[3] == ends
        and memo[4] == scratch.licenses
        and memo[5] == scratch.free.tobytes()  # (bytes compare at a tenth of np.array_equal's cost)
        and (memo[6] is None or now < memo[6].time)
    ):
        return memo[6]
    reservation = _walk(job, now, scratch, ends)
    inputs = (job, now, scratch.order, list(ends), dict(scratch.licenses), scratch.free.tobytes())
    res.reservation_memo = (*inputs, reservation)
    return reservation


def _walk(job: Job, now: float, scratch: Scratch, ends: Ends) -> Reservation | None:
    """:func:`reserve`'s walk over the ends. CPU feasibility is tracked incrementally (the eligible
    free CPUs for a spread job, the released machines for a single one), so it costs one step per
    released machine. With copies counted per machine, a copy comes back when the last job holding
    it on that machine ends, and the job needs a copy for each machine of its plan that no job still
    running then holds."""
    res = scratch.res
    mask = res.eligible(job.licenses)
    free = scratch.free.tolist()
    eligible = None if mask is res.everywhere else mask.tolist()
    usable = free if eligible is None else list(compress(free, eligible))
    cpus, spread = job.cpus, job.placement != SINGLE
    room = sum(usable)
    fits = room >= cpus if spread else max(usable, default=0) >= cpus
    licenses = dict(scratch.licenses)
    copies = _CopyClock(ends, licenses) if res.per_machine else None
    i, count, time = 0, len(ends), now
    while True:
        if fits:
            if not job.licenses:
                break  # (placed once the walk is done: no plan can lack copies)
            plan = _fit_lists(job, free, eligible, mask, scratch.order)
            need = res.license_need(job, plan) if copies is None else copies.need(job, plan)
            if _enough(licenses, need):
                break
        if i == count:
            return None
        time = max(ends[i][0], now)
        while i < count and ends[i][0] <= time:  # (sorted: the ends at ``time``, or all up to now)
            _, released, held = ends[i]
            for m, n in released:
                free[m] += n
                if eligible is None or eligible[m]:
                    room += n
                    fits = fits or free[m] >= cpus
            if copies is None:
                for lic in held:
                    licenses[lic] = licenses.get(lic, 0) + 1
            else:
                copies.release(released, held)
            i += 1
        fits = fits or (spread and room >= cpus)
    total = sum(free) - cpus
    if job.licenses:
        for lic, n in need.items():
            licenses[lic] -= n
        spare = _left(free, plan)
    elif spread and scratch.order is None:
        spare = partial(_left_spread, free, cpus)  # (a job asking no licenses may use every machine)
    else:
        spare = _left(free, _fit_lists(job, free, eligible, mask, scratch.order))
    return Reservation(time, spare, licenses, total)


def _left(free: list[int], plan: Plan) -> np.ndarray:
    """The free counts ``free`` (changed) once ``plan`` takes its CPUs, as an array."""
    for m, n in plan:
        free[m] -= n
    return np.array(free, dtype=np.int64)


def _left_spread(free: list[int], cpus: int) -> np.ndarray:
    """:func:`_left` for a spread first fit by index over every machine (of ``cpus`` CPUs, which
    ``free`` holds), without building its plan: the CPUs up to the one where their running sum
    reaches ``cpus`` go. The head of a busy queue is wide: its plan would list dozens of machines."""
    spare = np.array(free, dtype=np.int64)
    taken = spare.cumsum()
    last = int(taken.searchsorted(cpus))
    spare[:last] = 0
    spare[last] = taken[last] - cpus  # (the last machine keeps what the job leaves of it)
    return spare


def _fit_lists(
    job: Job, free: list[int], eligible: list[bool] | None, mask: np.ndarray, order: np.ndarray | None
) -> Plan:
    """:func:`first_fit` on the walk's free counts, kept as a list (the job fits them): walked as they
    are on a small cluster, as an array otherwise."""
    if order is None and len(free) <= SCAN:
        return _scan(job, free, eligible, 0)
    return first_fit(job, np.array(free, dtype=np.int64), mask, order)


class _CopyClock:
    """Per-machine license copies over a reservation walk: a copy returns with its machine's last holder."""

    def __init__(self, ends: Ends, licenses: dict[str, int]) -> None:
        self.licenses = licenses
        self.holders = Counter((m, lic) for _, plan, held in ends for m, _ in plan for lic in set(held))

    def need(self, job: Job, plan: Plan) -> dict[str, int]:
        """Copies ``job`` needs on ``plan`` given who still holds copies at this point of the walk."""
        return {lic: sum(1 for m, _ in plan if self.holders[(m, lic)] <= 0) for lic in set(job.licenses)}

    def release(self, plan: Plan, held: tuple[str, ...]) -> None:
        for lic in set(held):
            for m, _ in plan:
                self.holders[(m, lic)] -= 1
                if self.holders[(m, lic)] == 0:
                    self.licenses[lic] = self.licenses.get(lic, 0) + 1
