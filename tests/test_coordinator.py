"""The conservative barrier on toy partitions: windows, delivery order, idle partitions not called."""

from __future__ import annotations

import math

import pytest

from emulator import coordinator
from emulator.messages import Message


class Echo:
    """Sends ``count`` messages to ``peer``, one per local event at ``times``; records what it sees."""

    def __init__(self, pid: int, peer: int, times: list[float], latency: float) -> None:
        self.pid, self.peer, self.times, self.latency = pid, peer, list(times), latency
        self.seq = 0
        self.now = -math.inf
        self.received: list[tuple[float, int, int]] = []
        self.calls: list[float] = []

    @property
    def next_time(self) -> float:
        return self.times[0] if self.times else math.inf

    @property
    def busy(self) -> bool:
        return bool(self.times)

    def advance(self, horizon, inbox):
        self.calls.append(horizon)
        for msg in inbox:
            assert msg.time >= self.now, "a message from the past"
            self.received.append((msg.time, msg.src, msg.seq))
        out = []
        while self.times and self.times[0] < horizon:
            self.now = t = self.times.pop(0)
            self.seq += 1
            out.append(Message(t + self.latency, self.pid, self.seq, self.peer, 0, ()))
        if inbox:
            self.now = max(self.now, inbox[-1].time)
        return out, self.next_time, [], self.busy


def test_messages_arrive_in_time_source_sequence_order():
    a = Echo(0, 2, [0.0, 0.0, 1.0], latency=1.0)
    b = Echo(1, 2, [0.0, 1.0], latency=1.0)
    sink = Echo(2, 0, [], latency=1.0)
    stats = coordinator.run(coordinator.InProcess([a, b, sink]), 1.0, lambda h, r: None)
    assert sink.received == [(1.0, 0, 1), (1.0, 0, 2), (1.0, 1, 1), (2.0, 0, 3), (2.0, 1, 2)]
    assert stats.messages == 5


def test_idle_stretches_cost_no_rounds_and_idle_partitions_are_not_called():
    a = Echo(0, 1, [0.0, 1000.0], latency=0.5)
    b = Echo(1, 0, [], latency=0.5)
    quiet = Echo(2, 0, [], latency=0.5)
    stats = coordinator.run(coordinator.InProcess([a, b, quiet]), 0.5, lambda h, r: None)
    assert a.calls == [0.5, 1000.5]  # horizons: lbts + lookahead
    assert b.calls == [1.0, 1001.0]  # called only when a message is due
    assert quiet.calls == []
    assert stats.rounds == 4


def test_lookahead_must_be_positive():
    with pytest.raises(ValueError, match="lookahead must be > 0"):
        coordinator.run(coordinator.InProcess([]), 0.0, lambda h, r: None)
