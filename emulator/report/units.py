"""Metric values as a reader wants them in a table: times in s, min, h or d, each cell naming its unit.

``summary.json`` keeps seconds; a column of "1,309,272" with "times in seconds" in a
footnote makes the reader divide by 86,400 in their head. Each cell picks its own
unit, so a column may mix "42 s" and "3.4 h": the unit is always beside the number.
"""

from __future__ import annotations

DURATIONS = (("d", 86_400.0), ("h", 3_600.0), ("min", 60.0))
"""Units of a duration, largest first: one is used from two of it up (119 s stays seconds)."""

TIMES = frozenset(
    {
        "mean_wait",
        "p50_wait",
        "p90_wait",
        "p95_wait",
        "p99_wait",
        "max_wait",
        "mean_turnaround",
        "over_deadline",
        "makespan",
    }
)
"""Metrics that are durations in seconds."""

CPU_TIMES = frozenset({"wasted_cpu_seconds"})
"""Metrics in CPU-seconds (shown in CPU-hours)."""

RATES = frozenset({"throughput"})
"""Metrics in jobs per second (shown per hour)."""


def duration(seconds: float) -> str:
    """``42 s``, ``12.5 min``, ``3.4 h``, ``15.2 d``: three significant digits in the largest unit
    of which there are at least two.

    >>> duration(42.0), duration(750.0), duration(12_240.0), duration(1_309_272.0), duration(-90.0)
    ('42 s', '12.5 min', '3.4 h', '15.2 d', '-90 s')
    """
    for name, size in DURATIONS:
        if abs(seconds) >= 2 * size:
            return f"{_digits(seconds / size)} {name}"
    return f"{_digits(seconds)} s"


def metric_cell(key: str, value) -> str:
    """One metric's value for a table: durations and rates with their unit, counts with separators."""
    return "-" if value is None else _with_unit(key, value)


def signed_cell(key: str, value, base) -> str:
    """``value - base`` with its sign and unit, and relative to ``base``: ``+3 h (+300%)``.

    >>> signed_cell("mean_wait", 14_400.0, 3_600.0), signed_cell("jobs_finished", 90, 100)
    ('+3 h (+300%)', '-10 (-10%)')
    >>> signed_cell("utilization", 0.703, 0.704)
    '-0.001 (-0.142%)'
    """
    if value is None or base is None:
        return "-"
    change = value - base
    relative = f" ({'+' if change >= 0 else ''}{_digits(100.0 * change / base)}%)" if base else ""
    return f"{'+' if change >= 0 else ''}{_with_unit(key, change)}{relative}"


def _with_unit(key: str, value: float) -> str:
    if key in TIMES:
        return duration(value)
    if key in CPU_TIMES:
        return f"{_digits(value / 3_600.0)} CPU·h"
    if key in RATES:
        return f"{_digits(value * 3_600.0)} jobs/h"
    if isinstance(value, int):
        return f"{value:,}"
    return _digits(value)


def _digits(value: float) -> str:
    """Three significant digits, but whole numbers of 1,000 and up in full with separators."""
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.3g}"
