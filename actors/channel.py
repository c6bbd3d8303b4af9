"""Direct lines: a round's calls to actors on the driver's node over Unix sockets, not Ray calls.

A plain Ray call costs about a millisecond of wall time and half of one of the
driver's CPU (RAY.md), and a compiled graph's channels poll, taking the cores
the partitions need. On a meta-scheduled grid a round is a few milliseconds
of work, so that millisecond decides whether Ray pays off
(docs/performance.md, its history). A direct line is a connected
Unix socket per actor: the driver writes a call, a thread in the actor blocks
on its end, runs the call and writes the answer back; no process polls.

Ray still starts, places, snapshots, migrates and rebuilds the actors; only
the rounds' calls and answers take the line. Lines exist only to actors on the
driver's node: a Unix socket does not cross machines, so on a multi-node
cluster the other actors take plain Ray calls (:mod:`actors.calls`).

Only the driver and its actor can use a line. The socket sits in a folder
only this user can enter, but any process of this user can connect to it or
put its own socket in its place, so both ends check who is at the other:

- the driver hands the actor, through Ray, the run's secret (:func:`new_secret`)
  and its process id; the actor hands back the socket's path and its own;
- where the system tells which process is at the other end of a Unix socket
  (Linux's ``SO_PEERCRED``), the actor closes at once any connection from
  another process than the driver, and the driver refuses a socket served by
  another process than the actor, before reading a byte of it;
- then a challenge-response (:func:`handshake`): the actor greets with a nonce,
  the driver answers with its own and an HMAC of both under the secret, and
  only then does the actor answer with its HMAC of both (another label), so
  the actor proves nothing to a stranger and the driver accepts nothing from
  one. A connection that does not prove it knows the secret within
  :data:`HANDSHAKE_SECONDS` is closed, and the actor keeps waiting for the
  driver (:data:`ACCEPT_SECONDS`); its folder is removed once the driver is
  in, or when it gives up. A driver refused by a socket takes plain Ray calls
  to that actor (:func:`actors.calls.line_to`) and removes the folder.

Frames: an 8-byte length, then the bytes, never more than :data:`MAX_FRAME`
(:class:`FrameTooLarge` ends the line). An answer's first byte says whether
it is the call's reply or the exception the call raised. Nothing read from a
line is unpickled: replies are msgpack (:mod:`actors.packing`), and an
exception travels as its class's names, its arguments and its traceback's
text (msgpack), rebuilt in the driver from an allow-list (:func:`rebuilt`) and
raised with that text as its cause, as Ray raises an actor's exception. An
actor that dies closes its end: the driver reads end-of-file and recovers the
actor as it would from a Ray call's :class:`~ray.exceptions.RayActorError`.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import functools
import hashlib
import hmac
import os
import secrets
import selectors
import shutil
import socket
import struct
import tempfile
import threading
import time
import traceback
from collections.abc import Callable
from typing import NoReturn

import msgpack

_LENGTH = struct.Struct("!Q")
_REPLY, _RAISED = b"r", b"e"
_HELLO = b"gridemu-line/2\n"  # the actor's greeting, before its nonce
_NONCE = 32
_MAC = hashlib.sha256().digest_size
_DRIVER, _ACTOR = b"gridemu line: the driver's proof\n", b"gridemu line: the actor's proof\n"
_FOLDER = "gridemu-line-"
_PEERCRED = struct.Struct("3i")  # pid, uid, gid

SECRET_BYTES = 32
"""The length of a run's secret (:func:`new_secret`)."""

MAX_FRAME = 1 << 30
"""The longest frame a line carries (1 GiB), either way. The largest measured (two actors): replies of
2.7 MB (KTH-SP2 on one cluster: a call's 16384 event times of rows), 1.8 MB (LCG-2005-1), 0.95 MB
(the stress preset), calls of under 1 kB. A reply grows with the rows of one call's event times, which
a burst of simultaneous jobs can make large, so the cap is far above them: it keeps a garbled length
from asking for exabytes, not runs from their replies."""

ACCEPT_SECONDS = 120.0
"""How long an actor's line waits for the driver to connect before it gives up and removes its
socket (a driver that died between asking for the line and connecting)."""

HANDSHAKE_SECONDS = 10.0
"""How long either end waits for the other to prove it knows the run's secret."""

_WAITING = 16
"""Connections an actor's line holds at once while they have not proven it (the oldest goes first)."""


class LineClosed(ConnectionError):
    """The actor's end of a line closed: its process died (or it stopped serving)."""


class FrameTooLarge(LineClosed):
    """A frame longer than :data:`MAX_FRAME`: not sent, or (announced by the other end) the line ends."""


class LineRefused(ConnectionError):
    """The socket an actor's line was to be found at is not that actor's: another process serves it,
    or it did not prove it knows the run's secret. Nothing it sent was decoded."""


class RemoteTraceback(Exception):
    """Where in the actor an exception raised on a line came from (its ``__cause__``)."""

    def __str__(self) -> str:
        return "\n" + self.args[0]


class RemoteError(RuntimeError):
    """An exception raised in an actor whose class is not one :func:`rebuilt` makes again: its message
    is the class's name and the exception's text; ``type_name`` is its class's full name.

    Where the class derives from one that can be rebuilt, the exception is also an instance of that
    (a plug-in's ``class Late(ValueError)`` is caught by ``except ValueError``), as Ray does."""

    def __init__(self, type_name: str, text: str) -> None:
        super().__init__(f"{type_name.rpartition('.')[2]}: {text}")
        self.type_name = type_name

    def __reduce__(self):
        return RemoteError, (self.type_name, str(self).partition(": ")[2])


def new_secret() -> bytes:
    """A run's secret: the driver hands it to each actor with :meth:`~actors.host.PartitionHost.line`."""
    return secrets.token_bytes(SECRET_BYTES)


def write_frame(sock: socket.socket, data: bytes) -> None:
    """Send ``data`` as one frame; :class:`FrameTooLarge` (nothing sent) if longer than :data:`MAX_FRAME`."""
    if len(data) > MAX_FRAME:
        raise FrameTooLarge(f"a frame of {len(data)} bytes is longer than a direct line's cap of {MAX_FRAME}")
    sock.sendall(_LENGTH.pack(len(data)) + data)


def read_frame(sock: socket.socket) -> bytes:
    """The next frame's bytes; :class:`LineClosed` at end-of-file (or a reset) before it is complete,
    :class:`FrameTooLarge` if it announces more than :data:`MAX_FRAME` bytes (none of them read)."""
    (length,) = _LENGTH.unpack(_read_exact(sock, _LENGTH.size))
    if length > MAX_FRAME:
        raise FrameTooLarge(
            f"the other end of a direct line announced a frame of {length} bytes, longer than the cap "
            f"of {MAX_FRAME}: the line is closed"
        )
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


def peer_pid(sock: socket.socket) -> int | None:
    """The process at the other end of a Unix socket (the one that connected, or the one listening),
    where the system tells (Linux); else None."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        pid, _, _ = _PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, option, _PEERCRED.size))
    except OSError:
        return None
    return pid


def _proof(secret: bytes, who: bytes, actor_nonce: bytes, driver_nonce: bytes) -> bytes:
    return hmac.new(secret, who + actor_nonce + driver_nonce, hashlib.sha256).digest()


# -- the actor's end


def serve(handler: Callable[[bytes], bytes], secret: bytes, driver: int | None = None) -> str:
    """Listen for the driver's connection on a fresh Unix socket and answer its calls with ``handler``
    on a daemon thread, one after the other, in order; returns the socket's path.

    Only a connection that proves it knows ``secret`` is served, and (where the system tells) only
    one from the process ``driver``; others are closed and the line waits on. The path (in a folder of
    mode 0700) is removed once the driver is in, or after :data:`ACCEPT_SECONDS` without it, or when
    this process exits. The thread ends when the driver closes the line. Raises OSError, leaving
    nothing behind, if no socket can be made there (the temporary folder's path too long for one).
    """
    if len(secret) < 16:
        raise ValueError("a line's secret must be at least 16 bytes (new_secret)")
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    folder = tempfile.mkdtemp(prefix=_FOLDER)
    path = os.path.join(folder, "calls")
    try:
        listener.bind(path)  # (OSError when the path is longer than a Unix socket's, ~107 bytes)
        listener.listen(_WAITING)
    except OSError:
        listener.close()
        remove_folder(path)
        raise
    _held(folder)
    serving = threading.Thread(
        target=_serve, args=(listener, folder, secret, driver, handler), name="gridemu-line", daemon=True
    )
    serving.start()
    return path


def _serve(
    listener: socket.socket, folder: str, secret: bytes, driver: int | None, handler: Callable[[bytes], bytes]
) -> None:
    try:
        with listener:
            accepted = _accept(listener, secret, driver)
    finally:
        remove_folder(os.path.join(folder, "calls"))
        _held(folder, False)
    if accepted is None:
        return
    line, proof = accepted
    line.setblocking(True)
    try:
        line.sendall(proof)  # (after the folder is gone: the driver's connect returns with it gone)
    except OSError:
        line.close()
        return
    _answer_calls(line, handler)


class _Challenge:
    """A connection the actor greeted with a nonce, until it proves it knows the secret, or not."""

    def __init__(self, until: float) -> None:
        self.nonce, self.until, self.got = secrets.token_bytes(_NONCE), until, bytearray()

    def read(self, sock: socket.socket, secret: bytes) -> bytes | None:
        """The actor's proof once the driver's is in and right; b"" if wrong (or closed); None: not all in."""
        try:
            data = sock.recv(_NONCE + _MAC - len(self.got))
        except (BlockingIOError, InterruptedError):
            return None
        except OSError:
            return b""
        if not data:
            return b""
        self.got += data
        if len(self.got) < _NONCE + _MAC:
            return None
        driver_nonce, mac = bytes(self.got[:_NONCE]), bytes(self.got[_NONCE:])
        if not hmac.compare_digest(mac, _proof(secret, _DRIVER, self.nonce, driver_nonce)):
            return b""
        return _proof(secret, _ACTOR, self.nonce, driver_nonce)


def _accept(listener: socket.socket, secret: bytes, driver: int | None) -> tuple[socket.socket, bytes] | None:
    """The driver's connection, once it proved it knows ``secret``, and the proof to answer it with;
    None if it did not come within :data:`ACCEPT_SECONDS`. Every other connection is closed, having
    had no byte but the greeting: another process's at once (where the system tells), one that proves
    wrong as soon as its proof is in, one that has not proven within :data:`HANDSHAKE_SECONDS`."""
    give_up = time.monotonic() + ACCEPT_SECONDS
    waiting: dict[socket.socket, _Challenge] = {}
    listener.setblocking(False)
    with selectors.DefaultSelector() as selector:
        selector.register(listener, selectors.EVENT_READ)

        def drop(sock: socket.socket) -> None:
            selector.unregister(sock)
            waiting.pop(sock)
            sock.close()

        try:
            while (now := time.monotonic()) < give_up:
                for late in [sock for sock, challenge in waiting.items() if challenge.until <= now]:
                    drop(late)
                until = min([give_up, *(challenge.until for challenge in waiting.values())])
                for key, _ in selector.select(until - now):
                    sock = key.fileobj
                    if sock is listener:
                        greeted = _greet(listener, driver)
                        if greeted is not None:
                            if len(waiting) >= _WAITING:
                                drop(next(iter(waiting)))
                            challenge = waiting[greeted] = _Challenge(now + HANDSHAKE_SECONDS)
                            selector.register(greeted, selectors.EVENT_READ)
                            if not _sent(greeted, _HELLO + challenge.nonce):
                                drop(greeted)
                        continue
                    proof = waiting[sock].read(sock, secret)
                    if proof:
                        selector.unregister(sock)
                        del waiting[sock]
                        return sock, proof
                    if proof is not None:
                        drop(sock)
        finally:
            for sock in waiting:
                sock.close()
    return None


def _greet(listener: socket.socket, driver: int | None) -> socket.socket | None:
    """The next connection, unless another process than ``driver`` made it (then closed at once)."""
    try:
        sock, _ = listener.accept()
    except (BlockingIOError, InterruptedError):
        return None
    except OSError:  # (out of file descriptors, say: wait for some to be closed)
        time.sleep(0.05)
        return None
    pid = peer_pid(sock)
    if driver is not None and pid is not None and pid != driver:
        sock.close()
        return None
    sock.setblocking(False)
    return sock


def _sent(sock: socket.socket, data: bytes) -> bool:
    try:
        return sock.send(data) == len(data)  # (a fresh socket's buffer takes a greeting whole)
    except OSError:
        return False


def _answer_calls(line: socket.socket, handler: Callable[[bytes], bytes]) -> None:
    line.settimeout(None)  # (calls may be minutes apart: a free run's other hosts, a long snapshot)
    with line:
        while True:
            try:
                call = read_frame(line)
            except LineClosed:  # (the driver closed its end, or announced a frame over the cap)
                return
            try:
                answer = _REPLY + handler(call)
            except BaseException as err:  # the driver re-raises it, as Ray would an actor's
                answer = _RAISED + packed_error(err, traceback.format_exc())
            over = len(answer) > MAX_FRAME
            if over:  # the driver raises it and rebuilds this host (its partitions ran a lost call)
                too_long = f"a reply of {len(answer)} bytes is longer than a direct line's cap of {MAX_FRAME}"
                answer = _RAISED + packed_error(FrameTooLarge(too_long), "")
            try:
                write_frame(line, answer)
            except OSError:  # the driver closed its end meanwhile: nobody is waiting
                return
            if over:
                return


def packed_error(err: BaseException, where: str) -> bytes:
    """An exception as an answer carries it (msgpack): the full names of its class and of the classes
    it derives from, its arguments (None unless msgpack takes them as they are), its text and
    ``where`` (its traceback's text)."""
    names = [f"{kind.__module__}.{kind.__qualname__}" for kind in type(err).__mro__ if kind is not object]
    try:
        text = str(err)
    except Exception:  # (an exception whose __str__ fails still says what it was)
        text = "<its text could not be had>"
    args = list(err.args)
    if isinstance(err, OSError) and err.filename is not None:  # (args leave the file name out)
        args = [err.errno, err.strerror, err.filename]
    try:
        return msgpack.packb((names, args, text, where), use_bin_type=True)
    except (TypeError, ValueError, OverflowError):
        return msgpack.packb((names, None, text, where), use_bin_type=True)


def read_answer(sock: socket.socket) -> bytes:
    """The reply to the oldest call on the line not answered yet; what the call raised, raised here."""
    frame = read_frame(sock)
    if frame[:1] == _RAISED:
        raise_remote(frame[1:])
    return frame[1:]


def raise_remote(data: bytes) -> NoReturn:
    """Raise the exception an answer carried (:func:`packed_error`), made again by :func:`rebuilt`, its
    traceback in the actor as its cause."""
    try:
        names, args, text, where = msgpack.unpackb(data, use_list=False)
        err = rebuilt(list(names), args, str(text))
    except Exception as garbled:
        raise LineClosed(f"the actor's line carried an exception that does not decode: {garbled}") from None
    raise err from RemoteTraceback(str(where))


def rebuilt(names: list[str], args: tuple | None, text: str) -> BaseException:
    """The exception an actor raised, from its class's full names (its own first, then those it derives
    from): the class itself if :func:`allowed` has it (made from ``args``, else from ``text``); else a
    :class:`RemoteError` naming it, also an instance of the first class it derives from that
    :func:`allowed` has. No other class is looked up or imported."""
    kinds = allowed()
    for depth, name in enumerate(names):
        kind = kinds.get(name)
        if kind is None:
            continue
        if depth == 0:
            with contextlib.suppress(Exception):  # (arguments its class does not take)
                return kind(*args) if args is not None else kind(text)
        return _remote(kind)(names[0], text)
    return RemoteError(names[0] if names else "?", text)


@functools.cache
def allowed() -> dict[str, type[BaseException]]:
    """The exception classes an actor's exception is made again as, by full name: Python's own
    (``Exception``'s built-in subclasses but exception groups) and the emulator's."""
    from emulator.core.config import ScenarioError
    from emulator.core.preemption import PreemptionError
    from emulator.core.resources import OverAllocation
    from emulator.core.spec import PolicyError
    from emulator.policies.errors import DecisionError
    from emulator.sync.frontier import Stalled

    kinds = [
        kind
        for kind in vars(builtins).values()
        if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, BaseExceptionGroup)
    ]
    kinds += [Stalled, PreemptionError, DecisionError, OverAllocation, PolicyError, ScenarioError]
    kinds += [LineClosed, FrameTooLarge]
    return {f"{kind.__module__}.{kind.__qualname__}": kind for kind in kinds}


@functools.cache
def _remote(kind: type[BaseException]) -> type[RemoteError]:
    """:class:`RemoteError`, also a ``kind`` (where the two can be one class)."""
    if issubclass(RemoteError, kind):
        return RemoteError
    try:
        return type(f"Remote{kind.__name__}", (RemoteError, kind), {"__module__": __name__})
    except TypeError:  # (layouts that do not mix)
        return RemoteError


# -- the driver's end


def connect(path: str) -> socket.socket:
    """A socket connected to the line an actor serves at ``path`` (:func:`serve`), not the driver's end
    of it yet: :func:`handshake` makes it so (the actor serves nothing before). OSError if nothing
    serves it."""
    line = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        line.settimeout(HANDSHAKE_SECONDS)
        line.connect(path)
    except BaseException:
        line.close()
        raise
    return line


def handshake(line: socket.socket, secret: bytes, actor: int | None = None) -> socket.socket:
    """``line`` (:func:`connect`), once each end proved to the other that it knows ``secret``: the
    driver's end of the actor's line.

    :class:`LineRefused` (``line`` closed) if another process than ``actor`` serves the socket (where
    the system tells; checked before reading from it) or it does not prove it knows ``secret`` within
    :data:`HANDSHAKE_SECONDS`. Nothing read is decoded: the greeting and the proof are bytes of fixed
    lengths, compared.

    >>> line = handshake(connect(path), secret, actor)  # doctest: +SKIP
    """
    try:
        path = line.getpeername()
        pid = peer_pid(line)
        if actor is not None and pid is not None and pid != actor:
            raise LineRefused(f"the socket at {path} is served by process {pid}, not by the actor ({actor})")
        line.settimeout(HANDSHAKE_SECONDS)
        try:
            hello = _read_exact(line, len(_HELLO) + _NONCE)
            if not hello.startswith(_HELLO):
                raise LineRefused(f"the socket at {path} did not greet as an actor's line")
            actor_nonce, driver_nonce = hello[len(_HELLO) :], secrets.token_bytes(_NONCE)
            line.sendall(driver_nonce + _proof(secret, _DRIVER, actor_nonce, driver_nonce))
            proof = _read_exact(line, _MAC)
        except OSError as err:  # (LineClosed: end-of-file has no cause, a timeout's is an OSError)
            why = err.__cause__ or "it closed the connection" if isinstance(err, LineClosed) else err
            raise LineRefused(
                f"the socket at {path} did not prove it knows the run's secret ({why})"
            ) from None
        if not hmac.compare_digest(proof, _proof(secret, _ACTOR, actor_nonce, driver_nonce)):
            raise LineRefused(f"the socket at {path} did not prove it knows the run's secret (a wrong proof)")
        line.settimeout(None)
    except BaseException:
        line.close()
        raise
    return line


def remove_folder(path: str) -> None:
    """Remove the folder of the line's socket at ``path`` (if it is one :func:`serve` made): the driver
    does when it cannot use the line (the actor died first, a stranger's socket took its place)."""
    folder = os.path.dirname(path)
    if os.path.basename(folder).startswith(_FOLDER):
        shutil.rmtree(folder, ignore_errors=True)


_folders: set[str] = set()
_folders_lock = threading.Lock()


def _held(folder: str, held: bool = True) -> None:
    """Keep track of this process's folders still waiting for the driver: removed if it exits first."""
    with _folders_lock:
        if held:
            _folders.add(folder)
        else:
            _folders.discard(folder)


@atexit.register
def _remove_held() -> None:
    with _folders_lock:
        for folder in _folders:
            shutil.rmtree(folder, ignore_errors=True)
        _folders.clear()


__all__ = [
    "ACCEPT_SECONDS",
    "HANDSHAKE_SECONDS",
    "MAX_FRAME",
    "SECRET_BYTES",
    "FrameTooLarge",
    "LineClosed",
    "LineRefused",
    "RemoteError",
    "RemoteTraceback",
    "allowed",
    "connect",
    "handshake",
    "new_secret",
    "packed_error",
    "peer_pid",
    "raise_remote",
    "read_answer",
    "read_frame",
    "rebuilt",
    "remove_folder",
    "serve",
    "write_frame",
]
