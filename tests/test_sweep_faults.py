"""Sweeps when things go wrong: a killed driver's workers die with it; --resume continues only the
sweep its directory holds; --overwrite replaces a finished or stranded sweep, never a live one."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.cli_errors import EXIT_INPUT
from emulator.engine import sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "emulator" / "examples"

PROC = Path("/proc")


def children(pid: int) -> set[int]:
    """The live processes whose parent is ``pid`` (from ``/proc/*/stat``: no psutil needed)."""
    found = set()
    for stat in PROC.glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # ended while we looked
            continue
        state, ppid = text.rpartition(")")[2].split()[:2]
        if int(ppid) == pid and state != "Z":
            found.add(int(stat.parent.name))
    return found


def alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie (an orphan's zombie may wait long for a reaper that never comes)."""
    try:
        return (PROC / str(pid) / "stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


DRIVER = {
    "prctl": "from emulator.cli import main",
    # where prctl cannot be had: each worker watches its parent from a thread
    "watchdog": "from emulator.engine import sweep_pool\n"
    "sweep_pool._set_pdeathsig = lambda: False\n"
    "from emulator.cli import main",
}


@pytest.mark.skipif(not (PROC / "self" / "stat").exists(), reason="reads processes from /proc")
@pytest.mark.parametrize("how", DRIVER)
def test_a_killed_sweep_leaves_no_point_worker_running(tmp_path, how):
    # points of 20,000 jobs run ~15 s each: a worker that outlived its driver would still be at it
    code = f"import sys\n{DRIVER[how]}\nsys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, "sweep", "quickstart", "--quiet", "--workers", "2"]
    argv += ["--set", "workload.jobs=20000", "--vary", "seed=1..4", "--out", str(tmp_path / "sweep")]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # (a killed driver leaves its points' scratch folders)
    driver = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while len(workers) < 2 and time.monotonic() < deadline and driver.poll() is None:
            workers = children(driver.pid)
            time.sleep(0.05)
        assert len(workers) == 2, "the sweep never had two points running"
        time.sleep(0.3)  # the workers are into their points
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=10)
        deadline = time.monotonic() + 3
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [pid for pid in workers if alive(pid)], "point workers outlived their killed driver"
    finally:
        for pid in workers:  # the processes this test started (through the driver): none left behind
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()
            driver.wait()


def sweep_argv(out: Path, *more: str) -> list[str]:
    return [
        "sweep",
        "quickstart",
        "--quiet",
        "--workers",
        "1",
        "--set",
        "workload.jobs=60",
        "--out",
        str(out),
        *more,
    ]


RANDOM = ["--vary", "meta.policy=random", "--vary", "seed=1..4"]


def rows(out: Path) -> list[dict[str, str]]:
    with (out / "sweep.csv").open(newline="") as handle:
        return list(csv.DictReader(handle))


def interrupted(out: Path, monkeypatch, at: int = 3) -> None:
    """Sweep ``RANDOM`` into ``out``, Ctrl-C'd as point ``at``'s result comes in (points run in order)."""
    real = sweep.write_point

    def write_point(out_dir, result):
        if result.point.index == at:
            raise KeyboardInterrupt
        real(out_dir, result)

    with monkeypatch.context() as patch:
        patch.setattr(sweep, "write_point", write_point)
        assert main(sweep_argv(out, *RANDOM)) == 130


def test_resume_refuses_another_sweep_and_leaves_the_directory_as_it_was(tmp_path, capsys, monkeypatch):
    out = tmp_path / "sweep"
    interrupted(out, monkeypatch)
    table = (out / "sweep.csv").read_text()
    assert [r["status"] for r in rows(out)] == ["ok", "ok", "ok", "not run"]
    assert (out / ".running").is_file()  # stranded: its marker, unlocked, says so
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    capsys.readouterr()
    asked = sweep_argv(out, "--vary", "meta.policy=round-robin", "--vary", "seed=1..4", "--resume")
    assert main(asked) == EXIT_INPUT
    assert capsys.readouterr().err == (
        f"gridemu: error: sweep --resume: {out} holds another sweep than the one asked for: "
        "--vary meta.policy: recorded random, asked round-robin "
        f"(`gridemu sweep --resume --out {out}` alone resumes the one it holds)\n"
    )
    assert (out / "sweep.csv").read_text() == table
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before


def test_resume_with_no_definition_runs_the_recorded_sweep(tmp_path, capsys, monkeypatch):
    out = tmp_path / "sweep"
    interrupted(out, monkeypatch)
    assert main(["sweep", "--resume", "--out", str(out), "--quiet"]) == 0
    assert "4 of 4 runs done" in capsys.readouterr().out
    table = rows(out)
    assert [(r["point"], r["meta.policy"], r["seed"], r["status"]) for r in table] == [
        (str(i), "random", str(i + 1), "ok") for i in range(4)
    ]
    # every row holds its own point's results: the resumed one, and those run before the interruption
    for row in table:
        direct = run(
            load_scenario("quickstart", ["workload.jobs=60", "meta.policy=random"], seed=int(row["seed"])),
            tmp_path / f"direct-{row['point']}",
        )
        assert float(row["mean_wait"]) == pytest.approx(direct.summary["grid"]["mean_wait"], rel=1e-12)
        assert int(row["jobs_finished"]) == direct.summary["jobs"]["finished"] == 60
    assert 'policy = "random"' in (out / "point-003" / "scenario.toml").read_text()
    assert not (out / ".running").exists()  # finished
    # the same definition given again, in other words (1,2,3,4 is 1..4): resumed, nothing left to run
    again = sweep_argv(out, "--vary", "meta.policy=random", "--vary", "seed=1,2,3,4", "--resume")
    assert main(again) == 0 and "4 of 4 runs done" in capsys.readouterr().out


def test_resume_checks_each_finished_point_against_the_point_asked_for(tmp_path, capsys, monkeypatch):
    # the scenario file changed since: the definition is the same, the points are not
    scenario = tmp_path / "grid.toml"
    text = (EXAMPLES / "quickstart.toml").read_text()
    scenario.write_text(text)
    out = tmp_path / "sweep"
    real = sweep.write_point

    def write_point(out_dir, result):
        if result.point.index == 1:
            raise KeyboardInterrupt
        real(out_dir, result)

    argv = [
        "sweep",
        str(scenario),
        "--quiet",
        "--workers",
        "1",
        "--set",
        "workload.jobs=60",
        "--out",
        str(out),
    ]
    argv += ["--vary", "seed=1..2"]
    with monkeypatch.context() as patch:
        patch.setattr(sweep, "write_point", write_point)
        assert main(argv) == 130
    scenario.write_text(text.replace("mean_interarrival = 10", "mean_interarrival = 20"))
    capsys.readouterr()
    assert main([*argv, "--resume"]) == EXIT_INPUT
    assert capsys.readouterr().err == (
        f"gridemu: error: sweep --resume: {out}/point-000 ran another point than the one asked for: "
        "workload.mean_interarrival = 10.0, asked workload.mean_interarrival = 20.0 "
        "(resume it with the scenario, --vary and --set it ran with, or --overwrite it)\n"
    )
    assert not (out / "point-001").exists()


def test_resume_of_a_sweep_recording_no_definition_checks_its_points(tmp_path, capsys, monkeypatch):
    out = tmp_path / "sweep"
    interrupted(out, monkeypatch)
    (out / "sweep.json").unlink()  # as an older gridemu left it
    capsys.readouterr()
    assert main(["sweep", "--resume", "--out", str(out), "--quiet"]) == EXIT_INPUT
    assert "sweep.json is missing" in capsys.readouterr().err
    asked = sweep_argv(out, "--vary", "meta.policy=round-robin", "--vary", "seed=1..4", "--resume")
    assert main(asked) == EXIT_INPUT
    assert capsys.readouterr().err.endswith(
        f"{out}/point-000 ran another point than the one asked for: "
        'meta.policy = "random", asked meta.policy = "round-robin" '
        "(resume it with the scenario, --vary and --set it ran with, or --overwrite it)\n"
    )
    assert main(sweep_argv(out, *RANDOM, "--resume")) == 0
    assert [r["status"] for r in rows(out)] == ["ok"] * 4
    assert json.loads((out / "sweep.json").read_text())["vary"] == ["meta.policy=random", "seed=1..4"]


def test_overwrite_replaces_a_finished_sweep_and_nothing_else(tmp_path, capsys):
    out = tmp_path / "sweep"
    assert main(sweep_argv(out, *RANDOM)) == 0
    (out / "report.html").write_text("<html></html>")  # `gridemu report DIR` writes it there: the sweep's
    capsys.readouterr()
    assert main(sweep_argv(out, "--vary", "seed=1..2")) == EXIT_INPUT
    assert capsys.readouterr().err == (
        f"gridemu: error: {out}: holds a sweep (4 of 4 points finished); pick another --out, --resume it, "
        "or pass --overwrite to replace it\n"
    )
    assert main(sweep_argv(out, "--vary", "seed=1..2", "--overwrite", "--resume")) == EXIT_INPUT
    assert "give one" in capsys.readouterr().err
    assert main(sweep_argv(out, "--vary", "seed=1..2", "--overwrite")) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "point-000",
        "point-001",
        "sweep.arrow",
        "sweep.csv",
        "sweep.json",
    ]
    assert [(r["point"], r["seed"], r["status"]) for r in rows(out)] == [("0", "1", "ok"), ("1", "2", "ok")]
    assert "meta.policy" not in rows(out)[0]
    assert 'policy = "least-load"' in (out / "point-000" / "scenario.toml").read_text()
    assert json.loads((out / "sweep.json").read_text())["vary"] == ["seed=1..2"]


@pytest.mark.parametrize("stray", ["notes.txt", "point-001/plot.png", "figures/"])
def test_overwrite_refuses_a_directory_holding_more_than_a_sweep(tmp_path, capsys, stray):
    out = tmp_path / "sweep"
    assert main(sweep_argv(out, *RANDOM)) == 0
    (out / stray).mkdir() if stray.endswith("/") else (out / stray).write_text("mine")
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    capsys.readouterr()
    assert main(sweep_argv(out, "--vary", "seed=1..2", "--overwrite")) == EXIT_INPUT
    assert capsys.readouterr().err == (
        f"gridemu: error: {out}: --overwrite replaces only a sweep's files, and it holds others too: "
        f"{stray.rstrip('/')}\n"
    )
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before  # nothing deleted


@pytest.mark.skipif(not (PROC / "self" / "stat").exists(), reason="reads processes from /proc")
def test_a_live_sweep_is_never_resumed_or_replaced_and_a_killed_one_may_be(tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = [sys.executable, "-m", "emulator.cli", "sweep", "quickstart", "--quiet", "--workers", "1"]
    argv += ["--set", "workload.jobs=20000", "--vary", "seed=1..3", "--out", str(out)]
    env = {**os.environ, "TMPDIR": str(tmp_path)}  # (a killed driver leaves its points' scratch folders)
    driver = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 30
        while not workers and time.monotonic() < deadline and driver.poll() is None:
            workers = children(driver.pid)
            time.sleep(0.05)
        assert workers and (out / "sweep.json").is_file(), "the sweep never started a point"
        for asked in (
            sweep_argv(out, "--vary", "seed=1..2", "--overwrite"),
            ["sweep", "--resume", "--out", str(out)],
        ):
            assert main(asked) == EXIT_INPUT
            assert capsys.readouterr().err == (
                f"gridemu: error: {out}: a sweep is running in it (process {driver.pid}); "
                "wait for it to end, or stop it first\n"
            )
        assert driver.poll() is None and sorted(p.name for p in out.iterdir()) == [".running", "sweep.json"]
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=10)
        deadline = time.monotonic() + 3
        while any(alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        # stranded: the lock went with the processes
        assert main(sweep_argv(out, "--vary", "seed=1..2", "--overwrite")) == 0
        assert [(r["seed"], r["status"]) for r in rows(out)] == [("1", "ok"), ("2", "ok")]
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if driver.poll() is None:
            driver.kill()
            driver.wait()
