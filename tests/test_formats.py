"""The trace format registry (workloads/formats.py): every format that both reads and writes gives
its jobs back, names say their format, and an unknown or unable format is one line saying what was
expected."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator.core.model import JOB_INPUTS
from workloads import formats
from workloads.table import trace_columns

TRACE = """\
; Version: 2.2
; MaxNodes: 4
; MaxProcs: 16
1 0 5 10 2 -1 -1 2 20 -1 1 3 4 7 1 2 -1 -1
2 3 0 40 4 -1 -1 4 60 -1 1 5 4 7 1 1 -1 -1
3 9 2 7 1 -1 -1 1 10 -1 0 3 4 7 1 2 -1 -1
"""
ROUND_TRIPS = [f for f in formats.FORMATS.values() if f.read and f.write]


@pytest.fixture
def stream(tmp_path) -> formats.Converted:
    path = tmp_path / "t.swf"
    path.write_text(TRACE)
    return formats.SWF.read(path, rules="pwa")


@pytest.mark.parametrize("fmt", ROUND_TRIPS, ids=lambda f: f.name)
def test_every_readable_and_writable_format_round_trips(tmp_path, stream, fmt):
    path = tmp_path / f"out{fmt.suffixes[0]}"
    fmt.write(stream, path, None)
    back = fmt.read(path, **({"rules": "pwa"} if fmt.rules else {}))
    assert back.table.select(JOB_INPUTS.names).equals(stream.table.select(JOB_INPUTS.names))
    kept = [name for name in trace_columns(back.table) if name in stream.table.column_names]
    assert kept and back.table.select(kept).equals(stream.table.select(kept))  # the trace's own fields


def test_round_trips_cover_swf_gwf_and_arrow():
    assert [f.name for f in ROUND_TRIPS] == ["swf", "gwf", "arrow"]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("KTH-SP2.swf", "swf"),
        ("KTH-SP2.SWF.GZ", "swf"),
        ("grid.gwf.zip", "gwf"),
        ("jobs.arrow", "arrow"),
        ("jobs.feather", "arrow"),
        ("jobs.parquet", "parquet"),
        ("out_jobs.csv", "batsim"),
    ],
)
def test_the_name_says_the_format(name, expected):
    assert formats.detect(name).name == expected


def test_a_run_directory_reads_as_its_arrow_jobs_table(tmp_path):
    assert formats.detect(tmp_path) is formats.ARROW


def test_each_suffix_belongs_to_one_format():
    suffixes = [s for f in formats.FORMATS.values() for s in f.suffixes]
    assert len(suffixes) == len(set(suffixes))


def test_a_name_that_says_no_format_is_one_line():
    with pytest.raises(ValueError) as err:
        formats.detect(Path("trace.txt"))
    assert str(err.value) == (
        "trace.txt: cannot tell the format from the name; give it (swf, gwf, arrow, parquet, batsim)"
    )


@pytest.mark.parametrize(
    ("name", "ability", "message"),
    [
        ("xml", "read", "unknown format 'xml'; expected one of swf, gwf, alea, arrow"),
        ("xml", "write", "unknown format 'xml'; expected one of swf, gwf, arrow, parquet, batsim"),
        ("parquet", "read", "format 'parquet' cannot be read; expected one of swf, gwf, alea, arrow"),
        (
            "alea",
            "write",
            "format 'alea' cannot be written; expected one of swf, gwf, arrow, parquet, batsim",
        ),
    ],
)
def test_an_unknown_or_unable_format_is_one_line(name, ability, message):
    with pytest.raises(ValueError) as err:
        formats.get(name, ability)
    assert str(err.value) == message


def test_abilities_list_the_formats_that_have_them():
    assert formats.names("workload") == ("swf", "gwf", "alea", "arrow")
    assert formats.names("platform") == ("swf", "gwf", "alea")
    assert formats.names() == ("swf", "gwf", "alea", "arrow", "parquet", "batsim")
