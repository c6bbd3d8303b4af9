"""The grid model in GridSim's vocabulary: jobs (gridlets), machines, clusters, links.

Everything here is plain data. Partitions own the mutable state built from it;
policies read it. A job's length in MI is ``estimate * bench``: the estimate is
measured on a reference machine of ``bench`` MIPS, so on a machine of ``mips``
it lasts ``estimate * bench / mips`` by estimate and ``runtime * bench / mips``
in fact (traces record both, and they differ).
"""

from __future__ import annotations

import inspect
import itertools
import json
import math
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter

import pyarrow as pa

from .spec import PolicySpec

SINGLE = "single"
SPREAD = "spread"
PLACEMENTS = (SINGLE, SPREAD)
USER_CLASSES = ("regular", "silver", "gold")


class Job:
    """One batch job (GridSim: Gridlet). Immutable by convention once built.

    ``site`` names the cluster the job must run on ("" when the meta-scheduler
    chooses); ``deadline`` is ``math.inf`` when the job has none.
    """

    __slots__ = (
        "bench",
        "checkpointable",
        "cpus",
        "deadline",
        "estimate",
        "id",
        "in_bytes",
        "licenses",
        "out_bytes",
        "placement",
        "runtime",
        "site",
        "submit",
        "user",
        "user_class",
    )

    FIELDS = __slots__

    def __init__(
        self,
        id: int,
        submit: float,
        cpus: int,
        estimate: float,
        runtime: float | None = None,
        bench: float = 1.0,
        licenses: tuple[str, ...] = (),
        deadline: float = math.inf,
        in_bytes: float = 0.0,
        out_bytes: float = 0.0,
        user: int = 0,
        user_class: str = "regular",
        checkpointable: bool = False,
        site: str = "",
        placement: str = SINGLE,
    ) -> None:
        self.id = int(id)
        self.submit = float(submit)
        self.cpus = int(cpus)
        self.estimate = float(estimate)
        self.runtime = self.estimate if runtime is None else float(runtime)
        self.bench = float(bench)
        self.licenses = tuple(licenses)
        self.deadline = float(deadline)
        self.in_bytes = float(in_bytes)
        self.out_bytes = float(out_bytes)
        self.user = int(user)
        self.user_class = user_class
        self.checkpointable = bool(checkpointable)
        self.site = site
        self.placement = placement

    @property
    def length(self) -> float:
        """Estimated length in MI (what schedulers see)."""
        return self.estimate * self.bench

    @property
    def actual_length(self) -> float:
        """Actual length in MI (what the machines execute)."""
        return self.runtime * self.bench

    def to_tuple(self) -> tuple:
        """Flat form for messages that cross process boundaries (msgpack-able)."""
        return _FIELD_VALUES(self)

    @classmethod
    def from_tuple(cls, values: tuple | list) -> Job:
        """The job :meth:`to_tuple` gave ``values`` (one per dispatch: a loop of ``setattr`` over
        :attr:`FIELDS` cost seven times this unpacking, in the same order)."""
        job = cls.__new__(cls)
        (
            job.bench,
            job.checkpointable,
            job.cpus,
            job.deadline,
            job.estimate,
            job.id,
            job.in_bytes,
            licenses,
            job.out_bytes,
            job.placement,
            job.runtime,
            job.site,
            job.submit,
            job.user,
            job.user_class,
        ) = values
        job.licenses = tuple(licenses)
        return job

    def __reduce__(self) -> tuple:
        """Pickled as its constructor's arguments, not as a dict of slots: a Ray run ships the
        scenario's jobs to every actor (LCG-2005-1's 188,041: pickled in 0.3 s instead of 0.8, 43 MB
        instead of 57), and snapshots pickle the jobs a partition holds."""
        return type(self), _INIT_ARGS(self)

    def replace(self, **changes) -> Job:
        """A copy with some attributes changed (the original stays as it was)."""
        job = Job.from_tuple(self.to_tuple())
        for name, value in changes.items():
            setattr(job, name, value)
        return job

    def __repr__(self) -> str:
        return (
            f"Job(id={self.id}, submit={self.submit}, cpus={self.cpus}, "
            f"estimate={self.estimate}, runtime={self.runtime}, placement={self.placement})"
        )


_INIT_ARGS = attrgetter(*list(inspect.signature(Job.__init__).parameters)[1:])
"""A job's constructor arguments, in order (:meth:`Job.__reduce__`)."""

_FIELD_VALUES = attrgetter(*Job.FIELDS)
"""A job's fields, in :attr:`Job.FIELDS` order (:meth:`Job.to_tuple`: one per dispatch)."""


@dataclass(frozen=True)
class Machine:
    """An SMP machine: ``cpus`` space-shared PEs of one MIPS rating."""

    cpus: int
    mips: float
    licenses: frozenset[str] | None = None  # None: can run every license
    name: str = ""

    def can_run(self, licenses: tuple[str, ...]) -> bool:
        return self.licenses is None or all(lic in self.licenses for lic in licenses)


@dataclass(frozen=True)
class Link:
    """A network link (GridSim: baud rate). ``bandwidth`` in bytes/s; inf = no transfer time.

    Transfers on one link are serialized, as GridSim's Output entity sends one
    packet stream at a time: see :class:`LinkClock`.
    """

    latency: float
    bandwidth: float = math.inf

    def transfer_time(self, nbytes: float) -> float:
        if nbytes <= 0 or math.isinf(self.bandwidth):
            return 0.0
        return nbytes / self.bandwidth


class LinkClock:
    """The sending side of a link: serializes transfers (FIFO) and adds latency."""

    __slots__ = ("busy_until", "link")

    def __init__(self, link: Link) -> None:
        self.link = link
        self.busy_until = -math.inf

    def send(self, now: float, nbytes: float) -> float:
        """Delivery time of ``nbytes`` sent at ``now``, after earlier transfers on this link."""
        transfer = self.link.transfer_time(nbytes)
        if transfer == 0.0:
            return now + self.link.latency
        start = max(now, self.busy_until)
        self.busy_until = start + transfer
        return self.busy_until + self.link.latency


class ChangingLinkClock(LinkClock):
    """A :class:`LinkClock` whose link changes over time (stress tests: link degradation).

    ``changes`` are ``(time, Link)`` in time order, each in force from its time
    on. A message without data (or sent while the link's bandwidth is
    unlimited) is delivered at send time + the latency in force then. A data
    transfer waits for the earlier ones on the link, runs at the bandwidth in
    force when it starts (a later change does not affect a transfer in
    progress) and then takes the latency in force at its start.
    """

    __slots__ = ("_links", "_times")

    def __init__(self, link: Link, changes: tuple[tuple[float, Link], ...]) -> None:
        super().__init__(link)
        self._times = [t for t, _ in changes]
        self._links = [link, *(new for _, new in changes)]

    def at(self, time: float) -> Link:
        """The link in force at ``time`` (a change applies from its own time on)."""
        return self._links[bisect_right(self._times, time)]

    def send(self, now: float, nbytes: float) -> float:
        link = self.at(now)
        if link.transfer_time(nbytes) == 0.0:
            return now + link.latency
        start = max(now, self.busy_until)
        if start > now:
            link = self.at(start)
        self.busy_until = start + link.transfer_time(nbytes)
        return self.busy_until + link.latency


def link_clock(link: Link, changes: tuple[tuple[float, Link], ...] = ()) -> LinkClock:
    """The sending side of ``link``, changing at ``changes`` (a plain :class:`LinkClock` if none)."""
    return ChangingLinkClock(link, changes) if changes else LinkClock(link)


MAX_MACHINES = 10**6
"""Machines one cluster may have (a scenario's ``count``, a machines file's nodes)."""
MAX_CPUS_PER_MACHINE = 2**20
"""CPUs one machine may have."""

MAX_TIME = 2.0**50
"""The latest virtual time (s, ~36 million years) a scenario may reach by its own numbers (submit
times, estimates, run times, deadlines, latencies): beyond it a second is lost in float rounding, so
times and durations would silently come out wrong."""

MIN_LATENCY = 1e-6
"""The least link latency a scenario may give (s): the coordinator's lookahead. Below it, at the times
of long traces (1e9 s and more), a latency is lost in float rounding and virtual time cannot advance."""


@dataclass(frozen=True)
class Cluster:
    """A cluster (GridSim: GridResource): machines, a license pool, a local policy, a link.

    ``license_per_machine``: count one license copy per machine using it (CS 2.0),
    instead of one per job. ``policy`` is the parsed spec the scenario read, which the partition
    builds its policy from and the metrics take CP weights from (a string given in code is parsed
    here, once).
    """

    name: str
    machines: tuple[Machine, ...]
    link: Link
    licenses: dict[str, int] = field(default_factory=dict)
    policy: PolicySpec = field(default_factory=lambda: PolicySpec("fcfs"))
    license_per_machine: bool = False
    link_changes: tuple[tuple[float, Link], ...] = ()
    """Stress tests: ``(time, Link)`` in time order, each the link from its time on (``link`` before)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy", PolicySpec.of(self.policy))

    @cached_property
    def cpus(self) -> int:
        return sum(m.cpus for m in self.machines)

    @cached_property
    def _capacities(self) -> dict[tuple, int]:
        return {}

    def capacity(self, licenses: tuple[str, ...], placement: str) -> int:
        """Most CPUs one job with these licenses can get: on one machine (single) or in all (spread)."""
        key = (licenses, placement)
        cached = self._capacities.get(key)
        if cached is None:
            able = [m.cpus for m in self.machines if m.can_run(licenses)]
            cached = self._capacities[key] = max(able, default=0) if placement == SINGLE else sum(able)
        return cached

    def refusal(self, job: Job) -> str | None:
        """Why ``job`` can never run here, even on an idle cluster; None if it can."""
        if job.licenses:  # (asked at every arrival: most jobs hold none)
            for lic in sorted(set(job.licenses)):
                need, have = job.licenses.count(lic), self.licenses.get(lic, 0)
                if need > have:
                    copies = "copy" if need == 1 else "copies"
                    return f"job needs {need} {copies} of license {lic}; cluster {self.name} has {have}"
        capacity = self.capacity(job.licenses, job.placement)
        if job.cpus <= capacity:
            return self._copies_per_machine(job)
        if job.placement == SINGLE:
            return (
                f"job needs {job.cpus} CPUs on one machine; the largest eligible "
                f"machine of cluster {self.name} has {capacity}"
            )
        return f"job needs {job.cpus} CPUs; cluster {self.name} has {capacity} eligible CPUs"

    def _copies_per_machine(self, job: Job) -> str | None:
        """With copies counted per machine, a spread job needs one per machine its idle placement uses."""
        if not (self.license_per_machine and job.licenses and job.placement == SPREAD):
            return None
        machines, cpus = 0, 0
        for m in self.machines:
            if cpus >= job.cpus:
                break
            if m.can_run(job.licenses):
                machines, cpus = machines + 1, cpus + m.cpus
        for lic in sorted(set(job.licenses)):
            if machines > self.licenses.get(lic, 0):
                return (
                    f"job spreads over {machines} machines, each needing a copy of license {lic} "
                    f"(copies counted per machine); cluster {self.name} has {self.licenses.get(lic, 0)}"
                )
        return None


@dataclass(frozen=True)
class Platform:
    """The whole grid: clusters in a fixed order (their index is their partition id - 1)."""

    clusters: tuple[Cluster, ...]

    @property
    def lookahead(self) -> float:
        """The least latency of any link at any time (links may change: ``Cluster.link_changes``)."""
        links = [link for c in self.clusters for link in (c.link, *(new for _, new in c.link_changes))]
        return min(link.latency for link in links)

    def index(self, name: str) -> int:
        for i, cluster in enumerate(self.clusters):
            if cluster.name == name:
                return i
        raise KeyError(name)


JOB_INPUTS = pa.schema(
    [
        ("id", pa.int64()),
        ("submit", pa.float64()),
        ("cpus", pa.int32()),
        ("estimate", pa.float64()),
        ("runtime", pa.float64()),
        ("bench", pa.float64()),
        ("licenses", pa.list_(pa.string())),
        ("deadline", pa.float64()),
        ("in_bytes", pa.float64()),
        ("out_bytes", pa.float64()),
        ("user", pa.int64()),
        ("user_class", pa.string()),
        ("checkpointable", pa.bool_()),
        ("site", pa.string()),
        ("placement", pa.string()),
    ]
)
"""A :class:`Job`'s attributes as Arrow columns: the inputs of ``jobs.arrow`` and of every jobs table a
workload source builds (here, with the model, so that sources need not import the trace writer)."""


PLATFORM_KEY = b"gridemu_platform"
"""``jobs.arrow``'s schema metadata: the clusters in the scenario's order, each with its machines' CPUs
(JSON ``[[name, [[count, cpus], ...]], ...]``, runs of equal machines), so exports can number a job's
cluster (SWF field 16) and its CPUs (Batsim's resources) from the jobs table alone."""


def platform_metadata(platform: Platform) -> bytes:
    """:data:`PLATFORM_KEY`'s value for ``platform``."""
    clusters = [
        [c.name, [[len(list(run)), cpus] for cpus, run in itertools.groupby(m.cpus for m in c.machines)]]
        for c in platform.clusters
    ]
    return json.dumps(clusters).encode()


def platform_of(table: pa.Table) -> list[tuple[str, list[int]]] | None:
    """The clusters a run's jobs table was emulated on, each with every machine's CPUs; None when the
    table does not say (a trace, or a run from before gridemu recorded it)."""
    raw = (table.schema.metadata or {}).get(PLATFORM_KEY)
    if raw is None:
        return None
    return [(name, [cpus for count, cpus in runs for _ in range(count)]) for name, runs in json.loads(raw)]
