"""A round's call to each actor: over its direct line (:mod:`actors.channel`) if it has one, else a
plain Ray call.

Actors on the driver's node get a line; on a multi-node cluster the others
keep Ray calls, so the driver may wait on both at once (:meth:`HostCalls.first`).
Either way a call to a dead actor raises one of :data:`GONE`, and the
transport recovers the actor the same way.
"""

from __future__ import annotations

import contextlib
import select
import socket

import ray
from ray.exceptions import RayActorError

from .channel import LineClosed, connect, read_answer, write_frame

GONE = (RayActorError, LineClosed)
"""What a call to a dead actor raises: Ray's error, or the end of its direct line."""

POLL_SECONDS = 0.0005
"""How long :meth:`HostCalls.first` waits on one kind of call before looking at the other (only
when some actors have lines and some do not)."""


class HostCalls:
    """The calls to each host (by index in ``hosts``, the transport's list, rebuilt hosts included).

    A call's token is its reply's ref for a Ray call and None on a line: a
    host answers its line's calls in the order they were sent.

    >>> calls = HostCalls(hosts, [connect(path), None])  # doctest: +SKIP
    >>> calls.answer(0, calls.send(0, packed))            # doctest: +SKIP
    b'...packed results...'
    """

    def __init__(self, hosts: list, lines: list[socket.socket | None]) -> None:
        self.hosts, self.lines = hosts, lines

    @classmethod
    def open(cls, hosts: list, direct: bool) -> HostCalls:
        """Lines to the hosts on this node if ``direct``; Ray calls to the others."""
        return cls(hosts, [line_to(host) if direct else None for host in hosts])

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
        # Ray call to a dead actor fails when its reply is asked for, not when it is sent.
        with contextlib.suppress(OSError):
            write_frame(line, data)
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
            self.lines[h] = line_to(host)

    def close(self) -> None:
        for line in self.lines:
            if line is not None:
                line.close()


def line_to(host) -> socket.socket | None:
    """A direct line to ``host`` if it runs on this node and its socket can be reached from here (a
    worker with a private temporary folder, say; its line then gives up waiting): else None."""
    path = ray.get(host.line.remote(ray.get_runtime_context().get_node_id()))
    if path is None:
        return None
    try:
        return connect(path)
    except OSError:
        return None


__all__ = ["GONE", "POLL_SECONDS", "HostCalls", "line_to"]
