"""Text that fits its figure: category tick labels, legends and axis labels, measured by the renderer.

A figure is built once and may be drawn at any width (``--width 3.5`` for a
paper's column, 10 for the page), so each of these is a :data:`Fitter`
that :class:`.style.ReportFigure` runs at every draw, after the layout and
before the drawing: it measures the text with the renderer's own extents at
the size being drawn and wraps, rotates or regroups it until nothing overlaps
and nothing sticks out of the figure.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable

from matplotlib.axes import Axes
from matplotlib.axis import Axis
from matplotlib.backend_bases import RendererBase
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.legend import Legend
from matplotlib.text import Text
from matplotlib.ticker import FixedFormatter, NullFormatter

Fitter = Callable[[RendererBase], None]
"""Adjusts a figure's text to the space it has (wraps, rotates, regroups), measured by the renderer."""

BREAKS = re.compile(r"(?<=[,\s])|(?=\[)")
"""Where a label wraps first: after a comma or space, and before a bracket (``easy[order=sjf]`` as
``easy`` / ``[order=sjf]``)."""

WEAK_BREAKS = re.compile(r"(?<=[-_/=])")
"""Where a line still too wide wraps next: after a hyphen, underscore, slash or equals sign
(``most-bandwidth`` as ``most-`` / ``bandwidth``)."""

GAP = 0.6
"""Space kept between neighbouring tick labels, in ems of their font."""

SHRINK = 0.85
"""Tick labels may shrink to this share of their font to stay horizontal."""

MIN_PIECE = 3
"""Pieces shorter than this never start a line (``policy-0`` does not wrap as ``policy-`` / ``0``)."""

MAX_LINES = 3
"""Tick labels wrapped onto more lines than this read worse than vertical ones."""

SMALLEST = 5.0
"""Points: vertical tick labels shrink to this at most before they are left to touch."""

Measure = Callable[[str], float]


def measure(renderer: RendererBase, font: FontProperties) -> Measure:
    """The width in pixels of a text (its widest line) in ``font``, as ``renderer`` draws it."""

    def width(text: str) -> float:
        lines = text.split("\n")
        return max(renderer.get_text_width_height_descent(line, font, ismath=False)[0] for line in lines)

    return width


def wrap(text: str, room: float, width: Measure) -> str:
    """``text`` in lines no wider than ``room`` pixels where :data:`BREAKS`, then :data:`WEAK_BREAKS`,
    allow (greedy; a piece wider than ``room`` keeps a line of its own)."""
    lines = []
    for line in _greedy(BREAKS.split(text), room, width):
        lines += _greedy(WEAK_BREAKS.split(line), room, width) if width(line) > room else [line]
    return "\n".join(line.rstrip() for line in lines)


def _greedy(pieces: list[str], room: float, width: Measure) -> list[str]:
    lines: list[str] = []
    for piece in (p for p in pieces if p):
        if lines and (width(lines[-1] + piece) <= room or len(piece) < MIN_PIECE):
            lines[-1] += piece
        else:
            lines.append(piece)
    return lines


def fit_categories(ax: Axes, names: list[str]) -> Fitter:
    """Tick labels for ``names`` at x = 0, 1, ... (x limits one unit per name), the first way that
    fits: side by side as they are, then wrapped at their natural breaks onto at most
    :data:`MAX_LINES` lines, in their font or one :data:`SHRINK` smaller; else vertical (and
    smaller, down to :data:`SMALLEST` points, if even one line is taller than a slot)."""
    size = ax.xaxis.get_ticklabels()[0].get_fontsize() if names else 10.0

    def fit(renderer: RendererBase) -> None:
        slot = ax.get_window_extent(renderer).width / max(len(names), 1)
        for points, wrapping in itertools.product((size, size * SHRINK), (False, True)):
            room = slot - GAP * renderer.points_to_pixels(points)
            width = measure(renderer, FontProperties(size=points))
            texts = [wrap(name, room, width) for name in names] if wrapping else names
            if all(width(t) <= room and t.count("\n") < MAX_LINES for t in texts):
                _set_ticks(ax.xaxis, texts, 0, points)
                return
        line = renderer.get_text_width_height_descent("Ag", FontProperties(size=size), ismath=False)[1]
        room = slot - GAP * renderer.points_to_pixels(size)
        _set_ticks(ax.xaxis, names, 90, max(SMALLEST, min(size, size * room / line)))

    return fit


def fit_legend(figure: Figure, make: Callable[[list[str], int], Legend], labels: list[str]) -> Fitter:
    """A legend made by ``make(labels, columns)`` in the fewest rows that fit the figure's width (its
    columns then balanced: 5 entries in 3 + 2, not 4 + 1), its entries wrapped when even one column
    is too wide. The legend is made again at each fit: matplotlib lays out its columns only once."""
    legend = [make(labels, len(labels))]

    def fit(renderer: RendererBase) -> None:
        def remake(texts: list[str], columns: int) -> float:
            legend[0].remove()
            legend[0] = make(texts, columns)
            return legend[0].get_window_extent(renderer).width

        room = 0.98 * figure.bbox.width
        fitting = next((c for c in range(len(labels), 0, -1) if remake(labels, c) <= room), 0)
        if fitting:
            remake(labels, math.ceil(len(labels) / math.ceil(len(labels) / fitting)))
            return
        width = measure(renderer, legend[0].get_texts()[0].get_fontproperties())
        entry = room - (legend[0].get_window_extent(renderer).width - max(map(width, labels)))
        remake([wrap(label, entry, width) for label in labels], 1)

    return fit


def fit_axis_label(ax: Axes, axis: Axis) -> Fitter:
    """An axis label wrapped at its spaces to the length of its axis (a long y label on a short panel)."""
    label = axis.get_label().get_text()

    def fit(renderer: RendererBase) -> None:
        box = ax.get_window_extent(renderer)
        room = box.height if axis is ax.yaxis else box.width
        axis.get_label().set_text(wrap(label, room, measure(renderer, axis.get_label().get_fontproperties())))

    return fit


def fit_titles(figure: Figure) -> Fitter:
    """Every axes' titles no wider than their axes, wrapped at their breaks (a run figure's "Late jobs
    per cluster (% of jobs with a deadline)" at 3.5 inches), as they were set when there is room."""
    titles: dict[Text, str] = {}

    def fit(renderer: RendererBase) -> None:
        for ax in figure.axes:
            room = ax.get_window_extent(renderer).width
            for title in (ax.title, ax._left_title, ax._right_title):  # the three Axes.set_title places
                text = titles.setdefault(title, title.get_text())
                if text:
                    title.set_text(wrap(text, room, measure(renderer, title.get_fontproperties())))

    return fit


def fit_minor_ticks(figure: Figure) -> Fitter:
    """Minor tick labels (a log axis' 2, 3, 5 between decades) only where they leave every label
    apart; else the major ones alone (no "2×10⁰3×10⁰4×10⁰" on a narrow axis)."""
    formatters: dict[Axis, object] = {}

    def fit(renderer: RendererBase) -> None:
        for axis in (a for ax in figure.axes for a in (ax.xaxis, ax.yaxis)):
            axis.set_minor_formatter(formatters.setdefault(axis, axis.get_minor_formatter()))
            ticks = axis._update_ticks()  # the ticks (and labels) this layout shows, majors and minors
            boxes = [
                t.label1.get_window_extent(renderer)
                for t in ticks
                if t.label1.get_visible() and t.label1.get_text()
            ]
            if any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2)):
                axis.set_minor_formatter(NullFormatter())

    return fit


def _set_ticks(axis: Axis, labels: list[str], rotation: float, size: float) -> None:
    axis.set_major_formatter(FixedFormatter(labels))
    axis.set_tick_params(labelrotation=rotation, labelsize=size)
