"""The notebook API: run a scenario or open a run, get its tables and metrics, draw any report figure.

>>> run = emulate("quickstart", set=["workload.jobs=200"], out_dir="runs/nb")  # doctest: +SKIP
>>> run.summary["grid"]["late_percent"], run.jobs.num_rows                    # doctest: +SKIP
>>> run.plot("gantt", cluster="alpha")         # a matplotlib Figure, shown inline  # doctest: +SKIP

Everything reads the run directory, the same files ``gridemu report`` reads, so a
notebook and a report of the same run always show the same numbers.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pyarrow as pa

from .data.scenario import load
from .engine import runner
from .engine.sweep import compare, varied_keys

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from .report import RunData

# emulator.report is imported where it is used: it imports matplotlib (~0.4 s), which
# `import emulator` and every other gridemu command must not pay for.

TABLES = ("jobs", "events")


class RunDir:
    """A run directory: ``summary`` (dict), ``jobs`` and ``events`` (pyarrow Tables), figures.

    >>> run = open_run("runs/quickstart-seed1-001")  # doctest: +SKIP
    >>> run.to_polars("events").group_by("kind").len()  # doctest: +SKIP
    """

    def __init__(self, path: Path | str) -> None:
        from .report import load_run

        self.data: RunData = load_run(path)

    @property
    def path(self) -> Path:
        return self.data.path

    @property
    def summary(self) -> dict:
        """``summary.json``: ``jobs`` counts, ``grid`` and per-``clusters`` metrics, ``run`` facts."""
        return self.data.summary

    @property
    def jobs(self) -> pa.Table:
        """``jobs.arrow``: one row per job, inputs and outcome."""
        return self.data.jobs

    @property
    def events(self) -> pa.Table:
        """``events.arrow``: one row per event, in trace order."""
        return self.data.events

    @property
    def clusters(self) -> list[str]:
        return [c.name for c in self.data.clusters]

    def to_pandas(self, table: str = "jobs"):
        """``jobs`` or ``events`` as a pandas DataFrame (pandas must be installed)."""
        _require("pandas", "to_pandas")
        return self._table(table).to_pandas()

    def to_polars(self, table: str = "jobs"):
        """``jobs`` or ``events`` as a Polars DataFrame (polars must be installed)."""
        return _require("polars", "to_polars").from_arrow(self._table(table))

    def plot(self, kind: str, **options) -> Figure:
        """A figure of the report: ``gantt`` (``cluster=``, ``color_by=``), ``usage`` (``clusters=``),
        ``queue``, ``share``, ``distributions``, ``late``. Jupyter shows the Figure inline."""
        from .report import PLOTS

        if kind not in PLOTS:
            raise ValueError(f"plot kind {kind!r}: expected one of {', '.join(PLOTS)}")
        return PLOTS[kind](self.data, **options)

    def report(
        self,
        out: Path | str | None = None,
        png_dir: Path | str | None = None,
        fmt: str = "png",
        width: float | None = None,
    ) -> Path:
        """Write the HTML report (default ``<run>/report.html``) and, with ``png_dir``, every figure
        as a ``fmt`` (png, pdf, svg) file ``width`` inches wide; the page's path."""
        return _write(self.path, out, png_dir, fmt, width)

    def _table(self, name: str) -> pa.Table:
        if name not in TABLES:
            raise ValueError(f"table {name!r}: expected 'jobs' or 'events'")
        return getattr(self, name)

    def __repr__(self) -> str:
        jobs = self.summary["jobs"]
        return f"RunDir({str(self.path)!r}: {jobs['total']} jobs, {len(self.clusters)} clusters)"


class SweepDir:
    """A sweep directory: the points' table, the comparison over seeds, metric-vs-parameter figures.

    >>> sweep = open_sweep("runs/sweep-quickstart-001")  # doctest: +SKIP
    >>> sweep.plot("late_percent", x="workload.mean_interarrival")  # doctest: +SKIP
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        if not (self.path / "sweep.arrow").is_file():
            raise FileNotFoundError(f"{self.path}: not a sweep directory (no sweep.arrow)")

    @cached_property
    def table(self) -> pa.Table:
        """``sweep.arrow``: one row per point (varied values, status, error, grid metrics)."""
        from .report.data import read_arrow

        return read_arrow(self.path / "sweep.arrow")

    @property
    def keys(self) -> list[str]:
        return varied_keys(self.table)

    def compare(self) -> list[dict]:
        """Mean and 95% half-width of each metric over seeds, per combination of the other keys."""
        return compare(self.table, self.keys)

    def run(self, point: int) -> RunDir:
        """The run directory of point ``point`` (its index)."""
        return RunDir(self.path / f"point-{point:03d}")

    def plot(self, metric: str, x: str | None = None, log: str = "auto") -> Figure:
        """``metric`` against ``x`` (default: the first numeric varied key) with 95% intervals;
        ``log``: auto, none, x, y or xy (as ``gridemu report --log``)."""
        from .report.sweep_plot import sweep_figure, sweep_plot

        return sweep_figure(sweep_plot(self.table, self.keys, metric, x), log)

    def to_pandas(self):
        _require("pandas", "to_pandas")
        return self.table.to_pandas()

    def to_polars(self):
        return _require("polars", "to_polars").from_arrow(self.table)

    def report(
        self,
        out: Path | str | None = None,
        png_dir: Path | str | None = None,
        fmt: str = "png",
        width: float | None = None,
    ) -> Path:
        """As :meth:`RunDir.report`."""
        return _write(self.path, out, png_dir, fmt, width)

    def __repr__(self) -> str:
        return f"SweepDir({str(self.path)!r}: {self.table.num_rows} points, varied {', '.join(self.keys)})"


RAY_CALLS = ("direct", "plain", "compiled")
"""How a Ray run's rounds call the actors (``gridemu run --ray-calls``)."""


def ray_backend(
    address: str | None, partitions: int | None, checkpoint_every: int, rebalance_every: int, calls: str
) -> runner.Backend:
    """The Ray backend ``emulate(backend="ray")`` and ``gridemu run --backend ray`` open (``calls``: one
    of :data:`RAY_CALLS`)."""
    from actors import ray_backend as backend  # imports Ray: only when asked for

    return backend(
        address,
        partitions,
        checkpoint_every,
        compiled=calls == "compiled",
        rebalance_every=rebalance_every,
        direct=calls == "direct",
    )


def open_run(path: Path | str) -> RunDir:
    """An existing run directory (``gridemu run``'s output, or a sweep's ``point-NNN``)."""
    return RunDir(path)


def open_sweep(path: Path | str) -> SweepDir:
    """An existing sweep directory (``gridemu sweep``'s output)."""
    return SweepDir(path)


def emulate(
    scenario: str | Path,
    set: Iterable[str] = (),
    seed: int | None = None,
    out_dir: Path | str | None = None,
    backend: str = "inproc",
    ray_address: str | None = None,
    partitions: int | None = None,
    checkpoint_every: int = 1000,
    rebalance_every: int = runner.REBALANCE_EVERY,
    overwrite: bool = False,
    ray_calls: str = "direct",
) -> RunDir:
    """Run a scenario (a file or a built-in name) as ``gridemu run`` does and open its run directory.

    ``set`` takes ``--set`` overrides (``["workload.jobs=500", "meta.policy=random"]``);
    ``out_dir`` defaults to a new ``runs/<name>-seed<N>-NNN``. ``backend="ray"``
    hosts the partitions in Ray actors (``ray_address``, ``partitions``,
    ``checkpoint_every``, ``rebalance_every`` and ``ray_calls`` as the CLI's
    options); the trace is the same either way. ``overwrite`` replaces a run already in ``out_dir``
    (``--overwrite``); without it a directory in use or holding files is refused.
    """
    if ray_calls not in RAY_CALLS:
        raise ValueError(f"ray_calls {ray_calls!r}: expected one of {', '.join(map(repr, RAY_CALLS))}")
    loaded = load(scenario, list(set), seed=seed)
    if backend == "inproc":
        host = runner.in_process
    elif backend == "ray":
        host = ray_backend(ray_address, partitions, checkpoint_every, rebalance_every, ray_calls)
    else:
        raise ValueError(f"backend {backend!r}: expected 'inproc' or 'ray'")
    out = None if out_dir is None else Path(out_dir)
    result = runner.run(loaded, out, backend=host, backend_name=backend, overwrite=overwrite)
    return RunDir(result.out_dir)


def _write(
    path: Path, out: Path | str | None, png_dir: Path | str | None, fmt: str, width: float | None
) -> Path:
    from .report import build_report, write_report

    out = Path(out) if out is not None else path / "report.html"
    write_report(build_report(path, fmt=fmt, width=width), out, None if png_dir is None else Path(png_dir))
    return out


def _require(module: str, method: str) -> ModuleType:
    """Import an optional dataframe library, or say plainly what to install."""
    try:
        return __import__(module)
    except ImportError:
        raise ImportError(
            f"{method}() needs {module}, which is not installed: pip install {module} "
            "(or use .jobs / .events, which are pyarrow Tables)"
        ) from None
