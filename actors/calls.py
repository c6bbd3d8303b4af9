"""A round's call to each actor: over its direct line (:mod:`actors.channel`) if it has one, else a
plain Ray call.

Actors on the driver's node get a line; on a multi-node cluster the others
keep Ray calls, so the driver may wait on both at once (:meth:`HostCalls.first`).
Either way a call to a dead actor raises one of :data:`GONE`, and the
transport recovers the actor the same way. A line is opened with the run's
secret (:func:`actors.channel.new_secret`, one per :class:`HostCalls`), which
the driver hands each actor through Ray; an actor whose socket turns out not to
be its own (another process took its place) gets plain Ray calls, and the
driver says so on stderr.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import sys

import ray
from ray.exceptions import RayActorError

from .channel import (
    FrameTooLarge,
    LineClosed,
    LineRefused,
    connect,
    handshake,
    new_secret,
    read_answer,
    remove_folder,
    write_frame,
)

GONE = (RayActorError, LineClosed)
"""What a call to a dead actor raises: Ray's error, or the end of its direct line."""

POLL_SECONDS = 0.0005
"""How long :meth:`HostCalls.first` waits on one kind of call before looking at the other (only
when some actors have lines and some do not)."""


class HostCalls:
    """The calls to each host (by index in ``hosts``, the transport's list, rebuilt hosts included).

    A call's token is its reply's ref for a Ray call and None on a line: a
    host answers its line's calls in the order they were sent.

    >>> calls = HostCalls(hosts, [handshake(connect(path), secret, actor), None], secret)  # doctest: +SKIP
    >>> calls.answer(0, calls.send(0, packed))  # doctest: +SKIP
    b'...packed results...'
    """

    def __init__(self, hosts: list, lines: list[socket.socket | None], secret: bytes | None = None) -> None:
        self.hosts, self.lines = hosts, lines
        self.secret = secret or new_secret()  # (the lines to rebuilt hosts are opened with it too)

    @classmethod
    def open(cls, hosts: list, direct: bool) -> HostCalls:
        """Lines to the hosts on this node if ``direct`` (under a new secret); Ray calls to the others."""
        calls = cls(hosts, [None] * len(hosts))
        if direct:
            calls.lines = [line_to(host, calls.secret) for host in hosts]
        return calls

    @property
    def kind(self) -> str:
        """``direct`` (every host on a line), ``plain`` (Ray calls only) or ``direct+plain``."""
        lined = sum(line is not None for line in self.lines)
        return "plain" if not lined else "direct" if lined == len(self.lines) else "direct+plain"

    def send(self, h: int, data: bytes):
        line = self.lines[h]
        if line is None:
            return self.hosts[h].advance.remote(data)
        # A dead actor's end refuses the call: reading its answer then meets the end of the line, as a
        # Ray call to a dead actor fails when its reply is asked for, not when it is sent. A call over
        # the line's cap is sent nowhere, and is an error here.
        try:
            write_frame(line, data)
        except FrameTooLarge:
            raise
        except OSError:
            pass
        return None

    def answer(self, h: int, token) -> bytes:
        """Host ``h``'s answer to its call ``token`` (on a line: its oldest one not answered yet); what
        the call raised is raised here, as Ray raises an actor's exception."""
        line = self.lines[h]
        if line is None:
            return ray.get(token)
        return read_answer(line)

    def first(self, oldest: dict[int, object]) -> int:
        """The host, of those with a call out (``oldest``: the token of its oldest), answering first."""
        lines = {self.lines[h]: h for h in oldest if self.lines[h] is not None}
        refs = {token: h for h, token in oldest.items() if self.lines[h] is None}
        wait = None if not refs else POLL_SECONDS
        while True:
            if lines:
                ready, _, _ = select.select(list(lines), [], [], wait)
                if ready:
                    return lines[ready[0]]
            if refs:
                done, _ = ray.wait(list(refs), num_returns=1, timeout=None if not lines else POLL_SECONDS)
                if done:
                    return refs[done[0]]

    def replace(self, h: int, host) -> None:
        """Host ``h`` was rebuilt as ``host``: a line to it (if there were lines) replaces the dead one's."""
        old = self.lines[h]
        if old is not None:
            old.close()
            self.lines[h] = line_to(host, self.secret)

    def close(self) -> None:
        for line in self.lines:
            if line is not None:
                line.close()


def line_to(host, secret: bytes) -> socket.socket | None:
    """A direct line to ``host`` if it runs on this node and its socket is its own and can be reached
    from here; else None: plain Ray calls. Where the actor served a line the driver cannot use (the
    socket is another process's or gone: a worker with a private temporary folder, say, or the actor
    died) the driver removes its folder and says so on stderr."""
    served = ray.get(host.line.remote(ray.get_runtime_context().get_node_id(), secret, os.getpid()))
    if served is None:
        return None
    path, actor = served
    try:
        return handshake(connect(path), secret, actor)
    except (LineRefused, OSError) as err:
        remove_folder(path)
        with contextlib.suppress(OSError):
            print(
                f"gridemu: warning: no direct line to the Ray actor in process {actor}: {err}; "
                "its calls go through Ray",
                file=sys.stderr,
            )
        return None


__all__ = ["GONE", "POLL_SECONDS", "HostCalls", "line_to"]
