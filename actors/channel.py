"""Direct lines: a round's calls to actors on the driver's node over Unix sockets, not Ray calls.

A plain Ray call costs about a millisecond of wall time and half of one of the
driver's CPU (RAY.md), and a compiled graph's channels poll, taking the cores
the partitions need. On a meta-scheduled grid a round is a few milliseconds
of work, so that millisecond was the difference between Ray paying off or not
(bench_ray's weak scaling, 128 clusters at 1 s links: 12.9 s on plain calls,
5.1 s on direct lines, 4.5 s in one process). A direct line is a connected
Unix socket per actor: the driver writes a call, a thread in the actor blocks
on its end, runs the call and writes the answer back; no process polls.

Ray still starts, places, snapshots, migrates and rebuilds the actors; only
the rounds' calls and answers take the line. Lines exist only to actors on the
driver's node: a Unix socket does not cross machines, so on a multi-node
cluster the other actors take plain Ray calls (:mod:`actors.calls`). The
socket lives in a directory only this user can enter, is unlinked once the
driver has connected, and takes one connection: no other process can call.

Frames: an 8-byte length, then the bytes; an answer's first byte says whether
it is the call's reply or the exception the call raised (pickled with its
traceback's text, re-raised in the driver as Ray re-raises an actor's
exception: :func:`raise_remote`). An actor that dies
closes its end: the driver reads end-of-file and recovers the actor as it
would from a Ray call's :class:`~ray.exceptions.RayActorError`.
"""

from __future__ import annotations

import os
import pickle
import shutil
import socket
import struct
import tempfile
import threading
import traceback
from collections.abc import Callable

_LENGTH = struct.Struct("!Q")
_REPLY, _RAISED = b"r", b"e"

ACCEPT_SECONDS = 120.0
"""How long an actor's line waits for the driver to connect before it gives up and removes its
socket (a driver that died between asking for the line and connecting)."""


class LineClosed(ConnectionError):
    """The actor's end of a line closed: its process died (or it stopped serving)."""


class RemoteTraceback(Exception):
    """Where in the actor an exception raised on a line came from (its ``__cause__``)."""

    def __str__(self) -> str:
        return "\n" + self.args[0]


def write_frame(sock: socket.socket, data: bytes) -> None:
    sock.sendall(_LENGTH.pack(len(data)) + data)


def read_frame(sock: socket.socket) -> bytes:
    """The next frame's bytes; :class:`LineClosed` at end-of-file (or a reset) before it is complete."""
    (length,) = _LENGTH.unpack(_read_exact(sock, _LENGTH.size))
    return _read_exact(sock, length)


def _read_exact(sock: socket.socket, size: int) -> bytes:
    buffer = bytearray(size)
    view, got = memoryview(buffer), 0
    while got < size:
        try:
            count = sock.recv_into(view[got:], size - got)
        except OSError as err:
            raise LineClosed(f"the actor's line broke: {err}") from err
        if count == 0:
            raise LineClosed("the actor's line closed (its process ended)")
        got += count
    return bytes(buffer)


def serve(handler: Callable[[bytes], bytes]) -> str:
    """Listen for the driver's one connection on a fresh Unix socket and answer its calls with
    ``handler`` on a daemon thread, one after the other, in order; returns the socket's path.

    The path (in a directory of mode 0700) is removed once the driver connects.
    The thread ends when the driver closes the line. Raises OSError, leaving nothing behind, if
    no socket can be made there (the temporary folder's path too long for one).
    """
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    folder = tempfile.mkdtemp(prefix="gridemu-line-")
    path = os.path.join(folder, "calls")
    try:
        listener.bind(path)  # (OSError when the path is longer than a Unix socket's, ~107 bytes)
        listener.listen(1)
    except OSError:
        listener.close()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    serving = threading.Thread(target=_answer_calls, args=(listener, folder, handler), name="gridemu-line")
    serving.daemon = True
    serving.start()
    return path


def _answer_calls(listener: socket.socket, folder: str, handler: Callable[[bytes], bytes]) -> None:
    listener.settimeout(ACCEPT_SECONDS)
    try:
        with listener:
            line, _ = listener.accept()
    except TimeoutError:
        return
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    line.settimeout(None)  # (calls may be minutes apart: a free run's other hosts, a long snapshot)
    with line:
        while True:
            try:
                call = read_frame(line)
            except LineClosed:
                return
            try:
                answer = _REPLY + handler(call)
            except BaseException as err:  # the driver re-raises it, as Ray would an actor's
                answer = _RAISED + _pickled(err, traceback.format_exc())
            try:
                write_frame(line, answer)
            except OSError:  # the driver closed its end meanwhile: nobody is waiting
                return


def _pickled(err: BaseException, where: str) -> bytes:
    try:
        return pickle.dumps((err, where), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # an exception that does not pickle still says what it was
        return pickle.dumps((RuntimeError(f"{type(err).__name__}: {err}"), where))


def read_answer(sock: socket.socket) -> bytes:
    """The reply to the oldest call on the line not answered yet; what the call raised, raised here."""
    frame = read_frame(sock)
    if frame[:1] == _RAISED:
        raise_remote(frame[1:])
    return frame[1:]


def raise_remote(data: bytes) -> None:
    """Raise the exception an answer carried (:data:`_RAISED`), its traceback in the actor as its cause."""
    err, where = pickle.loads(data)
    raise err from RemoteTraceback(where)


def connect(path: str) -> socket.socket:
    """The driver's end of the line an actor serves at ``path`` (:func:`serve`)."""
    line = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    line.connect(path)
    return line


__all__ = [
    "ACCEPT_SECONDS",
    "LineClosed",
    "RemoteTraceback",
    "connect",
    "raise_remote",
    "read_answer",
    "read_frame",
    "serve",
    "write_frame",
]
