"""The sweep executor without Ray: one process per point, ``workers`` at a time, each watched.

A pool that shares worker processes between points cannot tell which point
killed a worker (``BrokenProcessPool`` fails every pending point), nor stop one
that hangs. Here each point runs in a process of its own (forked, so it starts
in milliseconds with everything imported) and hands back its result through a
pipe: a process that dies marks its point failed with its exit code, one that
overruns ``timeout`` seconds is killed and its point marked so, and the sweep
goes on with the others.

A point's process dies with the driver: killed (``kill -9``, the out-of-memory
killer) the driver cannot stop its workers, so each asks the kernel for a
SIGKILL when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``), or where that
is not to be had watches its parent from a thread. Workers also close the
result pipes of the points forked before them, which they inherit: an orphan
writing its result then meets a closed pipe, not one a sibling keeps open.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait
from pathlib import Path

from .sweep import SCRATCH_PREFIX, Executor, Point, PointResult, run_point

POLL_SECONDS = 0.5
"""How often the driver checks for overrun points while none answers."""


PR_SET_PDEATHSIG = 1
"""``prctl``'s option: the signal this process gets when its parent dies (``<linux/prctl.h>``)."""
WATCH_SECONDS = 0.2
"""Where ``prctl`` is not to be had, how often a worker checks that its parent is alive."""
ORPHANED = 70
"""A worker's exit code when it finds its driver gone (no one reads it: the driver is dead)."""


def _child(
    scenario: str, point: Point, scratch: Path, sink: Connection, parent: int, inherited: list[Connection]
) -> None:
    _die_with_parent(parent)
    for conn in inherited:  # the other points' result pipes, copied by the fork: only the driver reads them
        conn.close()
    sink.send(run_point(scenario, point, scratch))
    sink.close()


def _die_with_parent(parent: int) -> None:
    """End this (forked) process when ``parent``, the driver, dies, however it dies."""
    if not _set_pdeathsig():
        threading.Thread(target=_watch, args=(parent,), name="gridemu-watch-driver", daemon=True).start()
    if os.getppid() != parent:  # the driver died between the fork and the prctl: no signal will come
        os._exit(ORPHANED)


def _set_pdeathsig() -> bool:
    """Ask Linux for a SIGKILL when the parent dies; False where that cannot be had.

    The signal comes when the *thread* that forked this process ends: the
    driver forks from the thread iterating :func:`process_pool`'s executor,
    which outlives its points (its ``finally`` kills any still running)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):  # no libc to load, or no prctl in it
        return False


def _watch(parent: int) -> None:
    """The fallback: poll the parent's pid (an orphan is re-parented, to init or a subreaper)."""
    while os.getppid() == parent:
        time.sleep(WATCH_SECONDS)
    os._exit(ORPHANED)


class _Running:
    """A point's process, its result pipe and its scratch folder, which the driver makes and removes: a
    process killed mid-point (its timeout, a stop, a crash) leaves its run's files behind."""

    def __init__(self, scenario: str, point: Point, context, others: list[Connection]) -> None:
        self.point = point
        self.receive, send = context.Pipe(duplex=False)
        self.scratch = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX))
        args = (scenario, point, self.scratch, send, os.getpid(), others)
        self.process = context.Process(target=_child, args=args, daemon=True)
        self.process.start()
        send.close()  # the child holds the only sending end: its death closes the pipe
        self.started = time.monotonic()

    def result(self) -> PointResult:
        """The point's result, or its failure if the process died before answering."""
        try:
            result = self.receive.recv()
        except (EOFError, OSError):
            self.process.join()
            code = self.process.exitcode
            result = PointResult(
                self.point, error=f"WorkerDied: the process running it died (exit code {code})"
            )
        self.end()
        return result

    def kill(self, timeout: float) -> PointResult:
        self.process.kill()
        self.end()
        return PointResult(self.point, error=f"Timeout: still running after --point-timeout {timeout:g} s")

    def end(self) -> None:
        """The process ended (or is made to end by a kill before): its pipe and scratch folder go."""
        self.process.join()
        self.receive.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def process_pool(workers: int | None = None, timeout: float | None = None) -> Executor:
    """One process per point, ``workers`` at a time (default: CPUs); ``timeout``: seconds per point."""
    workers = workers or multiprocessing.cpu_count()

    def execute(scenario: str, todo: list[Point]) -> Iterator[PointResult]:
        context = multiprocessing.get_context("fork")
        waiting = list(reversed(todo))
        running: dict[Connection, _Running] = {}
        try:
            while waiting or running:
                while waiting and len(running) < workers:
                    job = _Running(scenario, waiting.pop(), context, list(running))
                    running[job.receive] = job
                for ready in wait(list(running), timeout=POLL_SECONDS):
                    yield running.pop(ready).result()
                if timeout is not None:
                    now = time.monotonic()
                    for conn, job in list(running.items()):
                        if now - job.started > timeout:
                            del running[conn]
                            yield job.kill(timeout)
        finally:
            for job in running.values():  # interrupted: leave no process (nor its files) behind
                job.process.kill()
                job.end()

    return execute
