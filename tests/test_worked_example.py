"""docs/worked-example.md's commands as written: its ``sh`` blocks run by a shell, from a fresh copy of
the repository's layout with the log where the document says to put it (the folder the commands run
from), and the sweeps give the numbers the document's tables state.

The commands are the document's full runs (the KTH-SP2 log's ten windows, the grid's 1,000 jobs, ten
seeds each): about 50 s on two idle cores, over a minute on busy ones.
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from emulator.engine.sweep import mean_ci

from .conftest import shared_path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "worked-example.md"
TRACE = "KTH-SP2-1996-2.1-cln.swf.gz"
COLUMNS = {
    "mean wait": "mean_wait",
    "mean bounded slowdown": "mean_bounded_slowdown",
    "utilisation": "utilization",
    "late %": "late_percent",
}
"""The document's table headings (without their units) and the sweep's metrics they show."""


def blocks() -> list[str]:
    """The document's shell blocks, as written."""
    return re.findall(r"```sh\n(.*?)```", DOC.read_text(), re.S)


def tables() -> list[list[dict[str, str]]]:
    """The document's tables of results, in order: each a row per policy, heading -> cell."""
    found = []
    for table in re.findall(r"((?:^\|.*\|\n)+)", DOC.read_text(), re.M):
        lines = [[cell.strip() for cell in line.strip("|").split("|")] for line in table.splitlines()]
        heads = [re.sub(r"\s*\(.*\)$", "", head) for head in lines[0]]
        found.append([dict(zip(heads, row, strict=True)) for row in lines[2:]])
    return found


def tolerance(number: str) -> float:
    """Half a unit of the last digit the document shows: "79,190" -> 5, "0.040" -> 0.0005, "24" -> 0.5."""
    digits = number.replace(",", "")
    if "." in digits:
        return 0.5 * 10 ** -len(digits.split(".")[1])
    return 0.5 * 10 ** (len(digits) - len(digits.rstrip("0")))


def stated(cell: str) -> tuple[float, float, float, float]:
    """A ``mean ± half-width`` cell: the two numbers and how far off each may be."""
    mean, half = (part.strip() for part in cell.split("±"))
    return float(mean.replace(",", "")), tolerance(mean), float(half.replace(",", "")), tolerance(half)


def measured(sweep: Path, metrics: list[str]) -> dict[str, dict[str, tuple[float, float]]]:
    """Per policy, each metric's mean and 95% half-width over the seeds, as the sweep prints them."""
    with (sweep / "sweep.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert {row["status"] for row in rows} == {"ok"}
    policies = dict.fromkeys(row["local.policy"] for row in rows)
    return {
        policy: {
            metric: mean_ci([float(r[metric]) for r in rows if r["local.policy"] == policy])
            for metric in metrics
        }
        for policy in policies
    }


def check(sweep: Path, table: list[dict[str, str]]) -> None:
    """The sweep's means and half-widths are the table's, to the digits the table shows."""
    metrics = [COLUMNS[heading] for heading in table[0] if heading != "policy"]
    results = measured(sweep, metrics)
    assert [row["policy"] for row in table] == list(results)
    for row in table:
        for heading, cell in row.items():
            if heading == "policy":
                continue
            mean, ci = results[row["policy"]][COLUMNS[heading]]
            want, off, want_ci, off_ci = stated(cell)
            where = f"{sweep.name}, {row['policy']}, {heading}: measured {mean:.6g} ± {ci:.3g}, stated {cell}"
            assert abs(mean - want) <= off and abs(ci - want_ci) <= off_ci, where


@pytest.fixture
def layout(tmp_path):
    """A copy of the repository's ``docs/`` in ``tmp_path``, with the log beside it (where the document
    says to put it: the folder the commands run from)."""
    trace = shared_path("traces", TRACE)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    shutil.copy(trace, tmp_path / TRACE)
    return tmp_path


def test_the_worked_example_runs_as_written_and_gives_its_numbers(layout):
    gridemu = shutil.which("gridemu", path=str(Path(sys.executable).parent)) or shutil.which("gridemu")
    if gridemu is None:
        pytest.skip("the gridemu command is not installed (pip install -e .)")
    env = {**os.environ, "PATH": f"{Path(gridemu).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    sweeps = []
    for block in blocks():
        done = subprocess.run(
            ["bash", "-e", "-c", block], cwd=layout, env=env, capture_output=True, text=True, timeout=900
        )
        assert done.returncode == 0, f"{block}\nexit {done.returncode}:\n{done.stderr[-3000:]}"
        assert "identical results" not in done.stderr  # the seeds are replicates, as the document says
        sweeps += re.findall(r"--out (\S+)", block)
    assert len(sweeps) == len(tables()) == 2
    for sweep, table in zip(sweeps, tables(), strict=True):
        check(layout / sweep, table)
    for figure in re.findall(r"`(figures/\S+\.pdf)`", DOC.read_text()):  # the figures the text names
        assert (layout / figure).read_bytes().startswith(b"%PDF"), figure
