"""MUSCLE's composition table and its search (seed 004, Algorithms 1-3).

Row ``r`` of the table lists *compositions*: groups of collected jobs whose
sizes add up to exactly ``r`` CPUs, so that together they fill a free space of
``r`` CPUs with nothing left idle. :class:`CompositionTable` builds the table
(Algorithm 1) and :meth:`CompositionTable.fill` picks the jobs for one free
space (Algorithm 3, with Algorithm 2 finding replacements for jobs already
allocated, and the fall-back to ``r - 1, r - 2, ...``).

Jobs are numbered ``0 .. p-1`` in the order they were collected; a
composition is a tuple of job numbers, the new job first (the paper's
"append J_i as well as the jobs of the composition"). Readings where the
paper is loose, each needed for the worked example (Tables 1 and 2) to come
out as printed:

- Algorithm 1 takes, in row ``j - s_i``, the *first* composition that neither
  contains ``J_i`` nor shares a job with row ``j`` (a job appears at most
  once per row);
- Algorithm 2 counts a job it has already put in the answer as allocated, so
  no job is chosen twice, and never revisits a composition on its current
  path of replacements (two single-job compositions would otherwise replace
  each other forever); a failed search leaves nothing allocated.
"""

from __future__ import annotations

from collections.abc import Container, Sequence


class CompositionTable:
    """Algorithm 1: the compositions of jobs of ``sizes`` (CPUs each) filling ``1 .. m_max`` CPUs.

    ``rows[r]`` is row ``r`` (``rows[0]`` is unused and empty).

    >>> CompositionTable([2, 1, 4, 3, 1, 2], 6).rows[3]  # the paper's Table 2, row 3: J2 J1 | J4 | J6 J5
    [(1, 0), (3,), (5, 4)]
    """

    def __init__(self, sizes: Sequence[int], m_max: int) -> None:
        self.sizes = [int(s) for s in sizes]
        self.rows: list[list[tuple[int, ...]]] = [[] for _ in range(m_max + 1)]
        members: list[set[int]] = [set() for _ in range(m_max + 1)]  # the jobs of each row
        for i, size in enumerate(self.sizes):
            for j in range(max(size, 1), m_max + 1):
                if j == size:
                    composition: tuple[int, ...] | None = (i,)
                else:
                    composition = next(
                        ((i, *c) for c in self.rows[j - size] if i not in c and members[j].isdisjoint(c)),
                        None,
                    )
                    if composition is None:
                        continue
                self.rows[j].append(composition)
                members[j].update(composition)

    def fill(self, r: int, allocated: Container[int]) -> list[int]:
        """Algorithm 3: the jobs for a free space of ``r`` CPUs, in the order they take its CPUs.

        Searches row ``r`` (or the first non-empty row below it), takes the
        composition with the fewest ``allocated`` jobs (the first such), and
        replaces its allocated jobs by Algorithm 2; if that fails, tries the
        rows below. ``allocated`` holds the jobs already placed (and any that
        cannot run where the space is). Returns ``[]`` when nothing fits.
        """
        for row in range(min(r, len(self.rows) - 1), 0, -1):
            compositions = self.rows[row]
            if not compositions:
                continue
            counts = [_count(c, allocated, ()) for c in compositions]
            best = counts.index(min(counts))
            if counts[best] == 0:
                return list(compositions[best])
            chosen: list[int] = []
            if self._replace(row, best, allocated, chosen, {(row, best)}):
                return chosen
        return []

    def _replace(
        self, row: int, index: int, allocated: Container[int], chosen: list[int], path: set[tuple[int, int]]
    ) -> bool:
        """Algorithm 2: append composition ``(row, index)`` to ``chosen``, its allocated jobs replaced.

        A job already allocated (or already in ``chosen``) is replaced by the
        composition of its own size with the fewest allocated jobs (the first
        such), other than the job alone and those on ``path``; recursively if
        that one has allocated jobs too. False when some job has no replacement.
        """
        for job in self.rows[row][index]:
            if job not in allocated and job not in chosen:
                chosen.append(job)
                continue
            size = self.sizes[job]
            options = [
                (_count(c, allocated, chosen), k)
                for k, c in enumerate(self.rows[size])
                if c != (job,) and (size, k) not in path
            ]
            if not options:
                return False
            count, k = min(options)  # the fewest allocated; the first found among equals
            if count == 0:
                chosen.extend(self.rows[size][k])
            elif not self._replace(size, k, allocated, chosen, path | {(size, k)}):
                return False
        return True


def _count(composition: tuple[int, ...], allocated: Container[int], chosen: Sequence[int]) -> int:
    """Jobs of ``composition`` that are allocated or already chosen."""
    return sum(1 for job in composition if job in allocated or job in chosen)
