"""The coordinator on toy partitions: per-partition horizons, delivery order, free runs, stalls, memory."""

from __future__ import annotations

import math
from contextlib import contextmanager
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator import load_scenario, run
from emulator.core.messages import Message
from emulator.engine.runner import build_partitions
from emulator.sync import coordinator
from emulator.sync.frontier import Frontier
from emulator.sync.horizons import Links
from emulator.sync.merge import RowMerger

from .test_properties import SETTINGS


class Echo:
    """One local event at each of ``times``, each sending a message to ``peer`` (None: sends nothing).

    Records what it receives and the horizon of every call; never reacts to a message.
    """

    def __init__(self, pid: int, peer: int | None, times: list[float], latency: float = 1.0) -> None:
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

    @property
    def promise(self) -> float:
        return math.inf if self.peer is None else self.next_time

    reacts = False

    def advance(self, horizon, inbox, budget=coordinator.EVENT_BUDGET):
        self.calls.append(horizon)
        for msg in inbox:
            assert msg.time >= self.now, "a message from the past"
            self.received.append((msg.time, msg.src, msg.seq))
        out, rows = [], []
        while self.times and self.times[0] < horizon and budget > 0:
            budget -= 1
            self.now = t = self.times.pop(0)
            rows.append((t, 0, self.pid, 0, 0, (), (), None))  # a trace row: its job, this partition
            if self.peer is not None:
                self.seq += 1
                out.append(Message(t + self.latency, self.pid, self.seq, self.peer, 0, ()))
        return out, self.next_time, rows, self.busy, self.promise, self.reacts


def star(*pairs: tuple[int, int], latency: float = 1.0) -> Links:
    return Links({pair: latency for pair in pairs})


def ignore(watermark, results) -> int:
    return 0


def test_messages_arrive_in_time_source_sequence_order():
    a = Echo(0, 2, [0.0, 0.0, 1.0])
    b = Echo(1, 2, [0.0, 1.0])
    sink = Echo(2, None, [])
    stats = coordinator.run(coordinator.InProcess([a, b, sink]), star((0, 2), (1, 2)), ignore)
    assert sink.received == [(1.0, 0, 1), (1.0, 0, 2), (1.0, 1, 1), (2.0, 0, 3), (2.0, 1, 2)]
    assert stats.messages == 5


def test_each_partition_runs_to_its_own_horizon():
    # a sends to b (latency 5) at 0 and 100; b's horizon is a's promise + 5. a has no in-link: it runs free.
    a = Echo(0, 1, [0.0, 100.0], latency=5.0)
    b = Echo(1, None, [1.0, 2.0, 3.0, 50.0, 200.0])
    coordinator.run(coordinator.InProcess([a, b]), star((0, 1), latency=5.0), ignore)
    assert a.calls == [math.inf]
    assert b.calls[0] == 5.0  # a's first event at 0, + 5: b runs 1, 2, 3 in one call
    assert b.received == [(5.0, 0, 1), (105.0, 0, 2)]
    assert b.calls[1:] == [math.inf]  # a has nothing left to send: b runs free to its end


def test_partitions_nothing_can_reach_run_free_in_budgeted_calls():
    parts = [Echo(pid, None, [float(t) for t in range(1000)]) for pid in range(3)]
    stats = coordinator.run(coordinator.InProcess(parts), Links({}), ignore, budget=900)
    assert [len(p.calls) for p in parts] == [4, 4, 4]  # a third of the budget each: 300 + 300 + 300 + 100
    assert all(h == math.inf for p in parts for h in p.calls)
    assert stats.rounds == 4


def test_a_reacting_partition_lowers_its_neighbours_horizon_through_it():
    class Relay(Echo):
        reacts = True

        @property
        def promise(self):
            return self.next_time

    # 0 -> 1 -> 2, latency 1 each. 1 reacts, so 2's horizon follows 0's promise through 1: 0 + 1 + 1.
    first, relay, last = Echo(0, 1, [0.0]), Relay(1, 2, []), Echo(2, None, [0.5, 1.5, 2.5])
    links = Links({(0, 1): 1.0, (1, 2): 1.0})
    coordinator.run(coordinator.InProcess([first, relay, last]), links, ignore)
    assert last.calls[0] == 2.0


def test_idle_partitions_are_not_called():
    a = Echo(0, 1, [0.0, 1000.0], latency=0.5)
    b = Echo(1, None, [])
    quiet = Echo(2, None, [])
    coordinator.run(coordinator.InProcess([a, b, quiet]), star((0, 1), (0, 2), latency=0.5), ignore)
    assert quiet.calls == []
    assert b.received == [(0.5, 0, 1), (1000.5, 0, 2)]


def test_a_round_that_cannot_advance_is_an_error_naming_the_partition_and_time():
    # At 1e17 a latency of 1 is below the float spacing: the horizon equals the time. No hang.
    a = Echo(0, 1, [1e17])
    b = Echo(1, 0, [1e17])
    with pytest.raises(coordinator.Stalled, match=r"cannot advance past 1e\+17 at partition 0"):
        coordinator.run(coordinator.InProcess([a, b]), star((0, 1), (1, 0)), ignore)


def test_a_sink_holding_too_many_rows_calls_only_the_laggards():
    fast = Echo(0, None, [float(t) for t in range(0, 100_000, 100)])  # 1,000 rows far into the future
    slow = Echo(1, None, [float(t) for t in range(1000)])
    held = []

    def sink(watermark, results) -> int:
        held.append(sum(len(r[2]) for r in results.values()))
        return 10**6 if len(held) == 1 else 0

    stats = coordinator.run(coordinator.InProcess([fast, slow]), Links({}), sink, budget=1000, held_rows=100)
    assert stats.throttled == 1
    # Two partitions share a round's 1,000 event times: round 2 calls only slow (earliest time 500),
    # alone, with the whole budget.
    assert len(fast.calls) == 2 and len(slow.calls) == 2
    assert slow.calls == [math.inf, math.inf]


def test_links_need_latency():
    with pytest.raises(ValueError, match="latency must be > 0"):
        Links({(0, 1): 0.0})


class Hosts(coordinator.InProcess):
    """Partitions in hosts that run free as Ray actors do (``submit``/``collect``): each runs its calls in
    order, with up to ``depth`` queued (``actors.transport.PIPELINE``); ``pick`` chooses which host
    answers next among those with calls out (default: the one whose oldest call went out first)."""

    def __init__(self, partitions: list, groups: list[list[int]], depth: int = 1, pick=None) -> None:
        super().__init__(partitions)
        self.groups, self.depth, self.pick = groups, depth, pick
        self.flying: list[list[tuple[int, dict, int]]] = [
            [] for _ in groups
        ]  # by host: (order, calls, budget)
        self.sent = 0

    def idle(self, queue: bool = True) -> set[int]:
        return {
            pid
            for h, group in enumerate(self.groups)
            if not self.flying[h] or (queue and len(self.flying[h]) < self.depth)
            for pid in group
        }

    def in_flight(self) -> bool:
        return any(self.flying)

    def submit(self, calls, budget) -> None:
        for h, group in enumerate(self.groups):
            mine = {pid: call for pid, call in calls.items() if pid in group}
            if mine:
                self.flying[h].append((self.sent, mine, budget))
                self.sent += 1

    def collect(self):
        out = [h for h, queue in enumerate(self.flying) if queue]
        h = self.pick(out) if self.pick else min(out, key=lambda h: self.flying[h][0][0])
        _, calls, budget = self.flying[h].pop(0)
        return self.advance(calls, budget)


def test_free_runs_advance_every_partition_to_the_same_virtual_time():
    # A dense partition (an event a second) and a sparse one (one every 50 s) in different hosts. Calls
    # bounded by events alone would send the sparse one 50x further in virtual time each call, and the
    # sink would hold its rows until the dense one caught up; windows keep them abreast.
    dense = Echo(0, None, [float(t) for t in range(4000)])
    sparse = Echo(1, None, [50.0 * t for t in range(4000)])
    held, written = [], []

    def sink(watermark, results) -> int:
        rows = [row for result in results.values() for row in result[2]]
        pending = [*held[-1:][0], *rows] if held else rows
        written.extend(row for row in pending if row[0] < watermark)
        held.append([row for row in pending if row[0] >= watermark])
        return len(held[-1])

    stats = coordinator.run(Hosts([dense, sparse], [[0], [1]]), Links({}), sink, budget=200)
    assert stats.throttled == 0
    assert len(written) + len(held[-1]) == 8000
    assert max(len(h) for h in held) <= 2 * 200 + 200  # two windows of ~200 rows, and a call's budget
    assert math.isinf(dense.calls[0]) and math.isinf(sparse.calls[0])  # event budgets measure the rate
    assert all(math.isfinite(h) for h in dense.calls[2:] + sparse.calls[2:])  # then windows


def test_a_window_spans_its_rows_at_the_rate_rows_came_and_queues_from_where_the_last_ends():
    inf = math.inf
    grid = Frontier(
        Links({}),
        {0: coordinator.State(10.0, True, inf, False), 1: coordinator.State(12.0, True, inf, False)},
    )
    windows = coordinator.Windows(rows=100, grid=grid)
    assert windows.ends(10.0, {0, 1}) == [(inf, {0, 1})]  # nothing known yet: event budgets
    windows.called([0, 1])
    assert not windows.known
    row = (0.0, 0, 0, 0, 0, (), (), None)
    windows.received({0: coordinator.Result([], 40.0, [row] * 30, True, inf, False)}, watermark=10.0)
    assert not windows.known  # the watermark has not moved (1 is still out)
    grid.next_time[:] = [40.0, 30.0]
    windows.received({1: coordinator.Result([], 30.0, [row] * 20, True, inf, False)}, watermark=35.0)
    assert windows.known  # 50 rows over 25 virtual seconds: 2 a second, 50 s a window
    assert windows.ends(30.0, {0, 1}) == [(80.0, {0, 1})]  # from 30, the earliest of the two
    windows.called([0, 1])
    assert windows.ends(30.0, {0, 1}) == [(130.0, {0, 1})]  # queued: from where the call out ends
    windows.called([0, 1])
    for end in (180.0, 230.0, 280.0, 330.0):  # coordinator.LEAD (6) windows past the watermark at most
        assert windows.ends(30.0, {0, 1}) == [(end, {0, 1})]
        windows.called([0, 1])
    assert windows.ends(30.0, {0, 1}) == []


EVENT_TIMES = st.floats(0, 1e4) | st.sampled_from([5e-324, 2.2e-311, 1e17, 1e17 + 16])
"""Event times, with spans that underflow a window's rate (subnormal) and times beyond float spacing."""


@SETTINGS
@given(
    st.lists(st.lists(EVENT_TIMES, max_size=60).map(sorted), min_size=1, max_size=4),
    st.integers(1, 2),
    st.integers(3, 40),
    st.randoms(use_true_random=False),
)
def test_free_runs_write_every_row_once_in_order_however_hosts_answer(times, depth, budget, rng):
    parts = [Echo(pid, None, ts) for pid, ts in enumerate(times)]
    groups = [[pid for pid in range(len(parts)) if pid % 2 == h] for h in range(2)]
    hosts = Hosts(parts, [g for g in groups if g], depth=depth, pick=rng.choice)
    merger, written = RowMerger(), []

    def sink(watermark, results) -> int:
        for pid, result in results.items():
            merger.add(pid, result[2])
        written.extend((row[0], row[2]) for row in merger.release(watermark)[0])
        return merger.held

    coordinator.run(hosts, Links({}), sink, budget=budget)
    assert written == sorted((t, pid) for pid, ts in enumerate(times) for t in ts)


class Overlapping(coordinator.InProcess):
    """The in-process transport split as Ray's is (``start``/``finish``), logging what the driver does
    between the two: the sink's writes belong there, while the hosts compute."""

    def __init__(self, partitions: list, log: list[str]) -> None:
        super().__init__(partitions)
        self.log = log

    def start(self, calls, budget) -> None:
        self.log.append("start")
        self.sent = (calls, budget)

    def finish(self):
        self.log.append("finish")
        return self.advance(*self.sent)


def test_rounds_write_the_last_rounds_rows_while_hosts_compute_the_next(tmp_path):
    scenario = load_scenario("quickstart", ["workload.jobs=150"])
    log: list[str] = []

    @contextmanager
    def overlapping(scenario):
        yield Overlapping(build_partitions(scenario), log)

    real_release = coordinator._Drive._release

    def release(self, watermark, results):
        log.append("sink")
        return real_release(self, watermark, results)

    with patch.object(coordinator._Drive, "_release", release):
        run(scenario, tmp_path / "overlapping", backend=overlapping)
    run(scenario, tmp_path / "plain")
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "overlapping" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    rounds = log.count("start")
    assert rounds > 100 and log.count("sink") == rounds
    # Every round's rows but the last are written between the next round's start and its finish.
    assert log == ["start", "finish", *["start", "sink", "finish"] * (rounds - 1), "sink"]
