"""The Standard Workload Format (SWF) reader.

SWF (Parallel Workloads Archive): one job per line, 18 whitespace-separated
numeric fields, -1 for unknown, ``;`` starts a comment; the comment lines
before the first job form a ``Key: value`` header (MaxProcs, MaxNodes,
UnixStartTime, Queue, Partition...).

Two rule sets turn a line's fields into a job; one reader serves both, on
whole columns at a time (:mod:`workloads.columns`):

- ``rules="gridsim"`` does exactly what GridSim 5.2's ``gridsim.util.Workload``
  does (docs: GRIDSIM.md section 2), so that runs can be compared with
  GridSim's output row for row.
- ``rules="pwa"`` reads the fields as the Parallel Workloads Archive defines
  them: run time = field 4, estimate = requested time (field 9; the run time
  when unknown), processors = allocated (field 5; requested, field 8, when
  unknown or 0), submit = field 2, user = field 12. Times may be fractional.
  Estimates are kept as the trace says, even when shorter than the run time.

Where GridSim drops a line without a word or crashes, and where the archive's
fields leave a job undefined (unknown run time, processors or submit time),
the reader records why in :attr:`SwfTrace.skipped` instead, so that nothing
disappears silently. Every field the model does not use is kept as a trace
column (:data:`workloads.table.SWF_COLUMNS`), so a trace written back
(:func:`workloads.export.write_swf`) keeps every field.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import cached_property, partial
from os import PathLike

import numpy as np
import pyarrow as pa

from emulator.core.model import PLACEMENTS, SPREAD, Job

from . import transform
from .columns import Fields, SkippedLine, TraceError, ints, open_binary, reals, scan
from .header import parse_header, site_column, site_label, site_names, with_header
from .table import SWF_COLUMNS, job_table, to_jobs

__all__ = [
    "RULES",
    "SITES",
    "SkippedLine",
    "SwfTrace",
    "TraceError",
    "parse_header",
    "read_swf",
    "site_label",
    "site_names",
]

FIELDS = 18
# 1-based SWF field numbers and names, for messages.
FIELD_NAMES = {
    1: "job number",
    2: "submit time",
    4: "run time",
    5: "allocated processors",
    8: "requested processors",
    9: "requested time",
}
GRIDSIM_FILE_SIZE = 1500.0  # GridSim Workload's gridlet file size: gridsim.net.Link.DEFAULT_MTU
SITES = ("none", "partition", "queue")
"""Where a job's site (the cluster it must run on) comes from: nowhere, field 16 or field 15."""
_SITE_FIELD = {"partition": (16, "Partition"), "queue": (15, "Queue")}


@dataclass(frozen=True)
class Layout:
    """How a one-job-per-line format lays out its fields (SWF, GWF, Alea's SWF lines).

    Fields 1-11 mean the same in all of them (the rules read those); ``numbers``
    and ``texts`` are the trace columns kept, by field number.
    """

    fields: int  # a line needs at least this many fields
    comment: bytes
    numbers: dict[int, tuple[str, pa.DataType]]
    texts: dict[int, str] = field(default_factory=dict)

    @property
    def width(self) -> int:
        return max([self.fields, *self.texts])


SWF = Layout(FIELDS, b";", SWF_COLUMNS)


@dataclass
class SwfTrace:
    """The jobs of one trace file (a jobs table), its header and the lines that gave no job."""

    table: pa.Table
    header: dict[str, str]
    skipped: list[SkippedLine]
    path: str
    lines: np.ndarray = field(repr=False)
    """The line of each job (row of ``table``): lets later error messages point into the file."""
    selected_out: int = 0
    """Jobs outside the time window, up to where the job limit stopped reading (not listed one by one)."""
    header_lines: list[str] = field(default_factory=list, repr=False)
    """The comment lines before the first job, as they are in the file (stripped of outer blanks)."""

    @cached_property
    def jobs(self) -> list[Job]:
        return to_jobs(self.table)

    @cached_property
    def job_lines(self) -> dict[int, int]:
        return dict(zip(self.table.column("id").to_pylist(), self.lines.tolist(), strict=True))

    def set_site(self, site: str | pa.Array) -> None:
        """Every job's site: one name, or one per job."""
        column = pa.repeat(pa.scalar(site), self.table.num_rows) if isinstance(site, str) else site
        self.table = self.table.set_column(self.table.column_names.index("site"), "site", column)
        self.__dict__.pop("jobs", None)


@dataclass(frozen=True, slots=True)
class _Options:
    """What every job of one read shares, whatever the rules."""

    bench: float
    runtime_field: int = 9


@dataclass
class _Rows:
    """One block's jobs by the rules: model columns for every row, and why some rows give no job.

    ``bad``: per row, the first unreadable field the rules read (0: none), with
    what it should have been in ``expected``; ``undefined``: rows the rules
    cannot make a job of, whose reasons ``unknown(fields, rows)`` formats
    (only for those rows: most blocks have none).
    """

    id: np.ndarray
    submit: np.ndarray
    cpus: np.ndarray
    estimate: np.ndarray
    runtime: np.ndarray
    user: np.ndarray
    bad: np.ndarray
    expected: dict[int, str]
    unknown: Callable[[Fields, np.ndarray], list[str]]
    undefined: np.ndarray


MAX_CPUS = 2**31 - 1
"""The most processors a job may ask for (the trace's ``cpus`` column is 32-bit): a line asking more is
skipped with its reason, never wrapped to a negative or tiny count."""
CPUS_EXPECTED = f"an integer <= {MAX_CPUS}"


def _first_bad(checks: list[tuple[int, np.ndarray, np.ndarray]], n: int) -> np.ndarray:
    """Per row, the first field (in the rules' reading order) that is read and unreadable; 0 if none."""
    bad = np.zeros(n, np.int8)
    for number, read, valid in checks:
        bad[(bad == 0) & read & ~valid] = number
    return bad


def _user(fields: Fields) -> np.ndarray:
    """Field 12, 0 when unknown or unreadable: a bad uid must not cost the job (GridSim ignores it)."""
    values, valid = ints(fields.column(12))
    return np.where(valid, np.maximum(values, 0), 0)


# --- gridsim: GridSim 5.2's Workload -----------------------------------------------------------


def _gridsim(fields: Fields, opt: _Options) -> _Rows:
    """GridSim parses field 4 only when field 9 is -1 (or always, ``runtime_field=4``), field 5 only
    when field 8 is -1 or 0: a bad value in a field it does not read does not skip the line."""
    n = len(fields)
    every = np.ones(n, bool)
    (job, v1), (submit, v2) = ints(fields.column(1)), ints(fields.column(2))
    (run, v4), (alloc, v5) = ints(fields.column(4)), ints(fields.column(5))
    (req_procs, v8), (req_time, v9) = ints(fields.column(8)), ints(fields.column(9))
    v5, v8 = v5 & (alloc <= MAX_CPUS), v8 & (req_procs <= MAX_CPUS)  # else a CPU count would wrap
    by_request = (req_procs == -1) | (req_procs == 0)
    if opt.runtime_field == 9:
        checks = [(1, every, v1), (2, every, v2), (9, every, v9), (4, v9 & (req_time == -1), v4)]
        runtime = np.where(req_time == -1, run, req_time)
    else:
        checks = [(1, every, v1), (2, every, v2), (4, every, v4)]
        runtime = run
    checks += [(8, every, v8), (5, v8 & by_request, v5)]
    procs = np.where(by_request, alloc, req_procs)
    # 0: SWF rounds down sub-second runs; < 0: unknown, where GridSim's Gridlet clamps the length to 1 MI.
    runtime = np.where(runtime > 0, runtime, np.where(runtime == 0, 1.0, 1.0 / opt.bench)).astype(float)
    return _Rows(
        id=job,
        submit=np.maximum(submit, 0).astype(float),
        cpus=np.where(procs > 0, procs, 1),
        estimate=runtime,
        runtime=runtime,
        user=_user(fields),
        bad=_first_bad(checks, n),
        expected={**dict.fromkeys((1, 2, 4, 9), "an integer"), 5: CPUS_EXPECTED, 8: CPUS_EXPECTED},
        unknown=lambda f, rows: [""] * len(rows),
        undefined=np.zeros(n, bool),
    )


# --- pwa: the Parallel Workloads Archive's meaning of the fields -------------------------------


def _pwa(fields: Fields, opt: _Options) -> _Rows:
    """Fields 1, 2, 4, 9, 5, then 8 when 5 is not positive: ids and processors integers, times numbers."""
    n = len(fields)
    every = np.ones(n, bool)
    job, v1 = ints(fields.column(1))
    (submit, v2), (run, v4), (req_time, v9) = (reals(fields.column(k)) for k in (2, 4, 9))
    (alloc, v5), (req_procs, v8) = ints(fields.column(5)), ints(fields.column(8))
    v5, v8 = v5 & (alloc <= MAX_CPUS), v8 & (req_procs <= MAX_CPUS)  # else a CPU count would wrap
    checks = [(1, every, v1), (2, every, v2), (4, every, v4), (9, every, v9), (5, every, v5)]
    checks.append((8, v5 & (alloc <= 0), v8))
    procs = np.where(alloc > 0, alloc, req_procs)

    def unknown(f: Fields, rows: np.ndarray) -> list[str]:
        reasons = []
        for i in rows.tolist():
            if submit[i] < 0:
                reasons.append(f"submit time unknown (field 2 is {f.text(i, 2)})")
            elif run[i] < 0:
                reasons.append(f"run time unknown (field 4 is {f.text(i, 4)})")
            else:
                reasons.append(f"processors unknown (field 5 is {f.text(i, 5)}, field 8 is {f.text(i, 8)})")
        return reasons

    return _Rows(
        id=job,
        submit=submit,
        cpus=procs,
        estimate=np.where(req_time >= 0, req_time, run),
        runtime=run,
        user=_user(fields),
        bad=_first_bad(checks, n),
        expected={
            1: "an integer",
            2: "a number",
            4: "a number",
            9: "a number",
            5: CPUS_EXPECTED,
            8: CPUS_EXPECTED,
        },
        unknown=unknown,
        undefined=(submit < 0) | (run < 0) | (procs <= 0),
    )


_RULE_SETS: dict[str, Callable[[Fields, _Options], _Rows]] = {"gridsim": _gridsim, "pwa": _pwa}
RULES = tuple(_RULE_SETS)


def read_swf(
    path: str | PathLike[str],
    *,
    rules: str = "gridsim",
    site: str = "",
    sites: str = "none",
    layout: Layout = SWF,
    **options,
) -> SwfTrace:
    """Read an SWF trace (plain, ``.gz`` or ``.zip``) into a jobs table.

    ``rules``: ``"gridsim"`` or ``"pwa"`` (module docstring). ``site`` is
    copied into every job; ``sites`` = ``"partition"`` or ``"queue"`` names
    each job's site after its field 16 or 15, by the header's
    ``Partition:``/``Queue:`` lines (:func:`site_names`) — grid logs such as
    LCG-2005-1 name their sites so. The other options are :func:`read_trace`'s.
    """
    if sites not in SITES:
        raise ValueError(f"unknown sites {sites!r}; accepted: {', '.join(map(repr, SITES))}")
    if site and sites != "none":
        raise ValueError(f"give either site ({site!r}) or sites ({sites!r}), not both")
    read = partial(_read_swf, path, rules, site, sites, layout, options)
    return shared_read(read, path, layout, site, sites, dict(options, rules=rules))


def shared_read(
    read: Callable[[], SwfTrace], path, layout: Layout, site: str, sites: str, options: dict
) -> SwfTrace:
    """``read()``; within :func:`shared_reads`, the trace an earlier read of the same file with the
    same ``layout``, sites and :func:`read_trace` ``options`` gave (its skipped lines a list of the
    caller's own). The GWF reader shares its reads so too."""
    if _shared is None:
        return read()
    key = _read_key(path, layout, site, sites, options)
    if key not in _shared:
        _shared[key] = read()
    return replace(_shared[key], skipped=list(_shared[key].skipped))


_shared: dict | None = None
"""Traces read within :func:`shared_reads`, by file and options (None: outside it)."""


@contextmanager
def shared_reads() -> Iterator[None]:
    """Within the block, an SWF file read twice with the same options (its file unchanged) is parsed
    once: a scenario whose platform is the trace's sites reads it for the platform, then for the
    jobs (LCG-2005-1: 0.29 s a read). What was read is let go when the outermost block ends."""
    global _shared
    outer = _shared
    _shared = {} if outer is None else outer
    try:
        yield
    finally:
        _shared = outer


def _read_key(path, layout: Layout, site: str, sites: str, options: dict) -> tuple:
    """What makes two reads the same: the file as it is now, and every option, defaults filled in."""
    bound = _READ_TRACE.bind(path, layout, **options)
    bound.apply_defaults()
    stat = os.stat(path)
    chosen = tuple(sorted((k, v) for k, v in bound.arguments.items() if k not in ("path", "layout")))
    return (os.path.realpath(path), stat.st_size, stat.st_mtime_ns, id(layout), site, sites, chosen)


def _read_swf(path, rules: str, site: str, sites: str, layout: Layout, options: dict) -> SwfTrace:
    trace = read_trace(path, layout, rules=rules, **options)
    if site:
        trace.set_site(site)
    elif sites != "none":
        number, key = _SITE_FIELD[sites]
        numbers = trace.table.column(SWF_COLUMNS[number][0]).combine_chunks()
        trace.set_site(site_column(numbers, site_names(trace.header, key), sites))
    trace.table = with_header(trace.table, trace.header, trace.header_lines)
    return trace


def read_trace(
    path: str | PathLike[str],
    layout: Layout,
    *,
    rules: str = "gridsim",
    rating: float = 1.0,
    limit: int | None = None,
    placement: str = SPREAD,
    strict: bool = False,
    runtime_field: int = 9,
    estimate: str = "requested",
    cancelled: str = "keep",
    failed: str = "keep",
    start: float | None = None,
    end: float | None = None,
    interarrival_scale: float = 1.0,
) -> SwfTrace:
    """The reader loop every one-job-per-line format shares: blocks of fields -> rules -> jobs table.

    ``rating``: MIPS of the reference machine; a job's length in MI is its run
    time x ``rating``, as GridSim computes it. ``placement`` is copied into
    every job. ``strict``: an unreadable number in a field the rules read
    raises :class:`TraceError` instead of skipping the line. ``runtime_field``
    (gridsim rules): 9 reads the requested time with field 4 as fallback
    (GridSim's Workload), 4 reads the run time (gridsim.parallel's reader can
    be configured so). ``estimate``: what schedulers see, the ``"requested"``
    time (the rules' reading) or the actual ``"runtime"``. ``cancelled`` /
    ``failed``: ``"keep"`` or ``"drop"`` jobs of status 5 / 0 (dropped ones
    are listed as skipped). The selection (:mod:`workloads.transform`):
    ``start``/``end`` keep jobs submitted in that window, ``limit`` the first
    that many; ``interarrival_scale`` multiplies the gaps between submit times
    (0.5 doubles the load). Job ids must be unique (the emulator keys on
    them): a repeated id raises :class:`TraceError` naming both lines.
    """
    make = _RULE_SETS.get(rules)
    if make is None:
        raise ValueError(f"unknown SWF rules {rules!r}; accepted: {', '.join(map(repr, RULES))}")
    if not rating > 0:
        raise ValueError(f"rating must be > 0 MIPS, got {rating!r}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit!r}")
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; accepted: {', '.join(map(repr, PLACEMENTS))}")
    if runtime_field not in (4, 9):
        raise ValueError(f"runtime_field must be 4 or 9, got {runtime_field!r}")
    transform.check_options(estimate=estimate, cancelled=cancelled, failed=failed, scale=interarrival_scale)
    name = str(path)
    options = _Options(float(rating), runtime_field)
    status_drop = transform.dropped_statuses(cancelled, failed)
    parts: list[dict] = []
    skipped: list[SkippedLine] = []
    kept = 0
    with open_binary(path) as stream:
        trace_scan = scan(stream, fields=layout.fields, width=layout.width, comment=layout.comment)
        for block in trace_scan.blocks if limit != 0 else ():
            part, block_skipped, done = _block(
                block, make(block, options), layout, name, strict, status_drop, (start, end, limit), kept
            )
            parts.append(part)
            skipped += block_skipped
            kept += len(part["lines"])
            if done:
                break
        header = parse_header(trace_scan.header)
    columns = _concatenate(parts, layout)
    _check_unique(columns["id"], columns["lines"], name)
    table = job_table(
        columns["id"],
        transform.scale_interarrival(columns["submit"], interarrival_scale),
        columns["cpus"],
        columns["runtime"] if estimate == "runtime" else columns["estimate"],
        columns["runtime"],
        bench=float(rating),
        in_bytes=GRIDSIM_FILE_SIZE if rules == "gridsim" else 0.0,
        user=columns["user"],
        placement=placement,
        trace=columns["trace"],
    )
    return SwfTrace(table, header, skipped, name, columns["lines"], columns["out"], trace_scan.header)


_READ_TRACE = inspect.signature(read_trace)


def _block(
    fields: Fields,
    rows: _Rows,
    layout: Layout,
    name: str,
    strict: bool,
    status_drop: tuple[int, ...],
    selection: tuple[float | None, float | None, int | None],
    kept_before: int,
) -> tuple[dict, list[SkippedLine], bool]:
    """One block's jobs (columns) and skipped lines; ``done`` once ``limit`` jobs are kept."""
    start, end, limit = selection
    numbers = {
        key: (ints if kind == pa.int64() else reals)(fields.column(n))
        for n, (key, kind) in layout.numbers.items()
    }
    status, status_ok = numbers[SWF_COLUMNS[11][0]]
    job = (rows.bad == 0) & ~rows.undefined
    dropped = np.zeros(len(fields), bool)
    if status_drop:
        dropped = job & status_ok & np.isin(status, status_drop)
        job &= ~dropped
    chosen = job & transform.window_mask(rows.submit, start, end)
    cutoff, done = np.inf, False
    if limit is not None:
        positions = np.flatnonzero(chosen)
        room = limit - kept_before
        if positions.size >= room:
            done = True
            cutoff = fields.lines[positions[room - 1]]
            chosen[positions[room - 1] + 1 :] = False
    before = fields.lines <= cutoff
    bad = np.flatnonzero((rows.bad > 0) & before)
    if strict and bad.size:
        what, expected = _bad_field(fields, rows, int(bad[0]))
        raise TraceError(name, int(fields.lines[bad[0]]), what, expected) from None
    skipped = [
        SkippedLine(int(line), f"{count} fields, expected {layout.fields}")
        for line, count in zip(fields.short_lines, fields.short_counts, strict=True)
        if line <= cutoff
    ]
    for i in bad.tolist():
        what, expected = _bad_field(fields, rows, i)
        skipped.append(SkippedLine(int(fields.lines[i]), f"{what}, not {expected}"))
    undefined = np.flatnonzero((rows.bad == 0) & rows.undefined & before)
    for i, reason in zip(undefined.tolist(), rows.unknown(fields, undefined), strict=True):
        skipped.append(SkippedLine(int(fields.lines[i]), reason))
    for i in np.flatnonzero(dropped & before).tolist():
        skipped.append(SkippedLine(int(fields.lines[i]), transform.status_reason(int(status[i]))))
    skipped.sort(key=lambda s: s.line)
    keep = pa.array(chosen)
    part = {
        "lines": fields.lines[chosen],
        "id": rows.id[chosen],
        "submit": rows.submit[chosen],
        "cpus": rows.cpus[chosen],
        "estimate": rows.estimate[chosen],
        "runtime": rows.runtime[chosen],
        "user": rows.user[chosen],
        "numbers": {key: (values[chosen], valid[chosen]) for key, (values, valid) in numbers.items()},
        "texts": {key: fields.column(n).filter(keep) for n, key in layout.texts.items()},
        "out": int(np.count_nonzero(job & before & ~chosen)),
    }
    return part, skipped, done


def _bad_field(fields: Fields, rows: _Rows, i: int) -> tuple[str, str]:
    number = int(rows.bad[i])
    return f"field {number} ({FIELD_NAMES[number]}) is {fields.text(i, number)!r}", rows.expected[number]


_MODEL = {"lines": np.int64, "id": np.int64, "submit": float, "cpus": np.int64, "estimate": float}
_MODEL |= {"runtime": float, "user": np.int64}


def _concatenate(parts: list[dict], layout: Layout) -> dict:
    """The blocks' columns joined: model columns as numpy arrays, trace columns as Arrow arrays."""
    columns: dict = {
        key: np.concatenate([p[key] for p in parts] or [np.zeros(0, t)]) for key, t in _MODEL.items()
    }
    trace: dict[str, pa.Array] = {}
    for key, kind in layout.numbers.values():
        values = np.concatenate([p["numbers"][key][0] for p in parts] or [np.zeros(0)])
        valid = np.concatenate([p["numbers"][key][1] for p in parts] or [np.zeros(0, bool)])
        trace[key] = pa.array(
            values.astype(kind.to_pandas_dtype()), type=kind, mask=None if valid.all() else ~valid
        )
    for key in layout.texts.values():
        chunks = [c for p in parts for c in p["texts"][key].chunks]
        trace[key] = pa.concat_arrays(chunks) if chunks else pa.array([], pa.string())
    columns["trace"] = trace
    columns["out"] = sum(p["out"] for p in parts)
    return columns


def _check_unique(ids: np.ndarray, lines: np.ndarray, name: str) -> None:
    """Job ids key everything in the emulator: the first repeated one names both its lines."""
    if ids.size < 2:
        return
    order = np.argsort(ids, kind="stable")
    repeated = np.flatnonzero(ids[order][1:] == ids[order][:-1])
    if repeated.size == 0:
        return
    # the repeat that comes first in the file, and the first line holding its id
    later = order[repeated + 1]
    i = int(later[np.argmin(lines[later])])
    first = int(lines[np.flatnonzero(ids == ids[i])[0]])
    raise TraceError(
        name, int(lines[i]), f"job number {int(ids[i])} already used at line {first}", "unique job numbers"
    )
