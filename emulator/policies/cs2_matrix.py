"""Convergent Scheduling 2.0's two phases as pure numpy functions (seed 002; ``POLICIES.md``).

**Heuristics.** Each returns its unweighted contribution to the Job-Machine
matrix ``P[i, m]`` (jobs ``i`` = running then queued, machines ``m``), in
``[0, 1]``, computed for every entry at once; entries of machines a job cannot
use are masked later. ``remt[i, m]`` is the remaining time of job ``i`` on
machine ``m`` (remaining instructions / MIPS, :func:`remaining_times`). The
policy computes their weighted sum at the eligible entries only
(:func:`priorities`); these whole-matrix forms are the definitions.

**Matching.** The eligible entries (:class:`Entries`) are sorted by
priority, descending (:func:`descending`: a float sort, or a counting sort over
integer classes), and walked greedily (:func:`match`): job ``i`` takes machine
``m`` when it is not placed yet and ``m`` still has the CPUs and the license
copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Needs = tuple[tuple[int, int], ...]
"""License copies a job needs: ``((license index, copies), ...)``, each license once."""
PLACED = np.iinfo(np.int64).max
"""A placed job's CPU demand in the matching: more than any machine has."""


def deadline_score(remt: np.ndarray, deadline: np.ndarray, now: float, eligible: np.ndarray) -> np.ndarray:
    """``(1 - f[i, m]) * F_i``: urgency ``f`` of running ``i`` on ``m``, ``F_i`` its mean over eligible ``m``.

    ``last = deadline - remT``, ``end = now + remT``; ``f = 0`` if ``end <= last``,
    ``(end - last) / remT`` if ``last < end <= deadline``, 1 if ``end > deadline``.
    With the slack ``s = deadline - now`` that is ``f = clip(2 - s / remT, 0, 1)``
    (``end <= last`` iff ``s / remT >= 2``; ``end > deadline`` iff ``s / remT < 1``),
    one division and a clip per entry. No deadline (``inf``): ``f = 0``, score 0.
    """
    f = (deadline - now)[:, None] / remt
    np.subtract(2.0, f, out=f)
    np.clip(f, 0.0, 1.0, out=f)
    count = eligible.sum(axis=1)
    mean = np.divide(np.einsum("ij,ij->i", f, eligible), count, out=np.zeros(len(f)), where=count > 0)
    np.subtract(1.0, f, out=f)
    f *= mean[:, None]
    return f


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
    ``flat[k] = job[k] * width + machine[k]`` (ascending), ``count`` the
    entries of each job.
    """

    eligible: np.ndarray
    flat: np.ndarray
    job: np.ndarray
    machine: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, eligible: np.ndarray, scratch: Scratch) -> Entries:
        n, width = eligible.shape
        flat = np.flatnonzero(eligible)
        count = np.diff(np.searchsorted(flat, np.arange(n + 1) * width))
        job = np.floor_divide(flat, width, out=scratch("job", len(flat), np.intp))
        machine = np.multiply(job, width, out=scratch("machine", len(flat), np.intp))
        return cls(eligible, flat, job, np.subtract(flat, machine, out=machine), count)

    def spread(self, values: np.ndarray, out: np.ndarray) -> np.ndarray:
        """Per-job ``values`` at each entry, written to ``out``."""
        return np.take(values, self.job, out=out, mode="clip")  # "clip": no buffering; job is in range

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
    remt = entries.spread(elsewhere, scratch("remt", len(entries.flat)))
    remt /= np.take(mips, entries.machine, out=scratch("mips", len(remt)), mode="clip")
    jobs = np.flatnonzero(own >= 0)
    at = own[jobs]
    remt[at] = remaining[jobs] / mips[entries.machine[at]]
    return remt


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
    arithmetic as the functions above, fused into a few in-place passes (this
    is the policy's hot path): per-job terms are spread over each job's
    entries; overhead minimization is added only where jobs run. The deadline
    heuristic's mean over a job's machines is the one sum over the matrix,
    taken as ``einsum`` over whole rows with zeros at the ineligible entries:
    the same products in the same order as the whole-matrix ``einsum`` with
    the eligibility mask, so plans stay identical to the whole-matrix
    computation to the last bit (:func:`numpy.sum` would add in another order).
    """
    size, count = len(remt), entries.count
    top = float(remt.max()) if size else 1.0
    p = entries.spread(deadline - now, scratch("priority", size))
    np.divide(p, remt, out=p)  # deadline: f = clip(2 - slack / remT, 0, 1)
    np.subtract(2.0, p, out=p)
    np.clip(p, 0.0, 1.0, out=p)
    rows = scratch("rows", entries.eligible.size)
    rows.fill(0.0)
    rows[entries.flat] = p
    width = entries.eligible.shape[1]
    total = np.einsum("ij,j->i", rows.reshape(-1, width), np.ones(width))
    mean = np.divide(total, count, out=np.zeros(len(count)), where=count > 0)
    np.subtract(1.0, p, out=p)
    term = scratch("term", size)
    p *= entries.spread(w.deadline * mean, term)
    p += np.multiply(remt, -w.wait / (top or 1.0), out=term)  # wait: w * (1 - remT / top)
    column = np.full(len(count), w.wait)
    if uses.size:
        column += w.licenses * license_score(uses, copies)
    p += entries.spread(column, term)
    a = entries.spread(age, scratch("age", size))  # anti-aging: w * age / (age + remT)
    aging = np.multiply(a, w.aging, out=term)
    a += remt
    p += np.divide(aging, a, out=aging)
    if running.size:  # overhead: where each job runs
        p[running] += w.overhead * elapsed / np.maximum(remt[running], elapsed)
    return p


# -- matching -------------------------------------------------------------------------------------


def descending(
    values: np.ndarray,
    sort: str = "quick",
    classes: int = 1024,
    labels: np.ndarray | None = None,
    scratch: Scratch | None = None,
) -> np.ndarray:
    """``labels`` (ascending, 0 <= label < 2**48; default the positions) from the highest value to the lowest.

    Ties go in label order, so the result is the same on every machine. Each
    entry's sort key and its label are packed into one 64-bit integer and the
    integers sorted (numpy sorts plain integers several times faster than it
    argsorts, and the label breaks ties); the labels, flat indices, need no
    gather afterwards. ``quick``: the key is the value as an order-preserving
    integer, its lowest bits dropped to make room for the label; entries that
    then collide with different values (a few, in about one plan in ten) are
    put in order afterwards. ``counting``: the values mapped affinely from their
    range ``[min, max]`` onto ``classes`` integer classes, best first: the
    paper's "Cs" variant, coarser keys, entries of one class in label order.
    """
    scratch = scratch or Scratch()
    size = len(values)
    if labels is None:
        labels = np.arange(size)
    if size == 0:
        return labels.astype(np.intp)
    bits = max(int(labels[-1]).bit_length(), 1)
    shift, low = np.uint64(bits), np.uint64((1 << bits) - 1)
    key = scratch("key", size, np.uint64)
    if sort == "counting":
        _class_keys(values, classes, key, scratch)
        key <<= shift
    else:
        _value_keys(values, key, scratch)
        key &= ~low  # room for the label
    key |= np.asarray(labels, dtype=np.int64).view(np.uint64)
    key.sort()
    order = np.bitwise_and(key, low, out=scratch("order", size, np.uint64)).view(np.intp)
    if sort != "counting":
        key >>= shift
        tie = key[1:] == key[:-1]
        if tie.any():
            _order_collisions(order, tie, values, labels)
    return order


def _class_keys(values: np.ndarray, classes: int, key: np.ndarray, scratch: Scratch) -> None:
    """``key`` = each value's class, 0 the highest: ``[min, max]`` mapped affinely onto ``classes``."""
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


def _order_collisions(order: np.ndarray, tie: np.ndarray, values: np.ndarray, labels: np.ndarray) -> None:
    """Sort each run of ``order`` whose packed keys tie (``tie[k]``: ``k`` and ``k + 1`` do) by value
    (descending), then label, in place; the work is proportional to the entries involved."""
    first = np.flatnonzero(tie)
    involved = np.union1d(first, first + 1)
    joined = (np.diff(involved) == 1) & tie[involved[:-1]]  # each entry with the one before it
    runs = np.cumsum(np.concatenate(([True], ~joined)))
    sub = order[involved]
    value = values[np.searchsorted(labels, sub)] + 0.0
    order[involved] = sub[np.lexsort((sub, -value, runs))]


class Walk:
    """The greedy matching's state: which job is where, CPUs and license copies left.

    Job ``i`` takes machine ``m`` when ``i`` is not placed yet, ``m`` has
    ``cpus[i]`` CPUs left of ``capacity[m]`` and the job's license copies are
    available (``needs[i]``; per machine, a machine already holding a license
    in the plan needs no new copy).
    """

    def __init__(
        self, cpus: np.ndarray, capacity: np.ndarray, needs: list[Needs], copies: list[int], per_machine: bool
    ) -> None:
        self.cpus, self.needs, self.per_machine = cpus, needs, per_machine
        self.where = np.full(len(cpus), -1, dtype=np.int64)
        self.free = np.array(capacity, dtype=np.int64)
        self.demand = np.array(cpus, dtype=np.int64)  # CPUs each job still needs: placed, more than any
        self.left = list(copies)
        self.held: set[tuple[int, int]] = set()

    def possible(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Which entries could still succeed: job unplaced, machine with the CPUs (both only shrink)."""
        return self.free[cols] >= self.demand[rows]

    def done(self) -> bool:
        """Every job placed, or none fits in the CPUs any machine has left."""
        return not len(self.demand) or self.demand.min() > self.free.max()

    def walk(self, order: np.ndarray, width: int, chunk: int = 512) -> None:
        """Visit entries ``order[k]`` (flat indices ``job * width + machine``) in order, exactly as one by
        one, in doubling chunks: in each, only the entries that could still succeed are walked in
        Python. The walk usually ends well before the last entry, so each chunk's coordinates are
        computed only when it is reached."""
        cpus, needs, start, total = self.cpus.tolist(), self.needs, 0, len(order)
        while start < total and not self.done():
            stop = min(total, start + chunk)
            c = order[start:stop]
            r = c // width
            c = c - r * width
            hit = self.possible(r, c).nonzero()[0]
            if hit.size:
                free, placed = self.free.tolist(), {}  # placed in this chunk: job -> machine
                for i, m in zip(r[hit].tolist(), c[hit].tolist(), strict=True):
                    if free[m] < cpus[i] or i in placed:
                        continue
                    if needs[i] and not self._take_copies(needs[i], m):
                        continue
                    placed[i] = m
                    free[m] -= cpus[i]
                if placed:
                    jobs = list(placed)
                    self.where[jobs] = list(placed.values())
                    self.demand[jobs] = PLACED
                    self.free = np.array(free, dtype=np.int64)
            start, chunk = stop, chunk * 2

    def _take_copies(self, need: Needs, m: int) -> bool:
        """Take the copies a job needs on machine ``m`` if all are available; False (nothing taken) if not."""
        left = self.left
        if self.per_machine:
            fresh = [lic for lic, _ in need if (m, lic) not in self.held]
            if any(left[lic] < 1 for lic in fresh):
                return False
            for lic in fresh:
                left[lic] -= 1
                self.held.add((m, lic))
            return True
        if any(left[lic] < count for lic, count in need):
            return False
        for lic, count in need:
            left[lic] -= count
        return True


def match(
    order: np.ndarray,
    width: int,
    cpus: np.ndarray,
    capacity: np.ndarray,
    needs: list[Needs],
    copies: list[int],
    per_machine: bool,
) -> np.ndarray:
    """Greedy matching over entries ``order[k] = job * width + machine``, in order: each job's machine."""
    walk = Walk(cpus, capacity, needs, copies, per_machine)
    walk.walk(order, width)
    return walk.where
