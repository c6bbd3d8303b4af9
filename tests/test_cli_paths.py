"""Where a relative path is read from (issue 32): written in a scenario file, from that file's folder
(and an ``extends`` chain's, from the folder of the file loaded); given with ``--set``, from the current
directory, as every command line reads a path."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.cli import main
from emulator.core.config import ScenarioError
from emulator.data.scenario import load

SCENARIO = """
name = "paths"
[[clusters]]
name = "c"
  [[clusters.machines]]
  count = 2
  cpus = 1
  mips = 1
[workload]
source = "swf"
path = "trace.swf"
site = "c"
"""


def swf(path: Path, jobs: int) -> Path:
    """An SWF trace of ``jobs`` one-CPU jobs (the count tells which file was read)."""
    lines = [f"{i} {10 * i} 0 5 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1" for i in range(1, jobs + 1)]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """``work/`` (the current directory) holding a 3-job trace and ``docs/s.toml``, beside which is a
    2-job trace of the same name."""
    work = tmp_path / "work"
    (work / "docs").mkdir(parents=True)
    (work / "docs" / "s.toml").write_text(SCENARIO)
    swf(work / "docs" / "trace.swf", 2)
    swf(work / "trace.swf", 3)
    monkeypatch.chdir(work)
    return work


def test_a_path_in_the_file_is_read_from_the_files_folder(layout):
    assert len(load("docs/s.toml").jobs) == 2


def test_a_path_given_with_set_is_read_from_the_current_directory(layout):
    scenario = load("docs/s.toml", ["workload.path=trace.swf"])
    assert len(scenario.jobs) == 3
    assert scenario.effective["workload"]["path"] == str(layout / "trace.swf")  # scenario.toml: from anywhere
    assert len(load("docs/s.toml", [f"workload.path={layout / 'docs' / 'trace.swf'}"]).jobs) == 2  # absolute


def test_a_table_given_with_set_reads_its_paths_from_the_current_directory(layout):
    whole = 'workload={source="swf", path="trace.swf", site="c"}'
    assert len(load("docs/s.toml", [whole]).jobs) == 3


def test_a_set_path_that_is_missing_names_the_current_directory(layout):
    with pytest.raises(ScenarioError, match=r"key 'workload\.path'") as err:
        load("docs/s.toml", ["workload.path=nowhere.swf"])
    assert str(layout / "nowhere.swf") in str(err.value)


def test_a_failures_file_given_with_set_is_read_from_the_current_directory(layout):
    (layout / "f.csv").write_text("cluster,machine,fail,repair\nc,0,1,2\n")
    sets = ["local.policy=easy", "stress.failures.model=list", "stress.failures.file=f.csv"]
    scenario = load("docs/s.toml", sets)
    assert scenario.effective["stress"]["failures"]["file"] == str(layout / "f.csv")
    (layout / "own.csv").write_text("machine,fail,repair\n0,1,2\n")  # a cluster's own: no cluster column
    own = load("docs/s.toml", ["local.policy=easy", 'clusters.0.failures={model="list", file="own.csv"}'])
    assert own.effective["clusters"][0]["failures"]["file"] == str(layout / "own.csv")


def test_an_extended_files_paths_keep_their_rule(layout, tmp_path):
    """``extends``: a relative path of the extended document is read from the extending file's folder."""
    child = tmp_path / "elsewhere" / "child.toml"
    child.parent.mkdir()
    child.write_text(f'extends = "{layout / "docs" / "s.toml"}"\n')
    swf(child.parent / "trace.swf", 4)
    assert len(load(child).jobs) == 4
    assert len(load(child, ["workload.path=trace.swf"]).jobs) == 3


def test_run_with_set_path_from_another_folder(layout, tmp_path, capsys):
    """The worked example's form: ``gridemu run docs/s.toml --set workload.path=trace.swf`` from the
    folder holding the trace (it read ``docs/trace.swf``, or failed when there was none)."""
    (layout / "docs" / "trace.swf").unlink()
    out = tmp_path / "run"
    assert main(["run", "docs/s.toml", "--set", "workload.path=trace.swf", "--out", str(out), "--quiet"]) == 0
    assert "3 jobs: 3 finished" in capsys.readouterr().out
