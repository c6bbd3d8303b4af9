"""Direct lines (actors/channel.py): frames, the serving thread, a private socket, the end of a line,
exceptions coming back.

No Ray here: a line is a Unix socket served by a thread, tested in this process. Who may use a line
(the handshake, strangers, the cap on frames) is tested in test_line_security.py.
"""

from __future__ import annotations

import os
import socket
import stat
import sys
import tempfile
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from actors.channel import (
    LineClosed,
    RemoteError,
    RemoteTraceback,
    allowed,
    connect,
    handshake,
    new_secret,
    packed_error,
    raise_remote,
    read_frame,
    rebuilt,
    serve,
    write_frame,
)

SECRET = new_secret()


def line_to(handler) -> socket.socket:
    """The driver's end of a line served by ``handler`` in this process (it is both ends' process)."""
    return handshake(connect(serve(handler, SECRET, os.getpid())), SECRET, os.getpid())


def test_a_line_answers_its_calls_in_the_order_they_were_sent():
    line = line_to(lambda call: call[::-1])
    for call in (b"abc", b"", b"x" * 300_000):  # a large call spans many reads
        write_frame(line, call)
    assert [read_frame(line) for _ in range(3)] == [b"rcba", b"r", b"r" + b"x" * 300_000]
    line.close()


def test_the_socket_sits_in_a_private_folder_and_is_gone_once_the_driver_connects():
    path = serve(lambda call: call, SECRET)
    folder = os.path.dirname(path)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    line = handshake(connect(path), SECRET)
    assert not os.path.exists(folder)  # (removed before the actor proves itself: connect has returned)
    write_frame(line, b"ping")
    assert read_frame(line) == b"rping"
    line.close()


def test_the_serving_thread_ends_when_the_driver_closes_the_line():
    before = set(threading.enumerate())
    line = line_to(lambda call: call)
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


def test_what_the_handler_raises_comes_back_as_itself_or_by_name_and_the_line_serves_on():
    def handler(call: bytes) -> bytes:
        if call == b"odd":
            raise Unpicklable("lambda inside")
        if call != b"ok":
            raise ValueError(f"bad call {call!r}")
        return b"fine"

    line = line_to(handler)
    for call in (b"q", b"odd", b"ok"):
        write_frame(line, call)
    raised, odd, fine = (read_frame(line) for _ in range(3))
    assert raised[:1] == odd[:1] == b"e" and fine == b"rfine"
    with pytest.raises(ValueError, match=r"^bad call b'q'$") as caught:
        raise_remote(raised[1:])
    cause = caught.value.__cause__
    assert isinstance(cause, RemoteTraceback) and 'raise ValueError(f"bad call {call!r}")' in str(cause)
    with pytest.raises(RemoteError, match=r"^Unpicklable: lambda inside$") as caught:  # (not pickled)
        raise_remote(odd[1:])
    assert isinstance(caught.value, RuntimeError) and caught.value.type_name.endswith(
        "test_channel.Unpicklable"
    )
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
        serve(lambda call: call, SECRET)
    assert list(deep.iterdir()) == []


class Late(ValueError):
    """A plug-in's own exception: its class is not made again in the driver, the one it derives from is."""


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


@pytest.mark.parametrize(
    ("err", "kind", "text"),
    [
        (ValueError("policy bug at 12"), ValueError, "policy bug at 12"),
        (KeyError("job 7"), KeyError, "'job 7'"),
        (FileNotFoundError(2, "No such file or directory", "/x/y.swf"), FileNotFoundError, None),
        (ValueError(object()), ValueError, None),  # (arguments msgpack does not take: made from the text)
        (Late("job 3 is late"), ValueError, "Late: job 3 is late"),
        (SystemExit(3), RuntimeError, "SystemExit: 3"),  # (not an Exception: never raised as itself)
        (Unprintable(), RuntimeError, "Unprintable: <its text could not be had>"),
    ],
    ids=["builtin", "key", "file", "odd-args", "plugin-subclass", "system-exit", "unprintable"],
)
def test_an_exception_comes_back_as_itself_or_as_a_remote_error_naming_it(err, kind, text):
    with pytest.raises(kind) as caught:
        raise_remote(packed_error(err, "Traceback: here"))
    got = caught.value
    assert str(got) == (str(err) if text is None else text)
    if type(err) in allowed().values():
        assert type(got) is type(err)
    else:  # (a RemoteError, and an instance of what its class derives from that can be made again)
        assert isinstance(got, RemoteError) and got.type_name.endswith(type(err).__qualname__)
    assert isinstance(got.__cause__, RemoteTraceback) and str(got.__cause__) == "\nTraceback: here"


def test_the_emulators_own_errors_come_back_as_themselves():
    from emulator.core.preemption import PreemptionError
    from emulator.core.resources import OverAllocation
    from emulator.policies.errors import DecisionError
    from emulator.sync.frontier import Stalled

    for kind in (Stalled, PreemptionError, DecisionError, OverAllocation):
        with pytest.raises(kind, match=r"^easy on c1 at 12\.5: job 3$"):
            raise_remote(packed_error(kind("easy on c1 at 12.5: job 3"), ""))


def test_no_class_outside_the_allow_list_is_looked_up_whatever_an_answer_names():
    # An answer naming a callable that is no exception class (os.system) or a module not imported here
    # gets a RemoteError carrying the text: names are only looked up in allowed(), never imported.
    for names in (["os.system"], ["no_such_module_xyz.Boom", "builtins.Exception"], []):
        got = rebuilt(names, ["touch /tmp/pwned"], "text")
        assert type(got) is RemoteError and str(got).endswith(": text")
    assert "no_such_module_xyz" not in sys.modules
    assert all(issubclass(kind, Exception) for kind in allowed().values())


def test_an_answer_that_does_not_decode_ends_the_line():
    with pytest.raises(LineClosed, match="does not decode"):
        raise_remote(b"\x80\x03cos\nsystem\n")  # (a pickle's bytes: msgpack refuses them)
