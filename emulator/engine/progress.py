"""One look for every long command: a tqdm bar over jobs with the barrier's counters beside it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from .runner import Progress

if TYPE_CHECKING:
    from tqdm import tqdm


def bar(total: int, label: str, unit: str, disable: bool = False) -> tqdm:
    """The bar every long command shows (runs, sweeps, reports): cleared when done, so the
    command's own end-of-run table is what stays on the screen."""
    from tqdm import tqdm  # (imported by the commands that show a bar: tens of ms)

    return tqdm(total=total, unit=unit, desc=label, disable=disable, leave=False, dynamic_ncols=True)


class RunProgress:
    """A progress bar for one run: jobs finished, virtual time, rounds and rounds/s.

    Use as a context manager and pass the instance as ``on_progress`` to
    :func:`emulator.engine.runner.run`. ``disable=True`` makes it silent (``--quiet``): no bar at all,
    so a quiet run never imports tqdm.
    """

    def __init__(self, total: int, label: str, disable: bool = False) -> None:
        self.bar = None if disable else bar(total, label, "job")
        self.started = time.perf_counter()

    def __call__(self, progress: Progress) -> None:
        if self.bar is None:
            return
        stats = progress.stats
        elapsed = max(time.perf_counter() - self.started, 1e-9)
        self.bar.update(progress.jobs_done - self.bar.n)
        self.bar.set_postfix_str(
            f"t={stats.virtual_time:,.0f} rounds={stats.rounds:,} ({stats.rounds / elapsed:,.0f}/s)",
            refresh=False,
        )

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()
