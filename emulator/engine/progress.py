"""One look for every long command: a tqdm bar over jobs with the barrier's counters beside it."""

from __future__ import annotations

import time

from tqdm import tqdm

from .runner import Progress


def bar(total: int, label: str, unit: str, disable: bool = False) -> tqdm:
    """The bar every long command shows (runs, sweeps, reports): cleared when done, so the
    command's own end-of-run table is what stays on the screen."""
    return tqdm(total=total, unit=unit, desc=label, disable=disable, leave=False, dynamic_ncols=True)


class RunProgress:
    """A progress bar for one run: jobs finished, virtual time, rounds and rounds/s.

    Use as a context manager and pass the instance as ``on_progress`` to
    :func:`emulator.engine.runner.run`. ``disable=True`` makes it silent (``--quiet``).
    """

    def __init__(self, total: int, label: str, disable: bool = False) -> None:
        self.bar = bar(total, label, "job", disable)
        self.started = time.perf_counter()

    def __call__(self, progress: Progress) -> None:
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
        self.bar.close()
