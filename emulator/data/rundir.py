"""Run directories: claimed by one run at a time, replaced only when asked, salvaged after a crash.

A run claims its directory by creating ``.running`` in it exclusively
(``O_EXCL``: of two runs started into one directory, exactly one gets it) and
holding a lock on it (``flock``) for as long as it runs: the lock, not the
file, says the run is alive. The marker is removed once ``summary.json`` is
written; a run that fails releases the lock and leaves the marker. So a
directory holding ``.running`` is being written (its lock is held: nothing
replaces it, not even ``--overwrite``), or was *stranded* by a run that was
killed, ran out of disk or was interrupted (its lock is free): :func:`describe`
says which files it left, ``--overwrite`` replaces it, :func:`recover`
salvages the rows a killed run had flushed and ``gridemu inspect --summarize``
finishes a run stopped after its traces were complete.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager, suppress
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
    plain = re.sub(r"[^A-Za-z0-9._+=-]", "_", name)
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


LOCK_PATIENCE = 0.5
"""Seconds a claim keeps trying a marker's lock that is taken (:func:`is_live` takes it for an instant to
look) before it calls the run holding it alive."""


class Claim:
    """A run's hold on its directory: the ``.running`` marker, open and locked (``flock``) for as long as
    the run goes on, with the run's process id in it.

    :meth:`finish` (the run is complete) removes the marker, then unlocks it; :meth:`release` (the run
    failed) only unlocks it: the marker stays as a stranded run's, which ``--overwrite`` may replace. A
    killed process's lock goes with it. A process forked while holding a claim does not hold it.
    """

    def __init__(self, path: Path, fd: int, created: bool) -> None:
        self.path = path
        self.created = created
        """Whether this claim made the marker (else it took a stranded run's)."""
        self._fd: int | None = fd
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        _HELD.add(self)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def finish(self) -> None:
        """The run is complete: remove the marker, then let go of its lock."""
        if self._fd is not None:
            (self.path / MARKER).unlink(missing_ok=True)
        self.release()

    def release(self) -> None:
        """Let go of the lock; the marker stays (a stranded run's, if the run did not finish)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def _forget(self) -> None:
        """In a forked child: close the inherited descriptor (which does not unlock the parent's hold)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __del__(self) -> None:
        with suppress(OSError, TypeError):  # (TypeError: at interpreter shutdown)
            self.release()


_HELD: weakref.WeakSet[Claim] = weakref.WeakSet()
os.register_at_fork(after_in_child=lambda: [claim._forget() for claim in list(_HELD)])


def claim(path: Path, overwrite: bool = False) -> Claim:
    """Make ``path`` this run's: create it, or take it empty, or (``overwrite``) clear a run's files.

    Never a live run's (its marker's lock is held), even with ``overwrite``. Returns the :class:`Claim`
    to :meth:`~Claim.finish` once ``summary.json`` is written, or :meth:`~Claim.release` on failure.
    """
    path.mkdir(parents=True, exist_ok=True)
    present = sorted(p.name for p in path.iterdir())
    if present and is_live(path):
        raise RunDirError(f"{path}: {describe(path)}; {LIVE_ADVICE}")
    if present and not overwrite:
        raise RunDirError(f"{path}: {describe(path)}; pick another --out, or pass --overwrite to replace it")
    if present:
        _check_ours(path, present)  # before touching anything
    held = _hold(path, adopt=overwrite)
    if overwrite:
        try:
            _clear(path)
        except BaseException:
            held.finish() if held.created else held.release()
            raise
    return held


def adopt(path: Path) -> Claim:
    """Hold a stranded run's directory (to finish it: ``gridemu inspect --summarize``): its marker
    locked (made again if it is gone); :class:`RunDirError` if a live run holds it."""
    return _hold(path, adopt=True)


LIVE_ADVICE = "--overwrite never replaces a run still going: wait for it to end, or pick another --out"


def _hold(path: Path, adopt: bool) -> Claim:
    """Create ``.running`` exclusively and lock it; or (``adopt``) lock the one there if its run is dead."""
    marker = path / MARKER
    for _ in range(100):
        created = True
        try:
            fd = os.open(marker, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            if not adopt:
                raise RunDirError(f"{path}: another run is writing into it") from None  # (just made)
            created = False
            try:
                fd = os.open(marker, os.O_RDWR | os.O_CLOEXEC)
            except FileNotFoundError:
                continue  # removed meanwhile (its run finished): make it
        if not _lock(fd, fcntl.LOCK_EX):
            os.close(fd)
            raise RunDirError(f"{path}: another run is writing into it{_holder(path)}; {LIVE_ADVICE}")
        if _is_marker(fd, marker):
            return Claim(path, fd, created)
        os.close(fd)  # removed between our open and our lock (its run finished): look again
    raise RunDirError(f"{path}: its {MARKER} keeps changing: another process is claiming it too")


def _lock(fd: int, how: int, patience: float = LOCK_PATIENCE) -> bool:
    """Lock ``fd`` (``flock``), trying for ``patience`` seconds; False if another holds it still."""
    deadline = time.monotonic() + patience
    while True:
        try:
            fcntl.flock(fd, how | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)


def _is_marker(fd: int, marker: Path) -> bool:
    """Whether ``fd`` is still the file named ``marker`` (not one removed after it was opened)."""
    try:
        named = marker.stat()
    except FileNotFoundError:
        return False
    mine = os.fstat(fd)
    return (mine.st_dev, mine.st_ino) == (named.st_dev, named.st_ino)


def is_live(path: Path) -> bool:
    """Whether a running process holds ``path``'s marker (a stranded run's marker is not locked)."""
    try:
        fd = os.open(path / MARKER, os.O_RDONLY | os.O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # (a shared lock taken to look goes with it)
    return False


def _holder(path: Path) -> str:
    """`` (process N)``: the process id a live run wrote in its marker ("" if it cannot be read)."""
    try:
        pid = (path / MARKER).read_text().strip()
    except OSError:
        return ""
    return f" (process {pid})" if pid.isdigit() else ""


def finish(path: Path) -> None:
    """The run is complete: drop the marker (:meth:`Claim.finish` does this and lets go of the lock)."""
    (path / MARKER).unlink(missing_ok=True)


def describe(path: Path) -> str:
    """What a non-empty directory holds, in a few words: a finished run, one still going, a stranded
    run (and which of its files are complete, which partial, and what can be done with them), or
    something else."""
    names = {p.name for p in path.iterdir()}
    parts = sorted(n for n in names if n.endswith(".part"))
    if MARKER not in names and not parts:
        return "holds a finished run" if "summary.json" in names else "not empty"
    complete = [n for n in (*RUN_FILES, *COPIES) if n in names]
    complete += sorted(n for n in names if n.endswith(".recovered.arrow"))
    files = f"complete: {', '.join(complete) or 'none'}; partial: {', '.join(parts) or 'none'}"
    if is_live(path):
        return f"holds a run that has not finished: still running{_holder(path)}; written so far: {files}"
    text = f"holds a run that has not finished (stranded: killed, interrupted or out of disk); left {files}"
    if summarizable(path):
        return f"{text}; `gridemu inspect --summarize {path}` writes its summary.json from the complete files"
    if any(n.endswith(".arrow.part") and not n.endswith(".recovered.arrow.part") for n in parts):
        return f"{text}; `gridemu inspect --recover {path}` salvages the rows it flushed"
    return text


SUMMARIZED_FROM = ("events.arrow", "jobs.arrow", "scenario.toml")
"""The files ``gridemu inspect --summarize`` writes a stopped run's summary.json from."""


def summarizable(path: Path) -> bool:
    """Whether a run stopped with its traces and scenario complete but no summary.json (or a marker
    left beside it): ``gridemu inspect --summarize`` finishes it."""
    return all(complete(path / n) for n in SUMMARIZED_FROM) and (
        not (path / "summary.json").is_file() or (path / MARKER).is_file()
    )


def complete(file: Path) -> bool:
    """A run's file is complete under its own name, or sealed under ``.part``
    (:meth:`emulator.data.trace.PartFile.seal`): the run stopped between its renames."""
    return file.is_file() or _sealed(file.with_name(file.name + ".part"))


def _sealed(part: Path) -> bool:
    """Whether a ``.part`` is a whole Arrow file (its footer and end magic written), not one cut short."""
    if not part.is_file():
        return False
    try:
        with pa.memory_map(str(part)) as source:
            pa.ipc.open_file(source)
    except (OSError, pa.ArrowInvalid):
        return False
    return True


def promote(path: Path) -> None:
    """Rename the sealed ``.part`` files a run stopped between its renames left (see :func:`complete`)."""
    for name in SUMMARIZED_FROM:
        final, part = path / name, path / f"{name}.part"
        if not final.exists() and _sealed(part):
            os.replace(part, final)
            fsync_dir(path)


def _ours() -> set[str]:
    """The names a run's files (finished, stranded or salvaged) may have."""
    names = {*RUN_FILES, *COPIES, MARKER}
    names |= {recovered_name(n) for n in RUN_FILES if n.endswith(".arrow")}
    return names | {f"{n}.part" for n in names}


def _check_ours(path: Path, present: list[str]) -> None:
    """Refuse a directory holding anything but a run's files: ``--overwrite`` never deletes those."""
    foreign = [name for name in present if name not in _ours()]
    if foreign:
        raise RunDirError(
            f"{path}: --overwrite replaces only a run's files, and it holds others too: "
            + ", ".join(foreign[:5])
        )


def _clear(path: Path) -> None:
    """Remove a run's files (finished or stranded; the marker, now ours, stays); refuse if anything
    else is there."""
    present = sorted(p.name for p in path.iterdir() if p.name != MARKER)
    _check_ours(path, present)
    for name in present:
        (path / name).unlink(missing_ok=True)


def recovered_name(name: str) -> str:
    return name.replace(".arrow", ".recovered.arrow")


def recover(path: Path) -> dict[str, int]:
    """Salvage every ``*.arrow.part`` a killed run left: its complete batches, as ``*.recovered.arrow``.

    A ``.part`` is an Arrow IPC file whose footer was never written: after its
    8-byte magic it is an IPC stream, read up to the last complete batch. Each
    file is written under ``.part`` and renamed when complete (:func:`replacing`):
    a full disk leaves no half file, and its error names the file.
    Returns the rows recovered by file written.
    """
    found = {}
    for part in sorted(path.glob("*.arrow.part")):
        if part.name.endswith(".recovered.arrow.part"):  # (a salvage that was itself stopped)
            continue
        target = path / recovered_name(part.name.removesuffix(".part"))
        with pa.memory_map(str(part)) as source:
            data = source.read_buffer()
        batches, schema = _complete_batches(data)
        if schema is None:
            continue
        table = pa.Table.from_batches(batches, schema=schema)
        with (
            naming(target),
            replacing(target) as written,
            pa.OSFile(str(written), "wb") as sink,
            pa.ipc.new_file(sink, schema, options=WRITE_OPTIONS) as writer,
        ):
            writer.write_table(table)
        found[target.name] = table.num_rows
    return found


@contextmanager
def naming(path: Path) -> Iterator[None]:
    """OSErrors raised in the block that name no file (pyarrow's, a full disk's on a write) name ``path``."""
    try:
        yield
    except OSError as err:
        if err.filename is not None:
            raise
        strerror = os.strerror(err.errno) if err.errno else str(err)
        raise OSError(err.errno or errno.EIO, strerror, str(path)) from err


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
