"""Run directories: claimed by one run at a time, replaced only when asked, salvaged after a crash.

A run claims its directory by creating ``.running`` in it exclusively
(``O_EXCL``: of two runs started into one directory, exactly one gets it) and
removes the marker once ``summary.json`` is written. So a directory holding
``.running`` is being written, or was *stranded* by a run that was killed, ran
out of disk or was interrupted: :func:`describe` says which files it left,
``--overwrite`` replaces it, and :func:`recover` salvages the rows a killed
run had flushed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa

WRITE_OPTIONS = pa.ipc.IpcWriteOptions(compression="zstd")
"""Trace files are Arrow IPC files with zstd-compressed buffers: pyarrow and Polars read them as they
are, and rows that list many machines and PEs shrink ~9x (LCG-2005-1: 100 MB -> 11 MB) for ~0.1 s."""

MARKER = ".running"
RUN_FILES = ("events.arrow", "jobs.arrow", "scenario.toml", "summary.json")
"""What a finished run leaves (with ``.part`` twins while it writes, and ``report.html`` if asked)."""
COPIES = ("events.parquet", "jobs.parquet", "report.html")
"""What commands may add to a run directory later (``gridemu report``, ``gridemu convert RUN RUN``)."""


class RunDirError(FileExistsError):
    """A run directory that cannot be claimed: in use, holding another run, or not a run's at all."""


def safe_name(name: str) -> str:
    """``name`` as one plain path component: a scenario's name never places output elsewhere
    (``"/tmp/x"`` and ``"../x"`` become ``"_tmp_x"`` and ``"_x"``).

    >>> safe_name("../../etc"), safe_name("KTH-SP2 (1996)")
    ('_._.._etc', 'KTH-SP2__1996_')
    """
    plain = re.sub(r"[^A-Za-z0-9._+-]", "_", name)
    return "_" + plain[1:] if plain.startswith(".") else plain or "_"


def default_dir(name: str, seed: int | None, root: Path = Path("runs")) -> Path:
    """``root/<name>-seed<seed>-NNN`` (``<name>-NNN`` without a seed), created here: a fresh
    directory, never an earlier run's (the ``mkdir`` is the claim, so two runs started at once get
    two numbers). ``name`` is made a plain component first (:func:`safe_name`)."""
    root.mkdir(parents=True, exist_ok=True)
    stem = safe_name(name) + ("" if seed is None else f"-seed{seed}")
    n = 1
    while True:
        path = root / f"{stem}-{n:03d}"
        try:
            path.mkdir()
            return path
        except FileExistsError:
            n += 1


def claim(path: Path, overwrite: bool = False) -> None:
    """Make ``path`` this run's: create it, or take it empty, or (``overwrite``) clear a run's files."""
    path.mkdir(parents=True, exist_ok=True)
    present = sorted(p.name for p in path.iterdir())
    if present and not overwrite:
        raise RunDirError(f"{path}: {describe(path)}; pick another --out, or pass --overwrite to replace it")
    if present:
        _clear(path, present)
    try:
        (path / MARKER).open("x").close()
    except FileExistsError:
        raise RunDirError(f"{path}: another run is writing into it") from None


def finish(path: Path) -> None:
    """The run is complete: drop the marker."""
    (path / MARKER).unlink(missing_ok=True)


def describe(path: Path) -> str:
    """What a non-empty directory holds, in a few words: a run, a stranded run, or something else."""
    names = {p.name for p in path.iterdir()}
    if MARKER in names or any(n.endswith(".part") for n in names):
        parts = sorted(n for n in names if n.endswith(".part"))
        left = ", ".join(parts) if parts else "no trace file"
        return (
            f"holds a run that has not finished (still running, or stranded: killed, interrupted or out "
            f"of disk; it left {left}; `gridemu inspect --recover {path}` salvages the rows it flushed)"
        )
    if "summary.json" in names:
        return "holds a finished run"
    return "not empty"


def _clear(path: Path, present: list[str]) -> None:
    """Remove a run's files (finished or stranded); refuse if anything else is there."""
    ours = {*RUN_FILES, *COPIES, *(f"{n}.part" for n in (*RUN_FILES, *COPIES)), MARKER}
    ours |= {recovered_name(n) for n in RUN_FILES if n.endswith(".arrow")}
    foreign = [name for name in present if name not in ours]
    if foreign:
        raise RunDirError(
            f"{path}: --overwrite replaces only a run's files, and it holds others too: "
            + ", ".join(foreign[:5])
        )
    for name in present:
        (path / name).unlink()


def recovered_name(name: str) -> str:
    return name.replace(".arrow", ".recovered.arrow")


def recover(path: Path) -> dict[str, int]:
    """Salvage every ``*.arrow.part`` a killed run left: its complete batches, as ``*.recovered.arrow``.

    A ``.part`` is an Arrow IPC file whose footer was never written: after its
    8-byte magic it is an IPC stream, read up to the last complete batch.
    Returns the rows recovered by file written.
    """
    found = {}
    for part in sorted(path.glob("*.arrow.part")):
        target = path / recovered_name(part.name.removesuffix(".part"))
        with pa.memory_map(str(part)) as source:
            data = source.read_buffer()
        batches, schema = _complete_batches(data)
        if schema is None:
            continue
        table = pa.Table.from_batches(batches, schema=schema)
        with (
            pa.OSFile(str(target), "wb") as sink,
            pa.ipc.new_file(sink, schema, options=WRITE_OPTIONS) as writer,
        ):
            writer.write_table(table)
        found[target.name] = table.num_rows
    return found


def _complete_batches(data: pa.Buffer) -> tuple[list[pa.RecordBatch], pa.Schema | None]:
    """An IPC file's batches up to the first incomplete one, and its schema (None: not even that)."""
    if data.size < 8:
        return [], None
    try:
        reader = pa.ipc.open_stream(data.slice(8))
    except pa.ArrowInvalid:
        return [], None
    batches = []
    try:
        for batch in reader:
            batches.append(batch)
    except (pa.ArrowInvalid, OSError):  # the batch being written when the run died
        pass
    return batches, reader.schema


def fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (POSIX: the directory entry is data of the directory)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def replacing(path: Path) -> Iterator[Path]:
    """Write ``path`` atomically: yields ``path.part`` to write, then syncs it and renames it to
    ``path``; on an error the ``.part`` is removed. A killed writer never leaves a partial file under
    the final name (at worst a ``.part``)."""
    part = path.with_name(path.name + ".part")
    try:
        yield part
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    with open(part, "rb+") as file:
        os.fsync(file.fileno())
    os.replace(part, path)
    fsync_dir(path.parent)
