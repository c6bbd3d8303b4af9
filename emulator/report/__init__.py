"""Reports: figures of a run or a sweep as one self-contained HTML page, PNG files, or notebook figures.

Each figure kind is a module with a data function (Arrow tables in, numpy arrays
out, checked by the tests against the trace) and a figure function (data in,
matplotlib Figure out). :mod:`.build` plans and draws a directory's figures,
:mod:`.page` assembles the page.
"""

from .build import PLOTS, Plan, Report, build_report, draw_report, plan_report, write_report
from .data import ClusterShape, RunData, load_run
from .labels import read_labels
from .page import Rendered
from .style import FORMATS, ReportError, ReportFigure, figure_bytes, png_bytes, set_width
from .sweep_options import LOG_OPTIONS, LogScale, SweepOptions

__all__ = [
    "FORMATS",
    "LOG_OPTIONS",
    "PLOTS",
    "ClusterShape",
    "LogScale",
    "Plan",
    "Rendered",
    "Report",
    "ReportError",
    "ReportFigure",
    "RunData",
    "SweepOptions",
    "build_report",
    "draw_report",
    "figure_bytes",
    "load_run",
    "plan_report",
    "png_bytes",
    "read_labels",
    "set_width",
    "write_report",
]
