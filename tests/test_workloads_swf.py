"""The SWF reader's options (status filters, selection, load scaling, estimates, sites), the writer,
and SWF -> Arrow -> SWF round trips."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

from workloads import columns
from workloads.columns import SkippedLine, TraceError
from workloads.convert import convert, read_any
from workloads.export import header_of, write_swf
from workloads.swf import read_swf, site_names
from workloads.table import SWF_COLUMNS, read_arrow, to_jobs

HEADER = [
    "; Version: 2.2",
    "; MaxNodes: 4",
    "; MaxProcs: 16",
    "; UnixStartTime: 1000000000",
    "; Partition: 1 alpha.example.org",
    "; Partition: 2 beta.example.org",
    "; Queue: 0 interactive",
    "; Queue: 1 - Normal jobs queue",
    "; Note: first",
    ";       continued",
]


def line(
    job, submit=0, wait=5, run=10, alloc=2, cpu=-1, mem=-1, req_procs=2, req_time=20, req_mem=-1, status=1
):
    rest = [3, 4, 7, 1, 2, -1, -1]  # user, group, executable, queue, partition, preceding job, think time
    values = [job, submit, wait, run, alloc, cpu, mem, req_procs, req_time, req_mem, status, *rest]
    return " ".join(str(v) for v in values)


def write(tmp_path: Path, *lines: str, name: str = "t.swf") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def ids(trace) -> list[int]:
    return trace.table.column("id").to_pylist()


# --- status filters -----------------------------------------------------------------------------


def test_cancelled_and_failed_jobs_kept_or_dropped_with_a_reason(tmp_path):
    path = write(tmp_path, *HEADER, line(1), line(2, status=5), line(3, status=0), line(4, status=1))
    assert ids(read_swf(path, rules="pwa")) == [1, 2, 3, 4]
    trace = read_swf(path, rules="pwa", cancelled="drop", failed="drop")
    assert ids(trace) == [1, 4]
    first = len(HEADER) + 1
    assert trace.skipped == [
        SkippedLine(first + 1, 'status 5 (cancelled), dropped by cancelled = "drop"'),
        SkippedLine(first + 2, 'status 0 (failed), dropped by failed = "drop"'),
    ]
    with pytest.raises(ValueError, match="cancelled must be 'keep' or 'drop'"):
        read_swf(path, cancelled="maybe")


def test_unknown_run_time_is_rejected_with_a_reason_even_when_cancelled(tmp_path):
    path = write(tmp_path, line(1), line(2, run=-1, status=5))
    trace = read_swf(path, rules="pwa", cancelled="drop")
    assert trace.skipped == [SkippedLine(2, "run time unknown (field 4 is -1)")]


# --- selection and load scaling ----------------------------------------------------------------


def test_time_window_and_first_n(tmp_path):
    path = write(tmp_path, *(line(i, submit=10 * i) for i in range(1, 11)))
    trace = read_swf(path, rules="pwa", start=30, end=80)
    assert ids(trace) == [3, 4, 5, 6, 7]
    assert trace.selected_out == 5
    assert ids(read_swf(path, rules="pwa", start=30, limit=2)) == [3, 4]
    assert ids(read_swf(path, rules="pwa", end=25)) == [1, 2]


def test_limit_stops_early_and_ignores_later_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(columns, "BLOCK_BYTES", 64)  # many blocks
    lines = [line(i, submit=i) for i in range(1, 50)] + ["not a job line at all, and short"]
    path = write(tmp_path, *lines)
    trace = read_swf(path, rules="pwa", limit=20, strict=True)
    assert ids(trace) == list(range(1, 21))
    assert trace.skipped == []


def test_interarrival_scale_multiplies_the_gaps(tmp_path):
    path = write(tmp_path, line(1, submit=100), line(2, submit=110), line(3, submit=130))
    submit = read_swf(path, rules="pwa", interarrival_scale=0.5).table.column("submit").to_pylist()
    assert submit == [100, 105, 115]
    submit = read_swf(path, rules="pwa", interarrival_scale=2).table.column("submit").to_pylist()
    assert submit == [100, 120, 160]
    with pytest.raises(ValueError, match="interarrival_scale"):
        read_swf(path, interarrival_scale=0)


def test_estimate_source(tmp_path):
    path = write(tmp_path, line(1, run=10, req_time=20))
    (job,) = read_swf(path, rules="pwa").jobs
    assert (job.estimate, job.runtime) == (20, 10)
    (job,) = read_swf(path, rules="pwa", estimate="runtime").jobs
    assert (job.estimate, job.runtime) == (10, 10)
    with pytest.raises(ValueError, match="estimate source"):
        read_swf(path, estimate="guess")


# --- header and sites ---------------------------------------------------------------------------


def test_header_metadata(tmp_path):
    header = read_swf(write(tmp_path, *HEADER, line(1))).header
    assert (header["MaxNodes"], header["MaxProcs"], header["UnixStartTime"]) == ("4", "16", "1000000000")
    assert header["Partition"] == "1 alpha.example.org\n2 beta.example.org"
    assert header["Note"] == "first\ncontinued"
    assert site_names(header, "Partition") == {1: "alpha.example.org", 2: "beta.example.org"}
    assert site_names(header, "Queue") == {0: "interactive", 1: "Normal"}


def test_sites_from_partitions_and_queues(tmp_path):
    lines = [
        line(1),
        line(2).replace(" 1 2 -1 -1", " 1 1 -1 -1"),
        line(3).replace(" 1 2 -1 -1", " 0 -1 -1 -1"),
    ]
    path = write(tmp_path, *HEADER, *lines)
    trace = read_swf(path, rules="pwa", sites="partition")
    assert trace.table.column("site").to_pylist() == ["beta.example.org", "alpha.example.org", ""]
    trace = read_swf(path, rules="pwa", sites="queue")
    assert trace.table.column("site").to_pylist() == ["Normal", "Normal", "interactive"]
    bare = write(tmp_path, line(1), name="bare.swf")
    assert read_swf(bare, sites="partition").table.column("site").to_pylist() == ["partition2"]
    with pytest.raises(ValueError, match="either site"):
        read_swf(path, site="x", sites="partition")


# --- errors name the file and the line ----------------------------------------------------------


def test_malformed_lines_name_file_and_line(tmp_path, monkeypatch):
    monkeypatch.setattr(columns, "BLOCK_BYTES", 80)
    lines = [line(i) for i in range(1, 30)]
    lines[17] = line(18, run="ten")
    path = write(tmp_path, *lines)
    trace = read_swf(path, rules="pwa")
    assert trace.skipped == [SkippedLine(18, "field 4 (run time) is 'ten', not a number")]
    with pytest.raises(
        TraceError, match=r"t\.swf, line 18: field 4 \(run time\) is 'ten'; expected a number"
    ):
        read_swf(path, rules="pwa", strict=True)


def test_duplicate_ids_across_blocks_name_both_lines(tmp_path, monkeypatch):
    monkeypatch.setattr(columns, "BLOCK_BYTES", 64)
    lines = [line(i) for i in range(1, 30)] + [line(7)]
    with pytest.raises(TraceError, match=r"line 30: job number 7 already used at line 7"):
        read_swf(write(tmp_path, *lines))


# --- trace columns, writer, round trips ----------------------------------------------------------


def fields_of(path: Path) -> list[list[float]]:
    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt") as text:
        return [
            [float(x) for x in row.split()[:18]] for row in text if row.strip() and not row.startswith(";")
        ]


def test_every_swf_field_is_kept(tmp_path):
    path = write(tmp_path, line(1, wait=7, cpu=3.5, mem=100, req_mem=200, status=0))
    row = read_swf(path, rules="pwa").table.to_pylist()[0]
    assert row["swf_wait"] == 7 and row["swf_cpu_time"] == 3.5 and row["swf_memory"] == 100
    assert row["swf_req_memory"] == 200 and row["swf_status"] == 0 and row["swf_user"] == 3
    assert (row["swf_group"], row["swf_executable"], row["swf_queue"], row["swf_partition"]) == (4, 7, 1, 2)
    assert (row["swf_preceding_job"], row["swf_think_time"]) == (-1, -1)
    assert set(name for name, _ in SWF_COLUMNS.values()) <= set(row)


@pytest.mark.parametrize("rules", ["pwa", "gridsim"])
def test_swf_arrow_swf_round_trip_keeps_every_field_and_the_header(tmp_path, rules):
    lines = [line(1, submit=0, cpu=12, mem=2048), line(2, submit=3, run=0, alloc=-1, req_procs=4)]
    lines += [line(3, submit=3, wait=-1, run=100000, req_time=-1, status=5), line(4, submit=9, req_mem=1)]
    if rules == "pwa":  # the archive's times may be written as reals (GridSim reads integers only)
        lines += [line(5, submit=9, run="1e3", wait=0)]
    source = write(tmp_path, *HEADER, *lines)
    convert(source, tmp_path / "t.arrow", rules=rules)
    table = read_arrow(tmp_path / "t.arrow")
    assert header_of(table) == read_swf(source).header
    convert(tmp_path / "t.arrow", tmp_path / "back.swf.gz")
    assert fields_of(tmp_path / "back.swf.gz") == fields_of(source)
    again = read_swf(tmp_path / "back.swf.gz", rules=rules)
    assert again.header == read_swf(source).header
    assert again.table.equals(read_swf(source, rules=rules).table)


def test_writer_from_model_columns_only(tmp_path):
    from emulator.core.model import Job
    from workloads.table import from_jobs

    table = from_jobs([Job(1, 5.0, 4, estimate=100.0, runtime=60.0, user=9), Job(2, 7.0, 1, estimate=3.0)])
    write_swf(table, tmp_path / "m.swf")
    assert fields_of(tmp_path / "m.swf") == [
        [1, 5, -1, 60, 4, -1, -1, 4, 100, -1, -1, 9, -1, -1, -1, -1, -1, -1],
        [2, 7, -1, 3, 1, -1, -1, 1, 3, -1, -1, 0, -1, -1, -1, -1, -1, -1],
    ]
    assert read_swf(tmp_path / "m.swf").header["MaxJobs"] == "2"


def test_exporting_a_run_writes_its_schedule(tmp_path):
    from emulator import run
    from emulator.data.scenario import parse

    source = write(tmp_path, line(1, run=10, alloc=2), line(2, submit=1, run=5, alloc=4), line(3, alloc=99))
    raw = {
        "clusters": [{"name": "c", "policy": "fcfs", "machines": [{"count": 4, "cpus": 1, "mips": 1}]}],
        "workload": {"source": "swf", "path": str(source), "rules": "pwa", "site": "c"},
    }
    result = run(parse(raw, "t.toml"), tmp_path / "run")
    assert "swf_status" in result.jobs.column_names  # trace columns follow the outcomes
    write_swf(result.jobs, tmp_path / "schedule.swf")
    rows = fields_of(tmp_path / "schedule.swf")
    assert [[*r[:5], r[10]] for r in rows] == [
        [1, 0, 0, 10, 2, 1],
        [2, 1, 9, 5, 4, 1],  # waits for job 1's CPUs
        [3, 0, -1, -1, -1, 5],  # 99 CPUs: rejected, never ran
    ]
    write_swf(result.jobs, tmp_path / "trace.swf", schedule=False)
    assert fields_of(tmp_path / "trace.swf") == fields_of(source)


def test_read_any_arrow_applies_selection_and_status_filters(tmp_path):
    source = write(tmp_path, *(line(i, submit=i, status=5 if i % 3 == 0 else 1) for i in range(1, 10)))
    convert(source, tmp_path / "t.arrow")
    stream = read_any(tmp_path / "t.arrow", cancelled="drop", start=2, limit=4)
    assert stream.table.column("id").to_pylist() == [2, 4, 5, 7]
    jobs = to_jobs(stream.table)
    assert [j.submit for j in jobs] == [2, 4, 5, 7]
    with pytest.raises(ValueError, match="do not apply"):
        read_any(tmp_path / "t.arrow", rules="pwa")


def test_jobs_are_built_only_when_asked(tmp_path):
    trace = read_swf(write(tmp_path, line(1), line(2)))
    assert "jobs" not in trace.__dict__
    assert [j.id for j in trace.jobs] == [1, 2]
    assert trace.job_lines == {1: 1, 2: 2}
    assert np.array_equal(trace.lines, [1, 2])
