"""The ``[workload]`` and ``[platform]`` tables of a scenario file: which source, with which options.

:mod:`emulator.data.scenario` validates the rest of a scenario and calls
:func:`workload_table` and :func:`platform_clusters`; both read their keys
through :class:`emulator.core.config.Table`, so every error names the file, the
key, the value and what was expected, and the effective configuration
records every option with its default.

Workload sources: ``synthetic`` and the papers' generators (``two-level``,
``cs2``, ``mcrs``, ``muscle``: every parameter a key), traces (``swf``,
``gwf``, ``alea``) and ``arrow`` (a jobs table: a run's ``jobs.arrow``
or a converted trace). Platform sources: the generators, and ``swf`` (the
header, or one cluster per site), ``gwf`` (one cluster per site) and
``alea`` (a ``.machines`` file).
"""

from __future__ import annotations

import math
import typing
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from emulator.core.config import ScenarioError, Table
from emulator.core.model import PLACEMENTS, Platform

from . import formats, resample, transform
from .generators import PLATFORMS, WORKLOADS

__all__ = ["PLATFORM_SOURCES", "TRACE_SOURCES", "platform_clusters", "workload_table"]

TRACE_SOURCES = formats.names("workload")
PLATFORM_SOURCES = (*formats.names("platform"), *PLATFORMS)


MAX_COUNT = 10**7
"""The largest count a generator key may give (jobs, machines): beyond it, a typo, not a run (ten
million synthetic jobs take ~5 GB; the largest archive traces hold a few million)."""

MAY_BE_INFINITE = frozenset({"bandwidth"})
"""Generator keys for which infinity means something (no transfer time); every other number is finite."""


def workload_table(
    t: Table, source: str, platform: Platform, rng: np.random.Generator, base: Path, site: str, seed: int = 0
) -> tuple[pa.Table, list[str]]:
    """The jobs table of ``[workload]`` (``source`` already read) and the trace lines it skipped; a
    trace's is seed ``seed``'s replicate when the table asks for one (:mod:`workloads.resample`)."""
    if source in WORKLOADS:
        generator = WORKLOADS[source]
        spec = read_spec(t, generator.defaults)
        try:
            return generator.draw(spec, rng, platform), []
        except ValueError as err:
            raise ScenarioError(f"{t.source}: [{t.path}] source {source!r}: {err}") from None
    path = _path(t, base)
    options = _selection(t)
    replicate = _resample(t)
    try:
        trace = formats.get(source, "workload").workload(t, path, platform, site, options)
    except (OSError, ValueError) as err:  # TraceError is a ValueError
        raise ScenarioError(f"{t.source}: key '{t.key('path')}': {err}") from None
    skipped = [f"{path.name}, line {s.line}: {s.reason}" for s in trace.skipped]
    return resample.apply(trace.table, replicate, seed, rng), skipped


def _resample(t: Table) -> resample.Resample:
    """The replicate keys of a trace (:mod:`workloads.resample`); ``windows`` only with ``"window"``."""
    how = t.choice("resample", resample.RESAMPLES, "none")
    windows = resample.DEFAULT_WINDOWS
    if how == "window":  # elsewhere an unknown key: a count of windows that would do nothing
        windows = t.number("windows", windows, low=1, integer=True, high=MAX_COUNT)
    noise = t.number("estimate_noise", 0.0, low=0.0, finite=True)
    return resample.Resample(how, windows, noise)


def _path(t: Table, base: Path) -> Path:
    path = Path(t.get("path", str))
    return path if path.is_absolute() else base / path


def _selection(t: Table) -> dict[str, Any]:
    """The options every trace source shares (:mod:`workloads.transform`)."""
    options: dict[str, Any] = {
        "limit": t.number("limit", 0, low=0, integer=True) or None,
        "interarrival_scale": t.number("interarrival_scale", 1.0, low=0.0, strict_low=True),
        "estimate": t.choice("estimate", transform.ESTIMATES, "requested"),
    }
    for bound in ("start", "end"):
        if t.has(bound):
            options[bound] = t.number(bound)
    return options


# --- platforms ---------------------------------------------------------------------------------


def platform_clusters(t: Table, base: Path, rng: np.random.Generator) -> list[dict]:
    """The ``[[clusters]]`` tables ``[platform]`` describes (a generator's, or a trace's machines)."""
    source = t.choice("source", PLATFORM_SOURCES)
    if source in PLATFORMS:
        generator = PLATFORMS[source]
        spec = read_spec(t, generator.defaults)
        try:
            return generator.draw(spec, rng)
        except ValueError as err:
            raise ScenarioError(f"{t.source}: [{t.path}] source {source!r}: {err}") from None
    return formats.get(source, "platform").platform(t, _path(t, base))


# --- generator parameters ----------------------------------------------------------------------


def read_spec(t: Table, defaults: Any) -> Any:
    """A generator's parameters: a key per dataclass field, typed by its annotation, ``defaults`` filled in.

    ``tuple[x, x]`` is a ``[low, high]`` range, ``tuple[x, ...]`` a non-empty
    list, ``tuple[x, x, x]`` a list of exactly three; numbers are >= 0.
    ``tuple[str, ...]`` is a list of strings (possibly empty).
    """
    hints = typing.get_type_hints(type(defaults))
    values: dict[str, Any] = {}
    for f in fields(defaults):
        default = getattr(defaults, f.name)
        hint = hints[f.name]
        args = typing.get_args(hint)
        if typing.get_origin(hint) is tuple and args[0] is str:
            strings = t.get(
                f.name,
                list,
                list(default),
                check=lambda v: all(isinstance(x, str) for x in v),
                expected="a list of strings",
            )
            values[f.name] = tuple(strings)
        elif typing.get_origin(hint) is tuple:
            integer = args[0] is int
            if len(args) == 2 and args[1] is not Ellipsis:
                values[f.name] = t.pair(f.name, default, integer=integer, low=1 if f.name == "cpus" else 0)
            else:
                values[f.name] = _numbers(
                    t, f.name, default, integer, None if args[-1] is Ellipsis else len(args)
                )
        elif f.name == "placement":
            values[f.name] = t.choice(f.name, PLACEMENTS, default)
        elif hint is bool:
            values[f.name] = t.get(f.name, bool, default)
        elif hint is str:
            values[f.name] = t.get(f.name, str, default)
        else:
            finite = f.name not in MAY_BE_INFINITE
            high = MAX_COUNT if hint is int else math.inf
            values[f.name] = t.number(f.name, default, low=0, integer=hint is int, finite=finite, high=high)
    return replace(defaults, **values)


def _numbers(t: Table, name: str, default: tuple, integer: bool, length: int | None) -> tuple:
    kind = int if integer else (int, float)
    what = "integers" if integer else "numbers"
    size = f"{length} " if length else "one or more "
    value = t.get(
        name,
        list,
        list(default),
        check=lambda v: (
            (len(v) == length if length else len(v) > 0)
            and all(
                isinstance(x, kind) and not isinstance(x, bool) and math.isfinite(x) and x >= 0 for x in v
            )
        ),
        expected=f"a list of {size}finite {what} >= 0",
    )
    result = tuple(int(x) if integer else float(x) for x in value)
    t.effective[name] = list(result)
    return result
