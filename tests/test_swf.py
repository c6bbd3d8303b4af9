"""Tests of the SWF reader: GridSim's Workload rules, one by one, and against GridSim's own reading;
the Parallel Workloads Archive's rules (``rules="pwa"``)."""

from __future__ import annotations

import csv
import gzip
import zipfile
from pathlib import Path

import pytest

from workloads import SkippedLine, SwfTrace, TraceError, read_swf

SHARED = Path(__file__).resolve().parents[2] / "shared"
REF = SHARED / "gridsim-ref"
KTH = SHARED / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"


def swf_line(job, submit=0, run=10, alloc=1, req_procs=1, req_time=-1, uid=1, extra=()) -> str:
    """One 18-field SWF line; only the fields GridSim reads (and the uid) vary."""
    fields = [job, submit, -1, run, alloc, -1, -1, req_procs, req_time, -1, 1, uid, 1, 1, 1, -1, -1, -1]
    return " ".join(str(v) for v in [*fields, *extra])


def write(tmp_path: Path, *lines: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def one_job(tmp_path: Path, rules: str = "gridsim", **fields):
    trace = read_swf(write(tmp_path, swf_line(1, **fields)), rules=rules)
    assert trace.skipped == []
    (job,) = trace.jobs
    return job


# --- against GridSim's reading of the reference trace ---------------------------------------


def test_reference_trace_matches_gridsim():
    if not REF.is_dir():
        pytest.skip(f"GridSim reference outputs not found at {REF} (the shared folder is absent)")
    trace = read_swf(REF / "d_trace.swf", rating=100)
    with open(REF / "d_swf_workload_zero_io.csv", newline="") as f:
        expected = [
            (
                int(r["gridlet_id"]),
                int(r["req_num_pe"]),
                float(r["req_length_mi"]),
                float(r["req_submit_time"]),
            )
            for r in csv.DictReader(f)
        ]
    assert len(expected) == 20
    got = [(j.id, j.cpus, j.length, j.submit) for j in trace.jobs]
    assert sorted(got) == sorted(expected)
    assert [j.id for j in trace.jobs] == list(range(1, 21))  # file order
    assert [s.line for s in trace.skipped] == [13, 15]
    assert trace.skipped[0] == SkippedLine(13, "17 fields, expected 18")
    assert "field 4" in trace.skipped[1].reason
    assert "run time" in trace.skipped[1].reason
    assert "'12.5'" in trace.skipped[1].reason
    assert trace.header["MaxProcs"] == "14"
    assert trace.header["Version"] == "2.2"
    assert trace.job_lines[1] == 6 and trace.job_lines[7] == 17 and trace.job_lines[17] == 27
    assert trace.path == str(REF / "d_trace.swf")


# --- containers --------------------------------------------------------------------------------


def test_gz_and_zip_read_like_plain(tmp_path):
    lines = ["; Version: 2.2", swf_line(1, run=5), swf_line(2, submit=3, req_procs=4, req_time=9)]
    plain = write(tmp_path, *lines)
    text = plain.read_bytes()
    gz = tmp_path / "t.swf.gz"
    gz.write_bytes(gzip.compress(text))
    single = tmp_path / "single.zip"
    with zipfile.ZipFile(single, "w") as z:
        z.writestr("anything.txt", text)
    several = tmp_path / "several.zip"
    with zipfile.ZipFile(several, "w") as z:
        z.writestr("README", "not a trace\n")
        z.writestr("trace.swf", text)
        z.writestr("other.swf", swf_line(7) + "\n")

    def tuples(trace: SwfTrace):
        return [j.to_tuple() for j in trace.jobs], trace.header, trace.skipped

    reference = tuples(read_swf(plain, rating=10))
    assert len(reference[0]) == 2
    for path in (gz, single, several):
        assert tuples(read_swf(path, rating=10)) == reference, path


def test_zip_without_swf_member_is_refused(tmp_path):
    path = tmp_path / "t.zip"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("a.txt", swf_line(1))
        z.writestr("b.txt", swf_line(2))
    with pytest.raises(TraceError, match=r"t\.zip"):
        read_swf(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"nope\.swf"):
        read_swf(tmp_path / "nope.swf")


# --- line syntax -------------------------------------------------------------------------------


def test_comments_blank_lines_and_leading_whitespace(tmp_path):
    path = write(tmp_path, "; Version: 2.2", "", "   " + swf_line(1), "\t", ";; comment", swf_line(2) + "   ")
    trace = read_swf(path)
    assert [j.id for j in trace.jobs] == [1, 2]
    assert trace.skipped == []


def test_short_line_skipped_with_its_line_number(tmp_path):
    path = write(tmp_path, swf_line(1), "5 0 -1 10 1", swf_line(2))
    trace = read_swf(path)
    assert [j.id for j in trace.jobs] == [1, 2]
    assert trace.skipped == [SkippedLine(2, "5 fields, expected 18")]
    # strict mode is about non-integer values only: short lines are still just recorded
    assert read_swf(path, strict=True).skipped == [SkippedLine(2, "5 fields, expected 18")]


def test_more_than_18_fields_uses_the_first_18(tmp_path):
    path = write(tmp_path, swf_line(1, run=42, extra=("{1,2,3}", "q_2w", "1:ppn=12", *tuple(range(40)))))
    trace = read_swf(path)
    assert trace.skipped == []
    assert (trace.jobs[0].id, trace.jobs[0].runtime) == (1, 42)


@pytest.mark.parametrize(
    ("fields", "number", "name", "text"),
    [
        ({"run": "12.5"}, 4, "run time", "12.5"),
        ({"submit": "abc"}, 2, "submit time", "abc"),
        ({"req_time": "1e3"}, 9, "requested time", "1e3"),
        ({"req_procs": "4.0"}, 8, "requested processors", "4.0"),
        ({"req_procs": 0, "alloc": "x"}, 5, "allocated processors", "x"),
        ({"req_time": "1_000"}, 9, "requested time", "1_000"),  # Python's int() would accept it
    ],
)
def test_non_integer_field_skips_the_line(tmp_path, fields, number, name, text):
    path = write(tmp_path, swf_line(1), swf_line(2, **fields), swf_line(3))
    trace = read_swf(path)
    assert [j.id for j in trace.jobs] == [1, 3]
    (skip,) = trace.skipped
    assert skip.line == 2
    assert f"field {number} ({name})" in skip.reason
    assert repr(text) in skip.reason


def test_bad_value_in_a_field_gridsim_does_not_read_keeps_the_job(tmp_path):
    # GridSim reads field 4 only when field 9 is -1, field 5 only when field 8 is -1 or 0
    job = one_job(tmp_path, run="12.5", req_time=30, alloc="x", req_procs=2)
    assert (job.runtime, job.cpus) == (30, 2)


def test_strict_raises_with_file_line_and_value(tmp_path):
    path = write(tmp_path, "; Version: 2.2", swf_line(1), swf_line(2, run="12.5"))
    with pytest.raises(TraceError) as info:
        read_swf(path, strict=True)
    message = str(info.value)
    assert "t.swf" in message
    assert "line 3" in message
    assert "12.5" in message
    assert "field 4" in message
    assert "expected an integer" in message
    assert isinstance(info.value, ValueError)
    assert (info.value.line, info.value.path) == (3, str(path))


# --- GridSim's rules, one at a time ----------------------------------------------------------


def test_run_time_is_requested_time_else_run_time(tmp_path):
    assert one_job(tmp_path, run=10, req_time=30).runtime == 30
    assert one_job(tmp_path, run=10, req_time=-1).runtime == 10


def test_run_time_zero_becomes_one(tmp_path):
    assert one_job(tmp_path, run=0, req_time=-1).runtime == 1
    assert one_job(tmp_path, run=10, req_time=0).runtime == 1


def test_unknown_run_time_gives_gridsims_one_mi(tmp_path):
    path = write(tmp_path, swf_line(1, run=-1, req_time=-1))
    (job,) = read_swf(path, rating=100).jobs
    assert job.length == pytest.approx(1.0)  # Gridlet clamps its length to >= 1 MI


def test_processors_requested_else_allocated(tmp_path):
    assert one_job(tmp_path, req_procs=4, alloc=2).cpus == 4
    assert one_job(tmp_path, req_procs=-1, alloc=2).cpus == 2
    assert one_job(tmp_path, req_procs=0, alloc=3).cpus == 3


@pytest.mark.parametrize(("req_procs", "alloc"), [(-1, -1), (0, 0), (-1, 0), (0, -5), (-3, 8)])
def test_processors_at_most_zero_become_one(tmp_path, req_procs, alloc):
    assert one_job(tmp_path, req_procs=req_procs, alloc=alloc).cpus == 1


def test_negative_submit_becomes_zero(tmp_path):
    assert one_job(tmp_path, submit=-5).submit == 0
    assert one_job(tmp_path, submit=7).submit == 7


def test_job_fields(tmp_path):
    path = write(tmp_path, swf_line(17, submit=5, run=30, req_procs=3, uid=12), swf_line(18, uid=-1))
    first, second = read_swf(path, rating=100, site="kth", placement="single").jobs
    assert (first.id, first.submit, first.cpus, first.estimate, first.runtime) == (17, 5, 3, 30, 30)
    assert (first.bench, first.length, first.actual_length) == (100, 3000, 3000)
    assert (first.in_bytes, first.user, first.site, first.placement) == (1500, 12, "kth", "single")
    assert second.user == 0
    assert read_swf(path).jobs[0].placement == "spread"


def test_header(tmp_path):
    path = write(
        tmp_path,
        "; Version: 2.2",
        ";    MaxProcs: 14  ",
        "; Information: http://a.example/",
        ";              http://b.example/",
        ";",
        "; Note: first",
        "; Note: second",
        ";       continued",
        ";",
        "; no key: a keyless comment after a bare ';' is not kept",
        swf_line(1),
        "; Late: after the first job, not header",
        swf_line(2),
    )
    header = read_swf(path).header
    assert header == {
        "Version": "2.2",
        "MaxProcs": "14",
        "Information": "http://a.example/\nhttp://b.example/",
        "Note": "first\nsecond\ncontinued",
    }


def test_limit(tmp_path):
    path = write(tmp_path, *(swf_line(i) for i in range(1, 6)))
    assert [j.id for j in read_swf(path, limit=3).jobs] == [1, 2, 3]
    assert read_swf(path, limit=0).jobs == []
    assert len(read_swf(path, limit=99).jobs) == 5


def test_duplicate_ids_name_both_lines(tmp_path):
    path = write(tmp_path, "; Version: 2.2", swf_line(1), swf_line(2), swf_line(1))
    with pytest.raises(TraceError) as info:
        read_swf(path)
    message = str(info.value)
    assert "line 4" in message
    assert "line 2" in message
    assert "t.swf" in message


def test_unknown_rules_and_bad_arguments(tmp_path):
    path = write(tmp_path, swf_line(1))
    with pytest.raises(ValueError, match="'gridsim', 'pwa'"):
        read_swf(path, rules="alea")
    with pytest.raises(ValueError, match="rating"):
        read_swf(path, rating=0)
    with pytest.raises(ValueError, match="placement"):
        read_swf(path, placement="everywhere")


# --- the archive's rules (pwa) ------------------------------------------------------------------


def pwa_job(tmp_path: Path, **fields):
    return one_job(tmp_path, rules="pwa", **fields)


def test_pwa_run_time_is_field_4_and_estimate_is_requested_time(tmp_path):
    job = pwa_job(tmp_path, run=10, req_time=30)
    assert (job.runtime, job.estimate) == (10, 30)
    job = pwa_job(tmp_path, run=10, req_time=-1)
    assert (job.runtime, job.estimate) == (10, 10)


def test_pwa_keeps_estimates_shorter_than_run_times_and_zero_run_times(tmp_path):
    job = pwa_job(tmp_path, run=50, req_time=20)
    assert (job.runtime, job.estimate) == (50, 20)
    job = pwa_job(tmp_path, run=0, req_time=60)
    assert (job.runtime, job.estimate) == (0, 60)


def test_pwa_processors_allocated_else_requested(tmp_path):
    assert pwa_job(tmp_path, alloc=2, req_procs=4).cpus == 2
    assert pwa_job(tmp_path, alloc=-1, req_procs=4).cpus == 4
    assert pwa_job(tmp_path, alloc=0, req_procs=3).cpus == 3


def test_pwa_fractional_times(tmp_path):
    job = pwa_job(tmp_path, submit="12.25", run="3.5", req_time="1e2")
    assert (job.submit, job.runtime, job.estimate) == (12.25, 3.5, 100.0)


def test_pwa_job_fields(tmp_path):
    path = write(tmp_path, swf_line(17, submit=5, run=30, alloc=3, req_time=60, uid=12), swf_line(18, uid=-1))
    first, second = read_swf(path, rules="pwa", rating=100, site="kth", placement="single").jobs
    assert (first.id, first.submit, first.cpus, first.estimate, first.runtime) == (17, 5, 3, 60, 30)
    assert (first.bench, first.length, first.actual_length) == (100, 6000, 3000)
    assert (first.in_bytes, first.user, first.site, first.placement) == (0, 12, "kth", "single")
    assert second.user == 0
    assert read_swf(path, rules="pwa").jobs[0].placement == "spread"


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"run": -1}, "run time unknown (field 4 is -1)"),
        ({"run": -1, "req_time": 100}, "run time unknown (field 4 is -1)"),
        ({"alloc": -1, "req_procs": -1}, "processors unknown (field 5 is -1, field 8 is -1)"),
        ({"alloc": 0, "req_procs": 0}, "processors unknown (field 5 is 0, field 8 is 0)"),
        ({"submit": -1}, "submit time unknown (field 2 is -1)"),
    ],
)
def test_pwa_unknown_values_skip_the_job_with_a_reason(tmp_path, fields, reason):
    path = write(tmp_path, swf_line(1), swf_line(2, **fields), swf_line(3))
    for strict in (False, True):  # unknown is not malformed: strict does not raise
        trace = read_swf(path, rules="pwa", strict=strict)
        assert [j.id for j in trace.jobs] == [1, 3]
        assert trace.skipped == [SkippedLine(2, reason)]
        assert trace.job_lines == {1: 1, 3: 3}
    assert [j.id for j in read_swf(path).jobs] == [1, 2, 3]  # gridsim rules keep it, clamped


@pytest.mark.parametrize(
    ("fields", "number", "name", "expected"),
    [
        ({"run": "abc"}, 4, "run time", "a number"),
        ({"run": "nan"}, 4, "run time", "a number"),
        ({"req_time": "inf"}, 9, "requested time", "a number"),
        ({"submit": "1e999"}, 2, "submit time", "a number"),
        ({"submit": "1_000"}, 2, "submit time", "a number"),
        ({"alloc": "4.0"}, 5, "allocated processors", "an integer <= 2147483647"),
        ({"alloc": 0, "req_procs": "2.5"}, 8, "requested processors", "an integer <= 2147483647"),
    ],
)
def test_pwa_unreadable_number_skips_the_line_or_raises_when_strict(tmp_path, fields, number, name, expected):
    path = write(tmp_path, swf_line(1), swf_line(2, **fields), swf_line(3))
    trace = read_swf(path, rules="pwa")
    assert [j.id for j in trace.jobs] == [1, 3]
    (skip,) = trace.skipped
    assert skip.line == 2
    assert skip.reason.startswith(f"field {number} ({name}) is ")
    assert skip.reason.endswith(f", not {expected}")
    with pytest.raises(TraceError, match=f"line 2: field {number} .* expected {expected}$"):
        read_swf(path, rules="pwa", strict=True)


def test_pwa_job_number_must_be_an_integer(tmp_path):
    trace = read_swf(write(tmp_path, swf_line("1.5")), rules="pwa")
    assert trace.skipped == [SkippedLine(1, "field 1 (job number) is '1.5', not an integer")]


def test_pwa_bad_value_in_a_field_it_does_not_read_keeps_the_job(tmp_path):
    # field 8 is read only when field 5 is unknown; "_" in an unread field is no concern either
    job = pwa_job(tmp_path, alloc=2, req_procs="x", extra=("q_2w",))
    assert job.cpus == 2


def test_pwa_limit_counts_jobs_not_skipped_lines(tmp_path):
    path = write(tmp_path, swf_line(1, run=-1), *(swf_line(i) for i in range(2, 6)))
    trace = read_swf(path, rules="pwa", limit=2)
    assert [j.id for j in trace.jobs] == [2, 3]
    assert [s.line for s in trace.skipped] == [1]


def test_pwa_rules_from_a_scenario_file(tmp_path):
    from emulator.data.scenario import parse

    path = write(tmp_path, swf_line(1, run=10, req_time=30, alloc=2), swf_line(2, run=-1))
    raw = {
        "clusters": [{"name": "c", "machines": [{"count": 4, "cpus": 1, "mips": 1}]}],
        "workload": {"source": "swf", "path": str(path), "rules": "pwa", "site": "c"},
    }
    (job,) = parse(raw, "t.toml").jobs
    assert (job.id, job.cpus, job.estimate, job.runtime, job.site) == (1, 2, 30, 10, "c")


# --- real trace --------------------------------------------------------------------------------


def test_kth_full_trace():
    if not KTH.is_file():
        pytest.skip(f"KTH-SP2 trace not found at {KTH} (the shared folder is absent)")
    trace = read_swf(KTH)
    assert len(trace.jobs) == 28_476
    assert trace.skipped == []
    assert trace.header["MaxProcs"] == "100"
    first = trace.jobs[0]  # "15 599850 192180 3477 4 -1 -1 4 53940 ..."
    assert (first.id, first.submit, first.cpus, first.runtime, first.user) == (15, 599850, 4, 53940, 12)
    assert len({j.id for j in trace.jobs}) == 28_476


def test_kth_full_trace_pwa():
    if not KTH.is_file():
        pytest.skip(f"KTH-SP2 trace not found at {KTH} (the shared folder is absent)")
    trace = read_swf(KTH, rules="pwa")
    # line 27323: "27313 27845375 480 1 -1 -1 -1 -1 600 ...": no processor count in either field
    assert trace.skipped == [SkippedLine(27323, "processors unknown (field 5 is -1, field 8 is -1)")]
    assert len(trace.jobs) == 28_475
    first = trace.jobs[0]  # "15 599850 192180 3477 4 -1 -1 4 53940 ..."
    assert (first.id, first.submit, first.cpus, first.runtime, first.estimate) == (15, 599850, 4, 3477, 53940)
    assert sum(j.runtime == 0 for j in trace.jobs) == 8  # sub-second runs, kept as the trace says


def test_gridsim_rules_can_read_the_run_time_from_field_4(tmp_path):
    path = write(tmp_path, swf_line(1, run=42, req_time=100), swf_line(2, run="4.5", req_time=100))
    trace = read_swf(path, rating=10.0, runtime_field=4)
    assert [(j.id, j.estimate, j.length) for j in trace.jobs] == [(1, 42, 420.0)]
    assert trace.skipped == [SkippedLine(2, "field 4 (run time) is '4.5', not an integer")]
    assert [j.estimate for j in read_swf(path, rating=10.0).jobs] == [100, 100]


def test_shared_reads_parse_a_file_once_per_options_and_not_after(tmp_path, monkeypatch):
    """A trace's sites as the platform and then its jobs: one read within shared_reads, the same trace."""
    import os

    from workloads import swf

    path = write(tmp_path, swf_line(1, run=42), "bad line", swf_line(2, submit=5))
    reads = []
    real = swf.read_trace
    monkeypatch.setattr(swf, "read_trace", lambda *a, **k: reads.append(k) or real(*a, **k))
    with swf.shared_reads():
        first = read_swf(path, rules="pwa")
        again = read_swf(path, rules="pwa", placement="spread", runtime_field=9)  # the defaults, spelt out
        assert len(reads) == 1
        assert again.table.equals(first.table) and again.skipped == first.skipped
        again.skipped.append("mine")  # a caller's list is its own
        assert len(first.skipped) == 1
        read_swf(path, rules="gridsim")  # other options: read again
        assert len(reads) == 2
        os.utime(path, ns=(1, 1))  # the file changed: read again
        read_swf(path, rules="pwa")
        assert len(reads) == 3
    read_swf(path, rules="pwa")  # outside the block nothing is kept
    assert len(reads) == 4
