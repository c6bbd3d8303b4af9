"""A run directory read for plotting: its summary, its two Arrow tables, its clusters' shapes.

Figures are pure functions of this object, so the report, the notebook API and the
tests all draw from the same data. Tables are memory-mapped: a report of a large
run reads only the columns its figures use.
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.config import ScenarioError
from ..core.model import USER_CLASSES
from ..data.metrics import MetricOptions, numbers, rows_of
from ..data.scenario import build_platform

RUN_FILES = ("summary.json", "jobs.arrow", "events.arrow", "scenario.toml")
"""What a run directory must hold for a report."""


@dataclass(frozen=True)
class ClusterShape:
    """What the plots need of a cluster: its name, each machine's CPUs, its license copies.

    ``license_per_machine``: copies are counted once per machine (CS 2.0), as the LU metric does.
    """

    name: str
    machine_cpus: np.ndarray
    license_copies: int
    license_per_machine: bool = False

    @property
    def cpus(self) -> int:
        return int(self.machine_cpus.sum())

    @property
    def first_row(self) -> np.ndarray:
        """Gantt row of each machine's CPU 0: machines stacked in order, one row per CPU."""
        return np.concatenate(([0], np.cumsum(self.machine_cpus)[:-1])).astype(np.int64)


@dataclass(frozen=True)
class RunData:
    """One run, as the figures see it (see :func:`load_run`)."""

    path: Path
    summary: dict
    jobs: pa.Table
    events: pa.Table
    clusters: tuple[ClusterShape, ...]
    options: MetricOptions = field(default_factory=MetricOptions)
    """The run's ``[metrics]``: the warm-up and cool-down its metrics leave out, the slowdown's floor."""

    @property
    def name(self) -> str:
        run = self.summary.get("run", {})
        return f"{run.get('scenario', self.path.name)} (seed {run.get('seed', '?')})"

    @property
    def start(self) -> float:
        """The run's first event time: time axes count from it."""
        time = numbers(self.events, "time")
        return float(time.min()) if len(time) else 0.0

    def cluster_index(self, cluster: int | str) -> int:
        """A cluster's index from its index or name; a clear error for an unknown one."""
        names = [c.name for c in self.clusters]
        if isinstance(cluster, int) and 0 <= cluster < len(names):
            return cluster
        if cluster in names:
            return names.index(cluster)
        raise KeyError(f"no cluster {cluster!r} in {self.path} (clusters: {', '.join(names)})")


def read_arrow(path: Path) -> pa.Table:
    """An Arrow IPC file, memory-mapped (columns are read when used)."""
    return pa.ipc.open_file(pa.memory_map(str(path))).read_all()


def is_run_dir(path: Path) -> bool:
    return all((Path(path) / name).is_file() for name in RUN_FILES)


def load_run(path: Path | str) -> RunData:
    """Read a run directory written by ``gridemu run`` (or a sweep's ``point-NNN``)."""
    path = Path(path)
    missing = [name for name in RUN_FILES if not (path / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{path}: not a run directory (missing {', '.join(missing)})")
    config = tomllib.loads((path / "scenario.toml").read_text())
    return RunData(
        path,
        json.loads((path / "summary.json").read_text()),
        read_arrow(path / "jobs.arrow"),
        read_arrow(path / "events.arrow"),
        _shapes(config, path),
        _options(config.get("metrics", {})),
    )


def _options(table: dict) -> MetricOptions:
    """The ``[metrics]`` of a run's effective ``scenario.toml`` (validated when the run loaded it)."""
    default = MetricOptions()
    return MetricOptions(
        float(table.get("bsld_threshold", default.bsld_threshold)),
        float(table.get("warmup", default.warmup)),
        float(table.get("cooldown", default.cooldown)),
    )


def _shapes(config: dict, path: Path) -> tuple[ClusterShape, ...]:
    """The clusters of a run's effective ``scenario.toml``: listed, or rebuilt from its ``[platform]``.

    A ``[platform]`` that reads a trace needs that file; without it the run
    has no cluster shapes (plots that need them are left out), not an error.
    """
    try:
        platform = build_platform(config, str(path / "scenario.toml"), path)
    except (ScenarioError, OSError):
        return ()
    return tuple(
        ClusterShape(
            c.name,
            np.array([m.cpus for m in c.machines], dtype=np.int64),
            int(sum(c.licenses.values())),
            c.license_per_machine,
        )
        for c in platform.clusters
    )


JOB_STATES = ("late", "on time", "no deadline", "rejected")
"""How a job ended, for colours and counts: deadline missed or met, no deadline, never run."""


def job_states(jobs: pa.Table) -> np.ndarray:
    """Index into :data:`JOB_STATES` per job row (the late-jobs metric's definition)."""
    finish, deadline = numbers(jobs, "finish"), numbers(jobs, "deadline")
    has_deadline = np.isfinite(deadline)
    state = np.where(has_deadline, np.where(finish > deadline, 0, 1), 2)
    return np.where(np.isnan(finish), 3, state)


WAITS = (
    (60.0, "wait < 1 min"),
    (3_600.0, "wait 1 min – 1 h"),
    (86_400.0, "wait 1 h – 1 d"),
    (math.inf, "wait ≥ 1 d"),
)
"""Wait classes of ``color_by="wait"``: each job's wait for its first start, below each bound."""

WAIT_COLOURS = dict(
    zip((label for _, label in WAITS), ("#FDE725", "#35B779", "#31688E", "#440154"), strict=True)
)
"""Viridis, light to dark: the longer the wait, the darker (readable in grey and by colour-blind readers)."""


def has_deadlines(jobs: pa.Table) -> bool:
    """Whether some job has a deadline (else "late" means nothing: no colour, figure or column for it)."""
    return bool(np.isfinite(numbers(jobs, "deadline")).any())


def categories(jobs: pa.Table, color_by: str) -> tuple[np.ndarray, list[str]]:
    """Category index per job row and the categories' labels, for ``color_by`` in class/late/wait/auto.

    ``auto`` colours by user class when the workload has more than one, else by deadline
    outcome when some job has a deadline, else by wait (:data:`WAITS`): a colour that says
    nothing (every job "regular", every job "no deadline") is never chosen. Classes keep the
    model's order (regular, silver, gold), others follow sorted, so colours stay the same from
    run to run.
    """
    classes = pc.fill_null(jobs.column("user_class"), "")
    labels = sorted(pc.unique(classes).to_pylist(), key=lambda c: (_rank(c), c))
    if color_by == "auto":
        color_by = "class" if len(labels) > 1 else "late" if has_deadlines(jobs) else "wait"
    if color_by == "late":
        return job_states(jobs), list(JOB_STATES)
    if color_by == "wait":
        wait = numbers(jobs, "start") - numbers(jobs, "submit")
        bounds = np.array([bound for bound, _ in WAITS[:-1]])
        return np.searchsorted(bounds, np.nan_to_num(wait), side="right"), [label for _, label in WAITS]
    if color_by == "class":
        codes = pc.index_in(classes, pa.array(labels, pa.string()))
        return np.asarray(codes.to_numpy(), dtype=np.int64), labels
    raise ValueError(f"color_by: expected 'auto', 'class', 'late' or 'wait', not {color_by!r}")


def _rank(user_class: str) -> int:
    return USER_CLASSES.index(user_class) if user_class in USER_CLASSES else len(USER_CLASSES)


def job_rows(jobs: pa.Table, ids: np.ndarray) -> np.ndarray:
    """Row of each job id in the jobs table (ids in events are the jobs' ids)."""
    return rows_of(numbers(jobs, "id", pa.int64()), ids)


def cluster_names(jobs: pa.Table) -> np.ndarray:
    """Each job's cluster name as an object array (None where it never reached one)."""
    return np.asarray(jobs.column("cluster").to_numpy(zero_copy_only=False), dtype=object)
