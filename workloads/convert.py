"""Converting job streams between SWF, GWF, Alea and the Arrow jobs table, and out to Parquet and Batsim.

The format of a file is told by its name (:func:`workloads.formats.detect`: ``.swf``, ``.gwf``,
``.arrow``, each optionally ``.gz``, ``.parquet``, ``.csv`` for a Batsim jobs CSV; a run
directory means its ``jobs.arrow``) or given. Reading goes through the format's registered
reader (with its rules, selection and load scaling), writing through its registered writer
(:mod:`workloads.export`, :mod:`workloads.parquet` or :mod:`workloads.batsim`); an SWF header
travels in the Arrow table's schema metadata, so SWF -> Arrow -> SWF keeps the header and every
field. A run directory converted into a directory (one that exists, or a name ending in ``/``)
gives Parquet copies of its ``events.arrow`` and ``jobs.arrow`` there, as ``events.parquet`` and
``jobs.parquet``.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import formats
from .formats import PARQUET, Converted, detect
from .parquet import copy_run
from .table import read_arrow

__all__ = ["Converted", "convert", "detect", "read_any"]


def read_any(path: str | Path, fmt: str | None = None, **options) -> Converted:
    """Read a job stream in any format; ``options`` are the reader's (rules, sites, selection...)."""
    name = fmt or detect(path).name
    try:
        reader = formats.get(name, "read")
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    return reader.read(path, **options)


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
    writer = formats.get(target_format or detect(target).name, "write")
    stream = read_any(source, source_format, **options)
    writer.write(stream, target, schedule)
    return stream


def _is_directory(target: str | Path) -> bool:
    return Path(target).is_dir() or str(target).endswith(("/", os.sep))


def _copy_run(run: Path, out: Path, target_format: str | None, options: dict) -> Converted:
    """Parquet copies of a run's tables into the directory ``out`` (:func:`workloads.parquet.copy_run`)."""
    if target_format not in (None, PARQUET.name) or not run.is_dir():
        raise ValueError(f"{out}: a directory takes Parquet copies of a run directory's tables")
    if options:
        raise ValueError(f"options {', '.join(sorted(options))} do not apply to copying a run's tables")
    copy_run(run, out)
    return Converted(read_arrow(run / "jobs.arrow"))
