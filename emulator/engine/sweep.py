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

A sweep directory records its own definition (:class:`Definition`, in
``sweep.json``), so ``--resume`` needs no repeat of it and refuses to mix in
another sweep's points: the definition it is given, and each finished point's
``scenario.toml``, must be what the sweep asks for (:func:`differs`,
:func:`point_differs`). While a sweep writes its directory it holds it as a run
holds its own (:func:`claim`: a ``.running`` marker, locked): a live sweep is
never resumed or replaced, a finished or stranded one may be.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
import re
import sys
import tempfile
import tomllib
import traceback
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pyarrow as pa
import tomli_w

from ..core.config import ScenarioError
from ..data import rundir

if TYPE_CHECKING:
    from ..data.scenario import Scenario

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


def run_point(scenario: str | Scenario, point: Point, scratch: Path | None = None) -> PointResult:
    """Run one point in this process (a pool worker or a Ray task); never raises. ``scenario``: a name
    or path, loaded here with the point's overrides, or the point's scenario loaded already (a Ray
    task on a node that cannot read the driver's files: :mod:`actors.sweep`). ``scratch``: the folder
    its run directory goes in, which the caller removes (a process killed mid-point cannot); else a
    temporary one, removed here."""
    from ..data.scenario import load
    from . import runner

    try:
        seed, sets = point.overrides()
        loaded = load(scenario, sets, seed=seed) if isinstance(scenario, str) else scenario
        with scratch_folder(scratch) as tmp:
            result = runner.run(loaded, Path(tmp) / "run")
            files = {name: (result.out_dir / name).read_bytes() for name in RUN_FILES}
        return PointResult(point, _metrics(result.summary), files)
    except Exception as err:  # a failed point must not lose the others
        return PointResult(point, error=failure(err))


def scratch_folder(folder: Path | None = None, parent: Path | None = None) -> AbstractContextManager:
    """``folder`` as it is, or a new temporary folder (in ``parent``, else the system's) removed on exit:
    where a point's run goes."""
    if folder is not None:
        return nullcontext(folder)
    return tempfile.TemporaryDirectory(prefix=SCRATCH_PREFIX, dir=parent)


SCRATCH_PREFIX = "gridemu-point-"
"""The name a point's temporary folder starts with."""


OWN_CODE = tuple(
    str(Path(__file__).resolve().parents[2] / name) for name in ("emulator", "actors", "workloads")
)
"""Where gridemu's own code lives: frames there are not where a user's error is."""


def failure(err: Exception) -> str:
    """A failed point's error in one line: its type and message, and where it was raised, in the
    user's own code (a plug-in policy's file and line) when it went through it, else the innermost
    frame. A scenario error names its key already."""
    text = f"{type(err).__name__}: {err}".strip()
    frames = traceback.extract_tb(err.__traceback__)
    if isinstance(err, ScenarioError) or not frames:
        return text
    outside = [f for f in frames if not _ours(f.filename)]
    where = (outside or frames)[-1]
    return f"{text} (at {where.filename}, line {where.lineno}, in {where.name})"


def _ours(filename: str) -> bool:
    """Whether ``filename`` is gridemu's own code, the standard library or an installed package."""
    path = str(Path(filename).resolve())
    libraries = tuple(str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    return path.startswith(OWN_CODE + libraries)


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


DEFINITION = "sweep.json"
"""The file in which a sweep directory records its :class:`Definition`."""
SWEEP_FILES = (DEFINITION, "sweep.arrow", "sweep.csv", "report.html")
"""A sweep directory's own files beside its point folders (``report.html``: ``gridemu report DIR``)."""
POINT_DIR = re.compile(r"point-\d{3,}")


class SweepDirError(FileExistsError):
    """A sweep directory that cannot be taken: in use by a live sweep, or holding what is not a sweep's."""


class SweepMismatch(ScenarioError):
    """``--resume`` asked for points other than those the sweep directory holds."""


@dataclass(frozen=True)
class Definition:
    """What makes a sweep's points: the scenario (a built-in name or a resolved path), the ``--vary``
    items and the ``--set`` items every point shares (a recipe's already merged in)."""

    scenario: str
    vary: tuple[str, ...]
    set: tuple[str, ...] = ()

    def points(self) -> list[Point]:
        return points(parse_vary(self.vary), self.set)

    def to_json(self) -> str:
        record = {
            "gridemu": "sweep",
            "version": 1,
            **{k: getattr(self, k) for k in ("scenario", "vary", "set")},
        }
        return json.dumps(record, indent=2) + "\n"


def write_definition(out_dir: Path, definition: Definition) -> None:
    """Record the sweep in its directory, atomically (a killed writer leaves at worst a ``.part``)."""
    with rundir.replacing(out_dir / DEFINITION) as part:
        part.write_text(definition.to_json())


def read_definition(out_dir: Path) -> Definition | None:
    """The sweep ``out_dir`` records, or None if it records none (not a sweep, or an older gridemu's)."""
    path = out_dir / DEFINITION
    if not path.is_file():
        return None
    try:
        record = json.loads(path.read_text())
        definition = Definition(record["scenario"], tuple(record["vary"]), tuple(record["set"]))
        parse_vary(definition.vary)
    except (ValueError, KeyError, TypeError, ScenarioError) as err:
        raise ScenarioError(f"{path}: not a sweep's definition ({type(err).__name__}: {err})") from None
    if not isinstance(definition.scenario, str) or not all(
        isinstance(item, str) for item in (*definition.vary, *definition.set)
    ):
        raise ScenarioError(f"{path}: not a sweep's definition (scenario, vary and set must be text)")
    return definition


def differs(recorded: Definition, asked: Definition) -> str:
    """The first difference between two definitions' points, as ``what: recorded X, asked Y``
    (empty if they make the same points: ``seed=1..3`` is ``seed=1,2,3``)."""
    if recorded.scenario != asked.scenario:
        return f"scenario: recorded {recorded.scenario}, asked {asked.scenario}"
    old, new = dict(parse_vary(recorded.vary)), dict(parse_vary(asked.vary))
    for key in [*old, *(k for k in new if k not in old)]:
        if _typed(old.get(key)) != _typed(new.get(key)):
            return f"--vary {key}: recorded {_values(old.get(key))}, asked {_values(new.get(key))}"
    if list(old) != list(new):  # the order of the keys numbers the points
        return f"the order of the --vary keys: recorded {', '.join(old)}, asked {', '.join(new)}"
    old_sets, new_sets = _sets(recorded.set), _sets(asked.set)
    for key in [*old_sets, *(k for k in new_sets if k not in old_sets)]:
        if _typed(old_sets.get(key)) != _typed(new_sets.get(key)):
            said = [_value(s[key]) if key in s else "(not set)" for s in (old_sets, new_sets)]
            return f"--set {key}: recorded {said[0]}, asked {said[1]}"
    return ""


def effective(config: dict) -> dict:
    """A loaded scenario's effective configuration as its run's ``scenario.toml`` reads back."""
    return tomllib.loads(tomli_w.dumps(config))


def point_differs(out_dir: Path, point: Point, config: dict) -> str:
    """How the point ``out_dir`` finished under ``point``'s name differs from ``point`` (whose
    :func:`effective` configuration is ``config``): ``KEY = X, asked KEY = Y`` for the first
    key of its ``scenario.toml`` that differs; empty if none does."""
    path = out_dir / point.name / "scenario.toml"
    try:
        ran = dict(_flat(tomllib.loads(path.read_text())))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        return f"its scenario.toml cannot be read ({type(err).__name__}: {err})"
    asked = dict(_flat(config))
    for key in [*asked, *(k for k in ran if k not in asked)]:
        if _typed(ran.get(key, _ABSENT)) != _typed(asked.get(key, _ABSENT)):
            return f"{key} = {_value(ran.get(key, _ABSENT))}, asked {key} = {_value(asked.get(key, _ABSENT))}"
    return ""


_ABSENT = object()


def _flat(value: object, prefix: str = "") -> Iterator[tuple[str, object]]:
    """``{"a": {"b": 1}, "c": [{"d": 2}]}`` -> ``("a.b", 1), ("c.0.d", 2)``: the keys ``--set`` takes."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _flat(item, f"{prefix}{key}.")
    elif isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        for i, item in enumerate(value):
            yield from _flat(item, f"{prefix}{i}.")
    else:
        yield prefix[:-1], value


def _sets(items: Iterable[str]) -> dict[str, object]:
    """``--set`` items by key (the last of a key wins, as in :func:`emulator.data.scenario.load`)."""
    found = {}
    for item in items:
        key, _, text = item.partition("=")
        found[key.strip()] = _parse(text.strip())
    return found


def _typed(value: object) -> str:
    """A value compared with its type: ``1``, ``1.0`` and ``true`` differ."""
    return repr(value)


def _value(value: object) -> str:
    return "(absent)" if value is _ABSENT else _toml(value)


def _values(values: list | None) -> str:
    return (
        "(not varied)"
        if values is None
        else ",".join(_toml(v) if not isinstance(v, str) else v for v in values)
    )


def claim(out_dir: Path, resume: bool = False, overwrite: bool = False) -> rundir.Claim:
    """Hold ``out_dir`` for a sweep while it writes there: its ``.running`` marker locked, as a run
    holds its directory (:mod:`emulator.data.rundir`; forked point workers do not hold it, and the
    lock goes with the sweep however it ends).

    A live sweep's directory is refused; a non-empty one is taken only to ``resume`` it, or
    (``overwrite``) once its sweep's files are cleared (:func:`clear`, which refuses anything else).
    Returns the claim: :meth:`~rundir.Claim.finish` it when the sweep is done, :func:`let_go` it if
    the sweep was refused before it ran anything, :meth:`~rundir.Claim.release` it if it was stopped
    (a stranded sweep, to ``--resume``)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    if rundir.is_live(out_dir):
        raise SweepDirError(f"{out_dir}: {live(out_dir)}")
    present = [p for p in out_dir.iterdir() if p.name != rundir.MARKER]
    if present and not resume and not overwrite:
        raise SweepDirError(
            f"{out_dir}: {describe(out_dir)}; pick another --out, --resume it, "
            "or pass --overwrite to replace it"
        )
    if overwrite:
        refuse_foreign(out_dir)  # before taking anything
    try:
        held = rundir.adopt(out_dir)
    except rundir.RunDirError:  # another sweep took it since we looked
        raise SweepDirError(f"{out_dir}: {live(out_dir)}") from None
    if overwrite:
        try:
            clear(out_dir)
        except BaseException:
            let_go(held)
            raise
    return held


def let_go(held: rundir.Claim) -> None:
    """Give up a claim before the sweep ran anything: the directory is left as it was found (a marker
    made by the claim is removed, a stranded sweep's stays)."""
    if held.created:
        held.finish()
    else:
        held.release()


def live(out_dir: Path) -> str:
    """The words for a directory a running sweep holds (its process, as its marker says)."""
    try:
        pid = (out_dir / rundir.MARKER).read_text().strip()
    except OSError:
        pid = ""
    which = f" (process {pid})" if pid.isdigit() else ""
    return f"a sweep is running in it{which}; wait for it to end, or stop it first"


def describe(out_dir: Path) -> str:
    """What a non-empty directory holds, in a few words: a sweep (how far it got) or something else."""
    names = {p.name for p in out_dir.iterdir()}
    folders = [n for n in names if POINT_DIR.fullmatch(n)]
    if not folders and not names & set(SWEEP_FILES):
        return "not empty, and not a sweep's directory"
    done = sum((out_dir / n / "summary.json").is_file() for n in folders)
    try:
        recorded = read_definition(out_dir)
        total = f" of {len(recorded.points())}" if recorded else ""
    except ScenarioError:
        total = ""
    return f"holds a sweep ({done}{total} points finished)"


def foreign(out_dir: Path) -> list[str]:
    """What in ``out_dir`` is not a sweep's own: its files (:data:`SWEEP_FILES`, their ``.part``, its
    marker), and point folders holding a run's files (:mod:`emulator.data.rundir`'s names) alone."""
    ours = {*SWEEP_FILES, *(f"{n}.part" for n in SWEEP_FILES), rundir.MARKER}
    kept = (*rundir.RUN_FILES, *rundir.COPIES)
    runs = {*kept, *(f"{n}.part" for n in kept), rundir.MARKER}
    runs |= {rundir.recovered_name(n) for n in rundir.RUN_FILES if n.endswith(".arrow")}
    found = []
    for entry in sorted(out_dir.iterdir()):
        if POINT_DIR.fullmatch(entry.name) and entry.is_dir() and not entry.is_symlink():
            found += [
                f"{entry.name}/{p.name}" for p in sorted(entry.iterdir()) if p.name not in runs or p.is_dir()
            ]
        elif entry.name not in ours or entry.is_dir():
            found.append(entry.name)
    return found


def refuse_foreign(out_dir: Path) -> None:
    others = foreign(out_dir)
    if others:
        raise SweepDirError(
            f"{out_dir}: --overwrite replaces only a sweep's files, and it holds others too: "
            + ", ".join(others[:5])
            + (f" (and {len(others) - 5} more)" if len(others) > 5 else "")
        )


def clear(out_dir: Path) -> None:
    """Remove a sweep's files and point folders from ``out_dir`` (held: its marker stays); refuse,
    removing nothing, if it holds anything else. A point folder is cleared as a run's directory
    (:func:`rundir.claim` with ``overwrite``, which never touches a live run's)."""
    refuse_foreign(out_dir)
    for entry in sorted(out_dir.iterdir()):
        if entry.name == rundir.MARKER:
            continue
        if entry.is_dir():
            rundir.claim(entry, overwrite=True).finish()
            entry.rmdir()
        else:
            entry.unlink()


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
