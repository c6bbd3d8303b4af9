"""Converting job streams between SWF, GWF, Alea and the Arrow jobs table.

The format of a file is told by its name (``.swf``, ``.gwf``, ``.arrow``,
each optionally ``.gz``; a run directory means its ``jobs.arrow``) or given.
Reading goes through the format's reader (with its rules, selection and
load scaling), writing through :mod:`workloads.export`; an SWF header
travels in the Arrow table's schema metadata, so SWF -> Arrow -> SWF keeps
the header and every field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from . import transform
from .export import HEADER_KEY, header_of, write_gwf, write_swf
from .table import read_arrow, write_arrow

__all__ = ["FORMATS", "READ_FORMATS", "Converted", "convert", "detect", "read_any"]

FORMATS = ("swf", "gwf", "arrow")
READ_FORMATS = (*FORMATS, "alea")


@dataclass
class Converted:
    """A stream read for conversion: its table, header, and what the reader left out."""

    table: pa.Table
    header: dict[str, str] = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    left_out: int = 0


def detect(path: str | Path) -> str:
    """``swf``, ``gwf`` or ``arrow`` from the file name; ValueError when the name does not say."""
    path = Path(path)
    if path.is_dir():
        return "arrow"
    name = path.name.lower()
    for suffix in (".gz", ".zip"):
        name = name.removesuffix(suffix)
    for fmt, suffixes in (("swf", (".swf",)), ("gwf", (".gwf",)), ("arrow", (".arrow", ".feather", ".ipc"))):
        if name.endswith(suffixes):
            return fmt
    raise ValueError(f"{path}: cannot tell the format from the name; give it (swf, gwf, arrow)")


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
        raise ValueError(f"unknown format {fmt!r}; accepted: {', '.join(READ_FORMATS)}")
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
        write_swf(table, target, header=stream.header or None, schedule=schedule)
    else:
        write_gwf(table, target, schedule=schedule)
    return stream
