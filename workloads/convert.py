"""Converting job streams between SWF, GWF, Alea and the Arrow jobs table, and out to Parquet and Batsim.

The format of a file is told by its name (``.swf``, ``.gwf``, ``.arrow``,
each optionally ``.gz``, ``.parquet``, ``.csv`` for a Batsim jobs CSV; a run
directory means its ``jobs.arrow``) or given. Reading goes through the
format's reader (with its rules, selection and load scaling), writing through
:mod:`workloads.export`, :mod:`workloads.parquet` or :mod:`workloads.batsim`;
an SWF header travels in the Arrow table's schema metadata, so SWF -> Arrow ->
SWF keeps the header and every field. A run directory converted into a
directory (one that exists, or a name ending in ``/``) gives Parquet copies of
its ``events.arrow`` and ``jobs.arrow`` there, as ``events.parquet`` and
``jobs.parquet``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from . import transform
from .batsim import write_batsim
from .export import HEADER_KEY, header_of, write_gwf, write_swf
from .header import header_lines_of
from .parquet import copy_run, write_parquet
from .table import read_arrow, write_arrow

__all__ = ["FORMATS", "READ_FORMATS", "Converted", "convert", "detect", "read_any"]

READ_FORMATS = ("swf", "gwf", "arrow", "alea")
FORMATS = ("swf", "gwf", "arrow", "parquet", "batsim")
"""What :func:`convert` writes."""
SUFFIXES = {
    "swf": (".swf",),
    "gwf": (".gwf",),
    "arrow": (".arrow", ".feather", ".ipc"),
    "parquet": (".parquet",),
    "batsim": (".csv",),
}


@dataclass
class Converted:
    """A stream read for conversion: its table, header, and what the reader left out."""

    table: pa.Table
    header: dict[str, str] = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    left_out: int = 0


def detect(path: str | Path) -> str:
    """The format (:data:`SUFFIXES`) from the file name; ValueError when the name does not say."""
    path = Path(path)
    if path.is_dir():
        return "arrow"
    name = path.name.lower()
    for suffix in (".gz", ".zip"):
        name = name.removesuffix(suffix)
    for fmt, suffixes in SUFFIXES.items():
        if name.endswith(suffixes):
            return fmt
    raise ValueError(f"{path}: cannot tell the format from the name; give it ({', '.join(SUFFIXES)})")


def read_any(path: str | Path, fmt: str | None = None, **options) -> Converted:
    """Read a job stream in any format; ``options`` are the reader's (rules, sites, selection...)."""
    fmt = fmt or detect(path)
    if fmt == "arrow":
        source = Path(path) / "jobs.arrow" if Path(path).is_dir() else Path(path)
        table = read_arrow(source)
        selection = {
            k: options.pop(k)
            for k in ("start", "end", "limit", "interarrival_scale", "estimate")
            if k in options
        }
        drop = transform.dropped_statuses(options.pop("cancelled", "keep"), options.pop("failed", "keep"))
        if options:
            raise ValueError(f"options {', '.join(sorted(options))} do not apply to an Arrow jobs table")
        dropped = transform.has_status(table, drop)
        if dropped.any():
            table = table.filter(pa.array(~dropped))
        table, left_out = transform.apply(table, **selection)
        return Converted(table, header_of(table), [], left_out + int(dropped.sum()))
    if fmt == "swf":
        from .swf import read_swf as reader
    elif fmt == "gwf":
        from .gwf import read_gwf as reader
    elif fmt == "alea":
        from .alea import read_alea as reader
    else:
        raise ValueError(f"{path}: cannot read format {fmt!r}; readable: {', '.join(READ_FORMATS)}")
    trace = reader(path, **options)
    return Converted(trace.table, trace.header, trace.skipped, trace.selected_out)


def convert(
    source: str | Path,
    target: str | Path,
    *,
    source_format: str | None = None,
    target_format: str | None = None,
    schedule: bool | None = None,
    **options,
) -> Converted:
    """Read ``source`` and write it to ``target``; returns what was read."""
    if _is_directory(target):
        return _copy_run(Path(source), Path(target), target_format, options)
    target_format = target_format or detect(target)
    if target_format not in FORMATS:
        raise ValueError(f"unknown format {target_format!r}; accepted: {', '.join(FORMATS)}")
    stream = read_any(source, source_format, **options)
    table = stream.table
    if target_format == "arrow":
        metadata = dict(table.schema.metadata or {})
        if stream.header:
            metadata[HEADER_KEY] = json.dumps(stream.header).encode()
        write_arrow(table.replace_schema_metadata(metadata or None), target)
    elif target_format == "swf":
        own = bool(header_lines_of(table))  # the trace's header lines, written as they were
        write_swf(table, target, header=None if own else stream.header or None, schedule=schedule)
    elif target_format == "gwf":
        write_gwf(table, target, schedule=schedule)
    elif target_format == "parquet":
        write_parquet(table, target)
    else:
        write_batsim(table, target)
    return stream


def _is_directory(target: str | Path) -> bool:
    return Path(target).is_dir() or str(target).endswith(("/", os.sep))


def _copy_run(run: Path, out: Path, target_format: str | None, options: dict) -> Converted:
    """Parquet copies of a run's tables into the directory ``out`` (:func:`workloads.parquet.copy_run`)."""
    if target_format not in (None, "parquet") or not run.is_dir():
        raise ValueError(f"{out}: a directory takes Parquet copies of a run directory's tables")
    if options:
        raise ValueError(f"options {', '.join(sorted(options))} do not apply to copying a run's tables")
    copy_run(run, out)
    return Converted(read_arrow(run / "jobs.arrow"))
