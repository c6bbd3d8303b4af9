"""Writing job streams as SWF or GWF text: any jobs table, a converted trace or a run's ``jobs.arrow``.

Both formats are one job per line of whitespace-separated fields, -1 for
unknown; the writers share one core (:func:`_write_lines`) that formats whole
columns with Arrow's CSV writer, so exporting is as fast as reading.

Each field comes from the table's trace column when it has one (a trace's
own values survive a round trip: SWF -> Arrow -> SWF gives the same fields),
else from the model's columns (``id``, ``submit``, ``runtime``, ``cpus``,
``estimate``, ``user``, ``site``), else -1. The submit time is always the
stream's (``submit``), so a window or a load scaling shows in the export.

``schedule=True`` (the default for a run's ``jobs.arrow``, which has outcome
columns) writes what happened in the emulation instead of what the trace
recorded: wait = start - submit, run time = finish - start, allocated
processors = the job's CPUs, status 1 (finished), 0 (failed: it ran but never
finished, killed at its estimate or lost to failures; its run time the
seconds it ran) or 5 (rejected: it never ran), and for GWF the cluster as the
last-run site.
"""

from __future__ import annotations

import gzip
import json
from os import PathLike
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .gwf import GWF_FIELDS, GWF_TEXT_COLUMNS
from .table import SWF_COLUMNS

__all__ = ["header_of", "write_gwf", "write_swf"]

GZIP_LEVEL = 6
"""zlib's default: Python's gzip default (9) compresses a trace 4x slower for a few percent."""
HEADER_KEY = b"swf_header"
"""Schema metadata key holding a trace's header (JSON) in a converted jobs table."""


def header_of(table: pa.Table) -> dict[str, str]:
    """The SWF/GWF header a converted table carries in its schema metadata ({} if none)."""
    raw = (table.schema.metadata or {}).get(HEADER_KEY)
    return json.loads(raw) if raw else {}


def write_swf(
    table: pa.Table,
    path: str | PathLike[str],
    *,
    header: dict[str, str] | None = None,
    schedule: bool | None = None,
) -> int:
    """Write ``table`` as SWF (``.gz`` compressed when the name says so); returns the job count.

    ``header``: ``Key: value`` lines (default: the table's own, else a minimal
    one); multi-line values become repeated keys, which read back the same.
    """
    schedule = _is_run(table) if schedule is None else schedule
    header = header if header is not None else header_of(table) or _minimal_header(table)
    columns = _swf_fields(table, schedule)
    lines = [f"; {key}: {part}" for key, value in header.items() for part in value.split("\n")]
    return _write_lines(path, lines, columns)


def write_gwf(
    table: pa.Table,
    path: str | PathLike[str],
    *,
    schedule: bool | None = None,
) -> int:
    """Write ``table`` as GWF text (29 fields; ``#`` comments); returns the job count."""
    schedule = _is_run(table) if schedule is None else schedule
    numbers = _swf_fields(table, schedule)
    columns = numbers[:11]
    names = table.column_names
    for number, name in GWF_TEXT_COLUMNS.items():
        if name in names:
            columns.append(_text(table.column(name)))
        elif number <= 16:
            columns.append(numbers[number - 1].cast(pa.string()))
        elif number in (17, 18):
            columns.append(_site(table, last_run=number == 18 and schedule))
        else:
            columns.append(_constant("-1", table.num_rows))
    lines = ["# " + " ".join(GWF_FIELDS)]
    return _write_lines(path, lines, columns)


def _is_run(table: pa.Table) -> bool:
    return {"status", "start", "finish"} <= set(table.column_names)


def _minimal_header(table: pa.Table) -> dict[str, str]:
    n = str(table.num_rows)
    return {"Version": "2.2", "Computer": "gridemu", "MaxJobs": n, "MaxRecords": n}


def _swf_fields(table: pa.Table, schedule: bool) -> list[pa.Array]:
    """SWF's 18 fields as Arrow arrays (int64 or float64, no nulls)."""
    n = table.num_rows
    names = set(table.column_names)

    def field(number: int, fallback: str | None = None) -> pa.Array:
        name, kind = SWF_COLUMNS[number]
        if name in names:
            column = table.column(name)
            if fallback is not None:
                column = pc.coalesce(column, table.column(fallback).cast(kind))
            return pc.fill_null(column, pa.scalar(-1, kind)).combine_chunks().cast(kind)
        if fallback is not None:
            return table.column(fallback).combine_chunks().cast(kind)
        return _constant(-1, n, kind)

    fields = [
        table.column("id").combine_chunks().cast(pa.int64()),
        table.column("submit").combine_chunks(),
        field(3),
        field(4, "runtime"),
        field(5, "cpus"),
        field(6),
        field(7),
        field(8, "cpus"),
        field(9, "estimate"),
        field(10),
        field(11),
        field(12, "user"),
        *(field(k) for k in range(13, 19)),
    ]
    if schedule:
        start, finish = (table.column(c).to_numpy() for c in ("start", "finish"))
        submit = table.column("submit").to_numpy()
        started, finished = ~np.isnan(start), ~np.isnan(finish)
        fields[2] = pa.array(np.where(started, start - submit, -1.0))
        ran = _column(table, "run_time", np.full(len(start), np.nan))  # of jobs that never finished
        ran = np.where(started & ~np.isnan(ran), ran, -1.0)
        fields[3] = pa.array(np.where(finished, finish - start, ran))
        cpus = table.column("cpus").to_numpy().astype(np.int64)
        fields[4] = pa.array(np.where(started, cpus, -1))
        fields[10] = pa.array(np.where(finished, 1, np.where(started, 0, 5)).astype(np.int64))
    return fields


def _column(table: pa.Table, name: str, default: np.ndarray) -> np.ndarray:
    """Column ``name`` as floats (nulls NaN), or ``default`` when the table has none."""
    if name not in table.column_names:
        return default
    return table.column(name).to_numpy(zero_copy_only=False).astype(float)


def _text(column: pa.ChunkedArray) -> pa.Array:
    """Text fields as one token each: empty or null -> -1, inner whitespace -> _."""
    column = pc.fill_null(column.combine_chunks().cast(pa.string()), "")
    column = pc.replace_substring_regex(column, r"\s", "_")
    return pc.if_else(pc.equal(column, ""), "-1", column)


def _site(table: pa.Table, last_run: bool) -> pa.Array:
    """GWF's site fields from the model: the job's site, or (last run, schedule) the cluster it ran on."""
    source = "cluster" if last_run and "cluster" in table.column_names else "site"
    return _text(table.column(source))


def _constant(value, n: int, kind: pa.DataType | None = None) -> pa.Array:
    return pa.repeat(pa.scalar(value, kind or pa.string()), n)


def _write_lines(path: str | PathLike[str], comments: list[str], columns: list[pa.Array]) -> int:
    """Comment lines, then one line per row of ``columns``, space-separated; atomically (``.part``)."""
    path = Path(path)
    part = path.with_name(path.name + ".part")
    table = pa.table({str(i): column for i, column in enumerate(columns, 1)})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    compress = path.name.endswith(".gz")
    with gzip.open(part, "wb", compresslevel=GZIP_LEVEL) if compress else open(part, "wb") as out:
        out.write("".join(line + "\n" for line in comments).encode())
        pacsv.write_csv(table, out, options)
    part.replace(path)
    return table.num_rows
