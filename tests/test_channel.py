"""Direct lines (actors/channel.py): frames, the serving thread, a private socket, the end of a line.

No Ray here: a line is a Unix socket served by a thread, tested in this process.
"""

from __future__ import annotations

import os
import socket
import stat
import tempfile
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.channel import LineClosed, RemoteTraceback, connect, raise_remote, read_frame, serve, write_frame


def test_a_line_answers_its_calls_in_the_order_they_were_sent():
    line = connect(serve(lambda call: call[::-1]))
    for call in (b"abc", b"", b"x" * 300_000):  # a large call spans many reads
        write_frame(line, call)
    assert [read_frame(line) for _ in range(3)] == [b"rcba", b"r", b"r" + b"x" * 300_000]
    line.close()


def test_the_socket_sits_in_a_private_folder_and_is_gone_once_the_driver_connects():
    path = serve(lambda call: call)
    folder = os.path.dirname(path)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    line = connect(path)
    write_frame(line, b"ping")
    assert read_frame(line) == b"rping"  # (answered after the accept, so the folder is gone by now)
    assert not os.path.exists(folder)
    line.close()


def test_the_serving_thread_ends_when_the_driver_closes_the_line():
    before = set(threading.enumerate())
    line = connect(serve(lambda call: call))
    [thread] = [t for t in threading.enumerate() if t not in before and t.name == "gridemu-line"]
    write_frame(line, b"x")
    read_frame(line)
    assert thread.is_alive() and thread.daemon
    line.close()
    thread.join(timeout=5)
    assert not thread.is_alive()


class Unpicklable(Exception):
    def __reduce__(self):
        raise TypeError("no")


def test_what_the_handler_raises_comes_back_pickled_and_the_line_serves_on():
    def handler(call: bytes) -> bytes:
        if call == b"odd":
            raise Unpicklable("lambda inside")
        if call != b"ok":
            raise ValueError(f"bad call {call!r}")
        return b"fine"

    line = connect(serve(handler))
    for call in (b"q", b"odd", b"ok"):
        write_frame(line, call)
    raised, odd, fine = (read_frame(line) for _ in range(3))
    assert raised[:1] == odd[:1] == b"e" and fine == b"rfine"
    with pytest.raises(ValueError, match=r"^bad call b'q'$") as caught:
        raise_remote(raised[1:])
    cause = caught.value.__cause__
    assert isinstance(cause, RemoteTraceback) and 'raise ValueError(f"bad call {call!r}")' in str(cause)
    with pytest.raises(RuntimeError, match=r"^Unpicklable: lambda inside$"):
        raise_remote(odd[1:])
    line.close()


def test_the_end_of_a_line_mid_frame_is_line_closed_never_a_hang():
    driver, actor = socket.socketpair()
    actor.sendall(b"\x00\x00\x00\x00\x00\x00\x00\x10" + b"half")  # 16 bytes announced, 4 sent
    actor.close()
    with pytest.raises(LineClosed, match="closed"):
        read_frame(driver)
    with pytest.raises(LineClosed):
        read_frame(driver)  # and again: nothing left
    driver.close()


@given(st.lists(st.binary(max_size=5000), max_size=8), st.integers(min_value=0, max_value=40))
def test_any_frames_read_back_as_written_and_a_cut_stream_is_line_closed(frames, cut):
    driver, actor = socket.socketpair()
    stream = bytearray()
    for frame in frames:
        write_frame(actor, frame)
        stream += len(frame).to_bytes(8, "big") + frame
    assert [read_frame(driver) for _ in frames] == frames
    kept = max(len(stream) - cut, 0)  # the stream again, its last ``cut`` bytes lost
    actor.sendall(bytes(stream[:kept]))
    actor.close()
    complete = _whole_frames(frames, kept)
    assert [read_frame(driver) for _ in range(complete)] == frames[:complete]
    with pytest.raises(LineClosed):
        read_frame(driver)
    driver.close()


def _whole_frames(frames: list[bytes], kept: int) -> int:
    """How many of ``frames`` are complete in the first ``kept`` bytes of their stream."""
    count, end = 0, 0
    for frame in frames:
        end += 8 + len(frame)
        if end > kept:
            break
        count += 1
    return count


def test_a_socket_path_too_long_is_an_error_that_leaves_nothing_behind(tmp_path, monkeypatch):
    deep = tmp_path / ("d" * 100)
    deep.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    with pytest.raises(OSError):
        serve(lambda call: call)
    assert list(deep.iterdir()) == []
