"""Sweeps when things go wrong: a killed driver's workers die with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
    driver = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
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
