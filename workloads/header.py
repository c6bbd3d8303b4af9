"""SWF headers: the ``Key: value`` comments before the first job, and the site names they give.

PWA headers repeat keys (Note, Queue, Partition) and wrap long values onto
keyless comment lines: both are kept, joined by newlines. Grid logs name
their sites in ``Partition: N name`` lines (LCG-2005-1: 170 of them);
clusters built from a trace take the same names (:mod:`workloads.platforms`).

A jobs table read from an SWF trace carries its header in the Arrow schema
metadata, both parsed (:data:`HEADER_KEY`) and as the comment lines
themselves (:data:`HEADER_LINES_KEY`), so an SWF export writes the
original header line for line, through conversions and runs alike.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pyarrow as pa

__all__ = [
    "HEADER_KEY",
    "HEADER_LINES_KEY",
    "drop_keys",
    "header_lines_of",
    "header_of",
    "parse_header",
    "site_column",
    "site_label",
    "site_names",
    "with_header",
]

HEADER_KEY = b"swf_header"
"""Schema metadata key holding a trace's header (JSON ``{key: value}``) in a converted jobs table."""
HEADER_LINES_KEY = b"swf_header_lines"
"""Schema metadata key holding a trace's header comment lines verbatim (JSON list), for SWF export."""

_HEADER = re.compile(r";\s*([A-Za-z][\w-]*):(?!\S)\s*(.*?)\s*$")  # "Key: value", not "http://..."


def parse_header(lines: list[str]) -> dict[str, str]:
    """The header's ``Key: value`` comments as a dict (a bare ``;`` ends a value)."""
    header: dict[str, str] = {}
    last_key = ""
    for text in lines:
        last_key = _header_line(header, text, last_key)
    return header


def _header_line(header: dict[str, str], text: str, last_key: str) -> str:
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


def site_names(header: dict[str, str], key: str) -> dict[int, str]:
    """Numbers to names from the header's ``Partition: 1 name`` / ``Queue: 0 name`` lines.

    The first word after the number names it (a ``-`` is skipped: ``Queue: 1 -
    Normal jobs``); the first line for a number wins, and a name is used once.
    """
    names: dict[int, str] = {}
    for value in header.get(key, "").split("\n"):
        words = [w for w in value.split() if w != "-"]
        if len(words) >= 2 and words[0].isdigit():
            number, label = int(words[0]), words[1]
            if number not in names and label not in names.values():
                names[number] = label
    return names


def site_label(number: int, names: dict[int, str], sites: str) -> str:
    """A site's name: the header's, else ``partition<N>`` / ``queue<N>``; "" for -1 (unknown)."""
    if number < 0:
        return ""
    return names.get(number, f"{sites}{number}")


def site_column(numbers: pa.Array, names: dict[int, str], sites: str) -> pa.Array:
    """Each job's site name from its partition (or queue) number; -1 or unreadable: no site."""
    values = np.asarray(numbers.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    codes, inverse = np.unique(values, return_inverse=True)
    labels = pa.array([site_label(int(c), names, sites) for c in codes], pa.string())
    return pa.DictionaryArray.from_arrays(pa.array(inverse.astype(np.int32)), labels).cast(pa.string())


def with_header(table: pa.Table, header: dict[str, str], lines: list[str]) -> pa.Table:
    """``table`` carrying a trace's header (parsed and verbatim) in its schema metadata."""
    metadata = dict(table.schema.metadata or {})
    metadata[HEADER_KEY] = json.dumps(header).encode()
    metadata[HEADER_LINES_KEY] = json.dumps(lines).encode()
    return table.replace_schema_metadata(metadata)


def header_of(table: pa.Table) -> dict[str, str]:
    """The SWF/GWF header a converted table carries in its schema metadata ({} if none)."""
    raw = (table.schema.metadata or {}).get(HEADER_KEY)
    return json.loads(raw) if raw else {}


def header_lines_of(table: pa.Table) -> list[str]:
    """The header comment lines, verbatim, of the trace a table was read from ([] if unknown)."""
    raw = (table.schema.metadata or {}).get(HEADER_LINES_KEY)
    return json.loads(raw) if raw else []


def drop_keys(lines: list[str], keys: set[str]) -> list[str]:
    """Header ``lines`` without the ``Key: value`` lines of ``keys`` and their continuation lines."""
    kept, current = [], ""
    for text in lines:
        match = _HEADER.match(text)
        if match:
            current = match.group(1)
        elif not text[1:].strip():  # a bare ";" ends a value
            current = ""
        if current not in keys:
            kept.append(text)
    return kept
