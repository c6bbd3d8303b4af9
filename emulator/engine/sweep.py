"""Sweeps: the cross product of scenario variations, run as independent emulations.

``--vary key=a,b,c``, ``--vary key=1..20`` (integers, inclusive) or ``--vary
key=0.5..2.0:0.25`` (first, last, step; the last value is kept when the steps
land on it to within a millionth of a step) name the values of one key (``seed``
or any scenario key ``--set`` accepts); points are the cross product in a fixed
order. Commas inside brackets or quotes do not split values, so
``local.policy=cs2[sort=counting,period=10],easy`` is two policies. Each point runs in-process wherever the
executor puts it (a process of a pool, or a Ray task) and hands back its run
directory's files as bytes: only the driver writes, so workers need no shared
disk. A failed point is recorded with its error; the others go on.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
import tempfile
import tomllib
import traceback
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from ..core.config import ScenarioError

METRICS = (
    "mean_wait",
    "mean_bounded_slowdown",
    "late_percent",
    "system_usage",
    "utilization",
    "makespan",
    "throughput",
    "mcp",
    "pb",
    "jobs_killed",
    "jobs_lost",
)
"""Grid-level metrics a sweep table compares (the stress tests' degradation curves among them)."""

FAILURE_METRICS = ("jobs_killed", "jobs_lost")
"""Of :data:`METRICS`, those a report plots only when some point has one (a sweep with failures)."""

RUN_FILES = ("events.arrow", "jobs.arrow", "scenario.toml", "summary.json")


@dataclass(frozen=True)
class Point:
    index: int
    values: dict[str, object]
    fixed: tuple[str, ...] = ()  # --set overrides every point shares

    @property
    def name(self) -> str:
        return f"point-{self.index:03d}"

    def overrides(self) -> tuple[int | None, list[str]]:
        """``(seed, --set overrides)`` for :func:`emulator.data.scenario.load`."""
        seed = self.values.get("seed")
        sets = [*self.fixed, *(f"{k}={_toml(v)}" for k, v in self.values.items() if k != "seed")]
        return (None if seed is None else int(seed)), sets


@dataclass
class PointResult:
    point: Point
    metrics: dict[str, object] = field(default_factory=dict)
    files: dict[str, bytes] = field(default_factory=dict)
    error: str = ""


def parse_vary(items: Iterable[str]) -> list[tuple[str, list[object]]]:
    """``["meta.policy=a,b", "seed=1..3"]`` -> ``[("meta.policy", ["a", "b"]), ("seed", [1, 2, 3])]``.

    >>> parse_vary(["local.policy=cs2[sort=counting,period=10],easy", "load=0.5..1.0:0.25"])
    [('local.policy', ['cs2[sort=counting,period=10]', 'easy']), ('load', [0.5, 0.75, 1.0])]
    """
    varies = []
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key or not text.strip():
            raise ScenarioError(f"--vary {item!r}: expected key=v1,v2,... or key=first..last[:step]")
        parts = split_values(text, f"--vary {item!r}")
        if len(parts) == 1 and RANGE.match(parts[0]):
            values = _range(parts[0], item)
        elif len(parts) == 1 and ".." in parts[0] and parts[0][0] not in "\"'[{":
            raise ScenarioError(f"--vary {item!r}: {RANGE_FORM}")
        else:
            values = [_parse(v) for v in parts]
        if key in (k for k, _ in varies):
            raise ScenarioError(f"--vary {item!r}: key {key!r} is varied twice")
        varies.append((key, values))
    return varies


_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
RANGE = re.compile(rf"^({_NUMBER})\.\.({_NUMBER})(?::({_NUMBER}))?$")
"""``first..last`` or ``first..last:step``."""
RANGE_FORM = (
    "a range is first..last (integers, e.g. seed=1..20) or first..last:step (e.g. 0.5..2.0:0.25); "
    "a value holding '..' goes in quotes"
)
RANGE_TOLERANCE = 1e-6
"""A range keeps its last value when the steps reach it to within this fraction of a step."""
MAX_RANGE = 100_000
"""The most values one range may give (a typo's step, not a sweep to run)."""


def split_values(text: str, what: str) -> list[str]:
    """``text`` split at the commas outside brackets and quotes, each part stripped.

    >>> split_values('cs2[sort=counting,period=10], "a,b", [1, 2]', "--vary")
    ['cs2[sort=counting,period=10]', '"a,b"', '[1, 2]']
    """
    parts, depth, quote, start = [], 0, "", 0
    for i, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth < 0:
                raise ScenarioError(f"{what}: {char!r} at character {i + 1} closes nothing")
        elif char == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    if quote or depth:
        raise ScenarioError(f"{what}: unclosed {quote or 'bracket'} in {text!r}")
    parts.append(text[start:])
    stripped = [part.strip() for part in parts]
    if "" in stripped:
        raise ScenarioError(f"{what}: an empty value (two commas, or one at an end)")
    return stripped


def _range(text: str, item: str) -> list[object]:
    """The values of ``first..last[:step]``: integers when all three are, else floats."""
    first, last, step = RANGE.match(text).groups()
    numbers = [_parse(n) for n in (first, last, step or "1")]
    if step is None and not all(isinstance(n, int) for n in numbers):
        raise ScenarioError(f"--vary {item!r}: a range of non-integers needs a step, e.g. 0.5..2.0:0.25")
    lo, hi, by = numbers
    if by <= 0:
        raise ScenarioError(f"--vary {item!r}: the step must be > 0")
    if hi < lo:
        raise ScenarioError(f"--vary {item!r}: empty range ({last} < {first})")
    count = math.floor((hi - lo) / by + RANGE_TOLERANCE) + 1
    if count > MAX_RANGE:
        raise ScenarioError(f"--vary {item!r}: {count:,} values; at most {MAX_RANGE:,} in a range")
    if all(isinstance(n, int) for n in numbers):
        return [lo + i * by for i in range(count)]
    # 0.1 * 3 is 0.30000000000000004: twelve significant digits print back what was meant
    return [float(f"{lo + i * by:.12g}") for i in range(count)]


def points(varies: list[tuple[str, list[object]]], fixed: Iterable[str] = ()) -> list[Point]:
    """The cross product of the varied values, in order (the last key varies fastest)."""
    keys = [k for k, _ in varies]
    combos = itertools.product(*(values for _, values in varies))
    return [Point(i, dict(zip(keys, combo, strict=True)), tuple(fixed)) for i, combo in enumerate(combos)]


def run_point(scenario: str, point: Point) -> PointResult:
    """Run one point in this process (a pool worker or a Ray task); never raises."""
    from ..data.scenario import load
    from . import runner

    try:
        seed, sets = point.overrides()
        loaded = load(scenario, sets, seed=seed)
        with tempfile.TemporaryDirectory(prefix="gridemu-point-") as tmp:
            result = runner.run(loaded, Path(tmp) / "run")
            files = {name: (result.out_dir / name).read_bytes() for name in RUN_FILES}
        return PointResult(point, _metrics(result.summary), files)
    except Exception as err:  # a failed point must not lose the others
        detail = err if isinstance(err, ScenarioError) else traceback.format_exc(limit=3)
        return PointResult(point, error=f"{type(err).__name__}: {detail}".strip())


def _metrics(summary: dict) -> dict[str, object]:
    grid = summary["grid"]
    metrics = {m: grid.get(m) for m in METRICS}
    metrics.update(
        jobs_finished=summary["jobs"]["finished"],
        jobs_rejected=summary["jobs"]["rejected"],
        wall_seconds=summary["run"]["wall_seconds"],
    )
    return metrics


def finished(out_dir: Path, point: Point) -> PointResult | None:
    """The result of a point an earlier run of this sweep finished (``--resume``), from its folder."""
    summary = out_dir / point.name / "summary.json"
    if not summary.is_file():
        return None
    return PointResult(point, _metrics(json.loads(summary.read_text())))


NOT_RUN = "NotRun: the sweep stopped before this point ran (`--resume` runs it)"


def status(result: PointResult) -> str:
    """``ok``, ``failed``, ``timeout`` or ``not run``: the sweep table's status column."""
    if not result.error:
        return "ok"
    return {"Timeout": "timeout", "NotRun": "not run"}.get(result.error.partition(":")[0], "failed")


Executor = Callable[[str, list[Point]], Iterator[PointResult]]
"""Runs the points (in any order, in parallel) and yields each result as it completes
(:func:`emulator.engine.sweep_pool.process_pool`, :func:`actors.ray_tasks`)."""


def write_point(out_dir: Path, result: PointResult) -> None:
    """The point's run directory, written by the driver (``.part`` then renamed, as every run file)."""
    if result.error:
        return
    folder = out_dir / result.point.name
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in result.files.items():
        part = folder / f"{name}.part"
        part.write_bytes(data)
        part.replace(folder / name)


def table(results: list[PointResult], keys: list[str]) -> pa.Table:
    """One row per point: index, the varied values, status, error, metrics."""
    results = sorted(results, key=lambda r: r.point.index)
    columns: dict[str, list] = {"point": [r.point.index for r in results]}
    for key in keys:
        columns[key] = [_plain(r.point.values[key]) for r in results]
    columns["status"] = [status(r) for r in results]
    columns["error"] = [r.error or None for r in results]
    for metric in (*METRICS, "jobs_finished", "jobs_rejected", "wall_seconds"):
        columns[metric] = [r.metrics.get(metric) for r in results]
    return pa.table(columns)


def varied_keys(rows: pa.Table) -> list[str]:
    """A sweep table's varied keys: its columns between ``point`` and ``status`` (see :func:`table`)."""
    names = rows.column_names
    return names[names.index("point") + 1 : names.index("status")]


def write_tables(out_dir: Path, rows: pa.Table) -> None:
    with (
        pa.OSFile(str(out_dir / "sweep.arrow.part"), "wb") as sink,
        pa.ipc.new_file(sink, rows.schema) as writer,
    ):
        writer.write_table(rows)
    (out_dir / "sweep.arrow.part").replace(out_dir / "sweep.arrow")
    with (out_dir / "sweep.csv.part").open("w", newline="") as handle:
        out = csv.writer(handle)
        out.writerow(rows.column_names)
        out.writerows(zip(*(rows.column(c).to_pylist() for c in rows.column_names), strict=True))
    (out_dir / "sweep.csv.part").replace(out_dir / "sweep.csv")


def compare(rows: pa.Table, keys: list[str]) -> list[dict[str, object]]:
    """Mean and 95% confidence half-width of each metric over seeds, per combination of the other keys."""
    groups: dict[tuple, list[dict]] = {}
    others = [k for k in keys if k != "seed"]
    for row in rows.to_pylist():
        if row["status"] == "ok":
            groups.setdefault(tuple(row[k] for k in others), []).append(row)
    summary = []
    for combo, members in groups.items():
        entry: dict[str, object] = dict(zip(others, combo, strict=True))
        entry["runs"] = len(members)
        for metric in METRICS:
            values = [m[metric] for m in members if m[metric] is not None]
            entry[metric] = mean_ci(values)
        summary.append(entry)
    return summary


def inert_keys(rows: pa.Table, keys: list[str]) -> list[str]:
    """The varied keys whose values changed no metric: for every combination of the other keys,
    the runs across the key's values gave the same metrics (a typo'd key reaching nothing, seeds
    on a trace that draws nothing from them). Keys never seen with two values are not judged."""
    ok = [row for row in rows.to_pylist() if row["status"] == "ok"]
    metrics = [m for m in METRICS if m in rows.column_names]
    inert = []
    for key in keys:
        others = [k for k in keys if k != key]
        outcomes: dict[tuple, set] = {}
        values: dict[tuple, set] = {}
        for row in ok:
            combo = tuple(repr(row[k]) for k in others)
            outcomes.setdefault(combo, set()).add(tuple(row[m] for m in metrics))
            values.setdefault(combo, set()).add(repr(row[key]))
        judged = [combo for combo, seen in values.items() if len(seen) > 1]
        if judged and all(len(outcomes[combo]) == 1 for combo in judged):
            inert.append(key)
    return inert


def mean_ci(values: list[float]) -> tuple[float, float] | None:
    """Mean and 95% half-width (Student's t); the half-width is 0 for a single value."""
    if not values:
        return None
    n = len(values)
    if min(values) == max(values):  # one value, or runs that agree: no spread (not rounding noise)
        return values[0], 0.0
    mean = sum(values) / n
    var = sum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, _t95(n - 1) * math.sqrt(var / n)


_T95 = (
    12.706,
    4.303,
    3.182,
    2.776,
    2.571,
    2.447,
    2.365,
    2.306,
    2.262,
    2.228,
    2.201,
    2.179,
    2.160,
    2.145,
    2.131,
    2.120,
    2.110,
    2.101,
    2.093,
    2.086,
    2.080,
    2.074,
    2.069,
    2.064,
    2.060,
    2.056,
    2.052,
    2.048,
    2.045,
    2.042,
)


def _t95(df: int) -> float:
    """Two-sided 95% Student t quantile (table up to 30 degrees of freedom, then the normal's 1.96)."""
    return _T95[df - 1] if df <= len(_T95) else 1.96


def _parse(text: str) -> object:
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def _toml(value: object) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _plain(value: object) -> object:
    """Values of one column must share a type: numbers stay numbers, anything else is text."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else str(value)
