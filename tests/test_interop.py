"""Exports read back by the other tools' conventions: SWF by a strict archive reader, the Batsim jobs
CSV as evalys reads it, Parquet through DuckDB; exact values from a small hand-checked run.

The run (FCFS; clusters ``a``: 2 machines x 2 CPUs, resources 0-3; ``b``: 1 machine x 4 CPUs, 4-7):
job 1 (2 CPUs, 10 s) runs on a's machine 0 from 0 to 10; job 2 (2 CPUs, 5 s, submitted at 1.5) on
a's machine 1 from 1.5 to 6.5; job 3 (2 CPUs, 4.25 s) waits for it and runs 6.5 to 10.75 there; job 4
(3 CPUs, 7 s) runs on b from 3 to 10; job 5 (8 CPUs) fits nowhere on b: rejected.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from emulator.cli import main
from tests.conftest import job, machine
from workloads.batsim import COLUMNS
from workloads.convert import convert
from workloads.swf import read_swf
from workloads.table import read_arrow

CLUSTERS = [
    {"name": "a", "policy": "fcfs", "machines": [machine(2, count=2)]},
    {"name": "b", "policy": "fcfs", "machines": [machine(4)]},
]
JOBS = [
    job(1, 0.0, 2, 10.0, user=7, site="a"),
    job(2, 1.5, 2, 5.0, user=8, site="a"),
    job(3, 2.0, 2, 4.25, estimate=10.0, user=7, site="a"),
    job(4, 3.0, 3, 7.0, user=9, site="b"),
    job(5, 4.0, 8, 1.0, user=9, site="b"),
]


def emulate(tmp_path: Path, workload: dict, **more) -> Path:
    from emulator import run
    from emulator.data.scenario import parse

    raw = {"name": "interop", "meta": {"policy": "least-load"}, "clusters": CLUSTERS, "workload": workload}
    raw.update(more)
    run(parse(raw, "test scenario"), tmp_path / "run")
    return tmp_path / "run"


@pytest.fixture
def run_dir(tmp_path) -> Path:
    return emulate(tmp_path, {"source": "gridlets", "gridlets": JOBS})


def strict_swf(path: Path) -> tuple[list[str], list[list[int]]]:
    """The archive's rules, read independently: ';' comments, all before the first job, then lines
    of exactly 18 integers."""
    header, rows = [], []
    for text in path.read_text().splitlines():
        if text.startswith(";"):
            assert not rows, f"comment after the first job: {text!r}"
            header.append(text)
            continue
        fields = text.split()
        assert len(fields) == 18 and all(re.fullmatch(r"-?\d+", f) for f in fields), text
        rows.append([int(f) for f in fields])
    return header, rows


def test_swf_of_a_run_has_integer_fields_users_and_clusters_as_partitions(run_dir, tmp_path):
    convert(run_dir, tmp_path / "s.swf")
    header, rows = strict_swf(tmp_path / "s.swf")
    # id submit wait run procs cpu mem req_procs req_time req_mem status user group exe queue partition
    assert rows == [
        [1, 0, 0, 10, 2, -1, -1, 2, 10, -1, 1, 7, -1, -1, -1, 1, -1, -1],
        [2, 2, 0, 5, 2, -1, -1, 2, 5, -1, 1, 8, -1, -1, -1, 1, -1, -1],  # 1.5 -> 2, 6.5 -> 7
        [3, 2, 5, 4, 2, -1, -1, 2, 10, -1, 1, 7, -1, -1, -1, 1, -1, -1],  # starts 6.5 -> 7, ends 10.75 -> 11
        [4, 3, 0, 7, 3, -1, -1, 3, 7, -1, 1, 9, -1, -1, -1, 2, -1, -1],
        [5, 4, -1, -1, -1, -1, -1, 8, 1, -1, 5, 9, -1, -1, -1, -1, -1, -1],
    ]
    assert header[-3:] == ["; MaxPartitions: 2", "; Partition: 1 a", "; Partition: 2 b"]
    sites = read_swf(tmp_path / "s.swf", rules="pwa", sites="partition").table.column("site")
    assert sites.to_pylist() == ["a", "a", "a", "b"]  # (the archive's rules skip a job of -1 processors)


TRACE_HEADER = [
    "; Version: 2.2",
    "; Computer: Tiny",
    "; Information: http://example.org/",
    ";              http://example.org/more",
    "; MaxPartitions: 1",
    "; Partition: 1 batch",
    ";        (the only one)",
    ";",
    "; Note: a note the archive wrote",
]


def test_swf_of_a_trace_run_keeps_the_trace_header_line_for_line(tmp_path):
    trace = tmp_path / "tiny.swf"
    lines = [
        f"{j['id']} {j['submit']} 0 {j['runtime']} {j['cpus']} -1 -1 {j['cpus']} {j['estimate']} -1 1 "
        f"{j['user']} -1 -1 -1 1 -1 -1"
        for j in JOBS[:3]
    ]
    trace.write_text("\n".join([*TRACE_HEADER, *lines]) + "\n")
    run = emulate(tmp_path, {"source": "swf", "path": str(trace), "rules": "pwa", "site": "a"})
    convert(run, tmp_path / "s.swf")
    header, rows = strict_swf(tmp_path / "s.swf")
    kept = [line for line in TRACE_HEADER if "artition" not in line and "(the only one)" not in line]
    assert header[: len(kept)] == kept  # the continuation line survives; the trace's partitions give way
    assert header[len(kept)].startswith("; Note: gridemu schedule")
    assert header[len(kept) + 1 :] == ["; MaxPartitions: 2", "; Partition: 1 a", "; Partition: 2 b"]
    assert [[*row[:5], row[11], row[15]] for row in rows] == [
        [1, 0, 0, 10, 2, 7, 1],
        [2, 2, 0, 5, 2, 8, 1],
        [3, 2, 5, 4, 2, 7, 1],
    ]
    convert(run, tmp_path / "t.swf", schedule=False)  # the trace's own fields, header verbatim, rounded
    assert (tmp_path / "t.swf").read_text().splitlines() == [
        *TRACE_HEADER,
        "1 0 0 10 2 -1 -1 2 10 -1 1 7 -1 -1 -1 1 -1 -1",
        "2 2 0 5 2 -1 -1 2 5 -1 1 8 -1 -1 -1 1 -1 -1",
        "3 2 0 4 2 -1 -1 2 10 -1 1 7 -1 -1 -1 1 -1 -1",
    ]


def test_swf_rounds_fractional_trace_fields_half_up(tmp_path):
    trace = tmp_path / "f.swf"
    trace.write_text("; Version: 2.2\n1 9.5 0.25 1e3 2 12.5 -1 2 -1 -1 1 3 -1 -1 -1 -1 -1 -1\n")
    convert(trace, tmp_path / "back.swf", rules="pwa")
    assert strict_swf(tmp_path / "back.swf") == (
        ["; Version: 2.2"],
        [[1, 10, 0, 1000, 2, 13, -1, 2, -1, -1, 1, 3, -1, -1, -1, -1, -1, -1]],
    )


def test_batsim_csv_reads_as_evalys_expects(run_dir, tmp_path):
    convert(run_dir, tmp_path / "jobs.csv")
    with open(tmp_path / "jobs.csv", newline="") as file:
        reader = csv.DictReader(file)
        assert tuple(reader.fieldnames) == COLUMNS
        rows = {row["job_id"]: row for row in reader}
    times = ("starting_time", "execution_time", "finish_time", "waiting_time", "turnaround_time")
    assert {k: [rows[k][c] for c in (*times, "allocated_resources", "metadata")] for k in rows} == {
        "1": ["0.000000", "10.000000", "10.000000", "0.000000", "10.000000", "0-1", "a"],
        "2": ["1.500000", "5.000000", "6.500000", "0.000000", "5.000000", "2-3", "a"],
        "3": ["6.500000", "4.250000", "10.750000", "4.500000", "8.750000", "2-3", "a"],
        "4": ["3.000000", "7.000000", "10.000000", "0.000000", "7.000000", "4-6", "b"],
        "5": ["", "", "", "", "", "", "b"],
    }
    assert [rows[k]["final_state"] for k in "12345"] == ["COMPLETED_SUCCESSFULLY"] * 4 + ["REJECTED"]
    assert [rows[k]["success"] for k in "12345"] == ["1", "1", "1", "1", "0"]
    assert rows["3"]["stretch"] == "2.058824" and rows["3"]["requested_time"] == "10.000000"
    for row in (rows[k] for k in "1234"):
        start, run, finish, wait, turnaround = (float(row[c]) for c in times)
        assert finish - start == pytest.approx(run, abs=1e-6)
        assert wait == pytest.approx(start - float(row["submission_time"]), abs=1e-6)
        assert turnaround == pytest.approx(finish - float(row["submission_time"]), abs=1e-6)
        assert len(_resources(row["allocated_resources"])) == int(row["requested_number_of_resources"])


def test_batsim_states_of_jobs_killed_at_their_estimate_or_lost_to_a_failure(tmp_path):
    # J1 is killed at its estimate (10 s of 20); J2 runs on a's machine 1, which fails at 30: lost.
    jobs = [job(1, 0.0, 2, 20.0, estimate=10.0, site="a"), job(2, 0.0, 2, 100.0, site="a")]
    failure = {"model": "list", "events": [["a", 1, 30.0, 40.0]]}
    stress = {"kill_at_estimate": True, "max_kills": 0, "failures": failure}
    run = emulate(tmp_path, {"source": "gridlets", "gridlets": jobs}, stress=stress)
    convert(run, tmp_path / "jobs.csv")
    with open(tmp_path / "jobs.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    columns = (
        "success",
        "final_state",
        "starting_time",
        "execution_time",
        "finish_time",
        "allocated_resources",
    )
    assert [[row[c] for c in columns] for row in rows] == [
        ["0", "COMPLETED_WALLTIME_REACHED", "0.000000", "10.000000", "10.000000", "0-1"],
        ["0", "COMPLETED_KILLED", "0.000000", "30.000000", "30.000000", "2-3"],
    ]


def _resources(interval_set: str) -> set[int]:
    """evalys' reading of an interval set (procset's ``ProcSet.from_str``): ``0-3 5``."""
    out: set[int] = set()
    for part in interval_set.split():
        first, _, last = part.partition("-")
        out |= set(range(int(first), int(last or first) + 1))
    return out


def test_parquet_copies_of_a_run_open_in_duckdb(run_dir):
    duckdb = pytest.importorskip("duckdb")
    assert main(["convert", str(run_dir), str(run_dir)]) == 0
    events, jobs = (str(run_dir / f"{name}.parquet") for name in ("events", "jobs"))
    started = "SELECT count(*), sum(cpus) FROM read_parquet(?) WHERE kind = 'start'"
    assert duckdb.execute(started, [events]).fetchone() == (4, 9)
    query = "SELECT count(*), sum(finish - start), max(wait) FROM read_parquet(?) WHERE status = 'finished'"
    assert duckdb.execute(query, [jobs]).fetchone() == (4, 26.25, 4.5)
    assert pq.read_metadata(jobs).row_group(0).column(0).compression == "ZSTD"


def test_parquet_file_and_batsim_csv_are_byte_identical_for_the_same_input(run_dir, tmp_path):
    for name in ("one.parquet", "two.parquet", "one.csv", "two.csv", "one.swf.gz", "two.swf.gz"):
        convert(run_dir, tmp_path / name)
    for suffix in (".parquet", ".csv", ".swf.gz"):
        assert (tmp_path / f"one{suffix}").read_bytes() == (tmp_path / f"two{suffix}").read_bytes()
    assert pq.read_table(tmp_path / "one.parquet").column("id").to_pylist() == [1, 2, 3, 4, 5]


def test_bad_exports_are_one_line_errors_that_leave_no_file(tmp_path, capsys):
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 0 10 1 -1 -1 1 10 -1 1 3 -1 -1 -1 -1 -1 -1\n")
    assert main(["convert", str(trace), str(tmp_path / "out.csv")]) == 2
    assert "out.csv: a Batsim jobs CSV needs a run's jobs table" in capsys.readouterr().err
    assert main(["convert", str(trace), f"{tmp_path}/copies/"]) == 2
    assert "a directory takes Parquet copies of a run directory" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.swf"]


def test_the_readme_run_conversions_work_as_written(run_dir, tmp_path, monkeypatch):
    import shlex

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    block = readme.split("### Workloads", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    lines = [
        line.partition("#")[0] for line in block.splitlines() if line.startswith("gridemu convert runs/")
    ]
    assert len(lines) == 3
    monkeypatch.chdir(tmp_path)
    for line in lines:
        argv = [word.replace("runs/quickstart-seed1-001", str(run_dir)) for word in shlex.split(line)]
        assert main(argv[1:]) == 0
    assert strict_swf(tmp_path / "schedule.swf")[1][3][15] == 2  # job 4 ran on cluster b
    assert (tmp_path / "jobs.csv").read_text().startswith(",".join(COLUMNS))
    events = pq.read_table(run_dir / "events.parquet")
    assert events.equals(read_arrow(run_dir / "events.arrow"))  # the same rows, types and all


def test_overwrite_replaces_a_run_with_its_parquet_copies(run_dir):
    from emulator.data import rundir

    convert(run_dir, run_dir)
    rundir.claim(run_dir, overwrite=True)  # they are the run's files, not foreign ones
    assert sorted(p.name for p in run_dir.iterdir()) == [rundir.MARKER]


def test_a_write_that_fails_midway_leaves_neither_the_file_nor_its_part(tmp_path):
    from emulator.data.rundir import replacing

    with pytest.raises(KeyboardInterrupt), replacing(tmp_path / "out.csv") as part:
        part.write_text("job_id,workload_name\n1,")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []
