"""CS 2.0's greedy matching, compiled with numba: every entry of the sorted matrix, without the sort.

The matching walks the Job-Machine matrix's entries from the best to the
worst and gives job ``i`` machine ``m`` when ``i`` is not placed yet and
``m`` still has its CPUs and license copies. Sorting all the entries (75k for
1000 jobs on 150 machines, thousands of plans a run) was half of a run's time:
a comparison sort costs ~37 ns an entry on these machines, and scattering to
buckets ~13 ns, memory-bound either way.

The matrix has an order that makes the sort unnecessary: along a job's row,
every heuristic but overhead minimization is a monotone function of ``remT``,
and ``remT`` of the machine's MIPS, so a job's entries ranked by MIPS
(fastest first) are already in priority order, but for the one entry of the
machine it runs or waits on and for exact ties. Each row is put in order
from that ranking with an insertion sort (a few moves), and the rows are
merged by a heap holding each unplaced job's best entry that could still
succeed: entries pass the heap in the global order, and an entry a job skips
(its machine too full, its copies gone) could not have succeeded later, since
free CPUs and license copies only shrink during a walk. The placements are
those of the entry-by-entry walk over the fully sorted matrix, exactly.

Compiled code is cached beside this file (or in numba's user cache when that
is read-only): only the first run on a machine pays the compilation.
"""

from __future__ import annotations

from collections import namedtuple

import numba
import numpy as np

Heap = namedtuple("Heap", "key flat job")
"""A binary heap of entries as three arrays: the jobs' next entries, first the one to visit first."""


@numba.njit(cache=True, nogil=True)
def walk_rows(
    key: np.ndarray,
    flat: np.ndarray,
    count: np.ndarray,
    rank: np.ndarray,
    cpus: np.ndarray,
    free: np.ndarray,
    licenses: tuple,
    per_machine: bool,
) -> np.ndarray:
    """Each job's machine (-1: none): the greedy matching over entries in ``(key, flat)`` order.

    Entries come in row-major order: ``flat[k] = job * width + machine``
    ascending, ``count[i]`` of them for job ``i``; ``key[k]`` (unsigned,
    ascending = better) is the entry's priority. ``rank[m]``: machine ``m``'s
    place by MIPS, fastest first, in which a row's keys mostly ascend.
    ``free`` (CPUs per machine) and the copies in ``licenses`` are updated
    in place; ``licenses`` is ``(set_of, need_start, need_license, need_count,
    left, held)`` as :func:`_take_copies` reads it.
    """
    n, width = cpus.size, free.size
    start = np.zeros(n + 1, np.int64)
    for i in range(n):
        start[i + 1] = start[i] + count[i]
    seq = _ranked_rows(key, flat, start, rank, width)
    room = _room(free)
    where = np.full(n, -1, np.int64)
    head = start[:-1].copy()  # each job's next entry in seq
    heap = Heap(np.empty(n, key.dtype), np.empty(n, np.int64), np.empty(n, np.int64))
    size = 0
    for i in range(n):
        if _advance(i, head, start, seq, flat, width, cpus, room, licenses, per_machine):
            size = _push(heap, size, key[seq[head[i]]], flat[seq[head[i]]], i)
    while size:
        i, f = heap.job[0], heap.flat[0]
        size = _pop(heap, size)
        m = f - i * width
        if _fits(i, m, cpus, room, licenses, per_machine, True):
            where[i] = m
            _use(room, m, cpus[i])
        else:
            head[i] += 1
            if _advance(i, head, start, seq, flat, width, cpus, room, licenses, per_machine):
                size = _push(heap, size, key[seq[head[i]]], flat[seq[head[i]]], i)
    return where


@numba.njit(cache=True, nogil=True)
def walk_sorted(
    order: np.ndarray,
    flat: np.ndarray,
    width: int,
    cpus: np.ndarray,
    free: np.ndarray,
    licenses: tuple,
    per_machine: bool,
) -> np.ndarray:
    """Each job's machine (-1: none): the greedy matching over entries already sorted into ``order``.

    The paper's matching, kept beside :func:`walk_rows` so a run can measure what the global
    sort costs (``cs2[match=sort]``): with ``order`` the entries' positions in ``(key, flat)``
    order, the placements are :func:`walk_rows`'s.
    """
    room = _room(free)
    where = np.full(cpus.size, -1, np.int64)
    for p in order:
        i = flat[p] // width
        m = flat[p] - i * width
        if where[i] < 0 and _fits(i, m, cpus, room, licenses, per_machine, True):
            where[i] = m
            _use(room, m, cpus[i])
    return where


@numba.njit(cache=True, nogil=True)
def counting_order(key: np.ndarray, classes: int) -> np.ndarray:
    """Entry positions by ``key`` (integer classes below ``classes``), ties in position order.

    The paper's counting sort: one pass counts each class, one places each entry.
    """
    first = np.zeros(classes + 1, np.int64)
    for k in range(key.size):
        first[key[k] + 1] += 1
    for c in range(classes):
        first[c + 1] += first[c]
    order = np.empty(key.size, np.int64)
    for k in range(key.size):
        order[first[key[k]]] = k
        first[key[k]] += 1
    return order


Room = namedtuple("Room", "free machines most")
"""Free CPUs per machine, how many machines have each number free, and the most any has (an array
of one): a job asking for more than ``most`` can be dropped without looking at its entries."""


@numba.njit(cache=True, nogil=True)
def _room(free: np.ndarray) -> Room:
    """The walk's view of ``free`` (shared, not copied), with its count of machines by CPUs free."""
    machines = np.zeros(max(free.max(), 0) + 1 if free.size else 1, np.int64)
    for m in range(free.size):
        machines[max(free[m], 0)] += 1
    return Room(free, machines, np.array([machines.size - 1]))


@numba.njit(cache=True, nogil=True)
def _use(room: Room, m: int, cpus: int) -> None:
    """Take ``cpus`` of machine ``m``'s free CPUs, keeping ``most`` up to date."""
    room.machines[room.free[m]] -= 1
    room.free[m] -= cpus
    room.machines[room.free[m]] += 1
    while room.most[0] > 0 and room.machines[room.most[0]] == 0:
        room.most[0] -= 1


@numba.njit(cache=True, nogil=True)
def _ranked_rows(key, flat, start, rank, width) -> np.ndarray:
    """Each row's entry positions in ``(key, flat)`` order: ranked by machine, then insertion-sorted.

    The sort works on a copy of the row's keys and positions in small local
    arrays, which stay in the cache; rows already in order cost one pass.
    """
    seq = np.empty(flat.size, np.int64)
    slot = np.full(width, -1, np.int64)
    row_key = np.empty(width, key.dtype)
    row = np.empty(width, np.int64)
    for i in range(start.size - 1):
        first, last = start[i], start[i + 1]
        for e in range(first, last):
            slot[rank[flat[e] - i * width]] = e
        size = 0
        for r in range(width):
            if slot[r] >= 0:
                row[size] = slot[r]
                row_key[size] = key[slot[r]]
                slot[r] = -1
                size += 1
        for j in range(1, size):  # nearly sorted: a few moves per row
            k, e = row_key[j], row[j]
            p = j - 1
            while p >= 0 and (row_key[p] > k or (row_key[p] == k and row[p] > e)):
                row_key[p + 1], row[p + 1] = row_key[p], row[p]
                p -= 1
            row_key[p + 1], row[p + 1] = k, e
        seq[first:last] = row[:size]
    return seq


@numba.njit(cache=True, nogil=True)
def _advance(i, head, start, seq, flat, width, cpus, room, licenses, per_machine) -> bool:
    """Move job ``i``'s head to its first entry that could still succeed; False if none is left."""
    if cpus[i] > room.most[0]:
        return False  # no machine has the CPUs left: its entries need not be looked at
    while head[i] < start[i + 1]:
        if _fits(i, flat[seq[head[i]]] - i * width, cpus, room, licenses, per_machine, False):
            return True
        head[i] += 1
    return False


@numba.njit(cache=True, nogil=True, inline="always")
def _fits(i, m, cpus, room, licenses, per_machine, take) -> bool:
    """Whether job ``i`` can go on machine ``m`` now (CPUs, then copies); with ``take``, take the copies."""
    return room.free[m] >= cpus[i] and _take_copies(i, m, licenses, per_machine, take)


@numba.njit(cache=True, nogil=True)
def _take_copies(i, m, licenses, per_machine, take) -> bool:
    """Whether job ``i``'s license copies are left on machine ``m``; with ``take``, take them.

    ``licenses = (set_of, need_start, need_license, need_count, left, held)``:
    job ``i`` needs ``need_count[q]`` copies of ``need_license[q]`` for ``q``
    in the CSR row ``set_of[i]``; ``left`` copies remain per license. Per
    machine, a job needs one copy of each license machine ``m`` does not hold
    yet (``held[m, license]``), whatever its count.
    """
    set_of, need_start, need_license, need_count, left, held = licenses
    s = set_of[i]
    for q in range(need_start[s], need_start[s + 1]):
        lic = need_license[q]
        need = (0 if held[m, lic] else 1) if per_machine else need_count[q]
        if left[lic] < need:
            return False
    if take:
        for q in range(need_start[s], need_start[s + 1]):
            lic = need_license[q]
            if not per_machine:
                left[lic] -= need_count[q]
            elif not held[m, lic]:
                held[m, lic] = True
                left[lic] -= 1
    return True


@numba.njit(cache=True, nogil=True, inline="always")
def _above(heap, a, b) -> bool:
    """Heap slot ``a`` holds an entry that comes before slot ``b``'s: by key, then flat index."""
    return heap.key[a] < heap.key[b] or (heap.key[a] == heap.key[b] and heap.flat[a] < heap.flat[b])


@numba.njit(cache=True, nogil=True, inline="always")
def _swap(heap, a, b) -> None:
    heap.key[a], heap.key[b] = heap.key[b], heap.key[a]
    heap.flat[a], heap.flat[b] = heap.flat[b], heap.flat[a]
    heap.job[a], heap.job[b] = heap.job[b], heap.job[a]


@numba.njit(cache=True, nogil=True)
def _push(heap, size, key, flat, job) -> int:
    """Add ``job``'s entry ``(key, flat)`` to the binary heap of ``size`` entries; the new size."""
    p = size
    heap.key[p], heap.flat[p], heap.job[p] = key, flat, job
    while p > 0 and _above(heap, p, (p - 1) >> 1):
        _swap(heap, p, (p - 1) >> 1)
        p = (p - 1) >> 1
    return size + 1


@numba.njit(cache=True, nogil=True)
def _pop(heap, size) -> int:
    """Remove the heap's first entry (the caller read it from slot 0); the new size."""
    size -= 1
    _swap(heap, 0, size)
    p = 0
    while 2 * p + 1 < size:
        child = 2 * p + 1
        if child + 1 < size and _above(heap, child + 1, child):
            child += 1
        if not _above(heap, child, p):
            break
        _swap(heap, p, child)
        p = child
    return size


@numba.njit(cache=True, nogil=True)
def entry_priorities(
    remt: np.ndarray,
    count: np.ndarray,
    slack: np.ndarray,
    age: np.ndarray,
    column: np.ndarray,
    running: np.ndarray,
    elapsed: np.ndarray,
    weights: tuple,
    out: np.ndarray,
) -> np.ndarray:
    """The Job-Machine matrix at the eligible entries (row-major, ``count[i]`` for job ``i``), in ``out``.

    The arithmetic of :func:`~emulator.policies.cs2_matrix.priorities`, one
    row at a time: the deadline urgency ``f`` of each entry (``slack[i] =
    deadline - now``) and its sum over the row, added in machine order;
    then the weighted sum. ``column``: each job's license and constant wait
    terms; ``running``, ``elapsed``: the entries where jobs run and their
    seconds there; ``weights = (w_deadline, -w_wait / largest remT, w_aging,
    w_overhead)``. The same operations in the same order as the whole-matrix
    definitions, so the values are the same to the last bit.
    """
    w_deadline, wait_scale, w_aging, w_overhead = weights
    first = 0
    for i in range(count.size):
        last = first + count[i]
        total = 0.0
        for k in range(first, last):
            f = min(max(2.0 - slack[i] / remt[k], 0.0), 1.0)
            out[k] = f
            total += f
        urgency = w_deadline * (total / count[i]) if last > first else 0.0
        aging = age[i] * w_aging
        for k in range(first, last):
            out[k] = (1.0 - out[k]) * urgency + remt[k] * wait_scale + column[i] + aging / (age[i] + remt[k])
        first = last
    for q in range(running.size):
        k = running[q]
        out[k] += w_overhead * elapsed[q] / max(remt[k], elapsed[q])
    return out


@numba.njit(cache=True, nogil=True)
def eligible_entries(eligible: np.ndarray, flat: np.ndarray, count: np.ndarray) -> int:
    """Write the flat indices of ``eligible``'s true entries (row-major) to ``flat``, each row's number
    to ``count``; return how many there are."""
    n, width = eligible.shape
    size = 0
    for i in range(n):
        first = size
        for m in range(width):
            if eligible[i, m]:
                flat[size] = i * width + m
                size += 1
        count[i] = size - first
    return size


@numba.njit(cache=True, nogil=True)
def entry_remaining_times(flat, count, width, remaining, elsewhere, own, mips, out) -> np.ndarray:
    """``remT`` at each entry (see :func:`~emulator.policies.cs2_matrix.remaining_times`), in ``out``."""
    first = 0
    for i in range(count.size):
        for k in range(first, first + count[i]):
            out[k] = (remaining[i] if k == own[i] else elsewhere[i]) / mips[flat[k] - i * width]
        first += count[i]
    return out
