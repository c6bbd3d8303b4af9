"""A stopped run leaves an exact prefix of the complete run's trace, whatever stopped it and when.

Sites that nothing can reach run ahead of each other; the writer holds their
rows until no laggard can make an earlier one. A run stopped by Ctrl-C or
SIGTERM must write only what it had released (as ``kill -9`` leaves only what
it had flushed), never the rows of the sites ahead: the file would be sorted
by time and miss the rows the laggards never made.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pytest

from emulator import run
from emulator.data import rundir, trace
from emulator.data.scenario import parse
from emulator.engine import runner
from emulator.partitions.cluster import ClusterPartition
from emulator.sync import coordinator, sequential

from .conftest import shared_path

ROOT = Path(__file__).resolve().parents[1]


def uneven_sites(jobs: int = 900) -> dict:
    """Three clusters whose jobs all name their site, one dense, two sparse: in rounds, each runs its
    share of event times, so the sparse ones run far ahead in virtual time."""
    names = ["dense", "sparse", "rare"]
    spacing = {"dense": 1.0, "sparse": 9.0, "rare": 40.0}
    gridlets = []
    for i in range(jobs):
        site = names[0] if i % 6 < 4 else names[1] if i % 6 == 4 else names[2]
        gridlets.append(
            {
                "id": i,
                "length": 50.0 * (1 + i % 5),
                "cpus": 1 + i % 2,
                "submit": spacing[site] * i,
                "site": site,
            }
        )
    return {
        "name": "uneven-sites",
        "clusters": [{"name": n, "machines": [{"count": 2, "cpus": 2, "mips": 1.0}]} for n in names],
        "workload": {"source": "gridlets", "gridlets": gridlets},
    }


def events(path: Path) -> pa.Table:
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


@pytest.fixture
def small_calls(monkeypatch):
    """Calls of a few event times and a flush at every round: many rounds, rows on disk at each."""
    monkeypatch.setattr(coordinator, "EVENT_BUDGET", 8)
    monkeypatch.setattr(coordinator, "MIN_BUDGET", 4)
    monkeypatch.setattr(trace, "FLUSH_SECONDS", 0.0)
    monkeypatch.setattr(sequential, "BATCH_ROWS", 1)  # (in one process: rows reach the writer at every call)


def stopped_after(calls: int, monkeypatch):
    """Make the ``calls``-th call into a cluster raise KeyboardInterrupt, as Ctrl-C would there."""
    advance = ClusterPartition.advance
    seen = [0]

    def counting(self, *args, **kwargs):
        seen[0] += 1
        if seen[0] == calls:
            raise KeyboardInterrupt
        return advance(self, *args, **kwargs)

    monkeypatch.setattr(ClusterPartition, "advance", counting)


@contextmanager
def in_rounds(scenario):
    """In one process, but in the coordinator's rounds (where sites run ahead of each other)."""
    yield sequential.InRounds(runner.build_partitions(scenario))


ENGINES = {"sequential": runner.in_process, "rounds": in_rounds}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("calls", [5, 23, 61, 140])
def test_a_run_interrupted_while_sites_run_ahead_leaves_an_exact_prefix(
    tmp_path, monkeypatch, small_calls, calls, engine
):
    scenario = parse(uneven_sites(), "test")
    full = events(run(scenario, tmp_path / "full").out_dir / "events.arrow")
    stopped_after(calls, monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        run(scenario, tmp_path / "stopped", backend=ENGINES[engine])
    found = rundir.recover(tmp_path / "stopped")
    left = events(tmp_path / "stopped" / "events.recovered.arrow")
    assert found["events.recovered.arrow"] == left.num_rows
    assert 0 < left.num_rows < full.num_rows
    assert left.equals(full.slice(0, left.num_rows))


@pytest.mark.parametrize("engine", ENGINES)
def test_a_stop_inside_the_writers_flush_writes_nothing_more(tmp_path, monkeypatch, small_calls, engine):
    """Ctrl-C can land while a batch is being written: the writer's state is then half-changed, and
    writing the rest would repeat or skip rows."""
    scenario = parse(uneven_sites(), "test")
    full = events(run(scenario, tmp_path / "full").out_dir / "events.arrow")
    write = trace.PartFile.write
    seen = [0]

    def interrupted(self, batch):
        write(self, batch)
        seen[0] += 1
        if seen[0] == 12:
            raise KeyboardInterrupt

    monkeypatch.setattr(trace.PartFile, "write", interrupted)
    with pytest.raises(KeyboardInterrupt):
        run(scenario, tmp_path / "stopped", backend=ENGINES[engine])
    rundir.recover(tmp_path / "stopped")
    left = events(tmp_path / "stopped" / "events.recovered.arrow")
    assert 0 < left.num_rows < full.num_rows
    assert left.equals(full.slice(0, left.num_rows))


def test_calls_stopped_by_the_clock_after_every_event_time_leave_the_trace_unchanged(tmp_path, monkeypatch):
    """Where a call stops is not an event: a call that stops after each event time (a clock limit of
    0 s) gives the same files."""
    scenario = parse(uneven_sites(300), "test")
    run(scenario, tmp_path / "once")
    monkeypatch.setattr(coordinator, "CALL_SECONDS", 0.0)
    run(scenario, tmp_path / "stepped")
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "once" / name).read_bytes() == (tmp_path / "stepped" / name).read_bytes()


def gridemu(*args: str, **options) -> subprocess.Popen:
    """A run as a terminal starts it: Ctrl-C's SIGINT handled, even when the suite itself was started
    in the background (``cmd &`` in a script ignores SIGINT, and its children inherit that)."""
    return subprocess.Popen(
        [sys.executable, "-m", "emulator.cli", *args, "--quiet"],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        **options,
    )


def wait_for_rows(part: Path, process: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until the run has flushed rows (its ``.part`` holds more than the schema), or fail."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if part.exists() and part.stat().st_size > 4096:
            return
        if process.poll() is not None:
            pytest.fail(f"the run ended (exit {process.returncode}) before it flushed rows")
        time.sleep(0.05)
    process.kill()
    pytest.fail(f"no rows flushed to {part} within {timeout:g} s")


@pytest.fixture(scope="module")
def lcg_sites(tmp_path_factory) -> tuple[list[str], pa.Table]:
    """LCG-2005-1's 170 sites (jobs entering their site: free runs, some far ahead), and its trace."""
    args = ["run", "--swf", str(shared_path("traces", "LCG-2005-1.swf.gz")), "--sites", "partition"]
    out = tmp_path_factory.mktemp("lcg") / "full"
    process = gridemu(*args, "--out", str(out))
    assert process.wait(timeout=300) == 0, process.stderr.read()
    return args, events(out / "events.arrow")


@pytest.mark.parametrize(
    "backend, sig, code",
    [
        ([], signal.SIGINT, 130),
        ([], signal.SIGTERM, 143),
        (["--backend", "ray", "--partitions", "2"], signal.SIGINT, 130),
        (["--backend", "ray", "--partitions", "2"], signal.SIGTERM, 143),
    ],
    ids=["inproc-sigint", "inproc-sigterm", "ray-sigint", "ray-sigterm"],
)
def test_a_signalled_run_leaves_an_exact_prefix_of_the_complete_trace(
    tmp_path, lcg_sites, backend, sig, code
):
    args, full = lcg_sites
    out = tmp_path / "stopped"
    process = gridemu(*args, *backend, "--out", str(out))
    wait_for_rows(out / "events.arrow.part", process)
    process.send_signal(sig)
    assert process.wait(timeout=120) == code
    assert "the files written so far are kept" in process.stderr.read()
    rundir.recover(out)
    left = events(out / "events.recovered.arrow")
    assert 0 < left.num_rows < full.num_rows
    assert left.equals(full.slice(0, left.num_rows))


def test_a_slow_policys_run_killed_after_6_s_has_flushed_rows(tmp_path):
    """A call into a cluster under a slow policy spans many passes: it stops by the clock, so rows reach
    the disk every few seconds, not once per event budget (10 s and more)."""
    kth = shared_path("traces", "KTH-SP2-1996-2.1-cln.swf.gz")
    slow = "local.policy=tests.plugins.slow_fcfs:SlowFcfs"
    out = tmp_path / "slow"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = gridemu("run", "--swf", str(kth), "--set", slow, "--out", str(out), env=env)
    time.sleep(6.0)
    assert process.poll() is None, "the run ended before it could be killed"
    process.kill()
    process.wait(timeout=30)
    assert rundir.recover(out)["events.recovered.arrow"] > 0
    left = events(out / "events.recovered.arrow")
    full = tmp_path / "fcfs"
    complete = gridemu("run", "--swf", str(kth), "--set", "local.policy=fcfs", "--out", str(full))
    assert complete.wait(timeout=120) == 0, complete.stderr.read()
    assert left.equals(events(full / "events.arrow").slice(0, left.num_rows))


SIGTERM_ACTIONS_IN_A_RAY_SESSION = """
import ctypes, signal, threading, time
from actors.session import ray_session

class Action(ctypes.Structure):
    _fields_ = [("handler", ctypes.c_void_p), ("rest", ctypes.c_byte * 256)]

def action():
    seen = Action()
    ctypes.CDLL(None).sigaction(signal.SIGTERM, None, ctypes.byref(seen))
    return seen.handler or 0

class Stop(Exception):
    pass

def stop(signum, frame):
    raise Stop

signal.signal(signal.SIGTERM, stop)
python = action()
seen, done = set(), threading.Event()

def sample():
    while not done.is_set():
        seen.add(action())
        time.sleep(0.0005)

threading.Thread(target=sample, daemon=True).start()
with ray_session(num_cpus=1):
    during = signal.getsignal(signal.SIGTERM)
done.set()
print(seen == {python}, during is stop)
"""


def test_sigterm_keeps_the_process_handler_through_a_ray_session():
    """Ray's start replaces SIGTERM's Python handler (exit 15 or 1) and its core's C++ failure handler
    took it from other threads (abort, exit 134), then left the default action for seconds while Ray
    shut down (exit -15): the action must stay the process's own from start to shut-down."""
    process = subprocess.run(
        [sys.executable, "-c", SIGTERM_ACTIONS_IN_A_RAY_SESSION],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert process.stdout == "True True\n", process.stderr


A_STOP_INSIDE_RAY_INIT = """
import os, signal, subprocess, time
import ray
import ray._private.worker as worker
from actors.session import ray_session

class Stop(Exception):
    pass

def stop(signum, frame):
    raise Stop

def connect(*args, **kwargs):  # half-way through ray.init: its processes started, this one not connected
    os.kill(os.getpid(), signal.SIGTERM)
    return original(*args, **kwargs)

original, worker.connect = worker.connect, connect
signal.signal(signal.SIGTERM, stop)
try:
    with ray_session(num_cpus=1):
        print("ran")
except Stop:
    time.sleep(0.5)
    ps = subprocess.run(["ps", "--ppid", str(os.getpid()), "-o", "comm="], capture_output=True, text=True)
    print("stopped", ray.is_initialized(), sorted(set(ps.stdout.split()) - {"ps"}))
"""


def test_a_stop_inside_ray_init_takes_effect_once_ray_has_started_and_shuts_it_down():
    """Raised half-way through ``ray.init``, a stop left its processes running (and the process
    crashed on its way out about one time in three, exit 139): it now waits for the start, and the
    session shuts Ray down as on any other stop."""
    process = subprocess.run(
        [sys.executable, "-c", A_STOP_INSIDE_RAY_INIT], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert process.stdout == "stopped False []\n", process.stderr


def test_a_stop_is_held_until_ray_has_started_and_a_second_one_acts_at_once():
    from actors.session import _stops_after_start

    class Stop(Exception):
        pass

    def stop(signum, frame):
        raise Stop

    def send() -> None:
        """SIGTERM to this thread (``os.kill`` may hand it to another thread, a Ray session's, whose
        handler then runs later), and a moment for Python to run its handler."""
        signal.raise_signal(signal.SIGTERM)
        time.sleep(0.01)

    previous = signal.signal(signal.SIGTERM, stop)
    reached = []
    try:
        with pytest.raises(Stop), _stops_after_start():
            send()
            reached.append("held")
        with pytest.raises(Stop), _stops_after_start():
            send()
            send()
            reached.append("not held")
        assert signal.getsignal(signal.SIGTERM) is stop  # the process's own handler, back
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert reached == ["held"]
