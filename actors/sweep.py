"""Sweeps on Ray: each point an in-process emulation inside one Ray task."""

from __future__ import annotations

from collections.abc import Iterator

import ray

from emulator.engine.sweep import Executor, Point, PointResult, run_point

from .session import driver_import_path, ray_session


def ray_tasks(address: str | None = None) -> Executor:
    """An executor for :mod:`emulator.engine.sweep`: one Ray task (1 CPU) per point, results as they finish.

    >>> results = list(ray_tasks()("quickstart", points(parse_vary(["seed=1..4"]))))  # doctest: +SKIP
    """

    def execute(scenario: str, todo: list[Point]) -> Iterator[PointResult]:
        with ray_session(address):
            task = ray.remote(run_point).options(num_cpus=1, max_retries=0, runtime_env=driver_import_path())
            pending = [task.remote(scenario, point) for point in todo]
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                yield ray.get(done[0])

    return execute
