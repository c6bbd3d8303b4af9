"""docs/worked-example.md's commands, on a slice of KTH-SP2 and a small grid: the sweeps run, the
policies differ as the document says, the seeds are replicates, and the figures are written."""

from __future__ import annotations

import csv
import re
import shlex
from pathlib import Path

from emulator.cli import main

from .conftest import shared_path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "worked-example.md"


def commands() -> list[list[str]]:
    """The document's ``gridemu`` commands, continuation lines joined."""
    blocks = re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)
    text = "\n".join(blocks).replace("\\\n", " ")
    return [shlex.split(line)[1:] for line in text.splitlines() if line.startswith("gridemu ")]


def rows(sweep: Path) -> dict[tuple[str, str], dict]:
    with (sweep / "sweep.csv").open() as handle:
        return {(r["local.policy"], r["seed"]): r for r in csv.DictReader(handle)}


def smaller(args: list[str], tmp_path: Path, trace: Path) -> list[str]:
    """A command of the document on a slice: fewer seeds and jobs, files under ``tmp_path``."""
    out = []
    for arg in args:
        arg = arg.replace("seed=1..10", "seed=1..2").replace("workload.jobs=1000", "workload.jobs=150")
        arg = arg.replace("workload.path=KTH-SP2-1996-2.1-cln.swf.gz", f"workload.path={trace}")
        arg = arg.replace("docs/examples/", f"{ROOT}/docs/examples/")
        out.append(re.sub(r"^(runs|figures)/", lambda m: f"{tmp_path}/{m.group(1)}/", arg))
    return out


def test_the_worked_example_runs_as_written(tmp_path, capsys):
    trace = shared_path("traces", "KTH-SP2-1996-2.1-cln.swf.gz")
    kth_sweep, kth_report, grid_sweep, grid_report = (smaller(c, tmp_path, trace) for c in commands())
    kth_sweep += ["--set", "workload.limit=3000", "--quiet"]
    assert main(kth_sweep) == 0
    kth = rows(tmp_path / "runs" / "kth-policies")
    assert len(kth) == 6 and {r["status"] for r in kth.values()} == {"ok"}
    for seed in ("1", "2"):  # backfilling beats FCFS on every window
        fcfs, easy = (float(kth[(p, seed)]["mean_bounded_slowdown"]) for p in ("fcfs", "easy"))
        assert easy < fcfs
    assert kth[("easy", "1")]["mean_wait"] != kth[("easy", "2")]["mean_wait"]  # windows differ
    assert "seeds gave identical results" not in capsys.readouterr().err
    assert main([*kth_report, "--quiet"]) == 0
    figure = tmp_path / "figures" / "kth" / "sweep-mean_bounded_slowdown.pdf"
    assert figure.read_bytes().startswith(b"%PDF")
    assert main([*grid_sweep, "--quiet"]) == 0
    grid = rows(tmp_path / "runs" / "grid-policies")
    assert {p for p, _ in grid} == {"fcfs", "easy", "conservative"}
    assert {r["status"] for r in grid.values()} == {"ok"}
    assert main([*grid_report, "--quiet"]) == 0
    assert (tmp_path / "figures" / "grid" / "sweep-mean_wait.pdf").exists()
