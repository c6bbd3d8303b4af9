"""Sweeps on Ray: each point an in-process emulation inside one Ray task.

The driver loads each point's scenario (with its overrides) and ships it,
loaded, with the task: the workload's rows, the platform and the policies'
parameters travel through Ray, and the plug-in policies' code with it
(:mod:`actors.shipping`), so a node needs none of the driver's files (the
scenario, its trace, its plug-ins) and a laptop can drive a cluster that does
not share its disk. Points are loaded only a little ahead of the tasks that run them
(:data:`AHEAD` per CPU), so a long sweep of a large trace never holds every
point's scenario at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import ray

from emulator.data.scenario import Scenario, load
from emulator.engine.sweep import Executor, Point, PointResult, failure, run_point, scratch_folder

from .session import ray_session, session_folder
from .shipping import runtime_env

AHEAD = 2
"""Points loaded and handed to Ray per CPU of the cluster: enough that no CPU waits on the driver."""


class RayTasks:
    """An executor for :mod:`emulator.engine.sweep`: one Ray task (1 CPU) per point, results as they
    finish. ``nodes`` counts the points each Ray node ran (by node id).

    >>> execute = ray_tasks()                                                    # doctest: +SKIP
    >>> results = list(execute("quickstart", points(parse_vary(["seed=1..4"]))))  # doctest: +SKIP
    >>> sum(execute.nodes.values())                                              # doctest: +SKIP
    4
    """

    def __init__(self, address: str | None = None) -> None:
        self.address = address
        self.nodes: Counter[str] = Counter()

    def __call__(self, scenario: str, todo: list[Point]) -> Iterator[PointResult]:
        with ray_session(self.address):
            task = ray.remote(num_cpus=1, max_retries=0)(_run_here)
            ahead = AHEAD * max(1, int(ray.cluster_resources().get("CPU", 1)))
            left = iter(todo)
            pending: list = []
            while True:
                for point in left:
                    loaded = _loaded(scenario, point)
                    if isinstance(loaded, PointResult):  # (its scenario failed to load: nothing to run)
                        yield loaded
                        continue
                    pending.append(task.options(runtime_env=runtime_env(loaded)).remote(loaded, point))
                    if len(pending) >= ahead:
                        break
                if not pending:
                    return
                done, pending = ray.wait(pending, num_returns=1)
                node, result = ray.get(done[0])
                self.nodes[node] += 1
                yield result


def ray_tasks(address: str | None = None) -> Executor:
    """A :class:`RayTasks` executor joining ``address`` (default: ``$RAY_ADDRESS``, else a local Ray)."""
    return RayTasks(address)


def _loaded(scenario: str, point: Point) -> Scenario | PointResult:
    """The point's scenario, loaded here; or its failed result, as :func:`run_point` would give it."""
    seed, sets = point.overrides()
    try:
        return load(scenario, sets, seed=seed)
    except Exception as err:  # a failed point must not lose the others
        return PointResult(point, error=failure(err))


def _run_here(scenario: Scenario, point: Point) -> tuple[str, PointResult]:
    """The body of a point's task: the node it ran on, and its result.

    The point's run directory goes in the node's Ray session folder, which goes with the session (a
    private Ray's when it shuts down: :func:`~actors.session.ray_session`), so a task killed
    mid-point (the sweep stopped) leaves nothing in the node's temporary folder."""
    with scratch_folder(parent=session_folder()) as scratch:
        return ray.get_runtime_context().get_node_id(), run_point(scenario, point, Path(scratch))


__all__ = ["AHEAD", "RayTasks", "ray_tasks"]
