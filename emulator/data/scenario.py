"""Scenario files (TOML): platform, workload, policies, seed. Validated with precise errors.

A scenario argument is either a built-in name (``quickstart``, see
:func:`builtin_names`), a path, or a preset name (the papers' experiments,
:mod:`workloads.presets`). ``--set key=value`` overrides apply to the
raw TOML before validation, so an override gets the same checks as the file.

Paths (:data:`PATH_KEYS`: ``workload.path``, ``platform.path``, a failures
``file``): a relative path written in a scenario file is read from that file's
folder (in an ``extends`` chain, from the folder of the file being loaded); one
given with ``--set`` is read from the current directory, as every command line
reads a path (:func:`apply_override` makes it absolute).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core import failures as failure_keys
from ..core import links
from ..core.config import ScenarioError, Table
from ..core.heap import long_lived
from ..core.model import (
    MAX_CPUS_PER_MACHINE,
    MAX_MACHINES,
    MAX_TIME,
    MIN_LATENCY,
    PLACEMENTS,
    USER_CLASSES,
    Cluster,
    Job,
    Link,
    Machine,
    Platform,
)
from ..policies import LOCAL, META, PolicyError, PolicySpec
from ..policies.meta_simple import OwnSite
from .metrics import MetricOptions

WORKLOAD_STREAM = 1 << 30
"""Spawn key of the workload generator's random stream (partitions use their ids, 0..n)."""
PLATFORM_STREAM = WORKLOAD_STREAM + 1
"""Spawn key of the platform generator's random stream."""

GRIDLETS = "gridlets"
"""The ``[workload]`` source the scenario reads itself: an explicit ``[[workload.gridlets]]`` list.
The others are the trace formats (:mod:`workloads.formats`) and the generators."""

PATH_KEYS = (
    ("workload", "path"),
    ("platform", "path"),
    ("stress", "failures", "file"),
    ("clusters", "*", "failures", "file"),
)
"""The keys that name a file (``*``: any index of an array). Relative, they are read from the scenario
file's folder; given with ``--set``, from the current directory (:func:`apply_override`)."""

TRACE_RULES = "pwa"
"""The rules an SWF trace is read by when ``[workload]`` names none: the archive's, as ``gridemu run
--swf`` reads it. ``rules = "gridsim"`` reads it as GridSim's ``Workload`` does (docs/gridsim.md)."""


@dataclass
class Scenario:
    """A validated scenario: everything a run needs, plus its effective configuration."""

    name: str
    source: str
    seed: int
    platform: Platform
    meta: PolicySpec
    jobs: list[Job]
    direct_link: Link | None
    direct: bool
    effective: dict[str, Any] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)
    """Trace lines the reader's rules skipped, each with its line number and reason."""
    extra: pa.Table | None = None
    """Trace columns of the jobs (one row per job, in ``jobs`` order): kept in ``jobs.arrow``."""
    inputs: pa.Table | None = None
    """The jobs as columns (:func:`workloads.table.model_columns`, in ``jobs`` order), when a source
    read them as a table: ``jobs.arrow``'s first columns, without a pass over the ``Job`` objects.
    A scenario whose ``jobs`` are replaced must drop it (None: built from ``jobs``)."""
    status_period: float = 0.0
    """``[stress] status_period``: clusters report only at its multiples (0: after every event)."""
    failures: failure_keys.Failures | None = None
    """``[stress]`` machine failures, outages, kills (:mod:`emulator.core.failures`); None: none of them."""
    local_default: PolicySpec | None = None
    """``[local]``'s policy: every cluster's but those that set their own."""
    own_policy: tuple[bool, ...] = ()
    """Per cluster: whether the scenario gave it a policy (or params) of its own, not ``[local]``'s."""
    notes: list[str] = field(default_factory=list)
    """Defaults worth a word to the user (the CLI prints them): e.g. the rules a trace was read by."""
    metrics: MetricOptions = field(default_factory=MetricOptions)
    """``[metrics]``: the bounded-slowdown threshold, warm-up and cool-down trimming."""

    @property
    def local(self) -> list[PolicySpec]:
        """Each cluster's local policy spec: the one its :class:`Cluster` carries, never a copy."""
        return [cluster.policy for cluster in self.platform.clusters]

    def seed_sequence(self, stream: int) -> np.random.SeedSequence:
        """The random stream of a partition (its id) or of the workload generator."""
        return np.random.SeedSequence(self.seed, spawn_key=(stream,))


def builtin_names() -> list[str]:
    folder = resources.files("emulator") / "examples"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def load(scenario: str | Path, overrides: list[str] = (), seed: int | None = None) -> Scenario:
    """Read a built-in scenario by name, or a TOML file by path, and validate it."""
    raw, source, base = read_raw(scenario)
    return load_raw(raw, source, base, overrides, seed)


def read_raw(scenario: str | Path, chain: tuple[str, ...] = ()) -> tuple[dict, str, Path]:
    """A scenario's TOML document, unvalidated: the document, where it came from, its folder.

    ``extends = "NAME"`` (a built-in scenario, a preset or a path relative to
    the file) starts from that scenario's document: tables merge key by key,
    anything else (values, arrays, arrays of tables) replaces the extended
    one's. So a stress scenario is the preset it perturbs plus its ``[stress]``.
    Relative paths inside the extended document are read from this file's folder.
    """
    text, source, base = _read(scenario)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{source}: not valid TOML: {err}") from None
    parent = raw.pop("extends", None)
    if parent is None:
        return raw, source, base
    if not isinstance(parent, str) or not parent:
        raise ScenarioError(f"{source}: key 'extends' = {parent!r}: expected the name or path of a scenario")
    if source in chain:
        raise ScenarioError(f"{source}: 'extends' goes round in a circle: {' -> '.join([*chain, source])}")
    target = base / parent if (base / parent).is_file() else parent
    extended, _, _ = read_raw(target, (*chain, source))
    return _merged(extended, raw), source, base


def _merged(base: dict, over: dict) -> dict:
    """``base`` with ``over`` on top: tables merge key by key, other values replace."""
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


@long_lived()
def load_raw(
    raw: dict, source: str, base: Path = Path("."), overrides: list[str] = (), seed: int | None = None
) -> Scenario:
    """Validate a document built in code (``gridemu run --swf``, a replay), after ``--set``, ``--seed``.

    ``--set X.policy=SPEC`` replaces X's policy and its parameters: the document's
    ``X.params`` table (a saved ``scenario.toml`` fills in every default) is dropped
    first, so it cannot outvote the spec; ``--set X.params.KEY=V`` changes one. An
    override of ``[local]`` must reach every cluster: one that sets a policy of its
    own, other than the new default, is an error naming it (:func:`_check_reach`).
    The jobs live to the run's end: no garbage collection while they are read
    (:mod:`emulator.core.heap`).
    """
    keys = [item.partition("=")[0].strip() for item in overrides]
    for key in keys:
        if key.endswith(".policy"):
            _drop_params(raw, key.split(".")[:-1])
    for item in overrides:
        apply_override(raw, item)
    if seed is not None:
        raw["seed"] = seed
    loaded = parse(raw, source, base)
    _check_reach(loaded, keys, "platform" in raw)
    return loaded


def _drop_params(raw: dict, path: list[str]) -> None:
    """Remove the ``params`` table of the policy table at ``path`` (a missing path: the override says)."""
    target: Any = raw
    for part in path:
        if isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        elif isinstance(target, dict) and part in target:
            target = target[part]
        else:
            return
    if isinstance(target, dict):
        target.pop("params", None)


def _check_reach(loaded: Scenario, keys: list[str], generated: bool) -> None:
    """An override of ``[local]`` that a cluster's own policy keeps out is an error, not silence."""
    if not any(k == "local.policy" or k.startswith("local.params") for k in keys):
        return
    wanted = _filled(loaded.local_default)
    for i, (cluster, own) in enumerate(zip(loaded.platform.clusters, loaded.own_policy, strict=True)):
        prefixes = ("platform.policies",) if generated else (f"clusters.{i}.policy", f"clusters.{i}.params")
        addressed = any(k == "clusters" or k.startswith(prefixes) for k in keys)
        if own and not addressed and _filled(loaded.local[i]) != wanted:
            how = "--set platform.policies=[...]" if generated else f"--set clusters.{i}.policy=SPEC"
            raise ScenarioError(
                f"{loaded.source}: local.policy = {loaded.local_default} does not reach cluster "
                f"{cluster.name!r}, which sets its own policy {loaded.local[i]}: override it too with "
                f"{how}, or leave it out of the scenario"
            )


def _filled(spec: PolicySpec) -> tuple[str, dict]:
    """A local policy spec with its defaults filled in: two specs that run alike compare equal."""
    return spec.name, {**LOCAL.defaults(spec.name), **spec.params}


def _read(scenario: str | Path) -> tuple[str, str, Path]:
    name = str(scenario)
    if name in builtin_names():
        path = resources.files("emulator") / "examples" / f"{name}.toml"
        return path.read_text(), f"built-in scenario '{name}'", Path(str(path)).parent
    path = Path(name)
    if not path.is_file():
        from workloads import presets  # the papers' experiments: scenario files too

        if name in presets.names():
            path = presets.path(name)
            return path.read_text(), f"preset '{name}'", path.parent
        known = ", ".join(builtin_names())
        raise ScenarioError(
            f"{name}: no such scenario file, and not a built-in scenario (built-in: {known}; "
            f"presets: {', '.join(presets.names())})"
        )
    return path.read_text(), str(path), path.resolve().parent


def apply_override(raw: dict, item: str) -> None:
    """Apply ``key.sub=value``; the value is read as TOML (``1``, ``"x"``, ``[1, 2]``) or else as a string.

    A relative path the override sets (a key of :data:`PATH_KEYS`, or one inside a table or array it
    sets, e.g. ``--set 'workload={source="swf", path="x.swf"}'``) is made absolute from the current
    directory, as a command line's path is read, not from the scenario file's folder.
    """
    key, sep, value = item.partition("=")
    if not sep or not key.strip():
        raise ScenarioError(f"--set {item!r}: expected key=value, e.g. meta.policy=random")
    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    target = raw
    parts = key.strip().split(".")
    for i, part in enumerate(parts[:-1]):
        if isinstance(target, list):
            if not part.isdigit() or int(part) >= len(target):
                raise ScenarioError(
                    f"--set {item!r}: '{'.'.join(parts[: i + 1])}' is not an index of that array"
                )
            target = target[int(part)]
        else:
            target = target.setdefault(part, {})
        if not isinstance(target, dict | list):
            raise ScenarioError(f"--set {item!r}: '{'.'.join(parts[: i + 1])}' is not a table")
    if isinstance(target, list):
        raise ScenarioError(f"--set {item!r}: give an index into '{'.'.join(parts[:-1])}'")
    target[parts[-1]] = parsed
    _paths_from_cwd(raw, parts)


def _paths_from_cwd(raw: dict, parts: list[str]) -> None:
    """The relative paths the override of key ``parts`` set, made absolute from the current directory."""
    for pattern in PATH_KEYS:
        if len(parts) <= len(pattern) and all(
            p == k or (p == "*" and k.isdigit()) for p, k in zip(pattern, parts, strict=False)
        ):
            _absolute(raw, [*parts, *pattern[len(parts) :]])


def _absolute(node: Any, keys: list[str]) -> None:
    """Make the relative path at ``keys`` under ``node`` absolute (``*``: every item of an array)."""
    head, rest = keys[0], keys[1:]
    if isinstance(node, list):  # (no key of PATH_KEYS ends at an array)
        items = node if head == "*" else node[int(head) : int(head) + 1] if head.isdigit() else []
        for item in items:
            _absolute(item, rest)
        return
    if not isinstance(node, dict) or head not in node:
        return
    if rest:
        _absolute(node[head], rest)
    elif isinstance(node[head], str) and node[head] and not Path(node[head]).is_absolute():
        node[head] = str(Path.cwd() / node[head])


def parse(raw: dict, source: str, base: Path = Path(".")) -> Scenario:
    """Validate a TOML document already read into ``raw``."""
    from workloads.swf import shared_reads

    with shared_reads():  # a trace's sites as the platform, then its jobs: one read
        return _parse(raw, source, base)


def _parse(raw: dict, source: str, base: Path) -> Scenario:
    top = Table(raw, source)
    name = top.get("name", str, Path(source).stem)
    seed = top.number("seed", 1, low=0, integer=True)
    top.choice("backend", ("inproc",), "inproc")
    meta = _policy(top.table("meta", {}), META, "least-load")
    local_default = _policy(top.table("local", {}), LOCAL, "fcfs")
    own_failures: list[Table | None] = []
    clusters, own = _clusters(_cluster_tables(top, seed, base), local_default, own_failures)
    stress = top.table("stress", {})  # every perturbation reads its keys from this one table (docs/stress.md)
    clusters, status_period = links.read(stress, clusters)  # link degradation, stale information
    executions = [LOCAL.create(cluster.policy).execution for cluster in clusters]
    failures = failure_keys.read(stress, clusters, own_failures, base, executions)  # failures, outages
    platform = Platform(tuple(clusters))
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(WORKLOAD_STREAM,)))
    from workloads import perturb

    workload_stress = perturb.read(stress)  # load, bursts, estimates
    notes: list[str] = []
    jobs, direct_link, direct, skipped, extra, inputs = _workload(
        top.table("workload"), platform, rng, base, workload_stress, seed, notes
    )
    stress.done()  # unknown [stress] keys: once, after every reader of [stress] has read its keys
    _check_own_site(meta, jobs, platform, source, notes)
    metrics = _metric_options(top.table("metrics", {}))
    top.done()
    return Scenario(
        name,
        source,
        seed,
        platform,
        meta,
        jobs,
        direct_link,
        direct,
        top.effective,
        skipped,
        extra,
        inputs,
        status_period=status_period,
        failures=failures,
        local_default=local_default,
        own_policy=tuple(own),
        notes=notes,
        metrics=metrics,
    )


def _check_own_site(
    meta: PolicySpec, jobs: list[Job], platform: Platform, source: str, notes: list[str]
) -> None:
    """A meta policy that sends each job to the cluster it names (``own-site``) rejects the jobs that
    name none: when no job names one (synthetic jobs), the scenario is refused, naming ``meta.policy``;
    when some do not, a note counts them (the run would otherwise reject them without a word)."""
    if not jobs or not issubclass(META.lookup(meta.name), OwnSite):
        return
    names = [c.name for c in platform.clusters]
    known = set(names)
    siteless = sum(1 for job in jobs if job.site not in known)
    if not siteless:
        return
    clusters = ", ".join(names[:6]) + (f", ... ({len(names)} clusters)" if len(names) > 6 else "")
    if siteless == len(jobs):
        raise ScenarioError(
            f"{source}: key 'meta.policy' = {str(meta)!r}: no job of the workload names a cluster "
            f"({clusters}) as its site, so {meta.name} would reject all {len(jobs)} of them; expected "
            "jobs with a site (workload.site, a trace's sites) or a meta policy that chooses a cluster "
            "(e.g. least-load)"
        )
    notes.append(
        f"{source}: meta.policy = {str(meta)!r}: {siteless} of {len(jobs)} jobs name no cluster "
        f"({clusters}) as their site and will be rejected"
    )


def _metric_options(t: Table) -> MetricOptions:
    """``[metrics]`` (:class:`~emulator.data.metrics.MetricOptions`): every key a finite number of seconds."""
    default = MetricOptions()
    options = MetricOptions(
        t.number("bsld_threshold", default.bsld_threshold, low=0.0, strict_low=True, finite=True),
        t.number("warmup", default.warmup, low=0.0, finite=True),
        t.number("cooldown", default.cooldown, low=0.0, finite=True),
    )
    t.done()
    return options


def _cluster_tables(top: Table, seed: int, base: Path) -> list[Table]:
    """The ``[[clusters]]`` as written, or as ``[platform]`` builds them (a generator, a trace's machines)."""
    if not top.has("platform"):
        tables = top.tables("clusters", [])
        if not tables:
            raise ScenarioError(f"{top.source}: key 'clusters': expected at least one [[clusters]] table")
        return tables
    if top.has("clusters"):
        raise ScenarioError(f"{top.source}: give either [[clusters]] or [platform], not both")
    from workloads.sources import platform_clusters

    table = top.table("platform")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(PLATFORM_STREAM,)))
    built = platform_clusters(table, base, rng)
    table.done()
    where = f"{top.source} ([platform] source {table.effective['source']!r})"
    return [Table(cluster, where, f"platform cluster {i}") for i, cluster in enumerate(built)]


def _policy(table: Table, registry, default: str | PolicySpec) -> PolicySpec:
    """The ``policy`` and ``params`` of ``table``; a spec ``default`` lends its name and params to
    ``params`` given alone (a cluster's own params on ``[local]``'s policy)."""
    text = table.get("policy", str, default) if table.has("policy") or isinstance(default, str) else None
    params = table.table("params", {})
    try:
        if text is None:  # a cluster's own params for [local]'s policy
            spec = PolicySpec.parse(default.name, {**default.params, **params.data})
        else:
            spec = PolicySpec.parse(text, params.data)
        registry.create(spec)
    except PolicyError as err:
        raise ScenarioError(f"{table.source}: key '{table.key('policy')}': {err}") from None
    table.effective["policy"] = spec.name
    params.effective.clear()
    params.effective.update(registry.defaults(spec.name))
    params.effective.update(spec.params)
    table.done()
    return spec


def _clusters(
    tables: list[Table], default_policy: PolicySpec, failures: list[Table | None] | None = None
) -> tuple[list[Cluster], list[bool]]:
    """The ``[[clusters]]`` (each with its policy spec), and whether each set its own policy (else
    ``default_policy``).

    A cluster that sets neither ``policy`` nor ``params`` runs ``[local]``'s policy,
    and its record in ``scenario.toml`` leaves both out (``[local]`` holds them), so
    a replay's ``--set local.policy`` reaches it. Each cluster's
    ``[clusters.failures]`` table (or None) goes to ``failures``.
    """
    failures = [] if failures is None else failures
    if not tables:
        raise ScenarioError(
            f"{(tables and tables[0].source) or 'scenario'}: at least one [[clusters]] is needed"
        )
    clusters, own, names = [], [], set()
    for t in tables:
        name = t.get(
            "name",
            str,
            f"cluster{len(clusters)}",
            check=lambda v: v not in names and v != "",
            expected="a unique, non-empty name",
        )
        names.add(name)
        latency = t.number("latency", 1.0, low=MIN_LATENCY, finite=True, high=MAX_TIME)
        bandwidth = _bandwidth(t)
        licenses = t.table("licenses", {})
        pool = {lic: licenses.number(lic, low=0, integer=True) for lic in sorted(licenses.data)}
        per_machine = t.get("license_per_machine", bool, False)
        own.append(t.has("policy") or t.has("params"))
        spec = _policy(_PolicyTable(t), LOCAL, default_policy) if own[-1] else default_policy
        machines = []
        for m in t.tables("machines"):
            count = m.number("count", 1, low=1, integer=True, high=MAX_MACHINES)
            cpus = m.number("cpus", low=1, integer=True, high=MAX_CPUS_PER_MACHINE)
            mips = m.number("mips", low=0.0, strict_low=True)
            able = (
                m.get(
                    "licenses",
                    list,
                    None,
                    check=lambda v: all(isinstance(x, str) for x in v),
                    expected="a list of license names",
                )
                if m.has("licenses")
                else None
            )
            m.done()
            machines += [Machine(cpus, mips, None if able is None else frozenset(able)) for _ in range(count)]
        if not machines:
            raise t.fail("machines", [], "at least one [[clusters.machines]] table")
        failures.append(t.table("failures") if t.has("failures") else None)  # read by emulator.core.failures
        t.done()
        clusters.append(Cluster(name, tuple(machines), Link(latency, bandwidth), pool, spec, per_machine))
    return clusters, own


class _PolicyTable(Table):
    """A cluster's ``policy`` / ``params`` keys read as a policy table sharing the cluster's records."""

    def __init__(self, cluster: Table) -> None:
        super().__init__(cluster.data, cluster.source, cluster.path)
        self.effective = cluster.effective

    def done(self) -> None:
        """The cluster table checks its own keys."""


def _bandwidth(t: Table) -> float:
    """``bandwidth`` in bytes/s, or GridSim's ``baud_rate`` in bits/s; absent = no transfer time."""
    if t.has("baud_rate"):
        return t.number("baud_rate", low=0.0, strict_low=True) / 8.0
    return t.number("bandwidth", math.inf, low=0.0, strict_low=True)


def _workload(
    t: Table, platform: Platform, rng: np.random.Generator, base: Path, stress, seed: int, notes: list[str]
):
    """The jobs of ``[workload]``, with the ``[stress]`` workload perturbations (``workloads.perturb``)."""
    from workloads import formats
    from workloads.perturb import apply as perturb
    from workloads.table import from_jobs, model_columns, to_jobs

    source = t.choice("source", _workload_sources())
    fmt = formats.find(source)  # None: the gridlets or a generator
    if fmt and fmt.rules not in (None, TRACE_RULES) and not t.has("rules"):  # a file reads as `run --swf`
        t.data = {**t.data, "rules": TRACE_RULES}  # a copy: the caller's document stays as written
        notes.append(
            f"{t.source}: [{t.path}] names no rules: the trace is read by the archive's (rules = "
            f'"{TRACE_RULES}", as run --swf); rules = "gridsim" reads it as GridSim\'s Workload does'
        )
    site = t.get(
        "site",
        str,
        "",
        check=lambda v: v == "" or v in {c.name for c in platform.clusters},
        expected=f"one of the clusters: {', '.join(c.name for c in platform.clusters)}",
    )
    direct = t.get("direct", bool, True)
    link = t.table("link", {})
    direct_link = Link(0.0, _bandwidth(link)) if link.data else None
    link.done()
    skipped: list[str] = []
    extra = inputs = None
    if source == GRIDLETS:
        jobs = [_gridlet(g) for g in t.tables("gridlets")]
        if site:
            jobs = [j if j.site else j.replace(site=site) for j in jobs]
        if stress.active:  # the same perturbation as every other source's, on the gridlets as a table
            jobs = to_jobs(perturb(from_jobs(jobs), stress, seed))
    else:
        from workloads.sources import workload_table
        from workloads.table import trace_columns

        table, skipped = workload_table(t, source, platform, rng, base, site, seed)
        if site and not (fmt and fmt.names_sites):  # those readers name every job's site themselves
            sites = table.column("site")
            filled = pc.if_else(pc.equal(sites, ""), site, sites)
            table = table.set_column(table.column_names.index("site"), "site", filled)
        table = perturb(table, stress, seed)
        jobs = to_jobs(table)
        names = trace_columns(table)
        extra = table.select(names) if names else None
        inputs = model_columns(table)
    t.done()
    _check_unique(jobs, t)
    _check_times(jobs, t)
    return jobs, direct_link, direct, skipped, extra, inputs


def _workload_sources() -> tuple[str, ...]:
    """Every ``[workload]`` source, listed as errors always listed them: the synthetic generator, SWF,
    the gridlets, then the other trace formats and the papers' generators."""
    from workloads.generators import WORKLOADS
    from workloads.sources import TRACE_SOURCES

    synthetic, *papers = WORKLOADS
    swf, *traces = TRACE_SOURCES
    return (synthetic, swf, GRIDLETS, *traces, *papers)


def _gridlet(g: Table) -> Job:
    """An explicit job; ``length`` (MI) may stand for ``estimate`` with ``bench`` = 1 (GridSim style)."""
    bench = g.number("bench", 1.0, low=0.0, strict_low=True)
    if g.has("length"):
        estimate = g.number("length", low=0.0, strict_low=True) / bench
    else:
        estimate = g.number("estimate", low=0.0, strict_low=True)
    job = Job(
        id=g.number("id", low=0, integer=True),
        submit=g.number("submit", 0.0, low=0.0),
        cpus=g.number("cpus", 1, low=1, integer=True),
        estimate=estimate,
        runtime=g.number("runtime", estimate, low=0.0, strict_low=True),
        bench=bench,
        licenses=tuple(g.get("licenses", list, [])),
        deadline=g.number("deadline", math.inf),
        in_bytes=g.number("in_bytes", 0.0, low=0.0),
        out_bytes=g.number("out_bytes", 0.0, low=0.0),
        user=g.number("user", 0, integer=True),
        user_class=g.choice("user_class", USER_CLASSES, "regular"),
        checkpointable=g.get("checkpointable", bool, False),
        site=g.get("site", str, ""),
        placement=g.choice("placement", PLACEMENTS, "single"),
    )
    g.done()
    return job


def _check_unique(jobs: list[Job], t: Table) -> None:
    seen: set[int] = set()
    for job in jobs:
        if job.id in seen:
            raise ScenarioError(f"{t.source}: workload has two jobs with id {job.id}; ids must be unique")
        seen.add(job.id)


def _check_times(jobs: list[Job], t: Table) -> None:
    """Every job's times within :data:`MAX_TIME`, whatever source made them (a trace line of 1e17 s, a
    generator's huge mean): the run would come out wrong, not fail."""
    for what in ("submit", "estimate", "runtime", "deadline"):
        late = [job for job in jobs if MAX_TIME < getattr(job, what) < math.inf]
        if late:
            more = f" (and {len(late) - 1} more jobs)" if len(late) > 1 else ""
            raise ScenarioError(
                f"{t.source}: [{t.path}]: job {late[0].id} has {what} {getattr(late[0], what):g} s{more}, "
                f"beyond the 2^50 s (~36 million years) virtual time holds to the second; expected at "
                f"most {MAX_TIME:g}"
            )


def build_platform(raw: dict, source: str, base: Path = Path(".")) -> Platform:
    """The platform of a scenario document alone, without reading its workload.

    For readers of a run directory (reports): its ``scenario.toml`` may describe
    the clusters by a ``[platform]`` generator or trace rather than list them,
    and the generators are deterministic under the seed, so this rebuilds them.
    """
    top = Table(raw, source)
    seed = top.number("seed", 1, low=0, integer=True)
    default_spec = _policy(top.table("local", {}), LOCAL, "fcfs")
    clusters, _ = _clusters(_cluster_tables(top, seed, base), default_spec)
    return Platform(tuple(clusters))
