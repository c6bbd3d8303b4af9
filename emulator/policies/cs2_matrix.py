"""Convergent Scheduling 2.0's two phases as pure numpy functions (seed 002; ``POLICIES.md``).

**Heuristics.** Each returns its unweighted contribution to the Job-Machine
matrix ``P[i, m]`` (jobs ``i`` = running then queued, machines ``m``), in
``[0, 1]``, computed for every entry at once; entries of machines a job cannot
use are masked later. ``remt[i, m]`` is the remaining time of job ``i`` on
machine ``m`` (remaining instructions / MIPS, :func:`remaining_times`). The
policy computes their weighted sum at the eligible entries only
(:func:`priorities`); these whole-matrix forms are the definitions.

**Matching.** The eligible entries (:class:`Entries`) are ordered by
priority, descending (:func:`sort_keys`: the exact float order, or a counting
sort's integer classes), and walked greedily (:func:`match`; :func:`entry_order` sorts them all,
as the paper does, for ``cs2[match=sort]``): job ``i`` takes
machine ``m`` when it is not placed yet and ``m`` still has the CPUs and the
license copies. The walk is compiled (:mod:`~emulator.policies.cs2_kernels`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Needs = tuple[tuple[int, int], ...]
"""License copies a job needs: ``((license index, copies), ...)``, each license once."""


def kernels():
    """The compiled loops (:mod:`~emulator.policies.cs2_kernels`), imported on first use: importing
    numba takes ~0.2 s, which every command that runs no CS 2.0 plan is spared."""
    from . import cs2_kernels

    return cs2_kernels


def deadline_score(remt: np.ndarray, deadline: np.ndarray, now: float, eligible: np.ndarray) -> np.ndarray:
    """``(1 - f[i, m]) * F_i``: urgency ``f`` of running ``i`` on ``m``, ``F_i`` its mean over eligible ``m``.

    ``last = deadline - remT``, ``end = now + remT``; ``f = 0`` if ``end <= last``,
    ``(end - last) / remT`` if ``last < end <= deadline``, 1 if ``end > deadline``;
    ``F_i`` is summed in machine order (:func:`row_sums`).
    With the slack ``s = deadline - now`` that is ``f = clip(2 - s / remT, 0, 1)``
    (``end <= last`` iff ``s / remT >= 2``; ``end > deadline`` iff ``s / remT < 1``),
    one division and a clip per entry. No deadline (``inf``): ``f = 0``, score 0.
    """
    f = (deadline - now)[:, None] / remt
    np.subtract(2.0, f, out=f)
    np.clip(f, 0.0, 1.0, out=f)
    count = eligible.sum(axis=1)
    mean = np.divide(row_sums(f, eligible), count, out=np.zeros(len(f)), where=count > 0)
    np.subtract(1.0, f, out=f)
    f *= mean[:, None]
    return f


def row_sums(values: np.ndarray, eligible: np.ndarray) -> np.ndarray:
    """Each row's sum of ``values`` at its eligible entries, added one by one in machine order.

    A fixed order (not numpy's blocked, CPU-dependent summation) makes plans
    the same on every machine; adding the zeros of ineligible entries changes
    no partial sum.
    """
    if not values.size:
        return np.zeros(len(values))
    return np.cumsum(np.where(eligible, values, 0.0), axis=1)[:, -1]


def overhead_score(remt: np.ndarray, elapsed: np.ndarray, current: np.ndarray) -> np.ndarray:
    """``elapsed / max(remT, elapsed)`` on the machine a job runs on (``current``), 0 elsewhere.

    ``elapsed_i``: seconds job ``i`` has run since it last started on ``current_i``
    (``current = -1``: not running).
    """
    score = np.zeros(remt.shape)
    rows = np.flatnonzero((current >= 0) & (elapsed > 0))
    if rows.size:
        cols = current[rows]
        el = elapsed[rows]
        score[rows, cols] = el / np.maximum(remt[rows, cols], el)
    return score


def license_score(uses: np.ndarray, copies: np.ndarray) -> np.ndarray:
    """``min(sum_{l of i} rho_l / |L_i|, 1)`` per job (0 without licenses).

    ``uses[i, l]``: job ``i`` asks for license ``l``; ``rho_l`` = jobs asking for
    ``l`` / copies of ``l`` (above 1 the license is *critical*).
    """
    asked = uses.sum(axis=1)
    rho = np.divide(uses.sum(axis=0), copies, out=np.zeros(len(copies)), where=copies > 0)
    total = uses.astype(float) @ rho
    return np.minimum(np.divide(total, asked, out=np.zeros(len(asked)), where=asked > 0), 1.0)


def wait_score(remt: np.ndarray, top: float) -> np.ndarray:
    """``1 - remT / top``, ``top`` the largest remT over every eligible entry: shorter jobs first."""
    return 1.0 - remt / (top or 1.0)


def aging_score(remt: np.ndarray, age: np.ndarray) -> np.ndarray:
    """``age / (age + remT)``, ``age = now - submit``: old jobs rise."""
    a = age[:, None]
    score = a + remt
    np.divide(a, score, out=score)
    return score


@dataclass(frozen=True)
class Weights:
    """The heuristics' weights (the paper's hand-tuned defaults)."""

    deadline: float = 15.0
    overhead: float = 40.0
    aging: float = 5.0
    licenses: float = 5.0
    wait: float = 8.0


class Scratch:
    """Arrays a policy reuses from one plan to the next instead of allocating them anew.

    A plan needs a dozen temporary arrays the size of the matrix (hundreds of
    KB each). Allocated afresh, such blocks are handed back to the system when
    freed, so every plan paid the kernel to map and zero their pages again:
    about a third of a plan's time at the cs2 preset's queue lengths. Reused,
    they stay mapped. Each name is one array: valid until the next request for
    that name, its contents undefined.
    """

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray] = {}

    def __call__(self, name: str, size: int, dtype: type = np.float64) -> np.ndarray:
        """A 1-D array of ``size`` elements of ``dtype`` (grown by a quarter when too small)."""
        array = self._arrays.get(name)
        if array is None or len(array) < size or array.dtype != dtype:
            array = self._arrays[name] = np.empty(size + size // 4 + 1024, dtype)
        return array[:size]

    def __reduce__(self):
        """A copy (a partition's snapshot) starts empty: the contents matter only within a plan."""
        return Scratch, ()


@dataclass(frozen=True)
class Entries:
    """The eligible entries of an ``n x width`` Job-Machine matrix, in row-major order.

    A plan computes priorities, sorts and matches these alone (about half the
    matrix in the cs2 preset: the minimal requirements heuristic rules out the
    rest), so its passes skip the entries that would be thrown away.
    ``flat[k] = job * width + machine`` (ascending), ``count`` the entries of
    each job.
    """

    eligible: np.ndarray
    flat: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, eligible: np.ndarray, scratch: Scratch) -> Entries:
        flat = scratch("flat", eligible.size, np.int64)
        count = np.empty(len(eligible), dtype=np.int64)
        size = kernels().eligible_entries(eligible, flat, count)
        return cls(eligible, flat[:size], count)

    def on(self, machines: np.ndarray) -> np.ndarray:
        """Each job's entry on machine ``machines[i]``; -1 where none is given or the job may not use it."""
        jobs = np.flatnonzero(machines >= 0)
        found = np.full(len(machines), -1)
        if jobs.size and len(self.flat):
            target = jobs * self.eligible.shape[1] + machines[jobs]
            pos = np.minimum(np.searchsorted(self.flat, target), len(self.flat) - 1)
            found[jobs] = np.where(self.flat[pos] == target, pos, -1)
        return found


def remaining_times(
    entries: Entries,
    remaining: np.ndarray,
    elsewhere: np.ndarray,
    own: np.ndarray,
    mips: np.ndarray,
    scratch: Scratch,
) -> np.ndarray:
    """``remT`` at each entry: the job's remaining instructions (MI) over the machine's MIPS.

    ``remaining[i]`` at ``own[i]``, the entry of the machine job ``i`` runs or
    was suspended on (-1: none), ``elsewhere[i]`` at the others: its whole
    length if moving would lose its progress, else ``remaining[i]`` again.
    """
    return kernels().entry_remaining_times(
        entries.flat,
        entries.count,
        entries.eligible.shape[1],
        np.asarray(remaining, dtype=float),
        np.asarray(elsewhere, dtype=float),
        np.asarray(own, dtype=np.int64),
        np.asarray(mips, dtype=float),
        scratch("remt", len(entries.flat)),
    )


def priorities(
    remt: np.ndarray,
    entries: Entries,
    now: float,
    deadline: np.ndarray,
    age: np.ndarray,
    uses: np.ndarray,
    copies: np.ndarray,
    running: np.ndarray,
    elapsed: np.ndarray,
    w: Weights,
    scratch: Scratch,
) -> np.ndarray:
    """The Job-Machine matrix at the eligible ``entries`` (``remt``: remT at each entry).

    The weighted sum of the five scoring heuristics above; the sixth, minimal
    requirements, is ``entries`` itself. ``running``: the entries where jobs
    run now, ``elapsed`` their seconds there (overhead minimization). The same
    arithmetic as the functions above, a row at a time in compiled code (this
    is the policy's hot path: :func:`~emulator.policies.cs2_kernels.entry_priorities`),
    so plans are identical to the whole-matrix computation to the last bit.
    """
    size = len(remt)
    top = float(remt.max()) if size else 1.0
    column = np.full(len(entries.count), w.wait)
    if uses.size:
        column += w.licenses * license_score(uses, copies)
    weights = (w.deadline, -w.wait / (top or 1.0), w.aging, w.overhead)
    return kernels().entry_priorities(
        remt,
        entries.count,
        np.asarray(deadline - now, dtype=float),
        np.asarray(age, dtype=float),
        column,
        np.asarray(running, dtype=np.int64),
        np.asarray(elapsed, dtype=float),
        weights,
        scratch("priority", size),
    )


# -- matching -------------------------------------------------------------------------------------


def sort_keys(values: np.ndarray, sort: str = "quick", classes: int = 1024, scratch: Scratch | None = None):
    """Each entry's sort key: unsigned integers that ascend as the priorities ``values`` descend.

    Entries are matched in ``(key, position)`` order. ``quick``: the exact
    float order. ``counting``: the values mapped affinely from their range
    ``[min, max]`` onto ``classes`` integer classes, best first: the paper's
    "Cs" variant, coarser keys, the entries of one class in position order.
    """
    scratch = scratch or Scratch()
    key = scratch("key", len(values), np.uint64)
    if sort == "counting" and len(values):
        _class_keys(values, classes, key, scratch)
    else:
        _value_keys(values, key, scratch)
    return key


def _class_keys(values: np.ndarray, classes: int, key: np.ndarray, scratch: Scratch) -> None:
    """``key`` = each value's class, 0 the highest: ``[min, max]`` mapped affinely onto ``classes``.

    Rounding keeps the map monotone: a higher value never gets a higher class.
    """
    low, high = float(values.min()), float(values.max())
    scale = (classes - 1) / (high - low) if high > low else 0.0
    scaled = np.subtract(values, low, out=scratch("class", len(values)))
    scaled *= scale
    signed = key.view(np.int64)
    np.copyto(signed, scaled, casting="unsafe")  # truncation, as astype
    np.subtract(classes - 1, signed, out=signed)


def _value_keys(values: np.ndarray, key: np.ndarray, scratch: Scratch) -> None:
    """``key`` = each value as an unsigned integer that sorts ascending as the values descend."""
    np.add(values, 0.0, out=key.view(np.float64))  # -0.0 becomes 0.0, its equal
    flip = np.right_shift(key, np.uint64(63), out=scratch("flip", len(values), np.uint64))
    flip -= np.uint64(1)  # all ones for values >= 0, else 0
    flip >>= np.uint64(1)
    key ^= flip  # values >= 0 by falling magnitude below 2**63, then values < 0 by rising magnitude


@dataclass(frozen=True)
class LicenseNeeds:
    """The license copies each license set needs, as CSR rows over the sets.

    Set ``s`` needs ``count[k]`` copies of license ``license[k]`` for ``k`` in
    ``start[s]:start[s + 1]`` (each license once per set).
    """

    start: np.ndarray
    license: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, sets: list[Needs]) -> LicenseNeeds:
        """From each set's ``((license index, copies), ...)``."""
        pairs = [pair for need in sets for pair in need]
        start = np.cumsum([0, *map(len, sets)], dtype=np.int64)
        license = np.array([lic for lic, _ in pairs], dtype=np.int64)
        return cls(start, license, np.array([c for _, c in pairs], dtype=np.int64))


def match(
    key: np.ndarray,
    entries: Entries,
    rank: np.ndarray,
    cpus: np.ndarray,
    capacity: np.ndarray,
    needs: LicenseNeeds,
    set_of: np.ndarray,
    copies: np.ndarray,
    per_machine: bool,
    order: np.ndarray | None = None,
) -> np.ndarray:
    """Each job's machine (-1: none): the greedy matching over the entries in ``(key, flat)`` order.

    Job ``i`` takes machine ``m`` when ``i`` is not placed yet, ``m`` has
    ``cpus[i]`` CPUs left of ``capacity[m]`` and the copies of the job's license
    set (``needs`` row ``set_of[i]``) are available; with ``per_machine``, a
    machine already holding a license in the plan needs no new copy of it.
    ``rank``: each machine's place by MIPS, fastest first (see
    :mod:`~emulator.policies.cs2_kernels`, which walks the entries without
    sorting them all). Given ``order`` (:func:`entry_order`), it walks that order instead: the
    same placements, at the cost of the global sort.
    """
    held = np.zeros((len(capacity), len(copies)), dtype=np.bool_)
    left = np.array(copies, dtype=np.int64)
    licenses = (np.asarray(set_of, dtype=np.int64), needs.start, needs.license, needs.count, left, held)
    if order is not None:
        cpus, free = np.asarray(cpus, dtype=np.int64), np.array(capacity, dtype=np.int64)
        return kernels().walk_sorted(order, entries.flat, len(capacity), cpus, free, licenses, per_machine)
    return kernels().walk_rows(
        key,
        entries.flat,
        entries.count,
        np.asarray(rank, dtype=np.int64),
        np.asarray(cpus, dtype=np.int64),
        np.array(capacity, dtype=np.int64),
        licenses,
        per_machine,
    )


def entry_order(key: np.ndarray, sort: str, classes: int) -> np.ndarray:
    """Every entry's position in ``(key, position)`` order, by the paper's global sort.

    ``quick``: a comparison sort of the float keys (stable, so ties keep position order);
    ``counting``: a counting sort over the ``classes`` classes. :func:`match` without an order
    skips this sort; with one, a run measures what the paper's sorts cost (``cs2[match=sort]``).
    """
    if sort == "counting":
        return kernels().counting_order(key, classes)
    return np.argsort(key, kind="stable")


def machine_ranks(mips: np.ndarray) -> np.ndarray:
    """Each machine's place when machines are ordered by MIPS, fastest first (ties: lower index first)."""
    by_speed = np.lexsort((np.arange(len(mips)), -np.asarray(mips, dtype=float)))
    rank = np.empty(len(mips), dtype=np.int64)
    rank[by_speed] = np.arange(len(mips))
    return rank
