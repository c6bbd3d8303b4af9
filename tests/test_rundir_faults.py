"""Issue 30, "Nothing lost, nothing mixed": a live run's directory is never replaced, a run stopped before
its summary can be finished, salvage never leaves half a file, and inspect explains sweep directories."""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.cli_errors import EXIT_INPUT, EXIT_IO
from emulator.data import rundir, trace
from emulator.engine import runner, sweep
from emulator.sync import sequential

ROOT = Path(__file__).resolve().parents[1]

HOLDER = """
import sys
from pathlib import Path
from emulator.data import rundir

out = Path(sys.argv[1])
claim = rundir.claim(out)
(out / "events.arrow.part").write_bytes(b"ARROW1" + bytes(range(100)))
print("claimed", flush=True)
sys.stdin.readline()
(out / "summary.json").write_text("{}")
claim.finish()
print("finished", flush=True)
"""
"""A run in another process: claims ``argv[1]``, writes a partial trace, waits for a line, finishes."""


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


@contextmanager
def live_run(out: Path):
    """A process holding ``out`` as a live run does; yields it once it has claimed the directory."""
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out)],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline() == "claimed\n"
        yield child
    finally:
        if child.poll() is None:
            child.kill()
        child.wait(timeout=30)


# 2. --overwrite into a directory whose run is still going deleted its marker and trace


def test_a_live_runs_directory_is_never_overwritten_and_the_run_completes(tmp_path, capsys):
    out = tmp_path / "run"
    with live_run(out) as child:
        before = {p.name: p.read_bytes() for p in out.iterdir()}
        assert sorted(before) == [".running", "events.arrow.part"]
        assert before[".running"] == f"{child.pid}\n".encode()
        with pytest.raises(
            rundir.RunDirError, match=rf"still running \(process {child.pid}\).*--overwrite never"
        ):
            rundir.claim(out, overwrite=True)
        argv = ["run", "quickstart", "--set", "workload.jobs=50", "--quiet", "--out", str(out), "--overwrite"]
        assert main(argv) == EXIT_INPUT
        err = one_line(capsys)
        assert f"{out}: holds a run that has not finished: still running (process {child.pid})" in err
        assert "partial: events.arrow.part" in err and "--overwrite never replaces a run still going" in err
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # untouched
        assert main(["inspect", "--recover", str(out)]) == EXIT_INPUT  # no salvage beside a live run
        assert "recover it once it has stopped" in one_line(capsys)
        out_text, _ = child.communicate("go\n", timeout=30)
        assert out_text == "finished\n" and child.returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["events.arrow.part", "summary.json"]  # its own files
    assert rundir.describe(
        out
    ) == "holds a run that has not finished (stranded: killed, interrupted or out " + (
        "of disk); left complete: summary.json; partial: events.arrow.part; "
        f"`gridemu inspect --recover {out}` salvages the rows it flushed"
    )


def test_a_killed_runs_marker_is_not_a_lock_and_overwrite_replaces_it(tmp_path, capsys):
    out = tmp_path / "run"
    with live_run(out) as child:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    assert sorted(p.name for p in out.iterdir()) == [".running", "events.arrow.part"]  # stranded
    assert not rundir.is_live(out)
    assert "(stranded: killed, interrupted or out of disk)" in rundir.describe(out)
    argv = ["run", "quickstart", "--set", "workload.jobs=50", "--quiet", "--out", str(out)]
    assert main(argv) == EXIT_INPUT  # without --overwrite: refused, as any run's directory
    assert "pick another --out, or pass --overwrite to replace it" in one_line(capsys)
    assert main([*argv, "--overwrite"]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]
    assert pa.ipc.open_file(str(out / "jobs.arrow")).read_all().num_rows == 50


def test_a_touched_marker_is_stale_and_overwrite_clears_it(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / ".running").touch()
    (out / "jobs.arrow.part").write_bytes(b"half")
    claim = rundir.claim(out, overwrite=True)
    assert claim.held and not claim.created  # the stranded marker, now locked by this claim
    assert sorted(p.name for p in out.iterdir()) == [".running"]
    assert (out / ".running").read_text() == f"{os.getpid()}\n" and rundir.is_live(out)
    claim.finish()
    assert list(out.iterdir()) == [] and not claim.held


def test_a_failed_run_lets_go_of_its_directory_and_leaves_the_marker(tmp_path):
    out = tmp_path / "run"

    @contextmanager
    def failing(scenario):
        transport = sequential.InRounds(runner.build_partitions(scenario))
        advance, calls = transport.advance, [0]

        def broken(*args):
            calls[0] += 1
            if calls[0] == 20:
                raise RuntimeError("policy bug")
            assert rundir.is_live(out)  # held while it runs
            return advance(*args)

        transport.advance = broken
        yield transport

    scenario = load_scenario("quickstart", ["workload.jobs=300"])
    with pytest.raises(RuntimeError, match="policy bug"):
        run(scenario, out, backend=failing)
    assert (out / ".running").exists() and not rundir.is_live(out)  # stranded, its lock let go
    run(scenario, out, overwrite=True)  # (this process's own failed run is not a live one)
    assert not (out / ".running").exists() and (out / "summary.json").is_file()


@pytest.mark.parametrize("overwrite", [False, True])
def test_of_forty_simultaneous_claims_exactly_one_gets_the_directory(tmp_path, overwrite):
    out = tmp_path / "run"
    out.mkdir()
    if overwrite:  # a stranded run's directory: each of the 40 may replace it, exactly one does
        (out / ".running").touch()
        (out / "events.arrow.part").write_bytes(b"old")
    start = threading.Barrier(40)
    claims, refused = [], []

    def claimer() -> None:
        start.wait()
        try:
            claims.append(rundir.claim(out, overwrite=overwrite))
        except rundir.RunDirError as err:
            refused.append(str(err))

    threads = [threading.Thread(target=claimer) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert (len(claims), len(refused)) == (1, 39)
    assert all("not finished" in err or "another run is writing into it" in err for err in refused)
    assert sorted(p.name for p in out.iterdir()) == [".running"]
    claims[0].finish()


def test_a_forked_child_does_not_hold_its_parents_claim(tmp_path):
    out = tmp_path / "run"
    claim = rundir.claim(out)
    ready, said = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child (its fork hooks run) outlives the parent's claim
        os.write(said, b"x")
        time.sleep(5)
        os._exit(0)
    try:
        assert os.read(ready, 1) == b"x"
        claim.release()
        assert not rundir.is_live(out)  # the child's inherited copy holds no lock
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(ready)
        os.close(said)


# 4. killed after events.arrow and jobs.arrow were complete, before summary.json


def test_a_run_stopped_before_its_summary_is_described_and_summarized(tmp_path, capsys):
    out = tmp_path / "run"
    sets = ["workload.jobs=300", "metrics.bsld_threshold=60", "metrics.warmup=600"]
    original = run(load_scenario("quickstart", sets), out).summary
    assert list(original)[-3:] == ["workload", "run", "scheduler"]  # a normal run's summary, as before
    assert list(original["run"]) == [
        "scenario",
        "seed",
        "backend",
        "events",
        "rounds",
        "barrier_free_rounds",
        "partition_calls",
        "messages",
        "startup_seconds",
        "shutdown_seconds",
        "compute_seconds",
        "barrier_seconds",
        "wall_seconds",
    ]
    (out / "summary.json").unlink()
    (out / ".running").touch()  # what a kill between the traces and the summary leaves
    assert main(["inspect", str(out)]) == EXIT_INPUT
    err = one_line(capsys)
    assert "left complete: events.arrow, jobs.arrow, scenario.toml; partial: none" in err
    assert f"`gridemu inspect --summarize {out}` writes its summary.json" in err
    assert main(["inspect", "--recover", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"{out}: nothing to recover: its events.arrow and jobs.arrow are complete; `gridemu" in said

    assert main(["inspect", "--summarize", str(out)]) == 0
    said = capsys.readouterr().out
    assert f"{out / 'summary.json'}: written; {out} holds a finished run" in said
    summary = json.loads((out / "summary.json").read_text())
    for key in ("jobs", "grid", "clusters"):
        assert summary[key] == original[key]
    assert summary["jobs"]["measured"] < 300  # the warm-up was read back from scenario.toml
    assert summary["workload"] == {"jobs": 300}
    assert summary["run"] == {
        "scenario": "quickstart",
        "seed": 1,
        "backend": "inproc",
        "events": original["run"]["events"],
        "summarized_after_stop": True,
    }
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]
    assert rundir.describe(out) == "holds a finished run"
    assert main(["inspect", str(out)]) == 0
    shown = capsys.readouterr().out
    assert f"{original['run']['events']} events; summarized after the run stopped" in shown
    assert main(["inspect", "--summarize", str(out)]) == EXIT_INPUT  # done once
    assert "holds a finished run (summary.json): nothing to summarize" in one_line(capsys)


def test_summarize_refuses_a_live_run_and_a_run_without_its_traces(tmp_path, capsys):
    out = tmp_path / "run"
    run(load_scenario("quickstart", ["workload.jobs=60"]), out)
    (out / "summary.json").unlink()
    (out / ".running").touch()
    holder = rundir.adopt(out)  # a live process holding it (its own descriptor: another lock)
    assert main(["inspect", "--summarize", str(out)]) == EXIT_INPUT
    assert "another run is writing into it" in one_line(capsys)
    assert not (out / "summary.json").exists()
    holder.release()
    whole = (out / "jobs.arrow").read_bytes()
    (out / "jobs.arrow").unlink()
    (out / "jobs.arrow.part").write_bytes(whole[:-8])  # cut short: no end magic
    assert main(["inspect", "--summarize", str(out)]) == EXIT_INPUT
    assert f"{out}: cannot summarize: no complete jobs.arrow" in one_line(capsys)


def test_a_run_stopped_between_its_renames_is_summarized(tmp_path, monkeypatch, capsys):
    scenario = load_scenario("quickstart", ["workload.jobs=200"])
    run(scenario, tmp_path / "whole")
    out = tmp_path / "run"
    rename = os.replace

    def stopped_at_jobs(source, target):
        if Path(target).name == "jobs.arrow":
            raise KeyboardInterrupt
        rename(source, target)

    monkeypatch.setattr(os, "replace", stopped_at_jobs)
    with pytest.raises(KeyboardInterrupt):
        run(scenario, out)
    monkeypatch.setattr(os, "replace", rename)
    assert sorted(p.name for p in out.iterdir()) == [
        ".running",
        "events.arrow",
        "jobs.arrow.part",
        "scenario.toml",
    ]
    assert (out / "events.arrow").read_bytes() == (tmp_path / "whole" / "events.arrow").read_bytes()
    assert "`gridemu inspect --summarize" in rundir.describe(out)
    assert main(["inspect", "--recover", str(out)]) == 0
    assert "nothing to recover" in capsys.readouterr().out
    assert main(["inspect", "--summarize", str(out)]) == 0
    capsys.readouterr()
    assert (out / "jobs.arrow").read_bytes() == (tmp_path / "whole" / "jobs.arrow").read_bytes()
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]


def test_scenario_toml_is_written_when_the_run_starts(tmp_path):
    scenario = load_scenario("quickstart", ["workload.jobs=100"])
    seen = {}

    @contextmanager
    def looking(scenario):
        seen["files"] = sorted(p.name for p in (tmp_path / "run").iterdir())
        with runner.in_process(scenario) as transport:
            yield transport

    run(scenario, tmp_path / "run", backend=looking)
    assert seen["files"] == [".running", "events.arrow.part", "scenario.toml"]
    run(scenario, tmp_path / "plain")
    assert (tmp_path / "run" / "scenario.toml").read_bytes() == (
        tmp_path / "plain" / "scenario.toml"
    ).read_bytes()


# 5. --recover on a full disk left a 0-byte events.recovered.arrow


def stranded_with_rows(tmp_path: Path, monkeypatch) -> Path:
    """A run directory a failed run left: events.arrow.part with rows flushed."""
    out = tmp_path / "run"

    def stopped(self, batch):
        if self.path.name == "jobs.arrow":
            raise KeyboardInterrupt
        write(self, batch)

    write = trace.PartFile.write
    with monkeypatch.context() as patch:
        patch.setattr(trace, "FLUSH_SECONDS", 0.0)
        patch.setattr(trace.PartFile, "write", stopped)
        with pytest.raises(KeyboardInterrupt):
            run(load_scenario("quickstart", ["workload.jobs=300"]), out)
    assert (out / "events.arrow.part").exists()  # (jobs.arrow is written before events.arrow's rename)
    return out


def test_recover_on_a_full_disk_leaves_no_half_file_and_names_it(tmp_path, monkeypatch, capsys):
    out = stranded_with_rows(tmp_path, monkeypatch)
    real = pa.ipc.new_file

    class FullDisk:
        """pyarrow's writer, on a disk that fills up halfway through the table."""

        def __init__(self, sink, schema, **options):
            self.writer = real(sink, schema, **options)

        def write_table(self, table):
            self.writer.write_table(table.slice(0, table.num_rows // 2))
            raise OSError(
                errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device"
            )

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.writer.close()

    monkeypatch.setattr(pa.ipc, "new_file", FullDisk)
    assert main(["inspect", "--recover", str(out)]) == EXIT_IO
    err = one_line(capsys)
    assert err == f"gridemu: I/O error: {out / 'events.recovered.arrow'}: No space left on device\n"
    assert not [p.name for p in out.iterdir() if ".recovered." in p.name]  # neither the file nor its .part
    monkeypatch.setattr(pa.ipc, "new_file", real)
    assert main(["inspect", "--recover", str(out)]) == 0  # the .part it salvages was left as it was
    assert pa.ipc.open_file(str(out / "events.recovered.arrow")).read_all().num_rows > 0


def test_a_full_disk_while_writing_the_trace_names_the_file(tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    write, calls = trace.PartFile.write, [0]

    def filling(self, batch):
        calls[0] += 1
        if calls[0] == 3:
            raise OSError(
                errno.ENOSPC, "Error writing bytes to file. Detail: [errno 28] No space left on device"
            )
        write(self, batch)

    monkeypatch.setattr(trace.PartFile, "write", filling)
    monkeypatch.setattr("emulator.data.trace.TraceWriter.__init__.__defaults__", (None, 100))
    argv = ["run", "quickstart", "--set", "workload.jobs=300", "--quiet", "--out", str(out)]
    assert main(argv) == EXIT_IO
    assert one_line(capsys) == f"gridemu: I/O error: {out / 'events.arrow.part'}: No space left on device\n"
    assert (out / ".running").exists() and not rundir.is_live(out)


# 7. inspect on a sweep directory said "not empty (no summary.json)"


def test_inspect_on_a_sweep_directory_says_what_became_of_each_point(tmp_path, capsys):
    out = tmp_path / "sweep"
    keys = ["meta.policy", "seed"]
    points = sweep.points([("meta.policy", ["least-load", "random"]), ("seed", [1, 2])], ["workload.jobs=40"])
    done = [sweep.run_point("quickstart", p) for p in points[:2]]
    for result in done:
        sweep.write_point(out, result)
    failed = sweep.PointResult(points[2], error="ValueError: Traceback...\nValueError: policy bug at 12")
    pending = sweep.PointResult(points[3], error=sweep.NOT_RUN)
    sweep.write_tables(out, sweep.table([*done, failed, pending], keys))

    assert main(["inspect", str(out)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[:6] == [
        f"sweep {out}: 4 points: 2 finished, 1 failed, 1 not run",
        "  point-000  meta.policy=least-load seed=1  ok",
        "  point-001  meta.policy=least-load seed=2  ok",
        "  point-002  meta.policy=random seed=1  failed: ValueError: policy bug at 12",
        f"  point-003  meta.policy=random seed=2  not run: {sweep.NOT_RUN}",
        f"(`gridemu sweep --resume --out {out}` runs the points not run)",
    ]
    assert lines[6].split()[:3] == ["meta.policy", "runs", "mean_wait"]  # the table of means
    assert lines[8].split()[:2] == ["least-load", "2"]

    for name in ("sweep.arrow", "sweep.csv"):  # killed before the tables were written
        (out / name).unlink()
    (out / "point-001" / "summary.json").unlink()
    assert main(["inspect", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"sweep {out}: no sweep table (sweep.arrow): the sweep was stopped or killed before writing it; "
        "1 point(s) finished",
        "  point-000  finished",
        "  point-001  incomplete (no summary.json)",
    ]


def test_inspect_on_a_sweep_killed_before_its_first_point_says_it_is_a_sweep(tmp_path, capsys):
    """Only its definition and its marker: a sweep's directory, not a stranded run's."""
    out = tmp_path / "sweep"
    out.mkdir()
    (out / "sweep.json").write_text("{}")
    (out / rundir.MARKER).touch()
    assert main(["inspect", str(out)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"sweep {out}: no sweep table (sweep.arrow): the sweep was stopped or killed before writing it; "
        "0 point(s) finished",
    ]
