"""Stress tests: machine failures and repairs, cluster outages, jobs killed at their estimate.

The ``[stress]`` keys read here (``docs/stress.md`` has the reference):

- ``kill_at_estimate`` (default false): a job still running at its estimated
  end is killed there (trace ``kill``, info ``"estimate"``; ``jobs.arrow``
  status ``killed``); false: it runs on.
- ``max_kills`` (default 5): a job killed by failures or outages more than
  this many times is lost: rejected with that reason.
- ``[stress.failures]``: every cluster's failure model, which a cluster's own
  ``[clusters.failures]`` table replaces: ``model`` = ``none``,
  ``exponential``, ``weibull`` (``mttf``, ``mttr``, ``shape``: times to failure
  and to repair of each machine, with those means) or ``list`` (explicit
  ``events`` rows, or a CSV ``file`` of them).
- ``[[stress.outages]]``: whole-cluster down windows (``cluster``, ``start``,
  ``end``, ``queued`` = ``wait`` or ``return``).

The draws of a machine come from its own stream,
``SeedSequence(seed, spawn_key=(cluster pid, FAILURE_STREAM, machine))``: a
machine's failures depend on the seed alone, never on the jobs, the policies
or the other machines, so every policy of a sweep point faces the same ones.
"""

from __future__ import annotations

import csv
import itertools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .config import ScenarioError, Table
from .model import Cluster

FAILURE_STREAM = 1
"""Second spawn key of the failure streams: ``(pid, FAILURE_STREAM, machine)`` (partitions use ``(pid,)``)."""

MODEL_KEYS = {
    "none": (),
    "exponential": ("mttf", "mttr"),
    "weibull": ("mttf", "mttr", "shape"),
    "list": ("events", "file"),
}
"""Failure models and their keys."""
MODELS = tuple(MODEL_KEYS)
FAILURE, OUTAGE, ESTIMATE = "failure", "outage", "estimate"
"""The ``info`` of a ``kill`` row: a machine failed, the cluster went down, the job reached its estimate."""
WAIT, RETURN = "wait", "return"
"""What an outage does to the jobs queued at the cluster (and those arriving while it is down)."""
LOST = "lost: "
"""How the reason of a job rejected after too many kills begins (``metrics.jobs_lost`` counts them)."""


def lost_reason(kills: int, max_kills: int) -> str:
    """The reject reason of a job lost to failures.

    >>> lost_reason(6, 5)
    'lost: killed 6 times by failures and outages (max_kills = 5)'
    """
    return f"{LOST}killed {kills} times by failures and outages (max_kills = {max_kills})"


@dataclass(frozen=True)
class FailureModel:
    """One cluster's failure model: drawn times to failure and repair, or a list of failures."""

    model: str = "none"
    mttf: float = math.inf  # mean time to failure of one machine (s)
    mttr: float = math.inf  # mean time to repair (s)
    shape: float = 1.0  # weibull shape
    events: tuple[tuple[int, float, float], ...] = ()  # list: (machine, fail, repair), by machine then time

    @property
    def active(self) -> bool:
        return self.model in ("exponential", "weibull") or bool(self.events)


@dataclass(frozen=True)
class Outage:
    """A whole-cluster down window ``[start, end)``; ``queued``: what its queued jobs do (wait, return)."""

    start: float
    end: float
    queued: str = WAIT


@dataclass(frozen=True)
class ClusterFailures:
    """What perturbs one cluster's machines: its failure model and its outages (time order)."""

    model: FailureModel = FailureModel()
    outages: tuple[Outage, ...] = ()

    @property
    def active(self) -> bool:
        return self.model.active or bool(self.outages)

    @property
    def returns(self) -> bool:
        """Whether some outage sends queued jobs back to the meta-scheduler."""
        return any(o.queued == RETURN for o in self.outages)


@dataclass(frozen=True)
class Failures:
    """The scenario's failure perturbations: per cluster (platform order), and the kill rules."""

    kill_at_estimate: bool = False
    max_kills: int = 5
    clusters: tuple[ClusterFailures, ...] = ()

    def cluster(self, index: int) -> ClusterFailures:
        return self.clusters[index] if index < len(self.clusters) else ClusterFailures()


class FailureProcess:
    """When each machine of one cluster fails and is repaired (absolute times; inf: never again).

    Drawn models give each machine its own generator; ``list`` walks the rows.
    """

    def __init__(self, model: FailureModel, machines: int, seed_seq: np.random.SeedSequence) -> None:
        self.model = model
        self._rows: list[list[tuple[float, float]]] = [[] for _ in range(machines)]
        self._at = [0] * machines  # list: the row of each machine's current or next failure
        self._rngs: list[np.random.Generator] = []
        self._ttf, self._ttr = model.mttf, model.mttr  # exponential: the means; weibull: the scales
        if model.model == "list":
            for m, fail, repair in model.events:
                self._rows[m].append((fail, repair))
        elif model.active:
            base = tuple(seed_seq.spawn_key)
            self._rngs = [
                np.random.default_rng(
                    np.random.SeedSequence(seed_seq.entropy, spawn_key=(*base, FAILURE_STREAM, m))
                )
                for m in range(machines)
            ]
            if model.model == "weibull":  # scale of a Weibull of this shape with the given mean
                self._ttf = model.mttf / math.gamma(1.0 + 1.0 / model.shape)
                self._ttr = model.mttr / math.gamma(1.0 + 1.0 / model.shape)

    def _draw(self, m: int, scale: float) -> float:
        rng = self._rngs[m]
        if self.model.model == "exponential":
            return float(rng.exponential(scale))
        return float(scale * rng.weibull(self.model.shape))

    def first_failure(self, m: int) -> float:
        if self._rngs:
            return self._draw(m, self._ttf)
        rows = self._rows[m]
        return rows[0][0] if rows else math.inf

    def repair_time(self, m: int, now: float) -> float:
        """Machine ``m`` failed at ``now``: when it is repaired."""
        if self._rngs:
            return now + self._draw(m, self._ttr)
        return self._rows[m][self._at[m]][1]

    def next_failure(self, m: int, now: float) -> float:
        """Machine ``m`` was repaired at ``now``: when it fails next."""
        if self._rngs:
            return now + self._draw(m, self._ttf)
        self._at[m] += 1
        rows = self._rows[m]
        return rows[self._at[m]][0] if self._at[m] < len(rows) else math.inf


# --- reading [stress] ------------------------------------------------------------------------------


def read(
    stress: Table,
    clusters: list[Cluster],
    own: list[Table | None],
    base: Path,
    executions: list[type],
) -> Failures | None:
    """The failure keys of ``[stress]`` (and each cluster's ``[clusters.failures]``, in ``own``).

    ``executions``: each cluster's execution model class (its local policy's):
    failures and outages need one that can stop a running job. Reads only its
    own keys of ``stress``. None when nothing is perturbed (the partitions then
    do no extra work at all).
    """
    kill_at_estimate = stress.get("kill_at_estimate", bool, False)
    max_kills = stress.number("max_kills", 5, low=0, integer=True)
    names = [c.name for c in clusters]
    grid = stress.table("failures", {})
    models = _models(grid, clusters, base, None)
    grid.done()
    for i, table in enumerate(own):
        if table is not None:
            models[i] = _models(table, clusters, base, i)[i]
            table.done()
    outages = _outages(stress.tables("outages", []), names)
    per_cluster = tuple(ClusterFailures(models[i], tuple(outages[name])) for i, name in enumerate(names))
    for i, (cluster, perturbed) in enumerate(zip(clusters, per_cluster, strict=True)):
        if perturbed.active and not executions[i].can_preempt():
            where = "outages" if not perturbed.model.active else "failures"
            own_table = own[i] is not None and where == "failures"
            key = f"clusters[{i}].failures" if own_table else f"stress.{where}"
            raise ScenarioError(
                f"{stress.source}: key '{key}': cluster {cluster.name} runs local policy "
                f"'{cluster.policy}', whose execution model ({executions[i].__name__}) cannot stop a "
                "running job, so its machines cannot fail nor the cluster go down; expected a policy "
                "that can (every one but GridSim's parallel package: gridsim-easy, gridsim-conservative)"
            )
    if not kill_at_estimate and not any(c.active for c in per_cluster):
        return None
    return Failures(kill_at_estimate, max_kills, per_cluster)


def _models(t: Table, clusters: list[Cluster], base: Path, only: int | None) -> list[FailureModel]:
    """One model per cluster from a failures table: the grid's (``only`` None) or cluster ``only``'s."""
    n = len(clusters)
    model = t.choose("model", MODEL_KEYS, "none")
    if model == "none":
        return [FailureModel() for _ in range(n)]
    if model in ("exponential", "weibull"):
        mttf = _finite(t, "mttf")
        mttr = _finite(t, "mttr")
        shape = _finite(t, "shape", 0.7) if model == "weibull" else 1.0
        return [FailureModel(model, mttf, mttr, shape) for _ in range(n)]
    rows = _rows(t, clusters, base, only)
    return [
        FailureModel("list", events=tuple(sorted((m, f, r) for c, m, f, r in rows if c == i)))
        for i in range(n)
    ]


def _finite(t: Table, name: str, *default: float) -> float:
    """A finite number > 0 (``default`` if given and the key is absent)."""
    return t.number(name, *default, low=0.0, strict_low=True, finite=True)


def _rows(t: Table, clusters: list[Cluster], base: Path, only: int | None) -> list[tuple]:
    """``(cluster, machine, fail, repair)`` rows of a ``list`` model, checked (machines, times, overlaps)."""
    names = {c.name: i for i, c in enumerate(clusters)}
    fields = "[machine, fail, repair]" if only is not None else "[cluster, machine, fail, repair]"
    if t.has("events") == t.has("file"):
        raise ScenarioError(
            f"{t.source}: [{t.path}] model 'list': expected either 'events' (rows {fields}) or 'file' "
            "(a CSV of them), not both or neither"
        )
    parsed: list[tuple] = []
    if t.has("events"):
        events = t.get("events", list, expected=f"an array of {fields} rows")
        for k, row in enumerate(events):
            where = f"{t.source}: key '{t.key('events')}' row {k}"
            parsed.append(_row(row, where, clusters, names, only, fields))
    else:
        path = Path(t.get("file", str))
        path = path if path.is_absolute() else base / path
        t.effective["file"] = str(path)  # the effective configuration must work from anywhere (replays)
        try:
            with path.open(newline="") as handle:
                for line, row in enumerate(csv.reader(handle), start=1):
                    if not row or not "".join(row).strip() or row[0].lstrip().startswith("#"):
                        continue
                    if line == 1 and not _number(row[-1]):
                        continue  # a header
                    where = f"{t.source}: key '{t.key('file')}': {path}, line {line}"
                    parsed.append(_row([_cell(v) for v in row], where, clusters, names, only, fields))
        except OSError as err:
            raise ScenarioError(f"{t.source}: key '{t.key('file')}': cannot read {path}: {err}") from None
    by_machine: dict[tuple[int, int], list[tuple[float, float]]] = {}
    for c, m, fail, repair in parsed:
        by_machine.setdefault((c, m), []).append((fail, repair))
    for (c, m), spans in by_machine.items():
        spans.sort()
        for (f0, r0), (f1, _) in itertools.pairwise(spans):
            if f1 < r0:
                raise ScenarioError(
                    f"{t.source}: [{t.path}]: machine {m} of cluster {clusters[c].name} fails at {f1:g} "
                    f"while down since {f0:g} (repaired at {r0:g}): failures of a machine must not overlap"
                )
    return parsed


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _cell(text: str):
    text = text.strip()
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _row(row, where: str, clusters, names: dict[str, int], only: int | None, fields: str) -> tuple:
    want = 3 if only is not None else 4
    if not isinstance(row, list | tuple) or len(row) != want:
        raise ScenarioError(f"{where}: {row!r}: expected {fields}")
    if only is None:
        name, *row = row
        if name not in names:
            raise ScenarioError(
                f"{where}: cluster {name!r}: expected one of the clusters: {', '.join(names)}"
            )
        c = names[name]
    else:
        c = only
    m, fail, repair = row
    machines = len(clusters[c].machines)
    if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m < machines:
        raise ScenarioError(
            f"{where}: machine {m!r}: expected a machine index of cluster {clusters[c].name}, "
            f"0 to {machines - 1}"
        )
    ok = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (fail, repair))
    if not ok or not (0 <= fail < repair < math.inf):
        raise ScenarioError(
            f"{where}: fail {fail!r}, repair {repair!r}: expected times with 0 <= fail < repair (finite)"
        )
    return c, m, float(fail), float(repair)


def _outages(tables: list[Table], names: list[str]) -> dict[str, list[Outage]]:
    found: dict[str, list[tuple[Outage, Table]]] = {name: [] for name in names}
    for t in tables:
        name = t.get(
            "cluster", str, check=lambda v: v in names, expected=f"one of the clusters: {', '.join(names)}"
        )
        start = t.number("start", low=0.0)
        end = t.get(
            "end",
            float,
            check=lambda v, s=start: s < v < math.inf,
            expected=f"a finite number > start ({start:g})",
        )
        queued = t.choice("queued", (WAIT, RETURN), WAIT)
        t.done()
        found[name].append((Outage(start, end, queued), t))
    out: dict[str, list[Outage]] = {}
    for name, items in found.items():
        items.sort(key=lambda item: item[0].start)
        for (a, ta), (b, tb) in itertools.pairwise(items):
            if b.start < a.end:
                raise ScenarioError(
                    f"{tb.source}: {tb.path} (cluster {name!r}, from {b.start:g}) overlaps {ta.path} "
                    f"(until {a.end:g}): outages of a cluster must not overlap"
                )
        out[name] = [o for o, _ in items]
    return out
