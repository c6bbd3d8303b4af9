"""The notebook API: the same numbers as summary.json and the Arrow files, figures, dataframes, the README."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from matplotlib.figure import Figure

from emulator import RunDir, emulate, open_run
from emulator.report import PLOTS

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> RunDir:
    return emulate(
        "quickstart", set=["workload.jobs=120"], seed=4, out_dir=tmp_path_factory.mktemp("api") / "run"
    )


def read(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def test_the_api_returns_the_numbers_of_summary_json(run):
    on_disk = json.loads((run.path / "summary.json").read_text())
    assert run.summary == on_disk and on_disk["run"]["seed"] == 4 and on_disk["jobs"]["total"] == 120
    assert run.jobs.equals(read(run.path / "jobs.arrow")) and run.events.equals(
        read(run.path / "events.arrow")
    )
    finished = run.jobs.filter(pc.equal(run.jobs.column("status"), "finished"))
    grid = on_disk["grid"]
    assert finished.num_rows == grid["jobs_finished"] == on_disk["jobs"]["finished"]
    assert np.isclose(pc.mean(finished.column("wait")).as_py(), grid["mean_wait"])
    assert np.isclose(pc.max(finished.column("wait")).as_py(), grid["max_wait"])
    reopened = open_run(run.path)
    assert reopened.summary == on_disk and reopened.jobs.equals(run.jobs)
    assert run.clusters == list(on_disk["clusters"]) == ["alpha", "beta", "gamma"]
    assert repr(reopened) == f"RunDir({str(run.path)!r}: 120 jobs, 3 clusters)"


def test_either_backend_gives_the_same_run(tmp_path):
    """The Ray backend (a private local Ray, two actors) through the API: the same trace and metrics."""
    on_ray = emulate(
        "quickstart", set=["workload.jobs=60"], out_dir=tmp_path / "ray", backend="ray", partitions=2
    )
    local = emulate("quickstart", set=["workload.jobs=60"], out_dir=tmp_path / "inproc")
    assert on_ray.events.equals(local.events) and on_ray.jobs.equals(local.jobs)
    assert on_ray.summary["run"]["backend"] == "ray"
    assert (
        on_ray.summary["grid"] == local.summary["grid"]
        and on_ray.summary["clusters"] == local.summary["clusters"]
    )
    with pytest.raises(ValueError, match="backend 'mpi'"):
        emulate("quickstart", backend="mpi", out_dir=tmp_path / "x")
    with pytest.raises(ValueError, match=r"ray_calls 'grpc': expected one of 'direct', 'plain', 'compiled'"):
        emulate("quickstart", backend="ray", ray_calls="grpc", out_dir=tmp_path / "y")


def test_every_report_figure_can_be_plotted(run):
    for kind in PLOTS:
        figure = run.plot(kind)
        assert isinstance(figure, Figure) and figure.axes
    gantt = run.plot("gantt", cluster="beta", color_by="late")
    assert gantt.axes[0].get_title(loc="left").startswith("beta: 48 CPUs")
    assert gantt._repr_png_().startswith(b"\x89PNG")  # how Jupyter shows it inline
    assert len(run.plot("usage", clusters=["gamma"]).axes) == 2
    with pytest.raises(ValueError, match="plot kind 'pie'"):
        run.plot("pie")
    with pytest.raises(KeyError, match="no cluster 'delta'"):
        run.plot("gantt", cluster="delta")


@pytest.mark.parametrize("library", ["pandas", "polars"])
def test_dataframes_convert_or_say_what_to_install(run, library, monkeypatch):
    convert = getattr(run, f"to_{library}")
    monkeypatch.setitem(sys.modules, library, None)  # as if it were not installed
    with pytest.raises(ImportError, match=f"needs {library}, which is not installed: pip install {library}"):
        convert("jobs")
    monkeypatch.undo()
    pytest.importorskip(library)
    assert len(convert("events")) == run.events.num_rows


def test_report_from_the_api(run, tmp_path):
    path = run.report(tmp_path / "r.html", png_dir=tmp_path / "png")
    assert path.read_text().count("<figure ") == 8 and len(list((tmp_path / "png").iterdir())) == 8


def test_open_run_of_a_non_run_directory_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="not a run directory"):
        open_run(tmp_path)


def test_the_readme_example_runs(tmp_path, monkeypatch):
    section = README.read_text().split("### Reports and notebooks", 1)[1]
    (code,) = re.findall(r"```python\n(.*?)```", section.split("\n### ", 1)[0], flags=re.DOTALL)
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "README.md", "exec"), {})
    assert open_run(tmp_path / "runs" / "notebook").summary["jobs"]["total"] == 200
