"""The Ray actors hosting the partitions, and the ways a call reaches them.

Actor ``h`` hosts the partitions ``groups[h]``. A call reaches it over a
direct line (:mod:`actors.channel`) if it runs on the driver's node, else as a
plain Ray call (:class:`~actors.calls.HostCalls`, one interface for both); or,
when asked, a whole round goes through a Ray Compiled Graph
(:mod:`actors.compiled`). A plain call costs about a millisecond, a line a
tenth of that; a compiled graph's channels cost as little but poll, and on a
machine with as many actors as cores the polling takes CPU from the
partitions, so lines are the default.

Everything else addresses actors by index, which neither a rebuilt actor
(:meth:`Fleet.replace`) nor a migration (:meth:`Fleet.regroup`) changes: a
compiled graph calls actors by index too, so only rebuilding every actor
recompiles it (:meth:`Fleet.recompiling`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

import ray
from ray.exceptions import RayActorError

from emulator.core.messages import META
from emulator.core.model import Job
from emulator.data.scenario import Scenario
from emulator.engine.runner import entries
from emulator.sync.coordinator import Calls

from .calls import HostCalls
from .compiled import compile_rounds
from .grouping import owners
from .packing import pack_calls
from .placement import actor_share, await_started, node_cpus
from .shipping import runtime_env


class Fleet:
    """The actors hosting ``groups`` of ``scenario``'s partitions, each a ``host(scenario, pids)``.

    ``direct``: lines to the actors on the driver's node; ``compiled``: rounds
    through a compiled graph (:attr:`graph`; ``plain_reason`` says why there is
    none when one was wanted), and plain Ray calls otherwise.

    The actors start building their partitions when it is made, and are ready once :meth:`connect`
    returns: the driver builds its own partitions in between.

    >>> fleet = Fleet(scenario, [[1, 2], [3]], PartitionHost)  # doctest: +SKIP
    >>> fleet.connect(compiled=False, direct=True)             # doctest: +SKIP
    >>> fleet.kind, fleet.owner                                # doctest: +SKIP
    ('direct', {1: 0, 2: 0, 3: 1})
    """

    def __init__(self, scenario: Scenario, groups: list[list[int]], host: type):
        self.groups, self.owner = groups, owners(groups)
        self._scenario = scenario  # (each actor is sent its share: :func:`for_hosts`)
        self._entries = entries(scenario) if isinstance(scenario, Scenario) else None  # (split once)
        self._cpus = actor_share(node_cpus(), len(groups))  # (placement: all fit, on the nodes there are)
        self._actor = ray.remote(host).options(
            num_cpus=self._cpus,
            max_restarts=0,
            runtime_env=runtime_env(scenario),  # (shipping: plug-ins)
        )
        self.hosts = [self._actor.remote(self._share(group), group) for group in groups]

    def _share(self, group: list[int]) -> Scenario:
        """What the actor hosting ``group`` builds its partitions from (:func:`for_hosts`)."""
        return for_hosts(self._scenario, group, self._entries)

    def connect(self, compiled: bool, direct: bool) -> None:
        """Wait until every actor has built its partitions, then open the way rounds reach them."""
        await_started(self.hosts, self.groups, self._cpus, "for the run")  # (placement: bounded, says why)
        self.gather("states")  # every host has built its partitions: start-up, as in one process
        self.graph, self.plain_reason = compile_rounds(self.hosts) if compiled else (None, "")
        self.calls = HostCalls.open(self.hosts, direct and not compiled)

    @property
    def kind(self) -> str:
        """How rounds reach the actors: ``direct`` lines, ``plain`` Ray calls (or both, on a multi-node
        cluster: :attr:`actors.calls.HostCalls.kind`), or a ``compiled`` graph."""
        return "compiled" if self.graph is not None else self.calls.kind

    def gather(self, method: str) -> list:
        """Every actor's answer to ``method()``, in actor order (a Ray call each, never a line)."""
        return ray.get([getattr(host, method).remote() for host in self.hosts])

    def batches(self, calls: Calls, budget: int) -> dict[int, bytes]:
        """``calls`` grouped by the actor owning each partition, one packed batch per actor."""
        batches: dict[int, Calls] = {}
        for pid, call in calls.items():
            batches.setdefault(self.owner[pid], {})[pid] = call
        return {h: pack_calls(batch, budget) for h, batch in batches.items()}

    def spawn(self, h: int):
        """A new actor for actor ``h``'s current group, not in use yet (:meth:`replace` installs it)."""
        host = self._actor.remote(self._share(self.groups[h]), self.groups[h])
        await_started([host], [self.groups[h]], self._cpus, "to replace one that died", len(self.hosts) - 1)
        return host

    def replace(self, h: int, host) -> None:
        """``host`` is actor ``h`` from now on (with a new line, if ``h`` had one)."""
        self.hosts[h] = host
        self.calls.replace(h, host)

    def regroup(self, groups: list[list[int]]) -> None:
        """The partitions moved: actor ``h`` now hosts ``groups[h]``."""
        self.groups, self.owner = groups, owners(groups)

    def alive(self, h: int) -> bool:
        try:
            ray.get(self.hosts[h].pid.remote())
        except RayActorError:
            return False
        return True

    @contextmanager
    def recompiling(self) -> Iterator[None]:
        """Around rebuilding every actor: the compiled graph (if any) is torn down first, and compiled
        afresh over the new actors after."""
        compiled = self.graph is not None
        if self.graph is not None:
            self.graph.close()
        yield
        if compiled:
            self.graph, self.plain_reason = compile_rounds(self.hosts)

    def close(self) -> None:
        if self.graph is not None:
            self.graph.close()
        self.calls.close()
        for host in self.hosts:
            ray.kill(host)


def for_hosts(
    scenario: Scenario, pids: list[int], entered: tuple[list[list[Job]], list[Job]] | None = None
) -> Scenario:
    """What an actor builds partitions ``pids`` from: the scenario with only the jobs they read.

    A cluster reads the jobs that enter it directly (a trace's site), and whether any job goes through
    the meta-scheduler (it then reports to it): one such job stands for them all. The meta partition
    reads those going through it. Each cluster's jobs and the meta-scheduler's keep their order, so
    they split as the whole workload does (:func:`~emulator.engine.runner.entries`) and the partitions
    are built as from the whole workload: a meta-scheduled grid's actors get next to no jobs, not all
    of them. Tables only the driver's writer reads (``jobs.arrow``'s input and trace columns) are
    dropped. Benchmarks pass their own scenario-like objects, as they are. ``entered``: the scenario's
    :func:`~emulator.engine.runner.entries`, when the caller shares them between actors.
    """
    if not isinstance(scenario, Scenario):
        return scenario
    direct, via_meta = entered or entries(scenario)
    jobs = [job for pid in sorted(pids) if pid != META for job in direct[pid - 1]]
    if META in pids:
        jobs += via_meta
    elif via_meta:
        jobs.append(via_meta[0])
    return replace(scenario, jobs=jobs, extra=None, inputs=None)


__all__ = ["Fleet", "for_hosts"]
