"""The coordinator on toy partitions: per-partition horizons, delivery order, free runs, stalls, memory."""

from __future__ import annotations

import math
import tempfile
from contextlib import contextmanager
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator import load_scenario, run
from emulator.core.messages import Message
from emulator.data.scenario import parse
from emulator.engine.runner import build_partitions
from emulator.sync import coordinator, sequential
from emulator.sync.frontier import Frontier
from emulator.sync.horizons import Links
from emulator.sync.merge import RowMerger

from .test_properties import SETTINGS, grid_scenarios


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
    order, with up to ``depth`` queued (``actors.queued.PIPELINE``); ``pick`` chooses which host
    answers next among those with calls out (default: the one whose oldest call went out first)."""

    def __init__(
        self, partitions: list, groups: list[list[int]], depth: int = 1, pick=None, pipelined: bool = False
    ) -> None:
        super().__init__(partitions)
        self.groups, self.depth, self.pick, self.pipelined = groups, depth, pick, pipelined
        self.flying: list[list[tuple[int, dict, int]]] = [
            [] for _ in groups
        ]  # by host: (order, calls, budget)
        self.sent = 0
        self.deepest = 0  # the most calls a host has had out at once
        self.beside = 0  # calls to partition 0 (the meta partition) while other hosts had calls out

    def idle(self, queue: bool = True, rebalance: bool = False) -> set[int]:
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
                self.deepest = max(self.deepest, len(self.flying[h]))
        if 0 in calls and any(self.flying[h] for h, group in enumerate(self.groups) if 0 not in group):
            self.beside += 1

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


def test_a_call_out_counts_its_inbox_as_pending_until_answered():
    inf = math.inf
    links = Links({(0, 1): 10.0, (1, 0): 10.0})
    # The meta partition (0) sends at 0 at the earliest; the cluster (1) has nothing and reacts.
    grid = Frontier(
        links, {0: coordinator.State(0.0, True, 0.0, False), 1: coordinator.State(inf, False, inf, True)}
    )
    assert grid.horizons().tolist() == [20.0, 10.0]
    job = Message(12.0, 0, 1, 1, 0, None)
    grid.apply({0: coordinator.Result([job], 30.0, [], True, 30.0, False)})
    assert grid.horizons().tolist() == [22.0, 40.0]  # the cluster could answer the job at 12
    calls = grid.calls(grid.horizons(), {1})
    assert calls == {1: (40.0, [job])}
    grid.sent(calls)
    assert grid.head[1] == inf and grid.flying_head[1] == 12.0  # delivered, not yet read
    assert grid.earliest().tolist() == [30.0, 12.0] and grid.horizons().tolist() == [22.0, 40.0]
    later = Message(33.0, 0, 2, 1, 0, None)
    grid.sent({1: (50.0, [later])})  # a second call queued behind the first
    grid.apply({1: coordinator.Result([], 35.0, [], True, 35.0, False)})  # the first answers: no reacting
    # The second is out, its standing from before it: taken as reacting to what that call delivers.
    assert grid.flying[1] == 1 and grid.flying_head[1] == 33.0
    assert grid.horizons().tolist() == [43.0, 40.0]
    grid.apply({1: coordinator.Result([], inf, [], False, inf, False)})
    assert grid.flying[1] == 0 and grid.horizons().tolist() == [inf, 40.0]  # it never sends again


def pipelined_backend(groups_of, depth: int, pick):
    """A backend of :class:`Hosts` running pipelined rounds: ``groups_of(pids)`` groups the partitions."""

    @contextmanager
    def backend(scenario):
        parts = build_partitions(scenario)
        yield Hosts(parts, groups_of(sorted(p.pid for p in parts)), depth, pick, pipelined=True)

    return backend


PIPELINED_SCENARIOS = {
    "quickstart": ("quickstart", ["workload.jobs=120"]),
    "stress": ("stress", ["workload.jobs=150"]),  # outages, failures, link changes: a run's tail
    "round-robin": ("quickstart", ["workload.jobs=120", "meta.policy=round-robin", "seed=5"]),
}
_ROUNDS_TRACES: dict[str, tuple[bytes, bytes]] = {}


def rounds_trace(name: str, tmp_path) -> tuple[bytes, bytes]:
    """The trace of ``name`` in rounds, in one process (once per test session)."""
    if name not in _ROUNDS_TRACES:
        run(load_scenario(*PIPELINED_SCENARIOS[name]), tmp_path / "rounds")
        _ROUNDS_TRACES[name] = tuple(
            (tmp_path / "rounds" / f).read_bytes() for f in ("events.arrow", "jobs.arrow")
        )
    return _ROUNDS_TRACES[name]


@pytest.mark.parametrize("name", sorted(PIPELINED_SCENARIOS))
@settings(SETTINGS, max_examples=40)
@given(
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from([4, 30, coordinator.EVENT_BUDGET]),
    st.randoms(use_true_random=False),
)
def test_pipelined_rounds_write_the_trace_of_rounds_however_hosts_answer(
    name, tmp_path_factory, hosts, depth, budget, rng
):
    # Event budgets stop calls short of their windows' ends (4: a few events a call).
    tmp_path = tmp_path_factory.mktemp("pipelined")
    groups_of = lambda pids: [g for g in (pids[h::hosts] for h in range(hosts)) if g]  # noqa: E731
    with patch.object(coordinator, "EVENT_BUDGET", budget), patch.object(coordinator, "MIN_BUDGET", 1):
        run(
            load_scenario(*PIPELINED_SCENARIOS[name]),
            tmp_path / "piped",
            backend=pipelined_backend(groups_of, depth, rng.choice),
        )
    written = tuple((tmp_path / "piped" / f).read_bytes() for f in ("events.arrow", "jobs.arrow"))
    assert written == rounds_trace(name, tmp_path)


@settings(SETTINGS, max_examples=60)
@given(
    grid_scenarios(),
    st.sampled_from((None, 0.5, 3.0)),
    st.integers(1, 3),
    st.integers(1, 3),
    st.sampled_from([4, coordinator.EVENT_BUDGET]),
    st.randoms(use_true_random=False),
)
def test_pipelined_rounds_write_the_trace_of_rounds_on_random_grids(raw, period, hosts, depth, budget, rng):
    # Mixed latencies (0.5-2 s: a cluster's windows run up to 4 ahead), stale status reports, transfer
    # times, every local policy.
    if period is not None:
        raw = {**raw, "stress": {"status_period": period}}
    scenario = parse(raw, "generated.toml")
    groups_of = lambda pids: [g for g in (pids[h::hosts] for h in range(hosts)) if g]  # noqa: E731
    with tempfile.TemporaryDirectory() as tmp:
        run(scenario, Path(tmp) / "rounds")
        with patch.object(coordinator, "EVENT_BUDGET", budget), patch.object(coordinator, "MIN_BUDGET", 1):
            run(scenario, Path(tmp) / "piped", backend=pipelined_backend(groups_of, depth, rng.choice))
        for name in ("events.arrow", "jobs.arrow"):
            assert (Path(tmp) / "piped" / name).read_bytes() == (Path(tmp) / "rounds" / name).read_bytes()


def test_pipelined_rounds_queue_the_clusters_next_window_while_the_meta_partition_runs(tmp_path):
    # Each partition in a host of its own, which may queue 3 calls.
    scenario = load_scenario("quickstart", ["workload.jobs=200"])
    hosts: list[Hosts] = []

    @contextmanager
    def backend(scenario):
        parts = build_partitions(scenario)
        hosts.append(Hosts(parts, [[p.pid] for p in parts], depth=3, pipelined=True))
        yield hosts[0]

    stats = run(scenario, tmp_path / "piped", backend=backend).stats
    assert stats.barrier_free == stats.rounds > 0  # no round had a barrier
    # Windows span the least latency (0.5 s): the cluster behind a 2 s link is called up to 4
    # windows ahead, as many as its host may queue.
    assert hosts[0].deepest == 3
    assert hosts[0].beside > 100  # the meta partition's windows ran while clusters computed theirs


class Overlapping(coordinator.InProcess):
    """The in-process transport split as Ray's is (``start``/``finish``), logging what the driver does
    between the two: the sink's writes belong there, while the hosts compute."""

    computing = True  # (every round's calls go to the hosts: ``coordinator.Overlapping``)

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


def test_progress_shows_the_virtual_time_the_trace_has_reached_in_rounds_and_pipelined(tmp_path):
    # A pipelined run used to leave it where its last barrier round had (0 when there was none).
    scenario = load_scenario("quickstart", ["workload.jobs=200"])

    @contextmanager
    def in_rounds(scenario):
        yield sequential.InRounds(build_partitions(scenario))

    shown = {}
    backends = {
        "rounds": in_rounds,
        "pipelined": pipelined_backend(lambda pids: [pids], 2, lambda ready: ready[0]),
    }
    with patch.object(coordinator, "TICK_SECONDS", 0.0):
        for name, backend in backends.items():
            shown[name] = []
            run(
                scenario,
                tmp_path / name,
                lambda p, n=name: shown[n].append(p.stats.virtual_time),
                backend=backend,
            )
    for times in shown.values():
        assert times == sorted(times) and len(set(times)) > 100  # it moves on, never back
    # Both end at the same watermark, past the last job's submission (then only the ends are left).
    assert shown["rounds"][-1] == shown["pipelined"][-1] > max(job.submit for job in scenario.jobs)
