"""Issue 18's findings that no other test module reproduces as the issue reported them.

Each test runs the finding's reproduction (a CLI command or an API call) and
asserts what happens now: an exit code, the one line on stderr, the files
present. On commit cf6d11a each of them failed: a hang, a traceback, a wrong
result with exit 0, or files of two runs mixed (measured in issue 18's
closing report). Tests for the other findings live in test_cli_errors.py,
test_rundir.py, test_sweep.py and test_ray.py.
"""

from __future__ import annotations

import gzip
import multiprocessing
import time
from pathlib import Path

import pyarrow as pa
import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.data import trace

EXIT_INPUT, EXIT_INTERRUPTED = 2, 130  # emulator.cli_errors; literal, so this module also runs on cf6d11a
SWF = "{id} {submit} 0 {run} 1 -1 -1 1 {run} -1 1 1 1 -1 1 -1 -1 -1\n"


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


# 1. a trace run time of 1e17 spun at 100% CPU with no output; a sweep holding a point that cannot
#    advance hung whole


def test_a_trace_run_time_of_1e17_is_refused_and_one_of_1e15_finishes(tmp_path, capsys):
    trace_file = tmp_path / "long.swf"
    trace_file.write_text("; MaxProcs: 4\n" + SWF.format(id=1, submit=0, run=10**17))
    started = time.monotonic()
    assert main(["run", "--swf", str(trace_file), "--quiet", "--out", str(tmp_path / "no")]) == EXIT_INPUT
    assert time.monotonic() - started < 20
    assert "job 1 has estimate 1e+17 s, beyond the 2^50 s" in one_line(capsys)  # (its estimate: field 9)
    trace_file.write_text("; MaxProcs: 4\n" + SWF.format(id=1, submit=0, run=10**15))
    out = tmp_path / "run"
    assert main(["run", "--swf", str(trace_file), "--quiet", "--out", str(out)]) == 0
    assert "1 jobs: 1 finished" in capsys.readouterr().out
    row = pa.ipc.open_file(str(out / "jobs.arrow")).read_all().to_pylist()[0]
    assert (row["status"], row["start"], row["finish"]) == ("finished", 0.0, 1e15)


def test_a_sweep_point_that_would_hang_is_refused_before_any_point_runs(tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = [
        "sweep",
        "quickstart",
        "--quiet",
        "--workers",
        "2",
        "--set",
        "workload.jobs=40",
        "--out",
        str(out),
    ]
    assert main([*argv, "--vary", "clusters.0.latency=0.5,1e-20"]) == EXIT_INPUT
    says = one_line(capsys)
    assert "point-001 {'clusters.0.latency': 1e-20}" in says
    assert "'clusters[0].latency' = 1e-20: expected a finite number >= 1e-06" in says
    assert not out.exists() or not any(out.iterdir())


# 2. two runs into one --out: the emptiness check and the file creation were separate steps


def _run_into(out: str, policy: str, go, answers) -> None:
    """One of two runs into ``out``: its emptiness check sees the directory as it was when both
    started, however long the other takes to create its first file."""
    real = Path.iterdir

    def listed_then_slow(self):
        names = list(real(self))
        if self == Path(out):
            time.sleep(1.0)  # the other run lists the directory meanwhile
        return iter(names)

    Path.iterdir = listed_then_slow
    scenario = load_scenario("quickstart", ["workload.jobs=200", f"meta.policy={policy}"])
    go.wait()
    try:
        run(scenario, Path(out))
        answers.put((policy, "ok", ""))
    except Exception as err:  # the parent asserts which
        answers.put((policy, type(err).__name__, str(err)))


def test_two_runs_started_into_one_directory_never_mix_their_files(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    context = multiprocessing.get_context("fork")
    go, answers = context.Event(), context.Queue()
    runs = [
        context.Process(target=_run_into, args=(str(out), p, go, answers)) for p in ("least-load", "random")
    ]
    for child in runs:
        child.start()
    go.set()
    got = sorted(answers.get(timeout=120) for _ in runs)
    for child in runs:
        child.join(60)
    assert sorted(status for _, status, _ in got) == ["RunDirError", "ok"], got
    (winner,) = [policy for policy, status, _ in got if status == "ok"]
    (loser,) = [message for _, status, message in got if status != "ok"]
    assert loser == f"{out}: another run is writing into it"
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]
    alone = run(
        load_scenario("quickstart", ["workload.jobs=200", f"meta.policy={winner}"]), tmp_path / "alone"
    )
    for name in ("events.arrow", "jobs.arrow", "scenario.toml"):  # every file is the winner's
        assert (out / name).read_bytes() == (alone.out_dir / name).read_bytes(), name


# 4. an Alea machine of infinite speed ran every job in zero time, exit 0


def test_an_alea_machine_of_infinite_speed_is_refused(tmp_path, capsys):
    machines = tmp_path / "t.machines"
    machines.write_text("0 seth 4 2 inf 1024\n")
    trace_file = tmp_path / "t.swf"
    trace_file.write_text("; MaxProcs: 8\n" + SWF.format(id=1, submit=0, run=100))
    out = tmp_path / "run"
    argv = ["run", "--swf", str(trace_file), "--machines", str(machines), "--quiet", "--out", str(out)]
    assert main(argv) == EXIT_INPUT
    assert one_line(capsys) == (
        f"gridemu: error: {machines}, line 1: cluster seth has '0 seth 4 2 inf 1024'; "
        "expected 1 <= nodes <= 1000000, 1 <= cpus <= 1048576, a finite speed > 0\n"
    )
    assert not (out / "jobs.arrow").exists()


# 5. tracebacks: `convert` of a truncated .gz, a bad .machines file


def test_convert_of_a_truncated_compressed_trace_is_one_line(tmp_path, capsys):
    whole = gzip.compress(
        b"; MaxProcs: 4\n" + b"".join(SWF.format(id=i, submit=i, run=10).encode() for i in range(1, 2000))
    )
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(whole[: len(whole) // 2])
    assert main(["convert", str(cut), str(tmp_path / "t.arrow")]) == EXIT_INPUT
    assert one_line(capsys).startswith("gridemu: error: a compressed file ends early (truncated?)")
    assert not (tmp_path / "t.arrow").exists()


def test_a_bad_machines_file_is_one_line(tmp_path, capsys):
    machines = tmp_path / "bad.machines"
    machines.write_text("0 a x 2 1 1\n")
    trace_file = tmp_path / "t.swf"
    trace_file.write_text("; MaxProcs: 8\n" + SWF.format(id=1, submit=0, run=100))
    argv = [
        "run",
        "--swf",
        str(trace_file),
        "--machines",
        str(machines),
        "--quiet",
        "--out",
        str(tmp_path / "r"),
    ]
    assert main(argv) == EXIT_INPUT
    assert one_line(capsys) == (
        f"gridemu: error: {machines}, line 1: unreadable line '0 a x 2 1 1'; "
        "expected integers for id, nodes, cpus; numbers for speed, RAM\n"
    )


# 7. no upper bounds: a 7 TiB allocation, a hang, a MemoryError


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        (
            "workload.jobs=1000000000000",
            "'workload.jobs' = 1000000000000: expected an integer >= 0 and <= 1e+07",
        ),
        (
            "clusters.0.machines.0.count=1000000000000",
            "'clusters[0].machines[0].count' = 1000000000000: expected an integer >= 1 and <= 1e+06",
        ),
    ],
)
def test_counts_beyond_their_bounds_are_refused(tmp_path, capsys, setting, says):
    argv = ["run", "quickstart", "--quiet", "--set", setting, "--out", str(tmp_path / "run")]
    assert main(argv) == EXIT_INPUT
    assert says in one_line(capsys)
    assert not (tmp_path / "run").exists()


def test_a_machines_file_with_a_trillion_nodes_is_refused(tmp_path, capsys):
    machines = tmp_path / "big.machines"
    machines.write_text("0 big 1000000000000 2 1 1024\n")
    trace_file = tmp_path / "t.swf"
    trace_file.write_text("; MaxProcs: 8\n" + SWF.format(id=1, submit=0, run=100))
    argv = [
        "run",
        "--swf",
        str(trace_file),
        "--machines",
        str(machines),
        "--quiet",
        "--out",
        str(tmp_path / "r"),
    ]
    assert main(argv) == EXIT_INPUT
    assert "expected 1 <= nodes <= 1000000" in one_line(capsys)


# 10. Ctrl-C while jobs.arrow was written stranded the directory: "not a run directory", rerun refused


def test_a_run_interrupted_while_writing_jobs_is_explained_and_replaced_with_overwrite(
    tmp_path, capsys, monkeypatch
):
    out = tmp_path / "run"
    argv = ["run", "quickstart", "--quiet", "--set", "workload.jobs=60", "--out", str(out)]
    write = trace.PartFile.write

    def interrupted(self, batch):
        if self.path.name == "jobs.arrow":
            raise KeyboardInterrupt
        write(self, batch)

    monkeypatch.setattr(trace.PartFile, "write", interrupted)
    assert main(argv) == EXIT_INTERRUPTED
    assert "interrupted; the files written so far are kept" in one_line(capsys)
    assert sorted(p.name for p in out.iterdir()) == [  # (jobs.arrow is complete before events.arrow is)
        ".running",
        "events.arrow.part",
        "jobs.arrow.part",
        "scenario.toml",
    ]
    monkeypatch.setattr(trace.PartFile, "write", write)
    assert main(["inspect", str(out)]) == EXIT_INPUT
    assert "holds a run that has not finished" in one_line(capsys)
    assert main(argv) == EXIT_INPUT
    assert "pick another --out, or pass --overwrite to replace it" in one_line(capsys)
    assert main([*argv, "--overwrite"]) == 0
    assert pa.ipc.open_file(str(out / "jobs.arrow")).read_all().num_rows == 60
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]
