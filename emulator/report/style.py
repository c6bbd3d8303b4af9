"""One look for every figure: how a figure is made, its colours, its time axes, its file bytes.

Figures are built as :class:`ReportFigure` objects, never through pyplot: no display
is needed (the Agg renderer draws them), there is no global figure list to leak
or close, and a notebook shows one inline because it renders itself as PNG.
"""

from __future__ import annotations

import io

import numpy as np
from matplotlib import rc_context
from matplotlib.backend_bases import RendererBase
from matplotlib.figure import Figure
from matplotlib.layout_engine import PlaceHolderLayoutEngine
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from .text_fit import Fitter, fit_minor_ticks, fit_titles

DPI = 110
"""Pixels per inch of the report page's PNGs: sharp on a screen, small enough to inline a dozen of them."""

PRINT_DPI = 300
"""Pixels per inch of figure files by default (``--dpi``): what journals ask of line art at the least."""

WIDTH = 10.0
"""Default figure width in inches (the page's column width at :data:`DPI`)."""

FORMATS = ("png", "pdf", "svg")
"""File formats a figure can be written in (the page always inlines PNG)."""

OKABE_ITO = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#F0E442", "#000000")
"""Okabe and Ito's palette, told apart by readers with any common colour-vision deficiency;
ordered so that the first few colours also differ in lightness (and yellow, faint on white, comes late)."""

STATE_COLOURS = {"late": "#D55E00", "on time": "#009E73", "no deadline": "#0072B2", "rejected": "#999999"}
"""Deadline outcomes keep their colours in every figure: vermilion always means late."""

TIME_UNITS = (("s", 1.0), ("min", 60.0), ("h", 3600.0), ("days", 86400.0))
"""Units of time axes, smallest first (:func:`time_unit` picks one by span)."""


class ReportError(ValueError):
    """Options or directories a report cannot be made of (the CLI says so in one line)."""


class ReportFigure(Figure):
    """A matplotlib Figure that Jupyter displays inline even when pyplot was never imported, and
    whose fitters run at every draw: text is fitted to the size the figure has when drawn (after
    ``--width``), with the renderer's own text extents, not to the size it was built at."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fitters: list[Fitter] = []

    def _repr_png_(self) -> bytes:
        return png_bytes(self)

    def draw(self, renderer: RendererBase) -> None:
        """Lay out, fit the text to the space that leaves, twice (the first fit changes the space:
        vertical tick labels make the axes shorter), then draw, laid out around the fitted text.

        A file's final draw has the layout turned off (``savefig`` lays out in a draw before it):
        the text then stays as that draw fitted it.
        """
        engine = self.get_layout_engine()
        if self.fitters and engine is not None and not isinstance(engine, PlaceHolderLayoutEngine):
            for _ in range(2):
                engine.execute(self)
                for fit in self.fitters:
                    fit(renderer)
        super().draw(renderer)


def new_figure(height: float, width: float = WIDTH) -> ReportFigure:
    """A figure laid out by constrained layout, its titles and minor tick labels fitted to its width."""
    figure = ReportFigure(figsize=(width, height), dpi=DPI, layout="constrained")
    figure.fitters += [fit_titles(figure), fit_minor_ticks(figure)]
    return figure


def png_bytes(figure: Figure) -> bytes:
    """The figure as PNG (what the page inlines and ``--png`` writes: the same bytes)."""
    return figure_bytes(figure, "png")


FILE_RC = {"svg.hashsalt": "gridemu", "svg.fonttype": "none", "pdf.fonttype": 42, "ps.fonttype": 42}
"""Settings every figure file is written with: repeatable SVG ids, text kept as text in SVG, and
fonts embedded as TrueType (Type 42) in PDF and PS, which journals' checks accept (Type 3 fails them)."""


def figure_bytes(figure: Figure, fmt: str = "png", dpi: float = DPI) -> bytes:
    """The figure as PNG, PDF or SVG (``dpi`` pixels per inch for PNG and raster parts), the same
    bytes for the same figure.

    Dates and SVG's random ids would differ from one call to the next: the
    metadata leaves the dates out and a fixed hash salt makes the ids repeat.
    """
    if fmt not in FORMATS:
        raise ReportError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
    metadata = {"png": None, "pdf": {"CreationDate": None, "ModDate": None}, "svg": {"Date": None}}[fmt]
    buffer = io.BytesIO()
    with rc_context(FILE_RC):
        figure.savefig(buffer, format=fmt, dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def set_width(figure: Figure, width: float) -> None:
    """Make a figure ``width`` inches wide, its height scaled by the square root of the change.

    Fonts keep their size, so a figure for a paper's column reads as well as the page's;
    scaling the height in proportion would leave no room for its rows of text (panels,
    machines, ticks), keeping it would make narrow figures towers.
    """
    if not width > 0:
        raise ReportError(f"width {width!r}: expected a number of inches > 0")
    old_width, height = figure.get_size_inches()
    figure.set_size_inches(width, height * (width / old_width) ** 0.5)


def palette(labels: list[str]) -> list[str]:
    """A colour per label: fixed ones for deadline outcomes, Okabe-Ito (cycled) for anything else."""
    return [STATE_COLOURS.get(label, OKABE_ITO[i % len(OKABE_ITO)]) for i, label in enumerate(labels)]


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


def time_unit(span: float) -> tuple[str, float]:
    """The largest unit of :data:`TIME_UNITS` in which ``span`` seconds is at least two units."""
    fitting = [(name, size) for name, size in TIME_UNITS if span >= 2 * size]
    return fitting[-1] if fitting else TIME_UNITS[0]


class _UnitLocator(MaxNLocator):
    """Round ticks in a time unit counted from an origin, for data kept in seconds."""

    def __init__(self, origin: float, size: float) -> None:
        super().__init__(nbins="auto", steps=[1, 2, 2.5, 5, 10])
        self.origin, self.size = origin, size

    def tick_values(self, vmin: float, vmax: float) -> np.ndarray:
        scaled = super().tick_values((vmin - self.origin) / self.size, (vmax - self.origin) / self.size)
        return scaled * self.size + self.origin


def last_time(times: list[np.ndarray], origin: float) -> float:
    """The latest of several time series (``origin`` + 1 s when all are empty): a time axis' end."""
    return max((float(t.max()) for t in times if len(t)), default=origin + 1.0)


def time_axis(axis, origin: float, end: float, what: str = "time since start") -> None:
    """Label an axis of times in seconds in a readable unit (s, min, h, days, chosen by the span),
    counted from ``origin`` (a run's start): ticks read "12 days", never "1.2e6" with an offset."""
    name, size = time_unit(end - origin)
    axis.set_major_locator(_UnitLocator(origin, size))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{round((x - origin) / size, 6):g}"))
    axis.set_label_text(f"{what} ({name})")
