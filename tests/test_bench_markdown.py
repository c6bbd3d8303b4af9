"""The benchmarks' ``--markdown``: each script's tables replace its region of docs/performance.md alone."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from bench_markdown import Region, not_reached, table  # noqa: E402

TINY = {  # each script's smallest run: a few seconds (bench_ray's starts Ray)
    "bench.py": ["--only", "synthetic-16-clusters", "--jobs", "100"],
    "bench_workloads.py": ["--only", "two-level-250k"],
    "bench_ray.py": ["--only", "barrier", "--barrier", "1", "--calls", "direct", "--rounds", "20"],
}
TITLES = {
    "bench.py": "| scenario | jobs | events | wall s |",
    "bench_workloads.py": "| row | jobs | seconds | jobs/s |",
    "bench_ray.py": "| partitions | calls | rounds/s | round ms |",
}


def around(text: str, name: str) -> tuple[str, str, str]:
    """The text before the region (markers included), inside it, and after it."""
    begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->"
    head, rest = text.split(begin)
    inside, tail = rest.split(end)
    return head + begin, inside, end + tail


@pytest.mark.parametrize("script", list(TINY))
def test_markdown_replaces_only_the_scripts_region(script, tmp_path):
    doc = tmp_path / "performance.md"
    original = (ROOT / "docs" / "performance.md").read_text()
    doc.write_text(original)
    argv = [*TINY[script], "--markdown", str(doc)]
    done = subprocess.run(
        [sys.executable, f"scripts/{script}", *argv], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    head, inside, tail = around(doc.read_text(), script)
    old_head, old_inside, old_tail = around(original, script)
    assert (head, tail) == (old_head, old_tail)  # the prose and the other scripts' tables untouched
    assert inside != old_inside
    assert f"Command: `python scripts/{script} {' '.join(argv)}`" in inside
    assert re.search(r"Measured \d{4}-\d\d-\d\d \d\d:\d\d UTC on \d+ cores \(.+\), [\d.]+ GiB RAM", inside)
    assert re.search(r"; commit [0-9a-f]{7,}", inside)
    assert TITLES[script] in inside
    assert inside.count("\n| ") >= 3  # titles, rule, one row at least
    assert "not measured" not in inside  # said only while rows are left, or when a run stopped early


def test_a_region_names_the_rows_a_run_has_not_reached():
    # Regions are rewritten after every row: a run stopped midway leaves this note under its rows.
    assert not_reached(["grid1000", "two-level-ms"]) == [
        "not measured: grid1000, two-level-ms (the run had not reached them)"
    ]
    assert not_reached([]) == []


def test_a_region_keeps_the_bytes_around_it(tmp_path):
    doc = tmp_path / "d.md"
    doc.write_bytes(b"# t\r\nkeep\n<!-- x:begin -->\nold\nrows\n<!-- x:end -->  \r\nafter\n")
    Region.of(doc, "x").replace("header", table(["a", "b"], [["1", "2"]]), "")
    assert doc.read_bytes() == (
        b"# t\r\nkeep\n<!-- x:begin -->\nheader\n\n"
        b"| a | b |\n| --- | --: |\n| 1 | 2 |\n<!-- x:end -->  \r\nafter\n"
    )
    assert not (tmp_path / "d.md.part").exists()


@pytest.mark.parametrize(
    "text, found",
    [
        ("no markers\n", "(found 0 and 0)"),
        ("<!-- x:end -->\n<!-- x:begin -->\n", "(found 1 and 1)"),
        ("<!-- x:begin -->\n<!-- x:end -->\n<!-- x:begin -->\n", "(found 2 and 1)"),
    ],
)
def test_a_missing_region_is_one_line_naming_the_file_and_markers(tmp_path, text, found):
    doc = tmp_path / "d.md"
    doc.write_text(text)
    with pytest.raises(SystemExit) as stop:
        Region.of(doc, "x")
    message = str(stop.value)
    assert message == (
        f"{doc}: expected one line <!-- x:begin --> and, after it, one line <!-- x:end --> "
        f"{found}; add them where the tables go"
    )
    assert doc.read_text() == text


def test_a_missing_doc_is_one_line(tmp_path):
    with pytest.raises(SystemExit, match=r"d\.md: cannot read it \(No such file or directory\)"):
        Region.of(tmp_path / "d.md", "x")
    assert Region.of(None, "x") is None
