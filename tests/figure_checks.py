"""Checks on drawn figures with the renderer's own text extents: no text overlaps, none is clipped."""

from __future__ import annotations

import itertools

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.text import Text


def drawn(figure):
    """Draw ``figure`` with Agg as a file would be (fitters and layout run); its renderer."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    return canvas.get_renderer()


def disjoint(texts: list[Text], renderer) -> bool:
    boxes = [t.get_window_extent(renderer) for t in texts if t.get_visible() and t.get_text()]
    return not any(a.overlaps(b) for a, b in itertools.combinations(boxes, 2))


def shown_texts(figure) -> list[Text]:
    """Every text a draw shows: the figure's, legends', axes' labels and titles, and the tick labels
    within the view (matplotlib keeps labels of ticks just outside it, undrawn)."""
    texts = [
        *figure.texts,
        *(t for legend in figure.legends for t in [legend.get_title(), *legend.get_texts()]),
    ]
    for ax in figure.axes:
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            ticks = [*axis.get_major_ticks(), *axis.get_minor_ticks()]
            texts += [t.label1 for t in ticks if low <= t.get_loc() <= high]
    return [t for t in texts if t.get_visible() and t.get_text()]


def inside(figure, renderer) -> bool:
    """Every text shown within the figure: nothing clipped at its edges."""
    box = figure.bbox
    extents = [t.get_window_extent(renderer) for t in shown_texts(figure)]
    return all(
        e.x0 >= -0.5 and e.x1 <= box.x1 + 0.5 and e.y0 >= -0.5 and e.y1 <= box.y1 + 0.5 for e in extents
    )
