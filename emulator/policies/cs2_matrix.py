"""Convergent Scheduling 2.0's two phases as pure numpy functions (seed 002; ``POLICIES.md``).

**Heuristics.** Each returns its unweighted contribution to the Job-Machine
matrix ``P[i, m]`` (jobs ``i`` = running then queued, machines ``m``), in
``[0, 1]``, computed for every entry at once; entries of machines a job cannot
use are masked later. ``remt[i, m]`` is the remaining time of job ``i`` on
machine ``m`` (remaining instructions / MIPS).

**Matching.** The eligible entries are sorted by priority, descending
(:func:`descending`: a float sort, or a counting sort over integer classes),
and walked greedily (:func:`match`): job ``i`` takes machine ``m`` when it is
not placed yet and ``m`` still has the CPUs and the license copies.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

Needs = tuple[tuple[int, int], ...]
"""License copies a job needs: ``((license index, copies), ...)``, each license once."""


def remaining_time(remaining: np.ndarray, mips: np.ndarray) -> np.ndarray:
    """``remT[i, m] = remaining_i / mips_m`` (remaining instructions in MI, MIPS)."""
    return remaining[:, None] / mips[None, :]


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


def priorities(
    remt: np.ndarray,
    eligible: np.ndarray,
    flat: np.ndarray,
    now: float,
    deadline: np.ndarray,
    elapsed: np.ndarray,
    current: np.ndarray,
    age: np.ndarray,
    uses: np.ndarray,
    copies: np.ndarray,
    w: Weights,
) -> np.ndarray:
    """The Job-Machine matrix at the eligible entries ``flat`` (flat indices into ``remt``, ascending).

    The weighted sum of the five scoring heuristics above; the sixth, minimal
    requirements, is ``eligible`` itself: only its entries are returned. The
    same arithmetic as the functions above, fused into a few in-place passes
    over the matrix (this is the policy's hot path): per-job terms are added
    as one column, overhead minimization only where jobs run.
    """
    top = float(remt.ravel()[flat].max()) if flat.size else 1.0
    p = np.empty_like(remt)
    work = (deadline - now)[:, None] / remt  # deadline: f = clip(2 - slack / remT, 0, 1)
    np.subtract(2.0, work, out=work)
    np.clip(work, 0.0, 1.0, out=work)
    count = eligible.sum(axis=1)
    mean = np.divide(np.einsum("ij,ij->i", work, eligible), count, out=np.zeros(len(p)), where=count > 0)
    np.subtract(1.0, work, out=work)
    np.multiply(work, (w.deadline * mean)[:, None], out=p)
    np.multiply(remt, -w.wait / (top or 1.0), out=work)  # wait: w * (1 - remT / top)
    p += work
    column = np.full(len(p), w.wait)
    if uses.size:
        column += w.licenses * license_score(uses, copies)
    p += column[:, None]
    a = age[:, None]  # anti-aging: w * age / (age + remT)
    np.add(remt, a, out=work)
    np.divide(w.aging * a, work, out=work)
    p += work
    rows = np.flatnonzero((current >= 0) & (elapsed > 0))  # overhead: where each job runs
    if rows.size:
        cols, el = current[rows], elapsed[rows]
        p[rows, cols] += w.overhead * el / np.maximum(remt[rows, cols], el)
    return p.ravel()[flat]


# -- matching -------------------------------------------------------------------------------------


def descending(values: np.ndarray, sort: str = "quick", classes: int = 1024) -> np.ndarray:
    """Positions of ``values`` from the highest to the lowest; ties in position order.

    ``quick``: numpy's quicksort (introsort) on the floats; exact ties, rare
    with real data, are then put in position order, so the result is the same
    on every machine. ``counting``: the values mapped affinely from their range
    ``[min, max]`` onto ``classes`` integer classes (best first) and sorted by
    class with numpy's stable sort, which for 16-bit keys is a radix sort
    (counting passes, linear time); entries of one class stay in position order.
    """
    if values.size == 0:
        return np.zeros(0, dtype=np.intp)
    if sort == "counting":
        low, high = float(values.min()), float(values.max())
        scale = (classes - 1) / (high - low) if high > low else 0.0
        key = (classes - 1) - ((values - low) * scale).astype(np.intp)
        return np.argsort(key.astype(np.uint16), kind="stable")
    order = np.argsort(-values, kind="quicksort")
    ranked = values[order]
    tie = ranked[1:] == ranked[:-1]
    if tie.any():
        involved = np.zeros(len(order), dtype=bool)
        involved[:-1] |= tie
        involved[1:] |= tie
        runs = np.cumsum(np.concatenate(([True], ~tie)))[involved]
        sub = order[involved]
        order[involved] = sub[np.lexsort((sub, runs))]
    return order


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
        self.left = list(copies)
        self.held: set[tuple[int, int]] = set()
        self.unplaced = len(cpus)

    def possible(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """Which entries could still succeed: job unplaced, machine with the CPUs (both only shrink)."""
        return (self.where[rows] < 0) & (self.free[cols] >= self.cpus[rows])

    def done(self) -> bool:
        """Every job placed, or none fits in the CPUs any machine has left."""
        return not self.unplaced or self.cpus[self.where < 0].min() > self.free.max()

    def walk(self, rows: np.ndarray, cols: np.ndarray, chunk: int = 512) -> None:
        """Visit entries ``(rows[k], cols[k])`` in order, exactly as one by one, in doubling chunks:
        in each, only the entries that could still succeed are walked in Python."""
        cpus, needs, start, total = self.cpus.tolist(), self.needs, 0, len(rows)
        while start < total and not self.done():
            stop = min(total, start + chunk)
            r, c = rows[start:stop], cols[start:stop]
            hit = np.flatnonzero(self.possible(r, c))
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
                    self.where[list(placed)] = list(placed.values())
                    self.unplaced -= len(placed)
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
    rows: np.ndarray,
    cols: np.ndarray,
    cpus: np.ndarray,
    capacity: np.ndarray,
    needs: list[Needs],
    copies: list[int],
    per_machine: bool,
) -> np.ndarray:
    """Greedy matching over entries ``(rows[k], cols[k])`` in the given order: each job's machine or -1."""
    walk = Walk(cpus, capacity, needs, copies, per_machine)
    walk.walk(rows, cols)
    return walk.where
