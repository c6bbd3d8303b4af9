"""FCFS that takes its time: each scheduling pass sleeps ``pause`` seconds, as a costly policy would.

tests/test_stops.py runs it to check that rows still reach the disk every few seconds when
a call into a partition spans many slow passes; its decisions, and so the trace, are FCFS's.
"""

from __future__ import annotations

import time

from emulator.policies.fcfs import Fcfs


class SlowFcfs(Fcfs):
    """FCFS, ``pause`` seconds per scheduling pass."""

    def __init__(self, *, pause: float = 0.002, rng=None, cluster=None) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.pause = pause

    def schedule(self, view):
        time.sleep(self.pause)
        return super().schedule(view)
