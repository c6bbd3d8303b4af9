"""A minimal reader of Standard Workload Format (SWF) traces.

SWF (Parallel Workloads Archive): one job per line, 18 whitespace-separated
numeric fields, -1 for unknown, ``;`` starts a comment; the comment lines
before the first job form a ``Key: value`` header.

Two rule sets turn a line's fields into a job; one reader loop serves both:

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
disappears silently.
"""

from __future__ import annotations

import gzip
import io
import math
import re
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from os import PathLike
from pathlib import Path

from emulator.model import PLACEMENTS, SPREAD, Job

__all__ = ["RULES", "SkippedLine", "SwfTrace", "TraceError", "read_swf"]

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

# Java's Integer/Long syntax: Python's int() would also take "1_000", which GridSim rejects.
_JAVA_INT = re.compile(r"[+-]?\d+").fullmatch
# A decimal number as SWF writes one (float() would also take "nan", "inf", "0x1p3", "1_0").
_DECIMAL = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?").fullmatch
_HEADER = re.compile(r";\s*([A-Za-z][\w-]*):(?!\S)\s*(.*?)\s*$")  # "Key: value", not "http://..."


class TraceError(ValueError):
    """A trace that cannot be read as asked: says where (file, line), what was wrong, what was expected."""

    def __init__(self, path: str, line: int | None, problem: str, expected: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        self.expected = expected
        where = path if line is None else f"{path}, line {line}"
        super().__init__(f"{where}: {problem}; expected {expected}")


@dataclass(frozen=True)
class SkippedLine:
    """A non-comment line the rules turned into no job, and why."""

    line: int  # 1-based line number in the file
    reason: str


@dataclass
class SwfTrace:
    """The jobs of one trace file, its header and the lines that gave no job."""

    jobs: list[Job]
    header: dict[str, str]
    skipped: list[SkippedLine]
    path: str
    # Line of each job, by job id: lets later error messages point into the file.
    job_lines: dict[int, int] = field(default_factory=dict, repr=False)


@contextmanager
def _open_text(path: Path) -> Iterator[io.TextIOBase]:
    """Plain, ``.gz`` or ``.zip`` as text lines, chosen by content (magic bytes), not by name.

    Decoding errors are replaced: only ASCII digits matter for jobs, and a stray
    byte in a header note must not make a trace unreadable.
    """
    with path.open("rb") as raw:
        magic = raw.read(4)
    if magic[:2] == b"\x1f\x8b":
        with gzip.open(path, "rt", encoding="utf-8", errors="replace") as text:
            yield text
    elif magic == b"PK\x03\x04":
        with zipfile.ZipFile(path) as archive:
            member = _zip_member(archive, str(path))
            with archive.open(member) as binary:
                yield io.TextIOWrapper(binary, encoding="utf-8", errors="replace")
    else:
        with path.open(encoding="utf-8", errors="replace") as text:
            yield text


def _zip_member(archive: zipfile.ZipFile, path: str) -> str:
    """The single member, else the first ``.swf`` one (GridSim would read every member in turn)."""
    names = [info.filename for info in archive.infolist() if not info.is_dir()]
    if len(names) == 1:
        return names[0]
    for name in names:
        if name.lower().endswith(".swf"):
            return name
    raise TraceError(
        path,
        None,
        f"zip archive holds {len(names)} members ({', '.join(names[:5])})",
        "one member or a .swf member",
    )


@dataclass(frozen=True, slots=True)
class _Options:
    """What every job of one read shares, whatever the rules."""

    bench: float
    site: str
    placement: str
    runtime_field: int = 9


@dataclass(frozen=True)
class _RuleSet:
    """How one rule set maps the fields of a line to a Job, or to the reason it gives none (a str).

    ``job`` is the fast path and raises ValueError on any unreadable number;
    ``bad_field`` then names the first field (1-based) the rules read that is
    unreadable and what it should have been, or None when all are fine.
    """

    job: Callable[[list[str], _Options], Job | str]
    bad_field: Callable[[list[str], _Options], tuple[int, str] | None]


def _user(f: list[str]) -> int:
    """Field 12, 0 when unknown or unreadable: a bad uid must not cost the job (GridSim ignores it)."""
    try:
        return max(int(f[11]), 0)
    except ValueError:
        return 0


def _first_bad(
    f: list[str], checks: list[tuple[int, Callable[[str], object], str]]
) -> tuple[int, str] | None:
    return next(((n, expected) for n, valid, expected in checks if not valid(f[n - 1])), None)


# --- gridsim: GridSim 5.2's Workload -----------------------------------------------------------


def _gridsim_values(f: list[str], runtime_field: int = 9) -> tuple[int, int, int, int]:
    """Job number, submit, run time and processors as GridSim reads them (before its clamping).

    GridSim parses field 4 only when field 9 is -1 (unless configured to read the
    run time from field 4: ``runtime_field=4``), and field 5 only when field 8 is
    -1 or 0, so a bad value in a field it does not read does not skip the line.
    """
    job, submit = int(f[0]), int(f[1])
    runtime = int(f[8]) if runtime_field == 9 else -1
    if runtime == -1:
        runtime = int(f[3])
    procs = int(f[7])
    if procs == -1 or procs == 0:
        procs = int(f[4])
    return job, submit, runtime, procs


def _gridsim_job(f: list[str], opt: _Options) -> Job:
    job, submit, runtime, procs = _gridsim_values(f, opt.runtime_field)
    if runtime <= 0:  # 0: SWF rounds down sub-second runs; < 0: unknown in both fields,
        # where GridSim's Gridlet clamps the length (run time x rating) to 1 MI.
        runtime = 1 if runtime == 0 else 1.0 / opt.bench
    return Job(
        id=job,
        submit=max(submit, 0),
        cpus=procs if procs > 0 else 1,
        estimate=runtime,
        runtime=runtime,
        bench=opt.bench,
        in_bytes=GRIDSIM_FILE_SIZE,
        user=_user(f),
        site=opt.site,
        placement=opt.placement,
    )


def _gridsim_bad_field(f: list[str], opt: _Options) -> tuple[int, str] | None:
    """In GridSim's order: 1, 2, 9, then 4 when 9 is -1 (or 4 alone), 8, then 5 when 8 is -1 or 0."""
    order = [1, 2, 9] if opt.runtime_field == 9 else [1, 2, 4]
    if opt.runtime_field == 9 and _JAVA_INT(f[8]) and int(f[8]) == -1:
        order.append(4)
    order.append(8)
    if _JAVA_INT(f[7]) and int(f[7]) in (-1, 0):
        order.append(5)
    return _first_bad(f, [(n, _JAVA_INT, "an integer") for n in order])


# --- pwa: the Parallel Workloads Archive's meaning of the fields -------------------------------


def _real(text: str) -> float:
    """A finite number: ``float()`` would also take "nan", "inf"."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _is_real(text: str) -> bool:
    return _DECIMAL(text) is not None and math.isfinite(float(text))  # "1e999" is inf


def _pwa_job(f: list[str], opt: _Options) -> Job | str:
    job, submit, runtime, estimate = int(f[0]), _real(f[1]), _real(f[3]), _real(f[8])
    procs = int(f[4])
    if procs <= 0:
        procs = int(f[7])
    if submit < 0:
        return f"submit time unknown (field 2 is {f[1]})"
    if runtime < 0:
        return f"run time unknown (field 4 is {f[3]})"
    if procs <= 0:
        return f"processors unknown (field 5 is {f[4]}, field 8 is {f[7]})"
    return Job(
        id=job,
        submit=submit,
        cpus=procs,
        estimate=estimate if estimate >= 0 else runtime,
        runtime=runtime,
        bench=opt.bench,
        user=_user(f),
        site=opt.site,
        placement=opt.placement,
    )


def _pwa_bad_field(f: list[str], opt: _Options) -> tuple[int, str] | None:
    """Fields 1, 2, 4, 9, 5, then 8 when 5 is not positive: ids and processors integers, times numbers."""
    checks = [(1, _JAVA_INT, "an integer")]
    checks += [(n, _is_real, "a number") for n in (2, 4, 9)]
    checks.append((5, _JAVA_INT, "an integer"))
    if _JAVA_INT(f[4]) and int(f[4]) <= 0:
        checks.append((8, _JAVA_INT, "an integer"))
    return _first_bad(f, checks)


_RULE_SETS = {
    "gridsim": _RuleSet(_gridsim_job, _gridsim_bad_field),
    "pwa": _RuleSet(_pwa_job, _pwa_bad_field),
}
RULES = tuple(_RULE_SETS)


def read_swf(
    path: str | PathLike[str],
    *,
    rules: str = "gridsim",
    rating: float = 1.0,
    limit: int | None = None,
    site: str = "",
    placement: str = SPREAD,
    strict: bool = False,
    runtime_field: int = 9,
) -> SwfTrace:
    """Read an SWF trace (plain, ``.gz`` or ``.zip``) into jobs.

    ``rules``: ``"gridsim"`` or ``"pwa"`` (module docstring). ``rating``: MIPS
    of the reference machine; a job's length in MI is its run time x
    ``rating``, as GridSim computes it. ``limit``: stop after that many jobs.
    ``site`` and ``placement`` are copied into every job. ``strict``: an
    unreadable number in a field the rules read raises :class:`TraceError`
    instead of skipping the line. ``runtime_field`` (gridsim rules): 9 reads the
    requested time with field 4 as fallback (GridSim's Workload), 4 reads the
    run time (gridsim.parallel's reader can be configured so). Job ids must be unique (the emulator keys on
    them): a repeated id raises :class:`TraceError` naming both lines.
    """
    rule_set = _RULE_SETS.get(rules)
    if rule_set is None:
        raise ValueError(f"unknown SWF rules {rules!r}; accepted: {', '.join(map(repr, RULES))}")
    if not rating > 0:
        raise ValueError(f"rating must be > 0 MIPS, got {rating!r}")
    if limit is not None and limit < 0:
        raise ValueError(f"limit must be >= 0 or None, got {limit!r}")
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement {placement!r}; accepted: {', '.join(map(repr, PLACEMENTS))}")
    name = str(path)
    trace = SwfTrace(jobs=[], header={}, skipped=[], path=name)
    jobs, skipped, seen = trace.jobs, trace.skipped, trace.job_lines
    header: dict[str, str] | None = trace.header  # None once the first data line is seen
    last_key = ""  # header key a keyless comment line continues
    make, bad_field = rule_set.job, rule_set.bad_field
    if runtime_field not in (4, 9):
        raise ValueError(f"runtime_field must be 4 or 9, got {runtime_field!r}")
    options = _Options(float(rating), site, placement, runtime_field)
    if limit == 0:
        return trace
    with _open_text(Path(path)) as lines:
        for number, line in enumerate(lines, 1):
            f = line.split()
            if not f:
                continue
            if f[0][0] == ";":
                if header is not None:
                    last_key = _header_line(header, line.strip(), last_key)
                continue
            header = None
            if len(f) < FIELDS:
                skipped.append(SkippedLine(number, f"{len(f)} fields, expected {FIELDS}"))
                continue
            try:
                if "_" in line:  # int() and float() accept "1_000": let bad_field decide
                    raise ValueError
                job = make(f, options)
            except ValueError:
                bad = bad_field(f, options)
                if bad is None:  # "_" only in fields the rules do not read
                    job = make(f, options)
                else:
                    n, expected = bad
                    what = f"field {n} ({FIELD_NAMES[n]}) is {f[n - 1]!r}"
                    if strict:
                        raise TraceError(name, number, what, expected) from None
                    skipped.append(SkippedLine(number, f"{what}, not {expected}"))
                    continue
            if isinstance(job, str):
                skipped.append(SkippedLine(number, job))
                continue
            if job.id in seen:
                raise TraceError(
                    name,
                    number,
                    f"job number {job.id} already used at line {seen[job.id]}",
                    "unique job numbers",
                )
            seen[job.id] = number
            jobs.append(job)
            if len(jobs) == limit:
                break
    return trace


def _header_line(header: dict[str, str], text: str, last_key: str) -> str:
    """Add one header comment to ``header``; returns the key a following keyless line continues.

    PWA headers repeat keys (Note, Queue, Partition) and wrap long values onto
    keyless comment lines: both are kept, joined by newlines. A bare ``;`` ends
    a value.
    """
    match = _HEADER.match(text)
    if match:
        key, value = match.groups()
        if key not in header:
            header[key] = value
        elif value not in header[key].split("\n"):
            header[key] += "\n" + value
        return key
    rest = text[1:].strip()
    if rest and last_key:
        header[last_key] += "\n" + rest
        return last_key
    return ""
