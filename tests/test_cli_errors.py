"""The CLI's one error path: a line on stderr and a documented exit code, never a traceback."""

from __future__ import annotations

import errno
import gzip
import signal
import subprocess
import sys
import time

import pytest

from emulator.cli import main
from emulator.cli_errors import (
    EXIT_INPUT,
    EXIT_INTERRUPTED,
    EXIT_IO,
    EXIT_TERMINATED,
    Terminated,
    run_command,
)
from emulator.engine import runner

from .conftest import shared_path


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def test_a_truncated_compressed_trace(tmp_path, capsys):
    line = b"%d 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    whole = gzip.compress(b"; MaxProcs: 4\n" + b"".join(line % i for i in range(1, 2000)))
    trace = tmp_path / "cut.swf.gz"
    trace.write_bytes(whole[: len(whole) // 2])
    assert main(["run", "--swf", str(trace), "--quiet", "--out", str(tmp_path / "run")]) == EXIT_INPUT
    assert "ends early" in one_line(capsys)


def test_a_scenario_that_is_not_utf8(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "caf\xe9"\n')
    assert main(["run", str(bad), "--quiet"]) == EXIT_INPUT
    assert "not UTF-8" in one_line(capsys)


def test_times_virtual_time_cannot_hold_are_refused_where_they_enter(tmp_path, capsys):
    # (the coordinator's own refusal to loop, Stalled, is tested in test_coordinator)
    raw = tmp_path / "late.toml"
    raw.write_text(
        'name = "late"\n[[clusters]]\nname = "a"\nmachines = [{cpus = 1, mips = 1.0}]\n'
        '[workload]\nsource = "gridlets"\ngridlets = [{id = 1, length = 1.0, cpus = 1, submit = 1e17}]\n'
    )
    assert main(["run", str(raw), "--quiet", "--out", str(tmp_path / "run")]) == EXIT_INPUT
    assert "job 1 has submit 1e+17 s, beyond the 2^50 s" in one_line(capsys)


@pytest.mark.parametrize(
    ("failure", "code", "says"),
    [
        (
            OSError(errno.ENOSPC, "No space left on device", "runs/x/events.arrow.part"),
            EXIT_IO,
            "No space left",
        ),
        (PermissionError(errno.EACCES, "Permission denied", "runs/x"), EXIT_IO, "runs/x: Permission denied"),
        (KeyboardInterrupt(), EXIT_INTERRUPTED, "interrupted; the files written so far are kept"),
    ],
)
def test_disk_failures_and_ctrl_c(tmp_path, capsys, monkeypatch, failure, code, says):
    def failing(*args, **kwargs):
        raise failure

    monkeypatch.setattr(runner, "run", failing)
    assert main(["run", "quickstart", "--quiet", "--out", str(tmp_path / "run")]) == code
    assert says in one_line(capsys)
    with pytest.raises(type(failure)):
        main(["--debug", "run", "quickstart", "--quiet", "--out", str(tmp_path / "run")])


def test_sigterm_keeps_the_partial_trace_and_exits_143(tmp_path):
    trace = shared_path("traces", "KTH-SP2-1996-2.1-cln.swf.gz")
    out = tmp_path / "run"
    argv = [sys.executable, "-m", "emulator.cli", "run", "--swf", str(trace), "--quiet", "--out", str(out)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / "events.arrow.part").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=60)
    if child.returncode == 0:
        pytest.skip("the run finished before the signal")  # a very fast machine
    assert child.returncode == EXIT_TERMINATED
    assert err.startswith("gridemu: terminated; the files written so far are kept") and "Traceback" not in err
    assert (out / ".running").exists()  # stranded, and said so by inspect


def test_a_closed_pipe_ends_quietly(tmp_path):
    argv = [sys.executable, "-m", "emulator.cli", "run", "quickstart", "--quiet", "--set", "workload.jobs=50"]
    argv += ["--out", str(tmp_path / "run")]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # like `| head -0`: the reader is gone before the summary is printed
    err = child.stderr.read().decode()
    assert child.wait(timeout=60) == 0 and "Traceback" not in err


@pytest.mark.parametrize(
    ("setting", "says"),
    [
        ("clusters.0.latency=1e-20", "'clusters[0].latency' = 1e-20: expected a finite number >= 1e-06"),
        ("clusters.0.latency=inf", "'clusters[0].latency' = inf: expected a finite number >= 1e-06"),
        ("workload.mean_interarrival=inf", "'workload.mean_interarrival' = inf: expected a finite number"),
        ("workload.cpus=[-5,-1]", "'workload.cpus' = [-5, -1]: expected [low, high] with 1 <= low"),
        ("workload.runtime_factor=[nan,1.0]", "'workload.runtime_factor' = [nan, 1.0]: expected [low, high]"),
    ],
)
def test_numbers_that_used_to_hang_or_wrap_are_refused_where_they_enter(tmp_path, capsys, setting, says):
    argv = ["run", "quickstart", "--quiet", "--set", setting, "--out", str(tmp_path / "run")]
    assert main(argv) == EXIT_INPUT
    assert says in one_line(capsys)


def test_trace_cpu_counts_beyond_32_bits_are_skipped_with_their_reason_not_wrapped(tmp_path, capsys):
    trace = tmp_path / "wide.swf"
    fields = "{id} 0 0 10 {cpus} -1 -1 {cpus} 10 -1 1 1 1 -1 1 -1 -1 -1\n"
    trace.write_text(
        "; MaxProcs: 4\n"
        + "".join(fields.format(id=i, cpus=c) for i, c in ((1, 2**31), (2, 2**32 + 1), (3, 1)))
    )
    assert main(["run", "--swf", str(trace), "--quiet", "--out", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    assert (
        "1 jobs: 1 finished" in out
        and "field 5 (allocated processors) is '2147483648', not an integer <= 2147483647" in out
    )


@pytest.mark.parametrize(
    "stop, code, said",
    [(Terminated, EXIT_TERMINATED, "terminated"), (KeyboardInterrupt, EXIT_INTERRUPTED, "interrupted")],
)
def test_a_stop_raised_inside_a_ray_call_still_exits_as_a_stop(capsys, stop, code, said):
    """Ray's wait runs the signal handler in its C++ loop and raises what it raised wrapped in a
    SystemError: the run still ends as stopped, its files kept, not with a traceback and exit 1."""

    def waiting_on_ray() -> int:
        try:
            raise stop
        except stop as err:
            raise SystemError("<built-in method __new__> returned a result with an exception set") from err

    assert run_command(waiting_on_ray) == code
    assert capsys.readouterr().err.startswith(f"gridemu: {said}; the files written so far are kept")


def test_other_errors_wrapping_nothing_of_ours_are_not_hidden():
    def failing() -> int:
        raise SystemError("a defect")

    with pytest.raises(SystemError):
        run_command(failing)
