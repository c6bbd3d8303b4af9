"""The column-parsing core every trace reader shares (SWF, GWF, Alea).

Trace files are whitespace-separated text, one job per line, with comment
lines. Splitting each line in Python costs about a microsecond per field, too
slow for traces of hundreds of thousands of jobs, so the text is handled in
blocks of whole lines (a few MB, so memory stays bounded and numpy's
temporaries are reused): numpy collapses every run of whitespace to one space
and drops comment and blank lines, then Arrow's CSV reader splits the block
into string columns in C++. Readers turn the columns they need into numbers
with :func:`ints` and :func:`reals`, which check each value against the same
syntax the original line-by-line reader used (so error messages do not depend
on the fast path). Only lines whose field count differs from the expected one
are split in Python.
"""

from __future__ import annotations

import gzip
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

__all__ = [
    "BLOCK_BYTES",
    "Fields",
    "SkippedLine",
    "TraceError",
    "ints",
    "open_binary",
    "reals",
    "scan",
]

BLOCK_BYTES = 1 << 21
"""Bytes of decompressed text handled at once: big enough for numpy, small enough to reuse its buffers."""

_NEWLINE, _SPACE = 10, 32
# The syntax of the original reader: Java's Integer syntax, and a decimal number as SWF writes one.
INT_PATTERN = r"^[+-]?[0-9]{1,18}$"
REAL_PATTERN = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"


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


@contextmanager
def open_binary(path: str | PathLike[str]) -> Iterator[BinaryIO]:
    """Plain, ``.gz`` or ``.zip``, chosen by content (magic bytes), not by name."""
    path = Path(path)
    with path.open("rb") as raw:
        magic = raw.read(4)
    if magic[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as stream:
            yield stream
    elif magic == b"PK\x03\x04":
        with zipfile.ZipFile(path) as archive, archive.open(_zip_member(archive, str(path))) as stream:
            yield stream
    else:
        with path.open("rb") as stream:
            yield stream


def _zip_member(archive: zipfile.ZipFile, path: str) -> str:
    """The single member, else the first trace-looking one (GridSim would read every member in turn)."""
    names = [info.filename for info in archive.infolist() if not info.is_dir()]
    if len(names) == 1:
        return names[0]
    for name in names:
        if name.lower().endswith((".swf", ".gwf")):
            return name
    raise TraceError(
        path,
        None,
        f"zip archive holds {len(names)} members ({', '.join(names[:5])})",
        "one member or a .swf member",
    )


def _blocks(stream: BinaryIO, size: int) -> Iterator[bytes]:
    """Whole lines, about ``size`` bytes at a time; the last block ends with a newline too."""
    rest = b""
    while block := stream.read(size):
        block = rest + block
        cut = block.rfind(b"\n") + 1
        rest = block[cut:]
        if cut:
            yield block[:cut]
    if rest:
        yield rest + b"\n"


@dataclass
class Fields:
    """The data lines of one block: a string column per field, and where each row came from.

    ``table`` has ``width`` string columns named ``"1"``..``"width"`` (1-based
    field numbers); a row whose line had fewer than ``width`` (but at least the
    required) fields has ``""`` in the missing ones. Lines with fewer than the
    required fields are not rows: they are in ``short_lines`` with their
    ``short_counts``.
    """

    lines: np.ndarray  # 1-based line number of each row
    table: pa.Table
    short_lines: np.ndarray
    short_counts: np.ndarray

    def __len__(self) -> int:
        return self.table.num_rows

    def column(self, field: int) -> pa.ChunkedArray:
        return self.table.column(field - 1)

    def text(self, row: int, field: int) -> str:
        """One value as written in the file (for messages)."""
        return self.table.column(field - 1)[row].as_py()


@dataclass
class Scan:
    """A trace being read: its header comment lines (filled as blocks go by) and its blocks of fields."""

    header: list[str]
    blocks: Iterator[Fields]


def scan(
    stream: BinaryIO,
    *,
    fields: int,
    width: int | None = None,
    comment: bytes = b";",
    block_bytes: int | None = None,
) -> Scan:
    """Split a trace's text into blocks of :class:`Fields`.

    ``fields``: the fields a line must have; ``width``: the fields kept (the
    first ``width``; default ``fields``). Comment lines start with ``comment``
    (after optional whitespace); those before the first data line are the
    header, collected into ``Scan.header`` as the blocks are consumed.
    """
    width = fields if width is None else width
    header: list[str] = []
    return Scan(header, _fields(stream, fields, width, comment[0], block_bytes or BLOCK_BYTES, header))


def _fields(
    stream: BinaryIO, fields: int, width: int, comment: int, block_bytes: int, header: list[str]
) -> Iterator[Fields]:
    first_line, in_header = 1, True
    for block in _blocks(stream, block_bytes):
        text, starts, ends, counts, kind = _normalize(block, comment)
        data = kind == _DATA
        if in_header:
            first_data = int(np.argmax(data)) if data.any() else len(kind)
            comments = np.flatnonzero(kind[:first_data] == _COMMENT)
            if comments.size:
                originals = block.split(b"\n", first_data)[:first_data]
                header += [originals[i].decode("utf-8", "replace").strip() for i in comments]
            in_header = not data.any()
        rows = np.flatnonzero(data)
        line_numbers = rows + first_line
        first_line += len(kind)
        row_counts = counts[rows]
        short = row_counts < fields
        uniform = int(row_counts[0]) if rows.size and (row_counts == row_counts[0]).all() else 0
        if uniform >= fields:
            body = text if rows.size == len(kind) else text[_line_mask(starts[rows], ends[rows], text.size)]
            table = _read_csv(body, uniform, width)
        else:
            table = _read_csv(
                _rebuild(text, starts[rows], ends[rows], row_counts, fields, width), width, width
            )
        yield Fields(line_numbers[~short], table, line_numbers[short], row_counts[short])


def _read_csv(body: np.ndarray, columns: int, width: int) -> pa.Table:
    """Arrow's CSV reader on lines of ``columns`` single-space-separated fields.

    The first ``width`` fields are kept; missing ones (``columns < width``) are ``""``.
    """
    names = [str(i) for i in range(1, max(columns, width) + 1)]
    kept = names[: min(columns, width)]
    if body.size == 0:
        return pa.table({name: pa.array([], pa.string()) for name in names[:width]})
    table = pacsv.read_csv(
        pa.py_buffer(body),
        pacsv.ReadOptions(column_names=names[:columns], block_size=1 << 22),
        pacsv.ParseOptions(
            delimiter=" ", quote_char=False, double_quote=False, escape_char=False, newlines_in_values=False
        ),
        pacsv.ConvertOptions(
            column_types=dict.fromkeys(kept, pa.string()),
            include_columns=kept,
            null_values=[],
            strings_can_be_null=False,
        ),
    )
    for name in names[len(kept) : width]:
        table = table.append_column(name, pa.repeat(pa.scalar("", pa.string()), table.num_rows))
    return table


_DATA, _COMMENT, _BLANK = 0, 1, 2


def _normalize(block: bytes, comment: int):
    """Collapse whitespace runs to one space, strip lines; per line: start, end, field count, kind.

    Every line of the block keeps its place (so line numbers are positions);
    the kind says data, comment or blank.
    """
    b = np.frombuffer(block, np.uint8)
    space = b <= _SPACE  # space, tab, CR, LF and other control bytes
    newline = b == _NEWLINE
    drop = space.copy()
    drop[1:] &= space[:-1]  # whitespace after whitespace or a line start
    drop &= ~newline
    text = b[~drop]
    text[text >= 0x80] = ord("?")  # not UTF-8 for sure; no field of a job line needs more than ASCII
    newline = text == _NEWLINE
    blank = (text <= _SPACE) & ~newline
    text[blank] = _SPACE
    trailing = np.zeros(text.size, bool)
    trailing[:-1] = blank[:-1] & newline[1:]
    if trailing.any():
        text = text[~trailing]
        newline = text == _NEWLINE
    ends = np.flatnonzero(newline)
    starts = np.empty_like(ends)
    starts[:1] = 0
    starts[1:] = ends[:-1] + 1
    first = text[starts]
    kind = np.where(first == comment, _COMMENT, np.where(first == _NEWLINE, _BLANK, _DATA)).astype(np.int8)
    spaces = np.cumsum(text == _SPACE, dtype=np.int64)
    before = np.zeros(ends.size, np.int64)
    before[1:] = spaces[ends[:-1]]
    counts = spaces[ends] - before + 1
    return text, starts, ends, counts, kind


def _line_mask(starts: np.ndarray, ends: np.ndarray, size: int) -> np.ndarray:
    """Bytes of the given lines, newlines included."""
    delta = np.zeros(size + 1, np.int8)
    delta[starts] += 1
    delta[ends + 1] -= 1
    return np.cumsum(delta[:-1], dtype=np.int8).view(bool)


def _rebuild(
    text: np.ndarray, starts: np.ndarray, ends: np.ndarray, counts: np.ndarray, fields: int, width: int
) -> np.ndarray:
    """The data lines with exactly ``width`` fields each: extra fields cut, missing ones empty.

    Lines with fewer than ``fields`` fields are left out (the caller records
    them). Split in Python, line by line: only blocks holding such lines come here.
    """
    raw = text.tobytes()
    out = []
    for start, end, count in zip(starts.tolist(), ends.tolist(), counts.tolist(), strict=True):
        if count < fields:
            continue
        line = raw[start:end]
        if count != width:
            parts = line.split(b" ")[:width]
            line = b" ".join(parts + [b""] * (width - len(parts)))
        out.append(line)
    joined = b"\n".join(out) + b"\n" if out else b""
    return np.frombuffer(joined, np.uint8)


def ints(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Integers (Java's syntax: optional sign, digits): values (0 where unreadable) and a validity mask."""
    try:
        values = pc.cast(column, pa.int64())
        return values.to_numpy(), np.ones(len(column), bool)
    except pa.ArrowInvalid:
        pass
    valid = pc.match_substring_regex(column, INT_PATTERN)
    unsigned = pc.replace_substring_regex(column, r"^\+", "")
    values = pc.cast(pc.if_else(valid, unsigned, "0"), pa.int64())
    return values.to_numpy(), _numpy_bool(valid)


def reals(column: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Finite decimal numbers: values (0 where unreadable) and a validity mask ("nan", "inf": unreadable)."""
    try:
        values = pc.cast(column, pa.float64()).to_numpy()
        valid = np.isfinite(values)
    except pa.ArrowInvalid:
        syntax = pc.match_substring_regex(column, REAL_PATTERN)
        values = pc.cast(pc.if_else(syntax, column, "0"), pa.float64()).to_numpy()
        valid = _numpy_bool(syntax) & np.isfinite(values)
    if not valid.all():
        values = np.where(valid, values, 0.0)
    return values, valid


def _numpy_bool(mask: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return np.asarray(mask.to_numpy(zero_copy_only=False), dtype=bool)


def read_header_text(path: str | PathLike[str], comment: bytes = b";") -> list[str]:
    """The comment lines before the first data line, without reading the rest of the file."""
    lines: list[str] = []
    with open_binary(path) as stream:
        for raw in stream:
            stripped = raw.strip()
            if not stripped:
                continue
            if not stripped.startswith(comment):
                break
            lines.append(stripped.decode("utf-8", "replace"))
    return lines
