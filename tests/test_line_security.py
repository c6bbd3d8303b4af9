"""Lines only the driver can use (actors/channel.py, actors/calls.py): the handshake, strangers that
connect first or put their own socket in the actor's place, the cap on frames, folders left behind.

A stranger is another process of the same user (a subprocess here), or, to reach the secret's
challenge-response past the check of which process is at the other end, a thread of this one. The
tests at the end run on Ray: a run with a stranger at every line completes with the in-process trace.
"""

from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import actors.channel
from actors.channel import (
    MAX_FRAME,
    FrameTooLarge,
    LineClosed,
    LineRefused,
    connect,
    handshake,
    new_secret,
    read_frame,
    remove_folder,
    serve,
    write_frame,
)

SECRET = new_secret()
HELLO = len(b"gridemu-line/2\n") + 32  # the actor's greeting: a label and a nonce
ON_LINUX = hasattr(socket, "SO_PEERCRED")

STRANGER_FIRST = """
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.connect(sys.argv[1])
print("in", flush=True)
sock.settimeout(30)
got = b""
try:
    sock.sendall(b"\\0" * 64 + bytes(8) + b"call")  # a guess at a driver's proof, then a call
    while chunk := sock.recv(4096):
        got += chunk
except OSError:
    pass
print(got.hex(), flush=True)
"""
"""Connects to the socket at argv[1], says so, sends what might pass for a driver and prints (hex) all
it got until the actor closed the connection."""

STRANGER_IN_PLACE = """
import os, pickle, socket, struct, sys
path, marker = sys.argv[1:]
os.unlink(path)
listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
listener.bind(path)
listener.listen(4)
print("in", flush=True)
listener.settimeout(30)
line, _ = listener.accept()

class Bomb:
    def __reduce__(self):
        return (open, (marker, "w"))

bomb = pickle.dumps((Bomb(), "where"))
try:  # a greeting's length of it, then answers as the old lines sent them: pickled, marked raised
    line.sendall(bomb[:47].ljust(47, b"\\0") + (struct.pack("!Q", len(bomb) + 1) + b"e" + bomb) * 8)
    line.settimeout(30)
    while line.recv(4096):
        pass
except OSError:
    pass
"""
"""Puts its own socket in place of the actor's at argv[1] and answers whoever connects with pickles
that create the file argv[2] if anyone unpickles them."""


def stranger(script: str, *args: str) -> subprocess.Popen:
    """A process of this user running ``script``, once it says it is in place."""
    process = subprocess.Popen([sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True)
    assert process.stdout.readline() == "in\n"
    return process


def served(handler=lambda call: call.upper(), driver: int | None = None) -> str:
    return serve(handler, SECRET, driver)


def rest(sock: socket.socket) -> bytes:
    """All ``sock`` receives until the other end closes it (a reset too: it closed with bytes unread)."""
    sock.settimeout(10)
    got = b""
    try:
        while chunk := sock.recv(4096):
            got += chunk
    except ConnectionResetError:
        pass
    return got


def left_over(path: str) -> bool:
    return os.path.exists(os.path.dirname(path))


# -- the actor's end: strangers that connect first


@pytest.mark.skipif(not ON_LINUX, reason="the system does not tell which process connected")
def test_another_process_connecting_first_gets_not_a_byte_and_the_driver_gets_the_line():
    path = served(driver=os.getpid())
    first = stranger(STRANGER_FIRST, path)
    line = handshake(connect(path), SECRET, os.getpid())
    write_frame(line, b"ping")
    assert read_frame(line) == b"rPING"
    assert first.stdout.read() == "\n" and first.wait(30) == 0  # closed at once, no greeting even
    assert not left_over(path)
    line.close()


def test_a_stranger_that_does_not_prove_the_secret_gets_the_greeting_alone_and_the_line_waits_on():
    # A thread of the driver's own process: past the process check, held by the challenge.
    path = served(driver=os.getpid())
    guess = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    guess.connect(path)
    greeting = guess.recv(4096)
    assert len(greeting) == HELLO
    guess.sendall(os.urandom(64) + bytes(8) + b"call")
    assert rest(guess) == b""  # closed: nothing of a reply, nor of the actor's proof
    guess.close()
    assert left_over(path)  # (still waiting for the driver)
    line = handshake(connect(path), SECRET, os.getpid())
    write_frame(line, b"x")
    assert read_frame(line) == b"rX"
    assert not left_over(path)
    line.close()


def test_a_stranger_holding_a_connection_does_not_delay_the_driver():
    path = served()
    silent = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(3)]
    for sock in silent:
        sock.connect(path)
    started = time.monotonic()
    line = handshake(connect(path), SECRET)
    assert time.monotonic() - started < 1.0
    write_frame(line, b"x")
    assert read_frame(line) == b"rX"
    for sock in silent:  # (closed by the actor once the driver was in)
        assert len(rest(sock)) == HELLO
        sock.close()
    line.close()


def test_the_driver_with_another_secret_is_a_stranger_too():
    path = served()
    with pytest.raises(
        LineRefused, match=r"did not prove it knows the run's secret \(it closed the connection\)"
    ):
        handshake(connect(path), new_secret())
    line = handshake(connect(path), SECRET)  # (the line still waits for the one that knows it)
    line.close()


def test_the_drivers_proof_a_stranger_caught_is_no_use_to_it_against_the_actor():
    # A stranger that put its socket in the actor's place greets the driver and keeps its answer
    # (a nonce and a proof over the stranger's nonce), then offers it to the actor: refused, since
    # the actor's nonce is new on every connection.
    actor_path = served()
    fake_folder = tempfile.mkdtemp(prefix="gridemu-line-")
    fake_path = os.path.join(fake_folder, "calls")
    caught: list[bytes] = []

    def fake() -> None:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
            listener.bind(fake_path)
            listener.listen(1)
            ready.set()
            sock, _ = listener.accept()
            with sock:
                sock.sendall(b"gridemu-line/2\n" + os.urandom(32))
                caught.append(sock.recv(64))

    ready = threading.Event()
    thread = threading.Thread(target=fake)
    thread.start()
    ready.wait(10)
    with pytest.raises(LineRefused):
        handshake(connect(fake_path), SECRET)
    thread.join(10)
    shutil.rmtree(fake_folder)
    replay = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    replay.connect(actor_path)
    assert len(replay.recv(4096)) == HELLO
    replay.sendall(caught[0])
    assert rest(replay) == b""
    replay.close()
    handshake(connect(actor_path), SECRET).close()


def test_an_actor_the_driver_never_reaches_removes_its_folder_when_it_gives_up(monkeypatch):
    monkeypatch.setattr(actors.channel, "ACCEPT_SECONDS", 0.3)
    before = set(threading.enumerate())
    path = served()
    [thread] = [t for t in threading.enumerate() if t not in before and t.name == "gridemu-line"]
    thread.join(10)
    assert not thread.is_alive() and not left_over(path)


def test_an_actor_that_exits_first_removes_the_folders_still_waiting():
    path = served()
    actors.channel._remove_held()  # (what the process's exit runs: atexit)
    assert not left_over(path)


def test_the_driver_removes_only_a_lines_folder(tmp_path):
    other = tmp_path / "mine"
    other.mkdir()
    remove_folder(str(other / "calls"))
    assert other.exists()
    path = served()
    remove_folder(path)
    assert not left_over(path)


# -- the driver's end: a stranger's socket in the actor's place


@pytest.mark.skipif(not ON_LINUX, reason="the system does not tell which process listens")
def test_a_socket_another_process_put_in_place_is_refused_before_a_byte_of_it_is_read(tmp_path):
    path = served(driver=os.getpid())
    marker = tmp_path / "unpickled"
    fake = stranger(STRANGER_IN_PLACE, path, str(marker))
    with pytest.raises(
        LineRefused, match=rf"is served by process {fake.pid}, not by the actor \({os.getpid()}\)"
    ):
        handshake(connect(path), SECRET, os.getpid())
    fake.wait(30)
    assert not marker.exists()
    remove_folder(path)


@pytest.mark.parametrize(
    ("sends", "silence"),
    [
        (b"\x80\x04\x95" + bytes(44), 0.0),  # (a pickle, not a greeting)
        (b"gridemu-line/2\n" + bytes(32) + bytes(32), 0.0),  # a greeting, then a proof of zeros
        (b"gridemu-line/2\n" + bytes(32), 1.0),  # a greeting, then silence past the driver's patience
        (b"gridemu-line/2\n", 0.0),  # half a greeting, then the end
    ],
    ids=["no-greeting", "wrong-proof", "no-proof", "cut"],
)
def test_a_stranger_in_the_actors_place_in_this_process_is_refused_by_its_proof(monkeypatch, sends, silence):
    monkeypatch.setattr(actors.channel, "HANDSHAKE_SECONDS", 0.5)
    folder = tempfile.mkdtemp(prefix="gridemu-line-")
    path = os.path.join(folder, "calls")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(1)

    def fake() -> None:
        sock, _ = listener.accept()
        sock.sendall(sends)
        time.sleep(silence)
        sock.close()

    thread = threading.Thread(target=fake)
    thread.start()
    with pytest.raises(LineRefused, match=r"did not (greet|prove)"):
        handshake(connect(path), SECRET, os.getpid())
    thread.join(10)
    listener.close()
    remove_folder(path)


# -- the cap on frames


def test_a_frame_announced_over_the_cap_is_refused_before_it_is_read():
    driver, actor = socket.socketpair()
    actor.sendall(struct.pack("!Q", MAX_FRAME + 1) + b"x" * 100)
    with pytest.raises(FrameTooLarge, match=rf"a frame of {MAX_FRAME + 1} bytes, longer than the cap"):
        read_frame(driver)
    actor.sendall(struct.pack("!Q", 2**63))
    with pytest.raises(FrameTooLarge):
        read_frame(driver)
    driver.close()
    actor.close()


def test_an_actor_sent_a_call_over_the_cap_ends_the_line():
    line = handshake(connect(served()), SECRET)
    line.sendall(struct.pack("!Q", MAX_FRAME + 1))
    with pytest.raises(LineClosed, match="closed"):
        read_frame(line)
    line.close()


def test_write_frame_sends_nothing_over_the_cap(monkeypatch):
    monkeypatch.setattr(actors.channel, "MAX_FRAME", 10)
    driver, actor = socket.socketpair()
    with pytest.raises(
        FrameTooLarge, match=r"^a frame of 11 bytes is longer than a direct line's cap of 10$"
    ):
        write_frame(driver, b"x" * 11)
    write_frame(driver, b"y" * 10)
    assert read_frame(actor) == b"y" * 10
    driver.close()
    actor.close()


# -- on Ray: runs with strangers at the lines complete with the in-process trace


@pytest.fixture(scope="module")
def ray_instance():
    ray = pytest.importorskip("ray")
    from actors.session import init_local

    temp = tempfile.mkdtemp(prefix="gr-")  # session files go here, not under /tmp/ray
    init_local(2, _temp_dir=temp)
    yield ray
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


def strangers_at_the_lines(monkeypatch, before_connecting) -> list[str]:
    """Calls ``before_connecting(path, h)`` before the driver connects to each line (``h``: the how
    many-th line); the paths of the lines' sockets, in order."""
    import actors.calls

    connect_as_driver, paths = actors.calls.connect, []

    def connect_after_a_stranger(path: str) -> socket.socket:
        paths.append(path)
        before_connecting(path, len(paths) - 1)
        return connect_as_driver(path)

    monkeypatch.setattr(actors.calls, "connect", connect_after_a_stranger)
    return paths


def same_run(tmp_path, backend) -> bool:
    from emulator import load_scenario, run

    scenario = load_scenario("quickstart", ["workload.jobs=200"])
    run(scenario, tmp_path / "inproc")
    run(scenario, tmp_path / "ray", backend=backend)
    files = ("events.arrow", "jobs.arrow")
    return all(
        (tmp_path / "inproc" / name).read_bytes() == (tmp_path / "ray" / name).read_bytes() for name in files
    )


@pytest.mark.skipif(not ON_LINUX, reason="the system does not tell which process connected")
def test_on_ray_a_stranger_connecting_first_to_every_line_gets_nothing_and_the_run_is_as_in_process(
    ray_instance, tmp_path, monkeypatch, capsys
):
    from actors import ray_backend

    first: list[subprocess.Popen] = []
    paths = strangers_at_the_lines(monkeypatch, lambda path, h: first.append(stranger(STRANGER_FIRST, path)))
    backend = ray_backend(hosts=2)
    assert same_run(tmp_path, backend)
    assert backend.calls == "direct" and len(first) == 2  # (each line still the driver's)
    assert [process.stdout.read() for process in first] == ["\n", "\n"]  # not a byte, not even a greeting
    assert all(process.wait(30) == 0 for process in first)
    assert "warning" not in capsys.readouterr().err
    assert not any(left_over(path) for path in paths)


@pytest.mark.skipif(not ON_LINUX, reason="the system does not tell which process listens")
def test_on_ray_a_stranger_socket_in_an_actors_place_is_refused_and_that_actor_takes_ray_calls(
    ray_instance, tmp_path, monkeypatch, capsys
):
    from actors import ray_backend

    marker, fakes = tmp_path / "unpickled", []

    def in_place(path: str, h: int) -> None:
        if h == 0:
            fakes.append(stranger(STRANGER_IN_PLACE, path, str(marker)))

    paths = strangers_at_the_lines(monkeypatch, in_place)
    backend = ray_backend(hosts=2)
    assert same_run(tmp_path, backend)
    assert backend.calls == "direct+plain" and fakes[0].wait(30) == 0
    assert not marker.exists()
    warned = capsys.readouterr().err
    assert "gridemu: warning: no direct line to the Ray actor in process " in warned
    assert f"the socket at {paths[0]} is served by process {fakes[0].pid}" in warned
    assert "its calls go through Ray" in warned
    assert not any(left_over(path) for path in paths)


def test_on_ray_an_actor_dead_before_the_driver_connects_leaves_no_folder(ray_instance, monkeypatch, capsys):
    # Nothing listens at the line's socket any more: the driver removes its folder and says so.
    import signal

    from actors.calls import line_to
    from actors.host import PartitionHost
    from actors.session import driver_import_path
    from emulator import load_scenario

    scenario = load_scenario("quickstart", ["workload.jobs=10"])
    host = ray_instance.remote(PartitionHost).options(runtime_env=driver_import_path()).remote(scenario, [1])
    actor = ray_instance.get(host.pid.remote())

    def kill_the_actor(path: str, h: int) -> None:
        os.kill(actor, signal.SIGKILL)
        while os.path.exists(f"/proc/{actor}"):  # (gone, its socket with it)
            time.sleep(0.01)

    paths = strangers_at_the_lines(monkeypatch, kill_the_actor)
    assert line_to(host, new_secret()) is None
    assert "no direct line to the Ray actor" in capsys.readouterr().err
    assert len(paths) == 1 and not left_over(paths[0])
