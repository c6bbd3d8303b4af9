"""One look for every figure: how a figure is made, its colours, its PNG bytes.

Figures are built as :class:`ReportFigure` objects, never through pyplot: no display
is needed (the Agg renderer draws them), there is no global figure list to leak
or close, and a notebook shows one inline because it renders itself as PNG.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.patches import Patch

DPI = 110
"""Pixels per inch of every PNG: sharp on a page, small enough to inline a dozen of them."""

WIDTH = 10.0
"""Figure width in inches (the page's column width at :data:`DPI`)."""

STATE_COLOURS = {"late": "#d62728", "on time": "#2ca02c", "no deadline": "#1f77b4", "rejected": "#7f7f7f"}
"""Deadline outcomes keep their colours in every figure: red always means late."""


class ReportFigure(Figure):
    """A matplotlib Figure that Jupyter displays inline even when pyplot was never imported."""

    def _repr_png_(self) -> bytes:
        return png_bytes(self)


def new_figure(height: float, width: float = WIDTH) -> ReportFigure:
    return ReportFigure(figsize=(width, height), dpi=DPI, layout="constrained")


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG (what the page inlines and ``--png`` writes: the same bytes)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def palette(labels: list[str]) -> list[str]:
    """A colour per label: fixed ones for deadline outcomes, tab10 (cycled) for anything else."""
    cycle = colormaps["tab10"].colors
    return [STATE_COLOURS.get(label, _hex(cycle[i % len(cycle)])) for i, label in enumerate(labels)]


def legend_patches(labels: list[str], colours: list[str]) -> list[Patch]:
    return [Patch(facecolor=c, label=label or "(none)") for label, c in zip(labels, colours, strict=True)]


def steps(time: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A running total as a step series: the level after the last change at each distinct time.

    Several events at one time would draw zero-width spikes; only the level after all of
    them is real, as in the usage metrics.
    """
    level = np.cumsum(delta)
    last = np.r_[time[1:] != time[:-1], True] if len(time) else np.zeros(0, dtype=bool)
    return time[last], level[last]


def _hex(rgb: tuple[float, ...]) -> str:
    return "#" + "".join(f"{round(v * 255):02x}" for v in rgb[:3])
