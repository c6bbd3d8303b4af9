"""What a sweep's figures show and how: the metrics, one figure each or one panel figure, log axes
per metric, short labels, the width they are laid out for (``gridemu report``'s figure options)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..engine.sweep import METRICS
from .style import ReportError

LOG_OPTIONS = ("auto", "none", "x", "y", "xy")
"""A log choice: auto (where positive values span over :data:`DECADES`), none, or the axes to force."""

DECADES = 2.0
"""An axis whose positive values span more than this many powers of ten is drawn in log scale (auto)."""

SWEEP_WIDTH = 7.5
"""Default width of a sweep figure in inches."""


@dataclass(frozen=True)
class LogScale:
    """Which axes are log scale, per metric: ``default`` for every figure, ``metrics`` by name.

    ``auto`` makes an axis log where its values are all positive and span over :data:`DECADES`
    decades, and never a bounded metric's y axis (utilisation in %, shares). A default forcing y
    (``--log y``) also leaves bounded metrics linear; only naming one (``--log utilization=y``)
    forces it. No axis with a value <= 0 is ever log (those values would vanish).
    """

    default: str = "auto"
    metrics: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, items: str | Sequence[str] = "auto") -> LogScale:
        """From ``--log`` values: ``AXES`` (a default) or ``METRIC=AXES``, AXES one of :data:`LOG_OPTIONS`."""
        default, metrics = "auto", {}
        for item in [items] if isinstance(items, str) else items:
            metric, _, axes = item.rpartition("=")
            if axes not in LOG_OPTIONS or (metric and metric not in METRICS) or item.startswith("="):
                raise ReportError(
                    f"log {item!r}: expected {', '.join(LOG_OPTIONS)} or METRIC=one of them, "
                    f"METRIC one of {', '.join(METRICS)}"
                )
            if metric:
                metrics[metric] = axes
            else:
                default = axes
        return cls(default, metrics)

    def axes(self, metric: str, bounded: bool, xs: np.ndarray, ys: np.ndarray) -> tuple[bool, bool]:
        """Whether x (``xs`` empty when categorical) and y are log for ``metric``'s values."""
        choice = self.metrics.get(metric, self.default)
        auto = choice == "auto"
        log_x = bool(len(xs)) and ("x" in choice or (auto and _decades(xs) > DECADES))
        log_y = not (bounded and metric not in self.metrics) and (
            "y" in choice or (auto and _decades(ys) > DECADES)
        )
        return log_x and _decades(xs) >= 0, log_y and _decades(ys) >= 0


@dataclass(frozen=True)
class SweepOptions:
    """A sweep report's figure options: ``metrics`` to draw (empty: every metric some point has), in one
    ``panel`` figure or one figure each, ``log`` axes, short ``labels``, ``width`` in inches."""

    metrics: tuple[str, ...] = ()
    panel: bool = False
    log: LogScale = field(default_factory=LogScale)
    labels: Mapping[str, str] = field(default_factory=dict)
    width: float = SWEEP_WIDTH

    def __post_init__(self) -> None:
        unknown = [m for m in self.metrics if m not in METRICS]
        if unknown:
            raise ReportError(f"metrics: unknown {', '.join(unknown)}; expected some of {', '.join(METRICS)}")

    def label(self, name: str) -> str:
        """A value's, key's or metric's short label, the name itself when it has none."""
        return self.labels.get(name, name)


def parse_metrics(text: str) -> tuple[str, ...]:
    """``--metrics mean_wait,mean_bounded_slowdown``: the names, checked by :class:`SweepOptions`."""
    return tuple(m.strip() for m in text.split(",") if m.strip())


def _decades(values: np.ndarray) -> float:
    """Powers of ten the finite values span; -1 when some value is <= 0 (or none is finite)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    if not len(values) or values.min() <= 0:
        return -1.0
    return float(np.log10(values.max() / values.min()))
