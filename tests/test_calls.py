"""A round's calls to hosts (actors/calls.py) over direct lines: answers, raised errors, the first
to answer, a dead host's line. Lines need no Ray instance; Ray calls are tested in test_ray.py."""

from __future__ import annotations

import os
import socket
import threading

import pytest

pytest.importorskip("ray")

from actors.calls import GONE, HostCalls
from actors.channel import FrameTooLarge, LineClosed, connect, handshake, new_secret, serve

SECRET = new_secret()


def lines(*handlers) -> HostCalls:
    ends = [
        handshake(connect(serve(handler, SECRET, os.getpid())), SECRET, os.getpid()) for handler in handlers
    ]
    return HostCalls([None] * len(handlers), ends, SECRET)


def test_a_host_answers_its_calls_in_order_and_what_it_raises_is_raised_here():
    def handler(call: bytes) -> bytes:
        if call == b"boom":
            raise ValueError("a partition failed at 12.5")
        return call.upper()

    calls = lines(handler)
    tokens = [calls.send(0, call) for call in (b"a", b"boom", b"b")]
    assert tokens == [None, None, None]  # (a line's answers come in the order of its calls)
    assert calls.answer(0, None) == b"A"
    with pytest.raises(ValueError, match=r"^a partition failed at 12\.5$"):
        calls.answer(0, None)
    assert calls.answer(0, None) == b"B"
    calls.close()


def test_first_is_the_host_whose_answer_has_arrived():
    go = threading.Event()

    def slow(call: bytes) -> bytes:
        go.wait(5)
        return b"slow"

    calls = lines(slow, lambda call: b"quick")
    calls.send(0, b"x")
    calls.send(1, b"x")
    assert calls.first({0: None, 1: None}) == 1
    assert calls.answer(1, None) == b"quick"
    go.set()
    assert calls.first({0: None}) == 0
    assert calls.answer(0, None) == b"slow"
    calls.close()


def test_a_dead_hosts_line_takes_calls_and_its_answer_is_line_closed():
    driver, actor = socket.socketpair()
    actor.close()  # the actor's process ended
    calls = HostCalls([None], [driver])
    for _ in range(3):  # a call to a dead host fails when its answer is asked for, as on Ray
        calls.send(0, b"x" * 100_000)
    with pytest.raises(GONE) as raised:
        calls.answer(0, None)
    assert isinstance(raised.value, LineClosed)
    calls.close()


@pytest.mark.parametrize(
    ("lined", "kind"), [((True, True), "direct"), ((False, False), "plain"), ((True, False), "direct+plain")]
)
def test_kind_says_which_hosts_have_lines(lined, kind):
    ends = [socket.socketpair() if on else None for on in lined]
    calls = HostCalls([None] * len(lined), [pair[0] if pair else None for pair in ends])
    assert calls.kind == kind
    calls.close()
    for pair in ends:
        if pair:
            pair[1].close()


def test_a_call_over_the_cap_is_an_error_and_sent_nowhere(monkeypatch):
    import actors.channel

    calls = lines(lambda call: call)
    monkeypatch.setattr(actors.channel, "MAX_FRAME", 1000)
    with pytest.raises(
        FrameTooLarge, match=r"^a frame of 1001 bytes is longer than a direct line's cap of 1000$"
    ):
        calls.send(0, b"x" * 1001)
    calls.send(0, b"y" * 999)  # (nothing of the refused call went out: the line is as it was)
    assert calls.answer(0, None) == b"y" * 999  # (its answer: a byte saying it is a reply, then 999)
    calls.close()


def test_a_reply_over_the_cap_is_gone_as_a_dead_host_and_the_actor_ends_the_line(monkeypatch):
    # Its partitions ran a call whose reply is lost: the transport rebuilds the host (calls.GONE), with
    # the reason as the cause of the recovery or of HostDied.
    import actors.channel

    calls = lines(lambda call: call * 2)
    monkeypatch.setattr(actors.channel, "MAX_FRAME", 1000)
    calls.send(0, b"z" * 600)
    with pytest.raises(GONE, match=r"^a reply of 1201 bytes is longer than a direct line's cap of 1000$"):
        calls.answer(0, None)
    calls.send(0, b"z")
    with pytest.raises(LineClosed, match="closed"):
        calls.answer(0, None)
    calls.close()
