"""The sequential executor writes the coordinator's trace: byte for byte, on every kind of scenario.

In one process the runner drives the partitions with :mod:`emulator.sync.sequential`
(no rounds); the coordinator's rounds stay for Ray and for :class:`InRounds`. Each
scenario here runs both ways and ``events.arrow`` and ``jobs.arrow`` must be
byte-identical: every preset, the quickstart under several meta policies, stress
scenarios (stale status reports, failures, outages, link changes: a run's tail),
the GridSim references, a KTH slice, and random grids (mixed latencies, stale
status, failures and outages, every local and meta policy). Then the executor
itself on toy partitions: delivery order, horizons, stalls, batches, counts.
"""

from __future__ import annotations

import copy
import json
import math
import tempfile
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator import load_scenario
from emulator.data.scenario import parse
from emulator.engine.runner import build_partitions, in_process, run
from emulator.policies import LOCAL, META
from emulator.sync import coordinator, sequential
from emulator.sync.horizons import Links
from emulator.sync.sequential import InRounds
from workloads import presets

from .conftest import SHARED, shared_path
from .test_coordinator import Echo, ignore, star
from .test_determinism import mixed_grid
from .test_failures import endless, failure_scenarios, outage_grid
from .test_gridsim_parallel import CASES as PARALLEL_CASES
from .test_gridsim_parallel import scenario_from_parallel_reference
from .test_gridsim_reference import CASES, scenario_from_reference
from .test_properties import SETTINGS, grid_scenarios
from .test_ray import kth_slice

FILES = ("events.arrow", "jobs.arrow")


@contextmanager
def in_rounds(scenario):
    """The in-process backend driven in the coordinator's rounds."""
    yield InRounds(build_partitions(scenario))


def trace(scenario, out: Path, backend=in_process) -> tuple[bytes, ...]:
    run(scenario, out, backend=backend)
    return tuple((out / name).read_bytes() for name in FILES)


def assert_same_as_rounds(scenario, tmp_path: Path) -> None:
    expected = trace(scenario, tmp_path / "rounds", in_rounds)
    assert trace(scenario, tmp_path / "sequential") == expected


SMALL = ["workload.jobs=120"]


@pytest.mark.parametrize("name", presets.names())
def test_every_preset(name, tmp_path):
    assert_same_as_rounds(load_scenario(name, SMALL), tmp_path)


@pytest.mark.parametrize("meta", ["least-load", "round-robin", "random", "most-power", "dll"])
def test_the_quickstart_under_several_meta_policies(meta, tmp_path):
    assert_same_as_rounds(load_scenario("quickstart", [*SMALL, f"meta.policy={meta}", "seed=3"]), tmp_path)


@pytest.mark.parametrize(
    "overrides",
    [
        [],  # stale status reports, failures, outages, link changes
        ["stress.status_period=0"],  # a report after every event
        ["stress.failures.mttf=20000", "stress.failures.mttr=5000"],  # many failures, a long tail
    ],
    ids=["as-shipped", "reports-every-event", "frequent-failures"],
)
def test_stress_scenarios(overrides, tmp_path):
    assert_same_as_rounds(load_scenario("stress", [*SMALL, *overrides]), tmp_path)


@pytest.mark.parametrize(
    "raw",
    [mixed_grid(), endless("easy"), outage_grid("return"), outage_grid("wait")],
    ids=["mixed-grid", "endless-failures", "outage-return", "outage-wait"],
)
def test_grids_with_failures_outages_and_transfers(raw, tmp_path):
    assert_same_as_rounds(parse(copy.deepcopy(raw), "grid"), tmp_path)


@pytest.mark.skipif(not SHARED.exists(), reason="shared folder (GridSim references, traces) not found")
@pytest.mark.parametrize("case", CASES)
def test_gridsim_references(case, tmp_path):
    folder = shared_path("gridsim-ref")
    ref = json.loads((folder / f"{case}.json").read_text())
    assert_same_as_rounds(parse(scenario_from_reference(ref, folder), f"{case}.json"), tmp_path)


@pytest.mark.skipif(not SHARED.exists(), reason="shared folder (GridSim references, traces) not found")
def test_a_gridsim_parallel_reference(tmp_path):
    folder = shared_path("gridsim-ref", "parallel")
    case = PARALLEL_CASES[0]
    ref = json.loads((folder / f"{case}.json").read_text())
    assert_same_as_rounds(parse(scenario_from_parallel_reference(ref, folder), f"{case}.json"), tmp_path)


@pytest.mark.skipif(not SHARED.exists(), reason="shared folder (traces) not found")
def test_a_kth_slice(tmp_path):
    assert_same_as_rounds(parse(kth_slice(), "kth"), tmp_path)


# -- random grids -----------------------------------------------------------------------------------

GRIDSIM_PARALLEL = {"gridsim-easy", "gridsim-conservative"}
"""Local policies that know no software licenses (a cluster with some is refused)."""


@st.composite
def random_grids(draw) -> dict:
    """``test_properties``'s random grids with every local policy, or ``test_failures``' with failures and
    outages; every meta policy; stale status reports and a link change now and then."""
    if draw(st.booleans()):
        raw = draw(failure_scenarios())
    else:
        raw = draw(grid_scenarios(policies=tuple(LOCAL.names())))
    raw["meta"] = {"policy": draw(st.sampled_from(META.names()))}
    gridlets = raw["workload"]["gridlets"]
    if raw["meta"]["policy"] == "own-site" and not any(g["site"] for g in gridlets):
        gridlets[0]["site"] = raw["clusters"][0]["name"]  # (one job at least names its cluster)
    for cluster in raw["clusters"]:
        if cluster["policy"] in GRIDSIM_PARALLEL:
            cluster["licenses"] = {}
            for machine in cluster["machines"]:
                machine.pop("licenses", None)
    stress = raw.setdefault("stress", {})
    stress["status_period"] = draw(st.sampled_from((0.0, 0.5, 3.0)))
    if draw(st.booleans()):
        name = draw(st.sampled_from([c["name"] for c in raw["clusters"]]))
        change = {"cluster": name, "time": draw(st.sampled_from((1.0, 6.0))), "latency": 0.25}
        stress["links"] = [change]
    return raw


@settings(SETTINGS, max_examples=150)
@given(random_grids())
def test_random_grids(raw):
    scenario = parse(raw, "generated.toml")
    with tempfile.TemporaryDirectory() as tmp:
        assert_same_as_rounds(scenario, Path(tmp))


# -- the executor on toy partitions -----------------------------------------------------------------


def test_the_runner_drives_one_process_sequentially_and_anything_else_in_rounds():
    parts = build_partitions(load_scenario("quickstart", SMALL))
    assert sequential.driver(coordinator.InProcess(parts)) is sequential.run
    assert sequential.driver(InRounds(parts)) is coordinator.run


def test_messages_arrive_in_time_source_sequence_order():
    a, b, sink = Echo(0, 2, [0.0, 0.0, 1.0]), Echo(1, 2, [0.0, 1.0]), Echo(2, None, [])
    with pytest.raises(ValueError, match="star around 0"):  # 1 -> 2 does not touch the hub
        sequential.run(coordinator.InProcess([a, b, sink]), star((0, 2), (1, 2)), ignore)
    hub, c1, c2 = Echo(0, 2, [0.0, 0.0, 1.0]), Echo(1, 0, [0.0, 1.0]), Echo(2, 0, [0.5])
    stats = sequential.run(coordinator.InProcess([hub, c1, c2]), star((0, 2), (1, 0), (2, 0)), ignore)
    assert hub.received == [(1.0, 1, 1), (1.5, 2, 1), (2.0, 1, 2)]
    assert c2.received == [(1.0, 0, 1), (1.0, 0, 2), (2.0, 0, 3)]
    assert stats.messages == 6 and stats.rounds == stats.calls


def test_each_partition_runs_to_its_horizon_and_no_message_comes_from_its_past():
    # Latency 5 both ways. The cluster's horizon is the hub's promise + 5; the hub's, the cluster's
    # next event + 5 (neither reacts). The hub, which does not react, is called once the cluster waits
    # for it. Echo asserts that no message comes from its past.
    hub = Echo(0, 1, [0.0, 100.0], latency=5.0)
    cluster = Echo(1, 0, [1.0, 2.0, 3.0, 50.0, 200.0], latency=5.0)
    sequential.run(coordinator.InProcess([hub, cluster]), star((0, 1), (1, 0), latency=5.0), ignore)
    assert cluster.calls == [5.0, 105.0, math.inf]  # 1, 2, 3; 50 (the hub's first message); 200
    assert hub.calls == [55.0, 205.0, math.inf]  # 0 (and the reports before 55); 100; the last report
    assert cluster.received == [(5.0, 0, 1), (105.0, 0, 2)]


def test_a_reacting_hub_lowers_its_clusters_horizons():
    class Reacting(Echo):
        reacts = True

        @property
        def promise(self):
            return self.next_time

    # The cluster reports at 0 (latency 1); the hub reacts: it could answer at 1, so the cluster may not
    # pass 2 (as in the coordinator's rounds), though the hub's own next event is at 10.
    horizons = []
    for drive in (sequential.run, coordinator.run):
        hub, cluster = Reacting(0, 1, [10.0]), Echo(1, 0, [0.0, 1.5, 2.5])
        drive(coordinator.InProcess([hub, cluster]), star((0, 1), (1, 0)), ignore)
        horizons.append(cluster.calls[0])
    assert horizons == [2.0, 2.0]


def test_a_partition_that_cannot_advance_is_an_error_naming_it_and_the_time():
    a, b = Echo(0, 1, [1e17]), Echo(1, 0, [1e17])  # a latency of 1 is below the float spacing
    with pytest.raises(coordinator.Stalled, match=r"cannot advance past 1e\+17 at partition 0"):
        sequential.run(coordinator.InProcess([a, b]), star((0, 1), (1, 0)), ignore)


def test_rows_reach_the_sink_in_batches_below_a_watermark_and_clusters_share_the_budget(monkeypatch):
    monkeypatch.setattr(sequential, "BATCH_ROWS", 100)
    parts = [Echo(pid, None, [float(t) for t in range(1000)]) for pid in range(3)]
    calls = []

    def sink(watermark, results) -> int:
        rows = [row for result in results.values() for row in result[2]]
        calls.append((watermark, len(rows)))
        assert all(row[0] >= last for last, _ in calls[:-1] for row in rows)  # none below a watermark
        return 0

    stats = sequential.run(coordinator.InProcess(parts), Links({}), sink, budget=900)
    # the clusters' calls take 300 event times, a third of the budget; the hub's, all of it
    assert [len(p.calls) for p in parts] == [2, 4, 4]
    assert sum(n for _, n in calls) == 3000 and len(calls) == 11  # a batch every 100 rows or more, a last
    assert stats.rounds == stats.calls == 10 and set(stats.partition_seconds) == {0, 1, 2}


def test_a_tail_ends_where_the_coordinators_does(tmp_path):
    scenario = parse(endless("fcfs"), "endless")
    ends = []
    for backend in (in_rounds, in_process):
        ends.append(run(scenario, tmp_path / backend.__name__, backend=backend).stats.end_time)
    assert ends[0] == ends[1] < math.inf


def test_a_stopped_run_hands_the_sink_what_it_gathered_unless_the_sink_itself_stopped(monkeypatch):
    class Failing(Echo):
        def advance(self, horizon, inbox, budget=coordinator.EVENT_BUDGET):
            if len(self.calls) == 2:
                raise RuntimeError("policy bug")
            return super().advance(horizon, inbox, budget)

    calls = []
    parts = [Echo(0, None, []), Failing(1, None, [float(t) for t in range(100)])]
    with pytest.raises(RuntimeError, match="policy bug"):
        sequential.run(coordinator.InProcess(parts), Links({}), lambda w, r: calls.append((w, r)), budget=20)
    assert [(w, len(r[1][2])) for w, r in calls] == [(20.0, 40)]  # two calls' rows; those below 20 final

    def stopping(watermark, results):
        calls.append(watermark)
        raise KeyboardInterrupt

    calls.clear()
    monkeypatch.setattr(sequential, "BATCH_ROWS", 10)
    parts = [Echo(0, None, []), Echo(1, None, [float(t) for t in range(100)])]
    with pytest.raises(KeyboardInterrupt):
        sequential.run(coordinator.InProcess(parts), Links({}), stopping, budget=20)
    assert calls == [0.0]  # not called again: its state is half-changed
