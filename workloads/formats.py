"""Trace formats: each one's name, the file names that say it, and what reads and writes it.

One registry (:data:`FORMATS`) that the scenario loader (``[workload]`` and ``[platform]``
``source``), :mod:`workloads.sources`, :mod:`workloads.convert` and ``gridemu convert`` look
formats up in, so a format is declared once rather than string-compared in each of them. A
format does what its declaration gives it: ``read`` (``convert``'s reader), ``write``,
``workload`` (a scenario's ``[workload]`` source), ``platform`` (a ``[platform]`` source).

>>> detect("KTH-SP2-1996-2.1-cln.swf.gz").name, detect("jobs.csv").name
('swf', 'batsim')
>>> names("write")
('swf', 'gwf', 'arrow', 'parquet', 'batsim')
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from emulator.core.config import ScenarioError, Table
from emulator.core.model import PLACEMENTS, Platform

from . import transform
from .alea import ALEA_PLACEMENTS, ALEA_SITES, read_alea, read_machines
from .batsim import write_batsim
from .columns import read_header_text
from .export import write_gwf, write_swf
from .gwf import GWF_SITES, read_gwf
from .header import HEADER_KEY, header_lines_of, header_of
from .parquet import write_parquet
from .platforms import from_machines, from_sites, from_swf_header, trace_name
from .swf import RULES, SITES, SwfTrace, parse_header, read_swf
from .table import JOB_INPUTS, read_arrow, trace_columns, write_arrow

__all__ = ["FORMATS", "Converted", "Format", "detect", "find", "get", "names"]

COMPRESSIONS = (".gz", ".zip")
"""Endings a trace's name may add after its format's suffix (the readers open them as they are)."""


@dataclass
class Converted:
    """A stream as a reader gives it: its table, header, and what the reader left out."""

    table: pa.Table
    header: dict[str, str] = field(default_factory=dict)
    skipped: list = field(default_factory=list)
    left_out: int = 0


@dataclass(frozen=True)
class Format:
    """One trace format and what gridemu can do with it (None: not that)."""

    name: str
    suffixes: tuple[str, ...] = ()
    """File names ending so (before a compression ending) are in this format."""
    read: Callable[..., Converted] | None = None
    """``read(path, **options)``: the stream, with the reader's options (rules, sites, selection)."""
    write: Callable[[Converted, Path, bool | None], Any] | None = None
    """``write(stream, path, schedule)``: ``schedule`` writes a run's outcome rather than the trace's."""
    workload: Callable[[Table, Path, Platform, str, dict], Converted] | None = None
    """``workload(table, path, platform, site, selection)``: a ``[workload]`` of this source."""
    platform: Callable[[Table, Path], list[dict]] | None = None
    """``platform(table, path)``: the ``[[clusters]]`` a ``[platform]`` of this source describes."""
    rules: str | None = None
    """The rules its reader applies when none are given; None: it has no choice of rules."""
    names_sites: bool = False
    """Whether its reader names every job's site itself (a scenario's ``site`` goes to the reader)."""


# --- reading and writing: convert ----------------------------------------------------------


def _converted(trace: SwfTrace) -> Converted:
    return Converted(trace.table, trace.header, trace.skipped, trace.selected_out)


def _trace(reader: Callable[..., SwfTrace]) -> Callable[..., Converted]:
    """A trace reader as ``convert`` calls it."""
    return lambda path, **options: _converted(reader(path, **options))


def _read_arrow(path: str | Path, **options) -> Converted:
    """A jobs table (a run directory: its ``jobs.arrow``) with the selection and status filters."""
    source = Path(path) / "jobs.arrow" if Path(path).is_dir() else Path(path)
    table = read_arrow(source)
    selection = {
        k: options.pop(k) for k in ("start", "end", "limit", "interarrival_scale", "estimate") if k in options
    }
    drop = transform.dropped_statuses(options.pop("cancelled", "keep"), options.pop("failed", "keep"))
    if options:
        raise ValueError(f"options {', '.join(sorted(options))} do not apply to an Arrow jobs table")
    dropped = transform.has_status(table, drop)
    if dropped.any():
        table = table.filter(pa.array(~dropped))
    table, left_out = transform.apply(table, **selection)
    return Converted(table, header_of(table), [], left_out + int(dropped.sum()))


def _write_arrow(stream: Converted, path: Path, schedule: bool | None) -> None:
    """The table, its trace's header in the schema metadata (so Arrow -> SWF gives it back)."""
    metadata = dict(stream.table.schema.metadata or {})
    if stream.header:
        metadata[HEADER_KEY] = json.dumps(stream.header).encode()
    write_arrow(stream.table.replace_schema_metadata(metadata or None), path)


def _write_swf(stream: Converted, path: Path, schedule: bool | None) -> None:
    """SWF, with the trace's own header lines when the table has them, else its parsed header."""
    own = bool(header_lines_of(stream.table))
    write_swf(stream.table, path, header=None if own else stream.header or None, schedule=schedule)


# --- scenario sources: [workload] and [platform] ---------------------------------------------


def _trace_keys(t: Table) -> dict[str, Any]:
    """The ``[workload]`` keys every trace format's reader shares."""
    return {
        "rating": t.number("rating", 1.0, low=0.0, strict_low=True),
        "strict": t.get("strict", bool, False),
        "cancelled": t.choice("cancelled", transform.KEEP_DROP, "keep"),
        "failed": t.choice("failed", transform.KEEP_DROP, "keep"),
    }


def _swf_workload(t: Table, path: Path, platform: Platform, site: str, options: dict) -> Converted:
    options |= _trace_keys(t) | {
        "rules": t.choice("rules", RULES, SWF.rules),
        "placement": t.choice("placement", PLACEMENTS, "spread"),
        "sites": t.choice("sites", SITES, "none"),
        "runtime_field": t.get(
            "runtime_field",
            int,
            9,
            check=lambda v: v in (4, 9),
            expected="4 or 9 (gridsim rules' run time field)",
        ),
    }
    return SWF.read(path, site=site, **options)


def _gwf_workload(t: Table, path: Path, platform: Platform, site: str, options: dict) -> Converted:
    options |= _trace_keys(t) | {"placement": t.choice("placement", PLACEMENTS, "spread")}
    sites = t.choice("sites", tuple(GWF_SITES), "none" if site else "origin")
    return GWF.read(path, site=site, sites=sites, **options)


def _alea_workload(t: Table, path: Path, platform: Platform, site: str, options: dict) -> Converted:
    options |= _trace_keys(t) | {
        "rules": t.choice("rules", RULES, ALEA.rules),
        "placement": t.choice("placement", ALEA_PLACEMENTS, "request"),
        "sites": t.choice("sites", ALEA_SITES, "request"),
    }
    trace = read_alea(path, clusters=[c.name for c in platform.clusters], **options)
    if site:
        trace.set_site(site)
    return _converted(trace)


def _arrow_workload(t: Table, path: Path, platform: Platform, site: str, options: dict) -> Converted:
    """A jobs table's inputs and trace columns (a run's outcome columns are left behind)."""
    table = read_arrow(path)
    missing = [name for name in JOB_INPUTS.names if name not in table.column_names]
    if missing:
        raise ValueError(f"{path} is not a jobs table: no column {', '.join(missing)}")
    table, _ = transform.apply(table.select([*JOB_INPUTS.names, *trace_columns(table)]), **options)
    return Converted(table)


def _link(t: Table) -> dict[str, float]:
    """The machines' rating and the links of the clusters a trace's platform builds."""
    return {
        "mips": t.number("mips", 1.0, low=0.0, strict_low=True),
        "latency": t.number("latency", 1.0, low=0.0, strict_low=True),
        "bandwidth": t.number("bandwidth", math.inf, low=0.0, strict_low=True),
    }


def _reading(t: Table, build: Callable[[], list[dict]]) -> list[dict]:
    """``build()``, a file's errors told as the ``path`` key's."""
    try:
        return build()
    except (OSError, ValueError) as err:
        raise ScenarioError(f"{t.source}: key '{t.key('path')}': {err}") from None


def _swf_platform(t: Table, path: Path) -> list[dict]:
    """One cluster from the header, or (``sites``) one per site the jobs name."""
    sites = t.choice("sites", SITES, SITES[0])
    name = t.get("name", str, trace_name(str(path))) if sites == "none" else ""
    link = _link(t)
    if sites == "none":
        return _reading(t, lambda: from_swf_header(parse_header(read_header_text(path)), name, **link))
    return _reading(t, lambda: from_sites(read_swf(path, rules="pwa", sites=sites).table, **link))


def _gwf_platform(t: Table, path: Path) -> list[dict]:
    sites = t.choice("sites", ("origin", "last-run"), "origin")
    link = _link(t)
    return _reading(t, lambda: from_sites(read_gwf(path, sites=sites).table, **link))


def _alea_platform(t: Table, path: Path) -> list[dict]:
    link = _link(t)
    return _reading(t, lambda: from_machines(read_machines(path), **link))


# --- the registry ----------------------------------------------------------------------------

SWF = Format(
    "swf",
    (".swf",),
    read=_trace(read_swf),
    write=_write_swf,
    workload=_swf_workload,
    platform=_swf_platform,
    rules="gridsim",
    names_sites=True,
)
GWF = Format(
    "gwf",
    (".gwf",),
    read=_trace(read_gwf),
    write=lambda stream, path, schedule: write_gwf(stream.table, path, schedule=schedule),
    workload=_gwf_workload,
    platform=_gwf_platform,
    names_sites=True,
)
ALEA = Format(
    "alea",
    read=_trace(read_alea),
    workload=_alea_workload,
    platform=_alea_platform,
    rules="pwa",
    names_sites=True,
)
"""Alea's extended SWF: named ``.swf`` too, so only a ``.machines`` file or a ``source`` tells it."""
ARROW = Format(
    "arrow", (".arrow", ".feather", ".ipc"), read=_read_arrow, write=_write_arrow, workload=_arrow_workload
)
PARQUET = Format(
    "parquet", (".parquet",), write=lambda stream, path, schedule: write_parquet(stream.table, path)
)
BATSIM = Format("batsim", (".csv",), write=lambda stream, path, schedule: write_batsim(stream.table, path))

FORMATS: dict[str, Format] = {f.name: f for f in (SWF, GWF, ALEA, ARROW, PARQUET, BATSIM)}
"""Every format by name, in the order listings and error messages give them."""

CAN = {
    "read": "be read",
    "write": "be written",
    "workload": "be a [workload] source",
    "platform": "be a [platform] source",
}
"""What each ability means, for error messages."""


def names(ability: str | None = None) -> tuple[str, ...]:
    """The formats that can do ``ability`` (``"read"``, ``"write"``, ``"workload"``, ``"platform"``;
    None: all of them)."""
    return tuple(f.name for f in FORMATS.values() if ability is None or getattr(f, ability) is not None)


def find(name: str) -> Format | None:
    """The format ``name``, or None when it names none (a generator's or the scenario's own source)."""
    return FORMATS.get(name)


def get(name: str, ability: str) -> Format:
    """The format ``name``, which must be able to do ``ability``; one line saying what was expected."""
    fmt = FORMATS.get(name)
    if fmt is None:
        raise ValueError(f"unknown format {name!r}; expected one of {', '.join(names(ability))}")
    if getattr(fmt, ability) is None:
        raise ValueError(
            f"format {name!r} cannot {CAN[ability]}; expected one of {', '.join(names(ability))}"
        )
    return fmt


def detect(path: str | Path) -> Format:
    """The format a file's name says (a run directory: its Arrow ``jobs.arrow``); ValueError when the
    name says none."""
    path = Path(path)
    if path.is_dir():
        return ARROW
    name = path.name.lower()
    for ending in COMPRESSIONS:
        name = name.removesuffix(ending)
    for fmt in FORMATS.values():
        if fmt.suffixes and name.endswith(fmt.suffixes):
            return fmt
    known = ", ".join(f.name for f in FORMATS.values() if f.suffixes)
    raise ValueError(f"{path}: cannot tell the format from the name; give it ({known})")
