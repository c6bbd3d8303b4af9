"""Reports: every figure's data checked against the run's Arrow tables, the page opened in headless Chromium.

The browser tests use Debian's ``chromium`` (installed by ``.ci/run``) and are skipped,
saying so, where it is missing. One small run (quickstart, 100 jobs) and one tiny sweep
serve every test here.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import shutil
import subprocess
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
from matplotlib.collections import PathCollection, PolyCollection
from matplotlib.image import imread

from emulator import load_scenario, open_sweep, run
from emulator.cli import main
from emulator.data.metrics import cluster_codes, usage_series
from emulator.engine.sweep import compare, varied_keys
from emulator.report import PLOTS, build_report, load_run, plan_report, write_report
from emulator.report.data import categories
from emulator.report.distributions import distributions, run_distributions
from emulator.report.gantt import gantt_bars, gantt_figure, run_segments
from emulator.report.late import outcomes
from emulator.report.queue import queue_lengths
from emulator.report.share import shares
from emulator.report.style import steps
from emulator.report.sweep_plot import sweep_figure, sweep_plot
from emulator.report.units import duration, signed_cell
from emulator.report.usage import cluster_usage, usage_figure

RUN_FIGURES = ["gantt-alpha", "gantt-beta", "gantt-gamma", "usage", "queue", "share", "distributions", "late"]
SWEEP_FIGURES = [
    "sweep-mean_wait",
    "sweep-mean_bounded_slowdown",
    "sweep-late_percent",
    "sweep-system_usage",
    "sweep-utilization",
    "sweep-makespan",
    "sweep-throughput",
    "sweep-mcp",
    "sweep-pb",
]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "run"
    run(load_scenario("quickstart", ["workload.jobs=100"]), out)
    return out


@pytest.fixture(scope="module")
def data(run_dir):
    return load_run(run_dir)


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "sweep"
    args = ["sweep", "quickstart", "--quiet", "--out", str(out), "--workers", "2"]
    args += ["--set", "workload.jobs=30", "--vary", "workload.mean_interarrival=5,20"]
    args += ["--vary", "meta.policy=least-load,round-robin", "--vary", "seed=1..3"]
    assert main(args) == 0
    return out


# ---- figure data against the trace --------------------------------------------------------------


def trace_runs(events: pa.Table, cluster: int, first_row: np.ndarray) -> list[tuple]:
    """(job, CPU row, start, finish) for every CPU of every start/finish pair, by walking the rows."""
    started, bars = {}, []
    for e, at in zip(events.to_pylist(), cluster_codes(events), strict=True):
        if at != cluster:
            continue
        if e["kind"] == "start":
            started[e["job"]] = e
        elif e["kind"] == "finish":
            s = started.pop(e["job"])
            bars += [
                (e["job"], first_row[m] + p, s["time"], e["time"])
                for m, p in zip(s["machines"], s["pes"], strict=True)
            ]
    assert not started
    return sorted(bars)


def test_gantt_bars_equal_the_trace_start_finish_pairs(data):
    for index, shape in enumerate(data.clusters):
        g = gantt_bars(data, shape.name)
        drawn = sorted(zip(g.job.tolist(), g.row.tolist(), g.start.tolist(), g.end.tolist(), strict=True))
        assert drawn == trace_runs(data.events, index, shape.first_row)
        assert g.cpus_per_row == 1 and g.rows == shape.cpus and g.note == ""
        # ... and the figure draws exactly those runs, one outlined rectangle per block of neighbouring CPUs
        (bars,) = [c for c in gantt_figure(g).axes[0].collections if isinstance(c, PolyCollection)]
        corners = np.array([path.vertices[:4] for path in bars.get_paths()])
        x, y = corners[..., 0], corners[..., 1]
        rectangles = zip(x.min(axis=1), x.max(axis=1), y.min(axis=1) + 0.5, y.max(axis=1) - 0.5, strict=True)
        assert sorted((a, b, int(lo), int(hi)) for a, b, lo, hi in rectangles) == trace_blocks(drawn)
        assert len(bars.get_paths()) < len(g.start)  # jobs on several CPUs are one rectangle each
        assert np.all(bars.get_linewidths() > 0) and len(set(map(tuple, bars.get_edgecolors()))) == 1


def trace_blocks(runs: list[tuple]) -> list[tuple]:
    """(start, end, first row, last row) of each run's blocks of neighbouring CPU rows, by walking them."""
    blocks = []
    for job, row, start, end in sorted(runs, key=lambda r: (r[0], r[2], r[1])):
        last = blocks[-1] if blocks else None
        if last and last[4] == job and (last[0], last[1]) == (start, end) and last[3] == row - 1:
            blocks[-1] = (start, end, last[2], row, job)
        else:
            blocks.append((start, end, row, row, job))
    return sorted(b[:4] for b in blocks)


def levels_after_each_time(rows: list[tuple[float, int]]) -> dict[float, int]:
    level, after = 0, {}
    for time, delta in rows:
        level += delta
        after[time] = level
    return after


def level_at(levels: dict[float, int], t: float) -> int:
    """The level of a step series at time ``t`` (0 before its first step)."""
    return max(((s, v) for s, v in levels.items() if s <= t), default=(0.0, 0))[1]


def test_usage_series_follow_the_events(data):
    licenses = {j["id"]: len(j["licenses"]) for j in data.jobs.select(["id", "licenses"]).to_pylist()}
    figure = usage_figure(cluster_usage(data))
    for index, usage in enumerate(cluster_usage(data)):
        cpu_rows, license_rows = [], []
        for e, at in zip(data.events.to_pylist(), cluster_codes(data.events), strict=True):
            if at == index and e["kind"] in ("start", "finish"):
                sign = 1 if e["kind"] == "start" else -1
                cpu_rows.append((e["time"], sign * e["cpus"]))
                license_rows.append((e["time"], sign * licenses[e["job"]]))
        for series, rows in (("cpus_used", cpu_rows), ("licenses_used", license_rows)):
            expected = levels_after_each_time(rows)
            drawn = dict(zip(usage.time.tolist(), usage.levels[series].tolist(), strict=True))
            assert set(expected) <= set(drawn)
            assert drawn == {t: level_at(expected, t) for t in drawn}
        line = figure.axes[2 * index].lines[0]  # the cluster's CPU panel: "used" first
        assert np.array_equal(line.get_xdata(), usage.time)
        assert np.array_equal(line.get_ydata(), usage.levels["cpus_used"])
        assert usage.levels["cpus_used"].max() <= usage.cpus


def test_queue_lengths_follow_the_events(data):
    for index, queue in enumerate(queue_lengths(data)):
        rows = [
            (e["time"], 1 if e["kind"] == "arrive" else -1)
            for e, at in zip(data.events.to_pylist(), cluster_codes(data.events), strict=True)
            if at == index and e["kind"] in ("arrive", "start")
        ]
        assert dict(zip(queue.time.tolist(), queue.length.tolist(), strict=True)) == levels_after_each_time(
            rows
        )
        assert queue.length.min() >= 0 and queue.length[-1] == 0


def test_shares_late_jobs_and_distributions_agree_with_the_summary(data):
    per_cluster = data.summary["clusters"]
    names = [c.name for c in data.clusters]
    assert np.allclose(shares(data).workload, [per_cluster[n]["workload_share"] for n in names])
    late = outcomes(data)
    assert late.clusters == names and late.counts.sum() == data.jobs.num_rows
    assert late.counts[:, 0].tolist() == [per_cluster[n]["late_jobs"] for n in names]
    percent = [per_cluster[n]["late_percent"] for n in names]
    assert np.allclose(late.late_percent(), [np.nan if p is None else p for p in percent], equal_nan=True)
    d = distributions(data)
    for name, metrics in [*per_cluster.items(), ("grid", data.summary["grid"])]:
        assert len(d.wait[name]) == metrics["jobs_finished"]
        assert np.isclose(d.wait[name].mean(), metrics["mean_wait"])
        assert np.isclose(d.wait[name].max(), metrics["max_wait"])
        assert np.isclose(d.bounded_slowdown[name].mean(), metrics["mean_bounded_slowdown"])
        assert np.all(np.diff(d.wait[name]) >= 0)


def test_preemptions_are_marked_and_resumed_runs_drawn(data):
    """A hand-made trace: job 1 starts on machine 0, is preempted, resumes on machine 1, finishes."""
    rows = [
        (0.0, "arrive", 1, [], []),
        (0.0, "start", 1, [0, 0], [0, 1]),
        (5.0, "preempt", 1, [0, 0], [0, 1]),
        (7.0, "resume", 1, [1], [2]),
        (9.0, "finish", 1, [1], [2]),
    ]
    events = pa.table(
        {
            "time": [r[0] for r in rows],
            "kind": pa.array([r[1] for r in rows]).dictionary_encode(),
            "job": [r[2] for r in rows],
            "cluster": pa.array([0] * len(rows), pa.int32()),
            "machines": pa.array([r[3] for r in rows], pa.list_(pa.int32())),
            "pes": pa.array([r[4] for r in rows], pa.list_(pa.int32())),
        }
    )
    opening, end, preempted = run_segments(events, 0)
    assert opening.column("time").to_pylist() == [0.0, 7.0]
    assert end.tolist() == [5.0, 9.0] and preempted.tolist() == [True, False]
    assert data.jobs.column("id")[0].as_py() == 1
    g = gantt_bars(replace(data, jobs=data.jobs.slice(0, 1), events=events), 0)
    assert sorted(
        zip(g.row.tolist(), g.start.tolist(), g.end.tolist(), g.preempted.tolist(), strict=True)
    ) == [
        (0, 0.0, 5.0, True),
        (1, 0.0, 5.0, True),
        (8 + 2, 7.0, 9.0, False),  # machine 1 starts at row 8 (alpha's machines have 8 CPUs)
    ]
    ax = gantt_figure(g).axes[0]
    crosses = [c for c in ax.collections if isinstance(c, PathCollection)]
    assert len(crosses) == 1 and sorted(crosses[0].get_offsets().tolist()) == [[5.0, 0.0], [5.0, 1.0]]
    assert "preempted" in [t.get_text() for t in ax.get_legend().get_texts()]


@pytest.mark.parametrize(
    ("classes", "color_by", "labels", "codes"),
    [
        (["gold", "regular", "gold"], "auto", ["regular", "gold"], [1, 0, 1]),  # the model's order
        (["gold", "regular", "gold"], "late", ["late", "on time", "no deadline", "rejected"], [0, 1, 3]),
        (["regular"] * 3, "auto", ["late", "on time", "no deadline", "rejected"], [0, 1, 3]),
        (["x", "regular", "b"], "class", ["regular", "b", "x"], [2, 0, 1]),
    ],
)
def test_jobs_are_coloured_by_class_or_deadline_outcome(classes, color_by, labels, codes):
    jobs = pa.table(
        {
            "user_class": classes,
            "submit": [0.0, 0.0, 0.0],
            "start": [2.0, 0.0, None],
            "finish": [10.0, 5.0, None],  # late, on time, never ran
            "deadline": [8.0, 6.0, 1.0],
        }
    )
    found, names = categories(jobs, color_by)
    assert (names, found.tolist()) == (labels, codes)


def test_without_classes_or_deadlines_jobs_are_coloured_by_wait():
    # One class, no deadline: class and deadline outcome would colour every job alike.
    waits = [0.0, 59.0, 60.0, 3_599.0, 3_600.0, 86_400.0, 3e6]
    jobs = pa.table(
        {
            "user_class": ["regular"] * len(waits),
            "submit": [100.0] * len(waits),
            "start": [100.0 + w for w in waits],
            "deadline": pa.array([None] * len(waits), pa.float64()),
        }
    )
    codes, labels = categories(jobs, "auto")
    assert labels == ["wait < 1 min", "wait 1 min – 1 h", "wait 1 h – 1 d", "wait ≥ 1 d"]
    assert codes.tolist() == [0, 0, 1, 1, 2, 3, 3]


def test_a_legend_only_when_it_tells_colours_apart(data):
    g = gantt_bars(data, 0)
    one = replace(g, category=np.zeros_like(g.category), labels=["no deadline"])
    assert gantt_figure(one).axes[0].get_legend() is None
    assert [t.get_text() for t in gantt_figure(g).axes[0].get_legend().get_texts()] == [
        g.labels[i] for i in np.unique(g.category)
    ]


# ---- the CLI and the page -----------------------------------------------------------------------


def embedded(html: str) -> dict[str, bytes]:
    """Each figure's PNG as the page inlines it, by figure name."""
    found = re.findall(r'data-figure="([^"]+)">.*?src="data:image/png;base64,([^"]+)"', html)
    return {name: base64.b64decode(data) for name, data in found}


def test_report_command_writes_the_page_and_the_same_pngs(run_dir, tmp_path, capsys):
    out, pngs = tmp_path / "r.html", tmp_path / "png"
    assert main(["report", str(run_dir), "-o", str(out), "--png", str(pngs), "--dpi", "110", "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "grid" in printed and "100 jobs: 100 finished" in printed
    assert f"report: {out} (8 figures" in printed and "8 PNG files" in printed
    figures = embedded(out.read_text())
    assert list(figures) == RUN_FIGURES
    assert {p.stem: p.read_bytes() for p in pngs.iterdir()} == figures
    assert all(png.startswith(b"\x89PNG") for png in figures.values())
    assert "http://" not in out.read_text() and "https://" not in out.read_text()  # nothing to fetch


def test_report_of_something_else_is_one_clear_line(tmp_path, capsys):
    assert main(["report", str(tmp_path), "--quiet"]) == 2
    assert "neither a run directory" in capsys.readouterr().err


def test_sweep_report_has_confidence_bands(sweep_dir, capsys):
    assert main(["report", str(sweep_dir), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert (
        "meta.policy" in printed
        and f"report: {sweep_dir / 'report.html'} ({len(SWEEP_FIGURES)} figures" in printed
    )
    html = (sweep_dir / "report.html").read_text()
    assert list(embedded(html)) == SWEEP_FIGURES and "all 12 points" in html
    rows = open_sweep(sweep_dir).table
    keys = varied_keys(rows)
    groups = {(g["meta.policy"], g["workload.mean_interarrival"]): g for g in compare(rows, keys)}
    for g in groups.values():  # the comparison table's times carry their units
        mean, half = g["mean_wait"]
        assert f"<td>{duration(mean)} ± {duration(half)}</td>" in html
    plot = sweep_plot(rows, keys, "mean_wait")
    assert plot.x_key == "workload.mean_interarrival"
    assert sorted(b.label for b in plot.bands) == ["least-load", "round-robin"]
    assert plot.legend == "meta.policy"
    ax = sweep_figure(plot).axes[0]
    polys = [c for c in ax.collections if isinstance(c, PolyCollection)]
    assert len(polys) == 2  # one band per policy
    for band, poly in zip(plot.bands, polys, strict=True):
        policy = band.label
        vertices = poly.get_paths()[0].vertices
        for x, mean, half, runs in zip(band.x, band.mean, band.half, band.runs, strict=True):
            expected_mean, expected_half = groups[(policy, x)]["mean_wait"]
            assert runs == 3 and np.isclose(mean, expected_mean) and np.isclose(half, expected_half)
            at_x = vertices[np.isclose(vertices[:, 0], x), 1]  # the band stops at 0: waits are >= 0
            assert (
                half > 0
                and np.isclose(at_x.min(), max(mean - half, 0))
                and np.isclose(at_x.max(), mean + half)
            )


# ---- a real browser -----------------------------------------------------------------------------

CHROMIUM = os.environ.get("GRIDEMU_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not found (Debian package 'chromium', installed by .ci/run; or set GRIDEMU_CHROMIUM): "
    "the report was not opened in a browser",
)


def chromium(tmp_path, url: str, *args: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
        url,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=90, check=True)


@needs_chromium
@pytest.mark.parametrize("which", ["run", "sweep"])
def test_the_report_opens_in_headless_chromium(which, run_dir, sweep_dir, tmp_path):
    source, names = (run_dir, RUN_FIGURES) if which == "run" else (sweep_dir, SWEEP_FIGURES)
    page = tmp_path / "report.html"
    write_report(build_report(source), page)
    loaded = chromium(tmp_path, page.as_uri(), "--dump-dom")
    console = [line for line in loaded.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], "the page logged to the console (errors, blocked fetches)"
    assert f'data-figures="{len(names)}"' in loaded.stdout
    assert f'data-figures-decoded="{len(names)}"' in loaded.stdout  # the browser decoded every image
    assert [n for n in names if f'id="fig-{n}"' in loaded.stdout] == names
    shot = tmp_path / "shot.png"
    chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1280,2400", "--hide-scrollbars")
    pixels = imread(shot)[..., :3]
    ink = np.any(pixels < 0.9, axis=-1).mean()  # share of pixels that are not (near) white
    assert pixels.std() > 0.05 and ink > 0.02, (
        f"screenshot looks blank (std {pixels.std():.3f}, ink {ink:.3f})"
    )
    colours = {tuple(c) for c in (pixels[::7, ::7] * 255).round().astype(int).reshape(-1, 3).tolist()}
    assert len(colours) > 20  # figures in colour, not a flat page


def test_plans_list_every_figure(run_dir, sweep_dir):
    assert [f.name for f in plan_report(run_dir).figures] == RUN_FIGURES
    assert [f.name for f in plan_report(sweep_dir).figures] == SWEEP_FIGURES


def test_a_generated_platform_is_rebuilt_and_per_machine_licenses_are_drawn_as_lu_counts(tmp_path):
    # The cs2 preset's scenario.toml has a [platform] generator, not [[clusters]]: the report
    # rebuilds the 150 machines from it, and counts license copies once per machine (CS 2.0).
    scenario = load_scenario("cs2", ["workload.jobs=300", "workload.mean_interarrival=1"])
    run(scenario, tmp_path / "run")
    data = load_run(tmp_path / "run")
    (shape,) = data.clusters
    (cluster,) = scenario.platform.clusters
    assert shape.license_per_machine and cluster.license_per_machine
    assert shape.machine_cpus.tolist() == [m.cpus for m in cluster.machines]
    assert shape.license_copies == sum(cluster.licenses.values())
    (usage,) = cluster_usage(data)
    per_machine = usage_series(data.jobs, data.events, (True,))
    per_job = usage_series(data.jobs, data.events)
    time, drawn = steps(per_machine["time"], per_machine["licenses_used"])
    assert np.array_equal(usage.time, time) and np.array_equal(usage.levels["licenses_used"], drawn)
    counted_per_job = steps(per_job["time"], per_job["licenses_used"])[1]
    assert (drawn <= counted_per_job).all() and (drawn < counted_per_job).any()  # jobs share copies


# ---- one cluster, no licenses, no deadlines, a warm-up: only what carries information -----------

SOLO = """
name = "solo"
seed = 3

[local]
policy = "easy"

[[clusters]]
name = "solo"
  [[clusters.machines]]
  count = 4
  cpus = 4
  mips = 300

[workload]
source = "synthetic"
jobs = 120
mean_interarrival = 60.0
estimate = [100.0, 2000.0]
cpus = [1, 4]
bench = [300.0, 300.0]
deadline_share = 0.0
license_share = 0.0

[metrics]
warmup = 600
"""


@pytest.fixture(scope="module")
def solo_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("solo")
    (folder / "solo.toml").write_text(SOLO)
    run(load_scenario(str(folder / "solo.toml")), folder / "run")
    return folder / "run"


def sections(html: str) -> list[tuple[str, str]]:
    """(heading, body) of each section of a page."""
    return re.findall(r"<section><h2>(.*?)</h2>(.*?)</section>", html)


def summary_cells(html: str) -> dict[str, list[str]]:
    """Each summary table's column, by the summary.json key in its header's tooltip."""
    (summary,) = [body for heading, body in sections(html) if heading == "Summary"]
    columns = {}
    for table in re.findall(r"<table>.*?</table>", summary):
        keys = re.findall(r'<th(?: title="summary.json: ([a-z0-9_]+)")?>', table)
        rows = [
            re.findall(r"<td>(.*?)</td>", row)
            for row in re.findall(r"<tr(?: class=\"total\")?>(.*?)</tr>", table)
        ]
        for i, key in enumerate(keys):
            columns[key or "cluster"] = [row[i] for row in rows if row]
    return columns


def test_a_one_cluster_report_leaves_out_what_says_nothing(solo_dir):
    data = load_run(solo_dir)
    summary = data.summary
    assert summary["grid"]["late_percent"] is None and summary["jobs"]["measured"] < summary["jobs"]["total"]
    plan = plan_report(solo_dir)
    assert [f.name for f in plan.figures] == [
        "gantt-solo",
        "usage",
        "queue",
        "distributions",
    ]  # no share, late
    html = build_report(solo_dir).html
    cells = summary_cells(html)
    assert cells["cluster"] == ["solo"]  # no "grid" row repeating the one cluster
    for key in ("late_percent", "late_jobs", "workload_share", "license_usage", "preemptions", "pb"):
        assert key not in cells, key
    assert len(usage_figure(cluster_usage(data)).axes) == 1  # no "none in this cluster" license panel
    d = distributions(data)
    assert list(d.wait) == ["solo"]  # no "grid" line equal to the cluster's
    # the CDFs draw the jobs the metrics measure: the warm-up's are left out there too
    assert len(d.wait["solo"]) == summary["grid"]["jobs_finished"] < summary["jobs"]["finished"]
    assert np.isclose(d.wait["solo"].mean(), summary["grid"]["mean_wait"])
    assert d.wait["solo"][math.ceil(0.95 * len(d.wait["solo"])) - 1] == summary["grid"]["p95_wait"]
    for kind in ("queue", "distributions"):
        assert all(ax.get_legend() is None for ax in PLOTS[kind](data).axes), kind  # one line: no legend


def test_the_page_says_why_the_tables_count_fewer_jobs(solo_dir):
    summary = json.loads((solo_dir / "summary.json").read_text())
    jobs = summary["jobs"]
    html = build_report(solo_dir).html
    said = f"the per-job metrics take {jobs['measured']:,} of {jobs['total']:,} jobs"
    facts = re.search(r'<p class="facts">(.*?)</p>', html).group(1)
    assert f"{jobs['total']:,} jobs" in facts and said in facts
    assert "the first 10 min (warm-up)" in facts
    assert summary_cells(html)["jobs_finished"] == [f"{summary['grid']['jobs_finished']:,}"]


def test_times_in_tables_carry_their_unit(solo_dir, run_dir):
    for folder in (solo_dir, run_dir):
        summary = json.loads((folder / "summary.json").read_text())
        cells = summary_cells(build_report(folder).html)
        rows = [*summary["clusters"].values(), *([summary["grid"]] if len(summary["clusters"]) > 1 else [])]
        for key in ("mean_wait", "p50_wait", "p95_wait", "p99_wait", "max_wait", "makespan"):
            assert cells[key] == [duration(m[key]) for m in rows], key
            assert all(re.fullmatch(r"-?[\d,.]+ (s|min|h|d)", cell) for cell in cells[key]), cells[key]
        for key in ("p50_bounded_slowdown", "p95_bounded_slowdown", "p99_bounded_slowdown"):
            assert cells[key] == [f"{m[key]:.3g}" if m[key] < 1000 else f"{m[key]:,.0f}" for m in rows]
    assert (duration(42.0), duration(12_240.0), duration(1_309_272.0)) == ("42 s", "3.4 h", "15.2 d")


def test_each_heading_once(run_dir, solo_dir):
    for folder in (run_dir, solo_dir):
        html = build_report(folder).html
        headings = [h for h, _ in sections(html)]
        assert len(headings) == len(set(headings))
        assert "<figcaption>" not in html  # a figure's own title names its cluster: no caption repeats it
        for item in plan_report(folder).figures:  # nor does a figure's title repeat its section's heading
            titles = [ax.get_title(loc="left") for ax in item.draw()[0].axes]
            assert item.section not in titles and item.section in headings, (item.section, titles)
    data = load_run(run_dir)
    for kind in ("queue", "share", "late"):
        assert [ax.get_title(loc="left") for ax in PLOTS[kind](data).axes] == [""], kind  # the page's heading


# ---- several runs: a run and its replay ---------------------------------------------------------


def test_a_run_and_its_replay_compare_side_by_side(run_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(run_dir), "--set", "local.policy=fcfs", "--quiet"]) == 0
    (replayed,) = (tmp_path / "runs").iterdir()
    assert replayed.name == "run-replay-local.policy=fcfs-001"
    capsys.readouterr()
    out = tmp_path / "both.html"
    assert main(["report", str(run_dir), str(replayed), "-o", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "run:\ncluster" in printed and f"{replayed.name}:\ncluster" in printed
    html = out.read_text()
    assert list(embedded(html)) == ["distributions"]
    (body,) = [b for h, b in sections(html) if h == "Comparison of the runs (grid)"]
    header = re.findall(r"<th>(.*?)</th>", body)[:4]
    assert header == ["metric", "run", replayed.name, "change from run"]
    first, second = (json.loads((d / "summary.json").read_text())["grid"] for d in (run_dir, replayed))
    row = re.search(r"<tr><td>p95 wait</td>(.*?)</tr>", body).group(1)
    assert re.findall(r"<td>(.*?)</td>", row) == [
        duration(first["p95_wait"]),
        duration(second["p95_wait"]),
        signed_cell("p95_wait", second["p95_wait"], first["p95_wait"]),
    ]
    assert "<td>workload share</td>" not in body  # a grid's share is all of it
    files = {p.name: p.read_bytes() for p in run_dir.iterdir()}
    assert main(["report", str(run_dir), str(replayed), "--quiet"]) == 0  # by default into runs/
    assert (tmp_path / "runs" / f"compare-run+{replayed.name}.html").read_text().count("change from run") == 4
    assert {p.name: p.read_bytes() for p in run_dir.iterdir()} == files  # the run's own report.html stays
    overlaid = run_distributions([("run", load_run(run_dir)), ("fcfs", load_run(replayed))])
    assert list(overlaid.wait) == ["run", "fcfs"]
    assert np.isclose(overlaid.wait["fcfs"].mean(), second["mean_wait"])
    assert len(overlaid.wait["run"]) == first["jobs_finished"]


def test_reports_of_runs_and_sweeps_together_are_refused_in_one_line(run_dir, sweep_dir, capsys):
    assert main(["report", str(run_dir), str(sweep_dir), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "not a run directory" in err and "expected run directories or sweep directories" in err
    assert len(err.splitlines()) == 1


# ---- the page's layout in a real browser ----------------------------------------------------------


@needs_chromium
@pytest.mark.parametrize("width", [1400, 900])
def test_the_summary_tables_fit_the_window(width, run_dir, solo_dir, tmp_path):
    for folder in (run_dir, solo_dir):
        page = tmp_path / f"{folder.name}.html"
        write_report(build_report(folder), page)
        loaded = chromium(tmp_path, page.as_uri(), "--dump-dom", f"--window-size={width},1200")
        assert 'data-tables-cut="0"' in loaded.stdout, f"a table is wider than a {width}-px window"
        shot = tmp_path / f"{folder.name}-{width}.png"
        chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", f"--window-size={width},1200")
        pixels = imread(shot)[..., :3]
        assert pixels.shape[1] == width and np.any(pixels < 0.5, axis=-1)[:, width // 2 :].any()
