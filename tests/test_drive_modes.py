"""Which drive modes the coordinator uses for a transport: those it declares whole, never guessed from
one attribute (``coordinator.Overlapping``, ``coordinator.Queueing``)."""

from __future__ import annotations

from emulator.sync import coordinator
from emulator.sync.horizons import Links

from .test_coordinator import Echo, Hosts, star


class WithStart(coordinator.InProcess):
    """An in-process transport that happens to have ``start`` and ``submit`` methods of its own (say,
    to open a log), and none of the rest of either mode: it must be driven in plain rounds."""

    def __init__(self, partitions: list) -> None:
        super().__init__(partitions)
        self.rounds = 0

    def start(self, calls, budget) -> None:
        raise AssertionError("not a round's start")

    def submit(self, calls, budget) -> None:
        raise AssertionError("not a queued call")

    def advance(self, calls, budget=coordinator.EVENT_BUDGET):
        self.rounds += 1
        return super().advance(calls, budget)


def test_a_transport_with_a_start_or_submit_method_alone_is_driven_in_plain_rounds():
    transport = WithStart([Echo(0, 1, [0.0, 2.0, 4.0]), Echo(1, None, [1.0, 3.0])])
    rows = []

    def sink(watermark, results) -> int:
        rows.extend(row[0] for result in results.values() for row in result[2])
        return 0

    stats = coordinator.run(transport, star((0, 1)), sink)
    assert not isinstance(transport, coordinator.Overlapping | coordinator.Queueing)
    assert stats.rounds == transport.rounds == 2 and stats.barrier_free == 0
    assert sorted(rows) == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_a_transport_with_every_queueing_member_runs_free():
    transport = Hosts([Echo(0, None, [0.0, 1.0]), Echo(1, None, [0.5])], [[0], [1]])
    stats = coordinator.run(transport, Links({}), lambda watermark, results: 0)
    assert isinstance(transport, coordinator.Queueing) and not isinstance(transport, coordinator.Overlapping)
    assert stats.barrier_free == stats.rounds == 2  # one call per host, no barrier
    assert not isinstance(coordinator.InProcess([]), coordinator.Queueing | coordinator.Overlapping)
