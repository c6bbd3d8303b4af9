"""What a user may change in a job stream read from a trace, the same way for every source.

- **Selection**: a submit-time window (``start`` <= submit < ``end``, in the
  trace's own clock) and the first ``limit`` jobs of it.
- **Load scaling**: multiply every gap between consecutive submit times by
  ``interarrival_scale`` (the field's standard way to vary load: 0.5 doubles
  the arrival rate, and the offered load with it), keeping the first submit time.
- **Estimate source**: schedulers see the ``"requested"`` time (the trace's
  estimate) or the actual ``"runtime"`` (perfect estimates).
- **Status filters**: SWF status 5 (cancelled) and 0 (failed) jobs are kept
  or dropped; dropped ones are reported with the reason.

Readers apply these while reading (so a window or a limit stops early);
:func:`apply` does the same to any jobs table (Arrow replay, converts).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

__all__ = [
    "ESTIMATES",
    "KEEP_DROP",
    "apply",
    "check_options",
    "dropped_statuses",
    "scale_interarrival",
    "status_reason",
    "window_mask",
]

ESTIMATES = ("requested", "runtime")
KEEP_DROP = ("keep", "drop")
CANCELLED, FAILED = 5, 0
_STATUS_NAMES = {CANCELLED: "cancelled", FAILED: "failed"}


def check_options(
    *, estimate: str = "requested", cancelled: str = "keep", failed: str = "keep", scale: float = 1.0
) -> None:
    """Raise ValueError naming the option and the accepted values."""
    if estimate not in ESTIMATES:
        raise ValueError(f"unknown estimate source {estimate!r}; accepted: {', '.join(map(repr, ESTIMATES))}")
    for name, value in (("cancelled", cancelled), ("failed", failed)):
        if value not in KEEP_DROP:
            raise ValueError(f"{name} must be 'keep' or 'drop', got {value!r}")
    if not scale > 0:
        raise ValueError(f"interarrival_scale must be > 0, got {scale!r}")


def dropped_statuses(cancelled: str, failed: str) -> tuple[int, ...]:
    return tuple(code for code, how in ((CANCELLED, cancelled), (FAILED, failed)) if how == "drop")


def status_reason(code: int) -> str:
    name = _STATUS_NAMES[code]
    return f'status {code} ({name}), dropped by {name} = "drop"'


def window_mask(submit: np.ndarray, start: float | None, end: float | None) -> np.ndarray:
    """Jobs with ``start <= submit < end`` (either bound may be None)."""
    inside = np.ones(submit.shape, bool)
    if start is not None:
        inside &= submit >= start
    if end is not None:
        inside &= submit < end
    return inside


def scale_interarrival(submit: np.ndarray, scale: float) -> np.ndarray:
    """Submit times with every gap multiplied by ``scale``; the earliest submit time stays put.

    ``first + (submit - first) * scale`` scales each gap between consecutive
    submit times, whatever the order of the rows.
    """
    if scale == 1.0 or submit.size == 0:
        return submit
    first = submit.min()
    return first + (submit - first) * scale


def apply(
    table: pa.Table,
    *,
    start: float | None = None,
    end: float | None = None,
    limit: int | None = None,
    interarrival_scale: float = 1.0,
    estimate: str = "requested",
) -> tuple[pa.Table, int]:
    """A jobs table selected, scaled and with the chosen estimates; and how many jobs were left out.

    ``estimate="requested"`` keeps the table's estimates (for a table, they are
    already the requested times).
    """
    check_options(estimate=estimate, scale=interarrival_scale)
    submit = table.column("submit").to_numpy()
    keep = window_mask(submit, start, end)
    if limit is not None:
        keep &= np.cumsum(keep) <= limit
    left_out = int(np.count_nonzero(~keep))
    if left_out:
        table = table.filter(pa.array(keep))
        submit = submit[keep]
    if interarrival_scale != 1.0:
        table = table.set_column(
            table.column_names.index("submit"),
            "submit",
            pa.array(scale_interarrival(submit, interarrival_scale)),
        )
    if estimate == "runtime":
        table = table.set_column(table.column_names.index("estimate"), "estimate", table.column("runtime"))
    return table, left_out


def has_status(table: pa.Table, codes: tuple[int, ...]) -> np.ndarray:
    """Rows whose ``swf_status`` is one of ``codes`` (none when the table has no status column)."""
    if not codes or "swf_status" not in table.column_names:
        return np.zeros(table.num_rows, bool)
    status = table.column("swf_status")
    return np.asarray(pc.fill_null(pc.is_in(status, pa.array(codes, pa.int64())), False).to_numpy(), bool)
