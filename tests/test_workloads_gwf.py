"""The GWF reader (29 fields, a 30th tolerated, sites, text ids) and writer; SWF <-> GWF."""

from __future__ import annotations

from pathlib import Path

import pytest

from workloads.columns import SkippedLine, TraceError
from workloads.convert import convert
from workloads.export import write_gwf
from workloads.gwf import GWF_FIELDS, read_gwf
from workloads.swf import read_swf

COMMENT = "# " + " ".join(GWF_FIELDS)


def gwf_line(job, submit=0, run=10, procs=2, user="U7", orig="siteA", last="siteB", extra=()):
    values = [job, submit, 3, run, procs, -1, -1, procs, 60, -1, 1, user, "G1", -1, "Q1", -1, orig, last]
    values += ["UNITARY", -1, -1, -1, -1, -1, -1, -1, -1, "VO1", -1, *extra]
    return "\t".join(str(v) for v in values)


def write(tmp_path: Path, *lines: str, name: str = "t.gwf") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fields_and_sites(tmp_path):
    path = write(tmp_path, COMMENT, gwf_line(1), gwf_line(2, submit=5, orig="siteB", last="-1", user="U9"))
    trace = read_gwf(path)
    first, second = trace.table.to_pylist()
    assert (first["id"], first["submit"], first["runtime"], first["estimate"], first["cpus"]) == (
        1,
        0,
        10,
        60,
        2,
    )
    assert (first["site"], second["site"]) == ("siteA", "siteB")
    assert (first["gwf_job_structure"], first["gwf_vo"], first["swf_wait"]) == ("UNITARY", "VO1", 3)
    assert first["user"] != second["user"] and first["user"] > 0  # words numbered
    last_run = read_gwf(path, sites="last-run").table.column("site").to_pylist()
    assert last_run == ["siteB", ""]
    assert read_gwf(path, sites="none").table.column("site").to_pylist() == ["", ""]


def test_thirtieth_field_tolerated_and_short_lines_skipped(tmp_path):
    path = write(tmp_path, gwf_line(1, extra=("extra",)), "1 2 3", gwf_line(3))
    trace = read_gwf(path)
    assert trace.table.column("id").to_pylist() == [1, 3]
    assert trace.skipped == [SkippedLine(2, "3 fields, expected 29")]


def test_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path, COMMENT, gwf_line(1), gwf_line(2, run="long"))
    assert read_gwf(path).skipped == [SkippedLine(3, "field 4 (run time) is 'long', not a number")]
    with pytest.raises(TraceError, match=r"t\.gwf, line 3"):
        read_gwf(path, strict=True)


def test_gwf_round_trip_and_swf_conversions(tmp_path):
    source = write(tmp_path, COMMENT, gwf_line(1), gwf_line(2, submit=5, user=-1, orig="-1"))
    convert(source, tmp_path / "t.arrow")
    convert(tmp_path / "t.arrow", tmp_path / "back.gwf")
    assert read_gwf(tmp_path / "back.gwf").table.equals(read_gwf(source).table)
    convert(source, tmp_path / "t.swf")  # fields 1-16 carry over; users named by words get their numbers
    swf = read_swf(tmp_path / "t.swf", rules="pwa").table
    assert swf.column("swf_wait").to_pylist() == [3, 3] and swf.column("swf_user").to_pylist() == [1, -1]
    convert(tmp_path / "t.swf", tmp_path / "from-swf.gwf")
    again = read_gwf(tmp_path / "from-swf.gwf", sites="none").table
    assert again.column("runtime").to_pylist() == [10, 10]


def test_write_gwf_uses_sites_and_the_schedule(tmp_path):
    import numpy as np
    import pyarrow as pa

    from workloads.table import job_table

    table = job_table(np.array([1]), np.array([0.0]), np.array([2]), np.array([5.0]), site="siteA")
    write_gwf(table, tmp_path / "m.gwf")
    fields = (tmp_path / "m.gwf").read_text().splitlines()[1].split()
    assert len(fields) == 29 and fields[16] == "siteA" and fields[17] == "siteA"
    run = table.append_column("status", pa.array(["finished"])).append_column("start", pa.array([2.0]))
    run = run.append_column("finish", pa.array([7.0])).append_column("cluster", pa.array(["c3"]))
    write_gwf(run, tmp_path / "r.gwf")
    fields = (tmp_path / "r.gwf").read_text().splitlines()[1].split()
    assert (fields[2], fields[3], fields[10], fields[17]) == ("2", "5", "1", "c3")


def test_a_sites_platform_and_its_jobs_read_a_gwf_file_once(tmp_path, monkeypatch):
    """Within shared_reads (scenario loading), the same file and options are parsed once, as for SWF."""
    from workloads import gwf, swf

    path = write(tmp_path, COMMENT, gwf_line(1), gwf_line(2, submit=5, orig="siteB"))
    reads = []
    real = gwf.read_trace
    monkeypatch.setattr(gwf, "read_trace", lambda *a, **k: reads.append(k) or real(*a, **k))
    with swf.shared_reads():
        first = read_gwf(path)
        again = read_gwf(path, sites="origin")  # the default, spelt out
        assert len(reads) == 1 and again.table.equals(first.table)
        assert read_gwf(path, sites="last-run").table.column("site").to_pylist() == ["siteB", "siteB"]
        assert len(reads) == 2  # other sites: read again
    read_gwf(path)  # outside the block nothing is kept
    assert len(reads) == 3
