"""The sweep executor without Ray: one process per point, ``workers`` at a time, each watched.

A pool that shares worker processes between points cannot tell which point
killed a worker (``BrokenProcessPool`` fails every pending point), nor stop one
that hangs. Here each point runs in a process of its own (forked, so it starts
in milliseconds with everything imported) and hands back its result through a
pipe: a process that dies marks its point failed with its exit code, one that
overruns ``timeout`` seconds is killed and its point marked so, and the sweep
goes on with the others.
"""

from __future__ import annotations

import multiprocessing
import time
from collections.abc import Iterator
from multiprocessing.connection import Connection, wait

from .sweep import Executor, Point, PointResult, run_point

POLL_SECONDS = 0.5
"""How often the driver checks for overrun points while none answers."""


def _child(scenario: str, point: Point, sink: Connection) -> None:
    sink.send(run_point(scenario, point))
    sink.close()


class _Running:
    def __init__(self, scenario: str, point: Point, context) -> None:
        self.point = point
        self.receive, send = context.Pipe(duplex=False)
        self.process = context.Process(target=_child, args=(scenario, point, send), daemon=True)
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
        self.process.join()
        self.receive.close()
        return result

    def kill(self, timeout: float) -> PointResult:
        self.process.kill()
        self.process.join()
        self.receive.close()
        return PointResult(self.point, error=f"Timeout: still running after --point-timeout {timeout:g} s")


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
                    job = _Running(scenario, waiting.pop(), context)
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
            for job in running.values():  # interrupted: leave no process behind
                job.process.kill()
                job.process.join()

    return execute
