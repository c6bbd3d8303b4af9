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

SWF as the archive defines it: every field an integer (times rounded to whole
seconds, halves up; a schedule's wait and run time are differences of the
rounded submit, start and finish, so submit + wait = start still holds), -1
for unknown, and the trace's own header comment lines written as they were
(:data:`~workloads.header.HEADER_LINES_KEY`; a table without them gets its
parsed header, else a minimal one). A schedule's field 16 (partition) is the
cluster each job ran on, numbered from 1 in the scenario's order (the run's
:data:`~emulator.core.model.PLATFORM_KEY`; a table without it, the clusters in name
order), -1 if it never ran; the header's own partition lines give way to a
``MaxPartitions`` line and one ``Partition: N name`` line per cluster, which
``read_swf(..., sites="partition")`` reads back as the clusters' names.
"""

from __future__ import annotations

import gzip
from contextlib import nullcontext
from os import PathLike
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from emulator.core.model import platform_of
from emulator.data.rundir import replacing

from .gwf import GWF_FIELDS, GWF_TEXT_COLUMNS
from .header import HEADER_KEY, drop_keys, header_lines_of, header_of
from .table import SWF_COLUMNS

__all__ = ["HEADER_KEY", "header_of", "write_gwf", "write_swf"]

GZIP_LEVEL = 6
"""zlib's default: Python's gzip default (9) compresses a trace 4x slower for a few percent."""
PARTITION_KEYS = {"MaxPartitions", "Partitions", "Partition"}
"""Header keys that describe field 16: a schedule's own lines replace them."""
TIME_COLUMNS = ("submit", "start", "finish", "run_time")


def write_swf(
    table: pa.Table,
    path: str | PathLike[str],
    *,
    header: dict[str, str] | None = None,
    schedule: bool | None = None,
) -> int:
    """Write ``table`` as SWF (``.gz`` compressed when the name says so); returns the job count.

    ``header``: ``Key: value`` lines (default: the trace's own header lines as
    they were, see the module docstring); multi-line values become repeated
    keys, which read back the same.
    """
    schedule = _is_run(table) if schedule is None else schedule
    if header is not None:
        lines = _key_lines(header)
    else:
        lines = header_lines_of(table) or _key_lines(header_of(table) or _minimal_header(table))
    columns = _swf_fields(_whole_seconds(table), schedule)
    if schedule:
        names = _cluster_names(table)
        columns[15] = _cluster_numbers(table, names)
        lines = [*drop_keys(lines, PARTITION_KEYS), *_partition_lines(names)]
    return _write_lines(path, lines, [_integers(column) for column in columns])


def _cluster_names(table: pa.Table) -> list[str]:
    """A run's clusters in the scenario's order (SWF partition N is the N-th); in name order when the
    table does not record its platform."""
    platform = platform_of(table)
    if platform is not None:
        return [name for name, _ in platform]
    return sorted(set(table.column("cluster").drop_null().to_pylist()))


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


def _key_lines(header: dict[str, str]) -> list[str]:
    return [f"; {key}: {part}" for key, value in header.items() for part in value.split("\n")]


def _partition_lines(names: list[str]) -> list[str]:
    """Header lines saying which cluster each partition number (field 16) is."""
    note = (
        "; Note: gridemu schedule: wait, run time, processors and status are the emulation's;"
        " the partition (field 16) is the cluster each job ran on"
    )
    numbered = [f"; Partition: {i} {name}" for i, name in enumerate(names, 1)]
    return [note, f"; MaxPartitions: {len(names)}", *numbered]


def _cluster_numbers(table: pa.Table, names: list[str]) -> pa.Array:
    """Each job's cluster as its 1-based number in ``names``; -1 where it never ran (a rejected job's
    cluster is the one that rejected it)."""
    ran = pc.is_valid(table.column("start")).combine_chunks()
    index = pc.index_in(table.column("cluster").combine_chunks(), value_set=pa.array(names, pa.string()))
    return pc.if_else(ran, pc.add(index, 1), None).fill_null(-1).cast(pa.int64())


def _whole_seconds(table: pa.Table) -> pa.Table:
    """The table with its times rounded to whole seconds, halves up (SWF's fields are integers)."""
    for name in TIME_COLUMNS:
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, _half_up(table.column(name)))
    return table


def _integers(column: pa.Array) -> pa.Array:
    """A field as integers: floats rounded halves up (-1, unknown, stays -1)."""
    return (_half_up(column) if pa.types.is_floating(column.type) else column).cast(pa.int64())


def _half_up(column: pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    return pc.floor(pc.add(column, 0.5))


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
    table = pa.table({str(i): column for i, column in enumerate(columns, 1)})
    options = pacsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")
    with replacing(path) as part, open(part, "wb") as raw, _compressed(raw, path) as out:
        out.write("".join(line + "\n" for line in comments).encode())
        pacsv.write_csv(table, out, options)
    return table.num_rows


def _compressed(raw: BinaryIO, path: Path) -> BinaryIO:
    """``raw``, gzip-compressed when ``path`` ends in ``.gz``: no name and time 0 in the gzip header,
    so the same table gives the same bytes."""
    if not path.name.endswith(".gz"):
        return nullcontext(raw)
    return gzip.GzipFile(filename="", mode="wb", fileobj=raw, compresslevel=GZIP_LEVEL, mtime=0)
