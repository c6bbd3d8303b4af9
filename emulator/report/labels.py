"""Short labels for what sweep figures name: values (``easy[order=sjf]`` -> ``EASY-SJF``), keys, metrics.

A plug-in spec or a long policy name reads fine in a table and not under a
3.5-inch axis; a paper uses its own short names. They come from ``--label
RAW=SHORT`` (repeatable) and ``--labels FILE``, a TOML table (``"RAW" =
"SHORT"`` lines) or a CSV file of ``RAW,SHORT`` rows; ``--label`` wins over the
file. A key's or metric's label replaces its readable name (the unit stays).
"""

from __future__ import annotations

import csv
import tomllib
from collections.abc import Sequence
from pathlib import Path

from .style import ReportError

CSV_HEADER = ["value", "label"]
"""An optional first row of a labels CSV file."""


def read_labels(items: Sequence[str] = (), files: Sequence[Path | str] = ()) -> dict[str, str]:
    """The labels of ``files`` (TOML or CSV, in order), then ``items`` (``RAW=SHORT``): later ones win."""
    labels: dict[str, str] = {}
    for path in files:
        labels.update(read_labels_file(Path(path)))
    labels.update(parse_label(item) for item in items)
    return labels


def parse_label(item: str) -> tuple[str, str]:
    """``RAW=SHORT`` split at its first ``=`` outside brackets (``easy[order=sjf]=EASY-SJF``)."""
    depth = 0
    for at, char in enumerate(item):
        depth += {"[": 1, "]": -1}.get(char, 0)
        if char == "=" and depth == 0 and 0 < at < len(item) - 1:
            return item[:at], item[at + 1 :]
    raise ReportError(f"label {item!r}: expected RAW=SHORT, e.g. 'easy[order=sjf]=EASY-SJF'")


def read_labels_file(path: Path) -> dict[str, str]:
    """A labels file: ``.toml`` (``"RAW" = "SHORT"``) or ``.csv`` (``RAW,SHORT`` rows, optional header)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ReportError(f"{path}: cannot read the labels file ({err.strerror})") from None
    if path.suffix == ".toml":
        return _toml_labels(path, text)
    if path.suffix == ".csv":
        return _csv_labels(path, text)
    raise ReportError(f"{path}: a labels file is .toml or .csv, not {path.suffix or 'without a suffix'}")


def _toml_labels(path: Path, text: str) -> dict[str, str]:
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ReportError(f"{path}: invalid TOML: {err}") from None
    for raw, short in table.items():
        if not isinstance(short, str) or not short:
            raise ReportError(f'{path}: key {raw!r}: expected a label, "{raw}" = "SHORT"; got {short!r}')
    return table


def _csv_labels(path: Path, text: str) -> dict[str, str]:
    labels = {}
    for line, row in enumerate(csv.reader(text.splitlines()), 1):
        if not row or row[0].startswith("#") or (line == 1 and row == CSV_HEADER):
            continue
        if len(row) != 2 or not all(row):
            raise ReportError(f"{path}:{line}: expected two cells, value,label; got {row!r}")
        labels[row[0]] = row[1]
    return labels
