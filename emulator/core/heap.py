"""Keeping the garbage collector away from the objects a run lives on.

A large trace makes millions of objects that live to the run's end: the jobs a scenario loads,
the partitions built from them and their queued events. None of them is ever garbage, but
CPython's full collections scan every tracked object, and they come again each time the heap
has grown by a quarter: while the LCG-2005-1 trace (188,041 jobs, 170 clusters) was loaded and
its partitions built, collections that freed nothing took ~1.1 s of ~2.1 s. Two steps, one idea:

- :func:`long_lived` wraps the code that makes such objects (loading a scenario, building
  partitions): no collections while it runs, so they are scanned once afterwards, not at every
  quarter of their growth;
- :func:`frozen_heap` wraps the run itself: what exists when it starts is hidden from the
  collector (``gc.freeze``), whose collections then scan only what the run makes, and come
  every :data:`YOUNG` allocations, not Python's 700. A process that hosts one run and nothing
  else (a Ray actor) calls :func:`freeze` and :func:`collect_rarely` once its partitions are built.

Neither changes what a run computes: only when unreachable cycles are freed.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def long_lived() -> Iterator[None]:
    """No garbage collection inside the block, which makes objects that live to the run's end.

    Also a decorator. Nests: the collector's state on entry (on, or already off) is restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


YOUNG = 10_000
"""Net allocations (of the objects the collector tracks) between young collections during a run.
A run's messages, rows and results die by their reference counts, not by the collector, so a young
collection mostly scans the ones still held; at Python's 700 a Ray driver spent about an eighth of
its CPU in collections (docs/performance.md, Memory). Cycles wait a little longer to be freed."""


def collect_rarely() -> None:
    """Young collections every :data:`YOUNG` allocations, for the rest of the process."""
    gc.set_threshold(YOUNG, *gc.get_threshold()[1:])


def freeze() -> None:
    """Hide every object that exists now from the collector, for the rest of the process (or until
    :func:`frozen_heap` ends): for what lives as long as the process's run."""
    gc.freeze()


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Hide the objects a run starts with (its jobs, the partitions and their events) from the
    collector while it runs: they live to its end anyway, and a large trace's full collections,
    set off again and again by the rows the run makes, scanned them every time. Young collections
    come every :data:`YOUNG` allocations meanwhile (:func:`collect_rarely`)."""
    freeze()
    threshold = gc.get_threshold()
    collect_rarely()
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
