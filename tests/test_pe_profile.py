"""The PE-availability profile against a plain transcription of GridSim's ``Profile`` methods.

:class:`NaiveProfile` keeps GridSim's entries (time -> set of free PEs) and
answers ``checkAvailability`` and ``findStartTime`` entry by entry, as the Java
does; :class:`~emulator.core.pe_profile.PeProfile` must give the same start times
and the same PEs on random sequences of starts and reservations.
"""

from __future__ import annotations

import bisect
import math
import pickle

import numpy as np
import pytest

from emulator.core.pe_profile import PeProfile


class NaiveProfile:
    """GridSim's ``SingleProfile`` with PE sets instead of range lists."""

    def __init__(self, size: int) -> None:
        self.times = [0.0]
        self.free = [set(range(size))]

    def _prec(self, time: float) -> int:
        return bisect.bisect_right(self.times, time) - 1

    def check_availability(self, n: int, start: float, duration: float) -> list[int] | None:
        i = self._prec(start)
        common = set(self.free[i])
        for j in range(i + 1, len(self.times)):
            if self.times[j] >= start + duration or len(common) < n:
                break
            common &= self.free[j]
        return sorted(common)[:n] if len(common) >= n else None

    def find_start_time(self, n: int, now: float, duration: float) -> tuple[float, list[int]]:
        for a in range(self._prec(now), len(self.times)):
            if len(self.free[a]) < n:
                continue
            start = max(now, self.times[a])
            common = set(self.free[a])
            for j in range(a + 1, len(self.times)):
                if self.times[j] >= start + duration:
                    break
                common &= self.free[j]
                if len(common) < n:
                    break
            if len(common) >= n:
                return start, sorted(common)[:n]
        raise AssertionError("no slot")

    def allocate(self, pes: list[int], start: float, end: float) -> None:
        for t in (start, end):
            i = self._prec(t)
            if self.times[i] != t:
                self.times.insert(i + 1, t)
                self.free.insert(i + 1, set(self.free[i]))
        for i, t in enumerate(self.times):
            if start <= t < end:
                self.free[i] -= set(pes)

    def forget(self, now: float) -> None:
        i = self._prec(now)
        del self.times[:i], self.free[:i]


@pytest.mark.parametrize("seed", range(6))
def test_matches_gridsims_profile_on_random_schedules(seed):
    rng = np.random.default_rng(seed)
    size = int(rng.integers(1, 12))
    fast, slow = PeProfile(size), NaiveProfile(size)
    now = 0.0
    for _ in range(150):
        now += float(rng.integers(0, 4))
        fast.forget(now)
        slow.forget(now)
        n, duration = int(rng.integers(1, size + 1)), float(rng.integers(1, 30))
        expected = slow.check_availability(n, now, duration)
        chosen = fast.lowest_free(fast.free_until(now), n, now + duration)
        assert (None if chosen is None else chosen.tolist()) == expected
        start = now
        if expected is None:
            start, expected = slow.find_start_time(n, now, duration)
            got_start, chosen = fast.earliest(n, duration, now)
            assert (got_start, chosen.tolist()) == (start, expected)
        assert fast.free_now(now) == len(slow.free[slow._prec(now)])
        slow.allocate(expected, start, start + duration)
        fast.allocate(chosen, start, start + duration)


def test_free_until_says_when_each_pe_is_next_busy():
    profile = PeProfile(4)
    profile.allocate(np.array([1]), 0.0, 10.0)  # PE 1 busy 0..10
    profile.allocate(np.array([2, 3]), 5.0, 8.0)  # PEs 2, 3 reserved 5..8
    assert profile.free_until(2.0).tolist() == [math.inf, 0.0, 5.0, 5.0]
    assert profile.free_until(8.0).tolist() == [math.inf, 8.0, math.inf, math.inf]
    # a 3-PE job of 4 s cannot start at 2 (PEs 2, 3 are booked from 5); the earliest is 8
    assert profile.lowest_free(profile.free_until(2.0), 3, 6.0) is None
    start, pes = profile.earliest(3, 4.0, 2.0)
    assert (start, pes.tolist()) == (8.0, [0, 2, 3])


def test_rows_grow_past_the_initial_buffer_and_forget_keeps_the_row_in_force():
    profile = PeProfile(2)
    for t in range(40):
        profile.allocate(np.array([t % 2]), float(t), float(t) + 1.5)
    profile.forget(20.2)
    assert profile.times[0] == 20.0
    assert profile.free_now(20.2) == 0  # PEs 0 (20..21.5) and 1 (19..20.5) are both busy
    assert profile.free_now(41.0) == 2


def test_a_pickled_profile_keeps_working():
    # Ray checkpoints pickle partitions; the rows must still be views of the buffers after a restore.
    profile = PeProfile(3)
    profile.allocate(np.array([0]), 0.0, 10.0)
    profile.allocate(np.array([1]), 2.0, 10.0)
    copy = pickle.loads(pickle.dumps(profile))
    copy.allocate(np.array([2]), 2.0, 10.0)  # rows at 2 and 10 exist: no row is added
    copy.forget(6.0)  # rebuilds the views from the buffers
    assert copy.free_now(6.0) == 0 and profile.free_now(6.0) == 1
    assert copy.earliest(3, 1.0, 6.0)[0] == 10.0
