"""Figures worth a paper (issue 19 item 6): every job in the Gantt chart, readable axes, sweeps as
points or lines, log axes where values span decades, no empty panels, PDF/SVG and widths.

Each test checks a property of what is drawn against the run's or sweep's own tables.
"""

from __future__ import annotations

import shlex
import struct
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.figure import Figure
from matplotlib.image import AxesImage

from emulator import cli_report, load_scenario, open_sweep, report, run
from emulator.cli import _parser, main
from emulator.data.metrics import cluster_codes
from emulator.engine.sweep import varied_keys
from emulator.report import LogScale, SweepOptions, build_report, load_run, plan_report, set_width
from emulator.report.gantt import BINS, blocks, gantt_bars, gantt_figure, occupancy
from emulator.report.style import DPI, OKABE_ITO, PRINT_DPI, palette, time_axis, time_unit
from emulator.report.sweep_plot import Band, SweepPlot, log_axes, quantity, sweep_figure, sweep_plot
from tests.figure_checks import disjoint, drawn, inside, shown_texts


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("figures") / "run"
    run(load_scenario("quickstart", ["workload.jobs=100"]), out)
    return load_run(out)


POLICY_VARY = ("meta.policy=least-load,random,round-robin",)


def sweep(tmp_path_factory, name: str, *sets: str, vary: tuple[str, ...] = POLICY_VARY) -> object:
    out = tmp_path_factory.mktemp("figures") / name
    args = [
        "sweep",
        "quickstart",
        "--quiet",
        "--out",
        str(out),
        "--workers",
        "2",
        "--set",
        "workload.jobs=30",
    ]
    for item in sets:
        args += ["--set", item]
    for item in (*vary, "seed=1..2"):
        args += ["--vary", item]
    assert main(args) == 0
    return out


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    """A sweep whose only varied key besides the seed is a policy: categorical x."""
    return sweep(tmp_path_factory, "busy", "workload.mean_interarrival=5")


@pytest.fixture(scope="module")
def calm(tmp_path_factory):
    """The same policies under a lighter load, to overlay on :func:`policies`."""
    return sweep(tmp_path_factory, "calm", "workload.mean_interarrival=30")


@pytest.fixture(scope="module")
def specs(tmp_path_factory):
    """Local policies given as specs (the long tick labels of a paper's sweep), a series per meta policy."""
    return sweep(
        tmp_path_factory,
        "specs",
        "workload.mean_interarrival=5",
        'clusters.1.policy="easy"',
        vary=("local.policy=easy,conservative,easy[order=sjf]", "meta.policy=most-bandwidth,dll"),
    )


# ---- the Gantt chart draws every job ------------------------------------------------------------


def cpu_seconds(data, cluster: int) -> float:
    """CPU-seconds run on ``cluster`` by walking the trace's start/finish pairs."""
    started, total = {}, 0.0
    for e, at in zip(data.events.to_pylist(), cluster_codes(data.events), strict=True):
        if at == cluster and e["kind"] == "start":
            started[e["job"]] = e
        elif at == cluster and e["kind"] == "finish":
            total += len(started[e["job"]]["pes"]) * (e["time"] - started.pop(e["job"])["time"])
    return total


@pytest.mark.parametrize("max_rows", [400, 16])  # one row per CPU, and rows of 16 CPUs
def test_the_occupancy_image_holds_every_cpu_second_and_its_busy_share_is_the_utilization(data, max_rows):
    for index, shape in enumerate(data.clusters):
        g = gantt_bars(data, index, max_rows=max_rows, max_bars=0)  # forced to an image
        o = g.occupancy
        assert o is not None and o.busy.shape[:2] == (g.rows, BINS)
        assert o.busy.min() >= 0 and o.busy.sum(axis=2).max() <= 1 + 1e-9  # a cell is at most all busy
        drawn = (o.busy.sum(axis=(1, 2)) * g.row_cpus).sum() * (o.edges[1] - o.edges[0])
        assert np.isclose(drawn, cpu_seconds(data, index))  # nothing sampled away
        utilization = data.summary["clusters"][shape.name]["utilization"]
        assert np.isclose(o.busy_fraction(g.row_cpus), utilization)
        assert np.isclose(g.busy_fraction, utilization)
        assert f"all {len(g.start):,} CPU runs of {g.jobs:,} jobs" in g.note
        (image,) = [i for i in gantt_figure(g).axes[0].images if isinstance(i, AxesImage)]
        ink = 1.0 - image.get_array()  # how far from white
        assert np.array_equal(ink.sum(axis=2) > 1e-9, o.busy.sum(axis=2) > 1e-9)  # busy cells, all inked


def test_a_cpu_busy_for_half_a_bin_is_drawn_half_busy(data):
    g = gantt_bars(data, "beta", max_bars=0)
    width = g.occupancy.edges[1] - g.occupancy.edges[0]
    one = occupancy(
        np.array([0]),
        np.array([g.occupancy.edges[0] + width / 4]),
        np.array([g.occupancy.edges[0] + 3 * width / 4]),
        np.array([0]),
        np.array([1]),
        1,
        g.occupancy.edges,
    )
    assert np.isclose(one[0, 0, 0], 0.5) and one[0, 1:].sum() == 0


def test_small_charts_draw_every_run_and_time_reads_in_human_units(data):
    g = gantt_bars(data, "alpha")
    assert g.occupancy is None and g.note == ""
    ax = gantt_figure(g).axes[0]
    (bars,) = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(bars.get_paths()) == len(blocks(g)[0]) < len(g.start)  # a rectangle per block of a run's CPUs
    assert ax.get_xlabel() == f"time since start ({time_unit(g.end.max() - g.origin)[0]})"
    figure = ax.figure
    figure.canvas.draw()
    assert ax.xaxis.get_offset_text().get_text() == ""  # no "1e7" above the axis
    labels = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert labels and all("e" not in t for t in labels)


@pytest.mark.parametrize(("span", "unit"), [(90.0, "s"), (1_800.0, "min"), (36_000.0, "h"), (2.9e7, "days")])
def test_time_axes_pick_their_unit_by_span_and_count_from_the_start(span, unit):
    figure = Figure()
    ax = figure.add_subplot()
    origin = 1.0e7  # a run that starts late: ticks still count from its start
    ax.set_xlim(origin, origin + span)
    time_axis(ax.xaxis, origin, origin + span)
    figure.canvas.draw()
    assert ax.get_xlabel() == f"time since start ({unit})"
    shown = [t for t in ax.get_xticklabels() if origin <= t.get_position()[0] <= origin + span]
    ticks = [float(t.get_text()) for t in shown]
    assert ticks[0] == 0 and len(ticks) >= 3
    assert all(float(t).is_integer() or (2 * t).is_integer() or (4 * t).is_integer() for t in ticks)


def test_the_palette_is_okabe_ito_and_late_is_not_red_against_green():
    assert palette(["a", "b", "c"]) == list(OKABE_ITO[:3])
    late, on_time = palette(["late", "on time"])
    assert (late, on_time) == ("#D55E00", "#009E73")  # vermilion and bluish green: told apart by all


# ---- sweep figures --------------------------------------------------------------------------------


def test_categorical_keys_are_points_with_error_bars_never_joined(policies):
    rows = open_sweep(policies).table
    plot = sweep_plot(rows, varied_keys(rows), "mean_wait")
    assert plot.categorical and plot.x_key == "meta.policy"
    ax = sweep_figure(plot).axes[0]
    joined = [
        line
        for line in ax.get_lines()
        if line.get_linestyle() not in ("None", "none", "") and len(line.get_xdata()) > 1
    ]
    assert joined == []  # no line from one policy to the next
    assert [t.get_text() for t in ax.get_xticklabels()] == ["least-load", "random", "round-robin"]
    assert not [c for c in ax.collections if isinstance(c, PolyCollection)]  # no bands either


def test_intervals_stay_within_what_the_metric_can_be(policies):
    rows = open_sweep(policies).table
    for metric, bottom, top in (
        ("system_usage", 0.0, 100.0),
        ("mean_wait", 0.0, np.inf),
        ("mean_bounded_slowdown", 1.0, np.inf),
    ):
        ax = sweep_figure(sweep_plot(rows, varied_keys(rows), metric)).axes[0]
        bars = [c for c in ax.collections if isinstance(c, LineCollection)]
        ends = np.concatenate([np.concatenate(c.get_segments()) for c in bars])
        assert len(bars) == 1 and ends[:, 1].min() >= bottom and ends[:, 1].max() <= top


def test_several_sweeps_overlay_side_by_side_with_their_names(policies, calm, tmp_path, capsys):
    out = tmp_path / "both.html"
    assert main(["report", str(policies), str(calm), "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "busy:" in printed and "calm:" in printed
    plan = plan_report([policies, calm])
    figure, _ = next(f for f in plan.figures if f.name == "sweep-mean_wait").draw()
    ax = figure.axes[0]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["busy", "calm"]
    xs = [line.get_xdata() for line in ax.get_lines() if line.get_marker() == "o"]
    assert len(xs) == 2 and np.all(xs[0] < xs[1]) and np.all(np.abs(xs[0] - xs[1]) < 0.5)  # dodged
    html = out.read_text()
    assert "Comparison (mean ± 95% CI over seeds): busy" in html and "Sweeps busy, calm" in html


def band_plot(x: list[float], mean: list[float]) -> SweepPlot:
    n = len(x)
    band = Band("s", np.array(x), np.array(mean), np.full(n, 0.1), np.full(n, 3))
    return SweepPlot("mean_wait", "stress.failures.mttf", False, [band])


def test_log_scale_is_chosen_where_values_span_more_than_two_decades():
    wide = band_plot([1.7e5, 1e6, 5e6, 3.2e7], [1.0, 2.0, 3.0, 4.0])
    narrow = band_plot([1.0, 2.0, 5.0, 10.0], [1.0, 50.0, 500.0, 5000.0])
    assert log_axes(wide) == (True, False) and log_axes(narrow) == (False, True)
    assert log_axes(narrow, "x") == (True, False) and log_axes(narrow, "xy") == (True, True)
    assert log_axes(wide, "none") == (False, False)
    ax = sweep_figure(wide).axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "linear")
    assert ax.get_xlabel() == "MTTF (mean time to failure) (days)"
    assert np.allclose(ax.get_lines()[0].get_xdata(), np.array([1.7e5, 1e6, 5e6, 3.2e7]) / 86400)
    assert log_axes(band_plot([-1.0, 1e3, 1e6], [1.0, 2.0, 3.0])) == (False, False)  # not all positive


@pytest.mark.parametrize(
    ("name", "values", "label", "factor"),
    [
        ("mean_wait", [7_200.0, 36_000.0], "mean wait (h)", 1 / 3600),
        ("mean_wait", [30.0, 90.0], "mean wait (s)", 1.0),
        ("utilization", [0.2, 0.7], "utilisation (%)", 100.0),
        ("mean_bounded_slowdown", [1.0, 80.0], "mean bounded slowdown", 1.0),
        ("throughput", [0.0005, 0.002], "throughput (jobs/h)", 3600.0),
        ("throughput", [0.005, 0.02], "throughput (jobs/min)", 60.0),
        ("workload.mean_interarrival", [5.0, 20.0], "mean interarrival time (s)", 1.0),
    ],
)
def test_axis_labels_have_units_and_values_are_converted_to_them(name, values, label, factor):
    assert quantity(name, np.array(values)) == (label, factor)


def test_metrics_without_any_value_get_no_panel(policies, tmp_path):
    rows = open_sweep(policies).table
    no_deadlines = rows.set_column(
        rows.schema.get_field_index("late_percent"), "late_percent", pa.nulls(rows.num_rows, pa.float64())
    )
    (tmp_path / "sweep").mkdir()
    with (
        pa.OSFile(str(tmp_path / "sweep" / "sweep.arrow"), "wb") as sink,
        pa.ipc.new_file(sink, no_deadlines.schema) as writer,
    ):
        writer.write_table(no_deadlines)
    names = [f.name for f in plan_report(tmp_path / "sweep").figures]
    assert "sweep-late_percent" not in names and "sweep-mean_wait" in names
    assert "sweep-late_percent" in [f.name for f in plan_report(policies).figures]
    assert "sweep-jobs_killed" not in names  # no failures: no panel of zeros


# ---- formats, widths, options ----------------------------------------------------------------------


def png_size(data: bytes) -> tuple[int, int]:
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize(("fmt", "magic"), [("pdf", b"%PDF"), ("svg", b"<?xml")])
def test_pdf_and_svg_files_are_written_and_repeat_byte_for_byte(policies, tmp_path, fmt, magic):
    for attempt in ("a", "b"):
        args = [
            "report",
            str(policies),
            "-o",
            str(tmp_path / "r.html"),
            "--quiet",
            "--metrics",
            "mean_wait,utilization",
        ]
        assert main([*args, "--figures", str(tmp_path / attempt), "--format", fmt]) == 0
    files = sorted((tmp_path / "a").iterdir())
    assert files and all(f.suffix == f".{fmt}" and f.read_bytes().startswith(magic) for f in files)
    assert [f.read_bytes() for f in files] == [(tmp_path / "b" / f.name).read_bytes() for f in files]
    if fmt == "pdf":  # fonts embedded as TrueType, which journals' checks accept; never Type 3
        assert all(b"/FontFile2" in f.read_bytes() and b"/Type3" not in f.read_bytes() for f in files)


def test_width_sets_the_pngs_pixel_width(policies, tmp_path):
    narrow = build_report(policies, width=3.5, dpi=DPI).figures[0].png
    wide = build_report(policies, width=7.0, dpi=DPI).figures[0].png
    assert png_size(narrow)[0] == 385 and png_size(wide)[0] == 770  # 110 pixels per inch
    assert abs(png_size(wide)[1] / png_size(narrow)[1] - 2**0.5) < 0.01  # heights by the square root
    one = ["--metrics", "mean_wait"]
    assert (
        main(["report", str(policies), "--quiet", *one, "--width", "5", "--figures", str(tmp_path / "a")])
        == 0
    )
    assert {png_size(p.read_bytes())[0] for p in (tmp_path / "a").glob("*.png")} == {1500}  # 300 dpi
    args = ["--width", "3.5", "--dpi", "600", "--figures", str(tmp_path / "b")]
    assert main(["report", str(policies), "--quiet", *one, *args]) == 0
    assert {png_size(p.read_bytes())[0] for p in (tmp_path / "b").glob("*.png")} == {2100}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--width", "-3"], "expected inches between 0.5 and 100"),
        (["--width", "wide"], "expected inches between 0.5 and 100"),
        (["--format", "gif"], "invalid choice: 'gif'"),
        (["--dpi", "72.5"], "expected pixels per inch between 50 and 2400"),
    ],
)
def test_bad_options_are_one_line_errors(policies, args, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["report", str(policies), "--quiet", *args])
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--log", "z"], "error: log 'z': expected auto, none, x, y, xy or METRIC=one of them, METRIC one"),
        (["--log", "wait=y"], "error: log 'wait=y': expected auto"),
        (["--metrics", "mean_wait,wait"], "error: metrics: unknown wait; expected some of mean_wait, "),
        (["--metrics", "jobs_killed"], "error: metrics: no ok point has a value of jobs_killed; with values"),
        (["--label", "easy"], "error: label 'easy': expected RAW=SHORT, e.g. 'easy[order=sjf]=EASY-SJF'"),
    ],
)
def test_bad_figure_options_are_one_line_errors_naming_what_is_expected(policies, args, message, capsys):
    assert main(["report", str(policies), "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_sweeps_that_cannot_overlay_are_one_line_errors(policies, data, tmp_path_factory, capsys):
    other = tmp_path_factory.mktemp("figures") / "other"
    assert (
        main(
            [
                "sweep",
                "quickstart",
                "--quiet",
                "--out",
                str(other),
                "--set",
                "workload.jobs=10",
                "--vary",
                "workload.mean_interarrival=5,10",
            ]
        )
        == 0
    )
    assert main(["report", str(policies), str(other), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "does not vary meta.policy" in err
    assert main(["report", str(policies), str(data.path), "--quiet"]) == 2
    assert "expected run directories or sweep directories" in capsys.readouterr().err  # not a mix
    assert main(["report", str(data.path), "--quiet", "--panel", "-o", str(other / "r.html")]) == 2
    assert capsys.readouterr().err == (
        f"error: {data.path}: runs, not sweeps; metrics, panel, log and labels choose sweep figures\n"
    )


def test_the_cli_and_the_python_api_share_their_option_lists():
    assert cli_report.FORMATS == report.FORMATS and cli_report.LOG_OPTIONS == report.LOG_OPTIONS
    assert cli_report.PRINT_DPI == PRINT_DPI


def test_the_readme_report_commands_parse():
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("### Reports and notebooks", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    for line in block.strip().splitlines():
        args = _parser().parse_args(shlex.split(line.partition("#")[0])[1:])
        assert args.paths and args.format in ("png", "pdf") and args.dpi == PRINT_DPI


# ---- one column of a paper: --width 3.5 ------------------------------------------------------------


def sweep_figures(path, width: float = 3.5, **options) -> list:
    """Every sweep figure of ``path``'s report as ``draw_report`` makes it at ``width``, drawn by Agg."""
    figures = []
    for planned in plan_report(path, sweep=SweepOptions(width=width, **options)).figures:
        figure, _ = planned.draw()
        set_width(figure, width)
        drawn(figure)
        figures.append(figure)
    return figures


def test_at_one_column_no_sweep_figure_has_overlapping_or_clipped_text(specs):
    renderer_of = {}
    for figure in sweep_figures(specs):
        renderer_of[figure] = drawn(figure)
        (ax,) = figure.axes
        labels = ax.get_xticklabels()
        assert [t.get_text().replace("\n", "") for t in labels] == ["easy", "conservative", "easy[order=sjf]"]
        assert disjoint(labels, renderer_of[figure]) and inside(figure, renderer_of[figure])
        assert ax.get_xlabel() == "local policy"
        for legend in figure.legends:  # two series (pb has one: most-bandwidth gives it no value)
            assert [t.get_text() for t in legend.get_texts()] == ["most-bandwidth", "dll"]
            assert legend.get_title().get_text() == "meta policy"
    assert len(renderer_of) == len(plan_report(specs).figures) >= 6
    assert sum(len(f.legends) for f in renderer_of) == len(renderer_of) - 1


def test_one_series_has_no_legend_and_keys_read_as_words(policies):
    rows = open_sweep(policies).table
    figure = sweep_figure(sweep_plot(rows, varied_keys(rows), "mean_wait"))
    renderer = drawn(figure)
    assert figure.legends == [] and not figure.axes[0].get_legend()
    assert "all runs" not in [t.get_text() for t in shown_texts(figure)]
    assert (figure.axes[0].get_xlabel(), figure.axes[0].get_ylabel()) == ("meta policy", "mean wait (s)")
    assert inside(figure, renderer)


def test_short_labels_replace_values_keys_and_metrics_from_options_and_files(specs, tmp_path):
    table = tmp_path / "labels.csv"
    table.write_text("value,label\nmost-bandwidth,BARS\nlocal.policy,local scheduler\n")
    labels = ["--label", "easy[order=sjf]=EASY-SJF", "--label", "mean_wait=wait", "--labels", str(table)]
    args = _parser().parse_args(["report", str(specs), *labels, "--width", "3.5", "--metrics", "mean_wait"])
    (figure,) = sweep_figures(specs, **vars(cli_report._sweep_options(args)))  # width among them
    ax = figure.axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["easy", "conservative", "EASY-SJF"]
    assert [t.get_text() for t in figure.legends[0].get_texts()] == ["BARS", "dll"]
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("local scheduler", "wait (s)")


def test_log_scale_is_per_metric_and_bounded_metrics_stay_linear(specs):
    def scales(*log: str) -> dict[str, str]:
        figures = sweep_figures(specs, log=LogScale.parse(log), metrics=("mean_wait", "utilization"))
        return dict(zip(("mean_wait", "utilization"), (f.axes[0].get_yscale() for f in figures), strict=True))

    assert scales("y") == {"mean_wait": "log", "utilization": "linear"}  # never 6.2x10^1 %
    assert scales("utilization=y") == {"mean_wait": "linear", "utilization": "log"}  # named: forced
    assert scales("y", "mean_wait=none") == {"mean_wait": "linear", "utilization": "linear"}
    bounded = SweepPlot(
        "utilization",
        "x",
        False,
        [Band("s", np.array([1.0, 2.0]), np.array([1e-4, 0.9]), *[np.zeros(2)] * 2)],
    )
    assert log_axes(bounded) == (False, False)  # spans decades, but a share: linear


def test_log_ticks_read_as_plain_numbers(specs):
    (figure,) = sweep_figures(specs, log=LogScale.parse("y"), metrics=("mean_wait",))
    ticks = [t.get_text() for t in shown_texts(figure) if t in figure.axes[0].get_yticklabels(which="both")]
    assert ticks and all("\\times" not in t and "e+" not in t for t in ticks)


def test_panel_is_one_figure_of_the_chosen_metrics_sharing_x(specs, tmp_path):
    args = ["report", str(specs), "--quiet", "--width", "3.5", "--panel", "--figures", str(tmp_path)]
    assert main([*args, "--metrics", "mean_wait,mean_bounded_slowdown,utilization"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["sweep-panel.png"]
    assert png_size((tmp_path / "sweep-panel.png").read_bytes())[0] == 1050  # 3.5 in at 300 dpi
    (figure,) = sweep_figures(
        specs, metrics=("mean_wait", "mean_bounded_slowdown", "utilization"), panel=True, width=3.5
    )
    renderer = drawn(figure)
    axes = figure.axes
    assert [ax.get_ylabel().replace("\n", " ") for ax in axes] == [
        "mean wait (s)",
        "mean bounded slowdown",
        "utilisation (%)",
    ]
    assert [ax.xaxis.get_major_ticks()[0].label1.get_visible() for ax in axes] == [False, False, True]
    assert [ax.get_xlabel() for ax in axes] == ["", "", "local policy"]  # x shared, labelled once
    assert len({round(ax.get_position().x0, 6) for ax in axes}) == 1  # one column at 3.5 inches
    assert len(figure.legends) == 1 and inside(figure, renderer)
    assert disjoint(axes[-1].get_xticklabels(), renderer)
    (wide,) = sweep_figures(specs, metrics=("mean_wait", "utilization"), panel=True, width=7.5)
    assert len({round(ax.get_position().y0, 6) for ax in wide.axes}) == 1  # side by side at 7.5


def test_linear_axes_never_show_values_the_metric_cannot_have_nor_six_digit_ticks():
    def plot(metric: str, mean: list[float]) -> SweepPlot:
        band = Band("s", np.array(["a", "b"]), np.array(mean), np.zeros(2), np.full(2, 2))
        return SweepPlot(metric, "meta.policy", True, [band])

    none_late = sweep_figure(plot("late_percent", [0.0, 0.0]))
    drawn(none_late)
    ticks = [
        float(t.get_text().replace("−", "-"))
        for t in shown_texts(none_late)
        if t in none_late.axes[0].get_yticklabels()
    ]
    assert min(ticks) == 0.0 and 0.8 <= max(ticks) <= 1.0  # 0 to 1%, not -0.05 to 0.05
    mcp = sweep_figure(plot("mcp", [120_000.0, 650_000.0]))
    drawn(mcp)
    ticks = [t.get_text() for t in shown_texts(mcp) if t in mcp.axes[0].get_yticklabels()]
    assert "200k" in ticks and all(len(t) <= 4 for t in ticks)
