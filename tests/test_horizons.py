"""Per-partition horizons give the traces the global horizon gave: every row, in the same order.

The oracle is the coordinator as it was (one window ``[lbts, lbts + lookahead)``
for every partition each round), kept here in a dozen lines. Each scenario
runs under it and under today's coordinator (with several event budgets and a
tiny row limit, which throttles to the laggards); the trace files must be
byte-identical. Then the pieces: earliest output times, horizons, the tail's
end and the row merger, on hand-checked cases and random ones.
"""

from __future__ import annotations

import heapq
import json
import math
from array import array
from contextlib import contextmanager
from functools import partial
from unittest.mock import patch

import pytest
from hypothesis import given
from hypothesis import strategies as st

from emulator import load_scenario, run
from emulator.core.messages import STATUS
from emulator.data.scenario import parse
from emulator.engine import runner
from emulator.sync import coordinator, merge, sequential
from emulator.sync.horizons import Links, earliest_outputs, horizons, tail_end
from emulator.sync.merge import RowMerger
from emulator.sync.rows import RowBlock
from workloads import presets

from .conftest import SHARED, shared_path
from .test_determinism import mixed_grid
from .test_gridsim_reference import CASES, scenario_from_reference
from .test_properties import SETTINGS
from .test_ray import kth_slice

FILES = ("events.arrow", "jobs.arrow")


def global_horizon(transport, links, sink, stats=None, tick=None, tail=False, **_) -> coordinator.RunStats:
    """The old coordinator: every partition advances to ``lbts + lookahead`` each round."""
    lookahead = min(lat for into in links.into.values() for _, lat in into)
    states = transport.states()
    next_times = {pid: s.next_time for pid, s in states.items()}
    busy = {pid for pid, s in states.items() if s.busy}
    pending, carrying = [], 0
    while busy or carrying:
        lbts = min([*next_times.values(), *(m.time for m in pending[:1])])
        if lbts == math.inf:
            break
        horizon = lbts + lookahead
        calls = {pid: (horizon, []) for pid, t in next_times.items() if t < horizon}
        while pending and pending[0].time < horizon:
            msg = heapq.heappop(pending)
            carrying -= msg.kind != STATUS
            calls.setdefault(msg.dst, (horizon, []))[1].append(msg)
        results = transport.advance(calls, 1 << 62)
        for pid, result in results.items():
            next_times[pid] = result[1]
            (busy.add if result[3] else busy.discard)(pid)
            for msg in result[0]:
                heapq.heappush(pending, msg)
                carrying += msg.kind != STATUS
        sink(horizon, results)
    return stats if stats is not None else coordinator.RunStats()


@contextmanager
def in_rounds(scenario):
    """The in-process backend driven by the coordinator (``coordinator.run``), not the sequential
    executor."""
    yield sequential.InRounds(runner.build_partitions(scenario))


def traces(scenario, out, monkeypatch, driver=None) -> dict[str, bytes]:
    """The run's files: the sequential executor's, or (``driver``) those of ``driver`` in its place
    of ``coordinator.run``, on the in-process partitions."""
    with monkeypatch.context() as patch:
        if driver is None:
            run(scenario, out)
        else:
            patch.setattr(coordinator, "run", driver)
            run(scenario, out, backend=in_rounds)
    return {name: (out / name).read_bytes() for name in FILES}


def assert_same_as_global_horizon(scenario, tmp_path, monkeypatch) -> None:
    expected = traces(scenario, tmp_path / "global", monkeypatch, global_horizon)
    assert traces(scenario, tmp_path / "now", monkeypatch) == expected
    real = coordinator.run
    for budget, held in ((1, coordinator.HELD_ROWS), (7, 3)):
        chopped = partial(real, budget=budget, held_rows=held)
        assert traces(scenario, tmp_path / f"b{budget}", monkeypatch, chopped) == expected, (budget, held)


SMALL = ["workload.jobs=120"]


@pytest.mark.parametrize("name", [*presets.names(), "quickstart"])
def test_every_preset_keeps_its_trace(name, tmp_path, monkeypatch):
    assert_same_as_global_horizon(load_scenario(name, SMALL), tmp_path, monkeypatch)


@pytest.mark.parametrize(
    "overrides",
    [
        ["stress.status_period=0"],  # a report after every event
        ["stress.failures.mttf=20000", "stress.failures.mttr=5000"],  # many failures, a long tail
    ],
    ids=["reports-every-event", "frequent-failures"],
)
def test_stress_variants_keep_their_trace(overrides, tmp_path, monkeypatch):
    assert_same_as_global_horizon(load_scenario("stress", [*SMALL, *overrides]), tmp_path, monkeypatch)


def test_a_mixed_grid_keeps_its_trace(tmp_path, monkeypatch):
    assert_same_as_global_horizon(parse(mixed_grid(), "mixed"), tmp_path, monkeypatch)


@pytest.mark.skipif(not SHARED.exists(), reason="shared folder (GridSim references, traces) not found")
@pytest.mark.parametrize("case", CASES)
def test_gridsim_references_keep_their_trace(case, tmp_path, monkeypatch):
    folder = shared_path("gridsim-ref")
    ref = json.loads((folder / f"{case}.json").read_text())
    scenario = parse(scenario_from_reference(ref, folder), f"{case}.json")
    assert_same_as_global_horizon(scenario, tmp_path, monkeypatch)


@pytest.mark.skipif(not SHARED.exists(), reason="shared folder (traces) not found")
def test_kth_keeps_its_trace_in_a_few_calls(tmp_path, monkeypatch):
    scenario = parse(kth_slice(), "kth")
    assert_same_as_global_horizon(scenario, tmp_path, monkeypatch)
    stats = run(scenario, tmp_path / "stats").stats
    assert stats.rounds == 1  # 400 jobs, one cluster nothing can reach: one call


# -- the pieces ---------------------------------------------------------------------------------


def test_earliest_outputs_follow_links_into_reacting_partitions_only():
    # meta 0 <-> clusters 1, 2 (latency 2 and 5). Cluster 1 reacts, cluster 2 does not.
    links = Links({(0, 1): 2.0, (1, 0): 2.0, (0, 2): 5.0, (2, 0): 5.0})
    eot = earliest_outputs(links, {0: 10.0, 1: 30.0, 2: 1.0}, {0: True, 1: True, 2: False})
    assert eot == {0: 6.0, 1: 8.0, 2: 1.0}  # 0 from 2 (1 + 5), 1 from 0 (6 + 2); 2 keeps its own
    assert horizons(links, eot) == {0: 6.0, 1: 8.0, 2: 11.0}


def test_a_partition_nothing_can_reach_has_an_infinite_horizon():
    links = Links({(0, 1): 1.0})
    eot = earliest_outputs(links, {0: math.inf, 1: 3.0}, {0: True, 1: True})
    assert horizons(links, eot) == {0: math.inf, 1: math.inf}


def test_the_tail_ends_where_the_windows_ended():
    # Windows of 1 from the earliest time: [0, 1), [1.5, 2.5), [2.5, 3.5): the first past 3 ends at 3.5.
    assert tail_end([array("d", [0.0, 1.5]), array("d", [2.5, 3.0, 9.0])], 3.0, 1.0) == 3.5
    assert tail_end([array("d", [0.0])], -math.inf, 1.0) == -math.inf  # never any foreground work


rows_by_partition = st.dictionaries(
    st.integers(0, 4),
    st.lists(st.integers(0, 20), max_size=30).map(sorted),
    max_size=5,
)


def row(time: float, pid: int, sequence: int) -> tuple:
    """A trace row that says where it came from: job = its sequence, cluster = its partition; every
    second row lists machines and PEs (the ragged columns must follow their rows)."""
    listed = tuple(range(sequence % 3)) if sequence % 2 else ()
    return (
        time,
        sequence % 8,
        sequence,
        pid,
        len(listed),
        listed,
        listed[::-1],
        f"r{sequence}" if pid else None,
    )


def tuples(rows) -> list[tuple]:
    return rows.tuples() if isinstance(rows, RowBlock) else list(rows)


@SETTINGS
@given(
    rows_by_partition,
    st.lists(st.integers(0, 25), max_size=6).map(sorted),
    st.integers(1, 4),
    st.lists(st.booleans(), min_size=20, max_size=20),
    st.sampled_from([0, merge.SMALL]),
)
def test_the_merger_releases_rows_in_time_partition_sequence_order(by_pid, marks, chunks, columns, small):
    # Partitions hand over rows as tuples or as columns (``columns``, drawn for each piece), and a
    # release sorts tuples with Python's sort below SMALL rows, numpy's from there.
    merger, out, shapes = RowMerger(), [], iter(columns)
    for k in range(chunks):  # each partition's rows arrive in ``chunks`` pieces, releases in between
        for pid, times in by_pid.items():
            piece = times[k * len(times) // chunks : (k + 1) * len(times) // chunks]
            rows = [row(float(t), pid, i) for i, t in enumerate(piece, k * len(times) // chunks)]
            merger.add(pid, RowBlock.of(rows) if next(shapes) else rows)
        if k < len(marks):
            floor = min(
                [marks[k]] + [t for pid, ts in by_pid.items() for t in ts[(k + 1) * len(ts) // chunks :][:1]]
            )
            with patch.object(merge, "SMALL", small):
                released, pids = merger.release(float(floor))
            rows = tuples(released)
            assert all(r[0] < floor for r in rows) and list(pids) == [r[3] for r in rows]
            out += rows
    out += tuples(merger.release(math.inf)[0])
    keys = sorted((float(t), pid, i) for pid, ts in by_pid.items() for i, t in enumerate(ts))
    expected = [row(*key) for key in keys]
    assert out == expected and merger.held == 0
