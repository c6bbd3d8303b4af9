"""The Ray backend: byte-identical traces whatever the grouping, recovery from a dead actor, loopback only.

One Ray instance serves every test here (starting one costs seconds).
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import actors.placement as placement  # noqa: E402
from actors import HostDied, RayTransport, group_partitions, ray_backend, static_weights  # noqa: E402
from actors.fleet import for_hosts  # noqa: E402
from actors.session import init_local  # noqa: E402
from actors.transport import PIPELINE_FROM, PIPELINE_FROM_PLAIN  # noqa: E402
from emulator import load_scenario, run  # noqa: E402
from emulator.data.scenario import parse  # noqa: E402
from emulator.engine.runner import build_partitions  # noqa: E402
from emulator.sync import coordinator  # noqa: E402

from .conftest import shared_path  # noqa: E402


@pytest.fixture(scope="module")
def ray_instance():
    temp = tempfile.mkdtemp(prefix="gr-")  # session files go here, not under /tmp/ray
    init_local(2, _temp_dir=temp)
    yield ray
    ray.shutdown()
    shutil.rmtree(temp, ignore_errors=True)


def same_files(a, b) -> bool:
    return all((a / name).read_bytes() == (b / name).read_bytes() for name in ("events.arrow", "jobs.arrow"))


def many_clusters(count: int = 16, jobs: int = 150) -> dict:
    clusters = [
        {
            "name": f"c{i}",
            "latency": 0.5 + i % 3,
            "bandwidth": 1e6,
            "policy": ("easy", "fcfs")[i % 2],
            "licenses": {"lic": 1 + i % 2},
            "machines": [{"count": 2, "cpus": 1 + i % 4, "mips": 100.0 * (1 + i % 3)}],
        }
        for i in range(count)
    ]
    workload = {
        "source": "synthetic",
        "jobs": jobs,
        "mean_interarrival": 2.0,
        "cpus": [1, 4],
        "license_share": 0.3,
        "in_bytes": [0.0, 1e6],
        "deadline_share": 0.5,
    }
    return {
        "name": "sixteen",
        "seed": 3,
        "meta": {"policy": "random"},
        "clusters": clusters,
        "workload": workload,
    }


def kth_slice() -> dict:
    trace = shared_path("traces", "KTH-SP2-1996-2.1-cln.swf.gz")
    return {
        "name": "kth-slice",
        "local": {"policy": "easy"},
        "clusters": [{"name": "kth", "machines": [{"count": 100, "cpus": 1, "mips": 1.0}]}],
        "workload": {"source": "swf", "path": str(trace), "rules": "pwa", "limit": 400, "site": "kth"},
    }


@pytest.mark.parametrize(
    ("hosts", "calls"),
    [(1, "compiled"), (2, "compiled"), (3, "compiled"), (2, "plain"), (1, "direct"), (3, "direct")],
)
def test_quickstart_is_byte_identical_on_ray_whatever_the_grouping_and_calls(
    ray_instance, tmp_path, hosts, calls
):
    scenario = load_scenario("quickstart", ["workload.jobs=150"])
    run(scenario, tmp_path / "inproc")
    backend = ray_backend(
        hosts=hosts, checkpoint_every=0, compiled=calls == "compiled", direct=calls == "direct"
    )
    run(scenario, tmp_path / "ray", backend=backend)
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


@pytest.mark.parametrize("build", [many_clusters, kth_slice], ids=["16-clusters", "kth-slice"])
def test_larger_scenarios_are_byte_identical_on_ray(ray_instance, tmp_path, build):
    scenario = parse(build(), "test")
    run(scenario, tmp_path / "inproc")
    run(scenario, tmp_path / "ray", backend=ray_backend(hosts=2))
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_preemptive_cs2_runs_are_byte_identical_on_ray_and_report_their_scheduler_cost(
    ray_instance, tmp_path
):
    # Two CS 2.0 clusters (preemptions of every kind), every partition in its own actor.
    raw = many_clusters(count=2, jobs=120)
    for cluster in raw["clusters"]:
        cluster["policy"] = "cs2[preempt=stop]" if cluster["name"] == "c1" else "cs2"
        cluster["machines"] = [{"count": 3, "cpus": 4, "mips": 100.0}]
    scenario = parse(raw, "test")
    inproc = run(scenario, tmp_path / "inproc")
    on_ray = run(scenario, tmp_path / "ray", backend=ray_backend(hosts=3, checkpoint_every=0))
    assert inproc.summary["grid"]["preemptions"] > 0
    assert same_files(tmp_path / "inproc", tmp_path / "ray")
    calls = {name: c["calls"] for name, c in on_ray.summary["scheduler"]["clusters"].items()}
    assert calls == {name: c["calls"] for name, c in inproc.summary["scheduler"]["clusters"].items()}
    assert all(n > 0 for n in calls.values())


def test_stale_views_and_changing_links_are_byte_identical_on_ray(ray_instance, tmp_path):
    # Reports every 20 s; c0's link degrades then recovers, c2's latency drops below every other.
    raw = many_clusters(count=4, jobs=100)
    raw["meta"] = {"policy": "mcrs"}
    raw["stress"] = {
        "status_period": 20.0,
        "links": [
            {"cluster": "c0", "time": 30.0, "bandwidth": 2e4, "latency": 4.0},
            {"cluster": "c2", "time": 60.0, "latency": 0.25},
            {"cluster": "c0", "time": 150.0, "bandwidth": 1e6},
        ],
    }
    scenario = parse(raw, "test")
    inproc = run(scenario, tmp_path / "inproc")
    run(scenario, tmp_path / "ray", backend=ray_backend(hosts=2))
    assert inproc.summary["run"]["events"] > 0
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_failures_outages_and_kills_are_byte_identical_on_ray(ray_instance, tmp_path):
    # Machines failing every ~300 s, one cluster down and sending its queue back, kills at estimates.
    raw = many_clusters(count=3, jobs=100)
    raw["stress"] = {
        "kill_at_estimate": True,
        "max_kills": 2,
        "failures": {"model": "weibull", "mttf": 300.0, "mttr": 40.0},
        "outages": [{"cluster": "c1", "start": 40.0, "end": 120.0, "queued": "return"}],
    }
    scenario = parse(raw, "test")
    inproc = run(scenario, tmp_path / "inproc")
    run(scenario, tmp_path / "ray", backend=ray_backend(hosts=2))
    grid = inproc.summary["grid"]
    assert grid["jobs_killed"] > 0 and grid["jobs_returned"] > 0
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def direct_sites(count: int = 3, jobs: int = 300, failures: bool = False) -> dict:
    """``count`` clusters whose jobs all name their site: nothing can reach any cluster (free runs)."""
    raw = many_clusters(count=count, jobs=jobs)
    raw["workload"] = {
        "source": "gridlets",
        "gridlets": [
            {"id": i, "length": 100.0 * (1 + i % 7), "cpus": 1, "submit": float(i), "site": f"c{i % count}"}
            for i in range(jobs)
        ],
    }
    if failures:  # background events that go on after the last job: the trace ends where it always did
        raw["stress"] = {"failures": {"model": "exponential", "mttf": 400.0, "mttr": 30.0}}
    return raw


@pytest.mark.parametrize("failures", [False, True], ids=["plain", "with-failures"])
def test_clusters_nothing_can_reach_run_free_on_ray_with_the_same_trace(ray_instance, tmp_path, failures):
    scenario = parse(direct_sites(failures=failures), "test")
    inproc = run(scenario, tmp_path / "inproc")
    on_ray = run(scenario, tmp_path / "ray", backend=ray_backend(hosts=2, checkpoint_every=0))
    assert same_files(tmp_path / "inproc", tmp_path / "ray")
    assert inproc.summary["jobs"]["finished"] == 300
    assert on_ray.stats.messages == 0 and on_ray.stats.barrier_seconds == 0.0  # no barrier: none measured
    assert on_ray.stats.rounds <= 4  # one free call per host, and the tail's few rounds


class Killing(RayTransport):
    """Kills the actor hosting partition 1 after ``kill_at`` rounds (what an OOM kill would do).

    With ``after_migration``, the rounds count from the first migration (0: never kills).
    """

    kill_at = 0
    after_migration = False
    rounds_seen = 0
    killed = False

    def finish(self):
        return self._seen(super().finish())

    def collect(self):
        return self._seen(super().collect())

    def _seen(self, results):
        """A round's or a call's results: their loads weighed, the kill made when due."""
        if self.balance.every:  # a load no timing noise can hide: cluster i weighs i, the meta nothing
            for pid in results:
                self.balance.window[pid] += 0.01 * pid
        if self.migrations or not self.after_migration:
            self.rounds_seen += 1
        self._maybe_kill()
        return results

    def _maybe_kill(self) -> None:
        if self.rounds_seen == self.kill_at and not self.killed:
            ray.kill(self.fleet.hosts[self.fleet.owner[1]], no_restart=True)
            self.killed = True


@dataclass
class KillingBackend:
    """Opens a ``Killing`` transport and keeps it for assertions; ``groups`` default to ray_backend's."""

    kill_at: int
    checkpoint_every: int
    compiled: bool = True
    groups: list[list[int]] | None = None
    rebalance_every: int = 0
    after_migration: bool = False
    in_driver: tuple[int, ...] = ()  # partitions the driver runs (ray_backend's: the meta partition)
    direct: bool = True
    pipeline_from: float | None = math.inf  # (0: pipelined rounds from the start; None: by the calls)
    kind: type = Killing
    transport: Killing | None = None
    graph: object = None  # the compiled graph the transport started with

    @contextmanager
    def __call__(self, scenario):
        weights = static_weights(scenario)
        pids = [pid for pid in range(len(weights)) if pid not in self.in_driver]
        groups = self.groups or group_partitions(weights, 2, pids)
        transport = self.kind(
            scenario,
            groups,
            self.checkpoint_every,
            compiled=self.compiled,
            rebalance_every=self.rebalance_every,
            rebalance_gain=0.0,  # any measured gain moves partitions: as many migrations as can be
            rebalance_floor=0.0,
            in_driver=self.in_driver,
            direct=self.direct,
            pipeline_from=self.pipeline_from,
        )
        assert transport.compiled == self.compiled, transport.plain_reason
        assert transport.calls == ("compiled" if self.compiled else "direct" if self.direct else "plain")
        transport.kill_at, transport.after_migration = self.kill_at, self.after_migration
        self.transport, self.graph = transport, transport.fleet.graph
        try:
            yield transport
        finally:
            transport.close()


@pytest.mark.parametrize(
    ("calls", "in_driver", "pipeline_from"),
    [
        ("compiled", (), math.inf),
        ("plain", (), math.inf),
        ("direct", (), math.inf),
        ("direct", (0,), math.inf),
        ("direct", (0,), 0.0),
        ("plain", (0,), 0.0),
    ],
    ids=["compiled-graph", "plain-calls", "direct-lines", "meta-in-driver", "pipelined", "pipelined-plain"],
)
def test_a_dead_actor_is_recovered_from_its_checkpoint_and_the_trace_is_unchanged(
    ray_instance, tmp_path, calls, in_driver, pipeline_from
):
    scenario = load_scenario("quickstart", ["workload.jobs=200"])
    run(scenario, tmp_path / "inproc")
    backend = KillingBackend(
        kill_at=130,
        checkpoint_every=50,
        compiled=calls == "compiled",
        direct=calls == "direct",
        in_driver=in_driver,
        pipeline_from=pipeline_from,
    )
    run(scenario, tmp_path / "ray", backend=backend)
    assert backend.transport.killed
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


@pytest.mark.parametrize(
    ("direct", "in_driver"),
    [(True, ()), (True, (0,)), (False, (0,))],
    ids=["meta-in-actor", "meta-in-driver", "plain-calls"],
)
def test_a_dead_actor_running_free_is_recovered_and_the_trace_is_unchanged(
    ray_instance, tmp_path, direct, in_driver
):
    scenario = parse(direct_sites(count=4, jobs=2000), "test")
    run(scenario, tmp_path / "inproc")
    backend = KillingBackend(kill_at=1, checkpoint_every=1, direct=direct, in_driver=in_driver)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("emulator.sync.coordinator.EVENT_BUDGET", 50)  # many calls per host: kills land mid-run
        run(scenario, tmp_path / "ray", backend=backend)
    assert backend.transport.killed
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_a_dead_actor_without_checkpoints_stops_the_run_naming_partitions_and_time(ray_instance, tmp_path):
    scenario = load_scenario("quickstart", ["workload.jobs=200"])
    with pytest.raises(HostDied, match=r"partition\(s\) \[1\] died .* virtual time [0-9.]+"):
        run(scenario, tmp_path / "ray", backend=KillingBackend(kill_at=30, checkpoint_every=0))
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == [
        ".running",
        "events.arrow.part",
        "scenario.toml",
    ]


# Every cluster on one host, the meta partition alone on the other: measured loads call for moves.
LOPSIDED = [[0], [1, 2, 3]]


def migrating_run(tmp_path, **options) -> KillingBackend:
    """Three uneven clusters run in-process and on Ray from LOPSIDED groups, checked every 5 rounds
    (``options``: the rest of the backend's); the traces must be byte-identical."""
    scenario = parse(many_clusters(count=3, jobs=60), "test")  # clusters of 2, 4 and 6 CPUs, easy or fcfs
    run(scenario, tmp_path / "inproc")
    options = {"groups": LOPSIDED} | options
    backend = KillingBackend(checkpoint_every=50, rebalance_every=5, **options)
    run(scenario, tmp_path / "ray", backend=backend)
    assert same_files(tmp_path / "inproc", tmp_path / "ray")
    return backend


def test_rebalancing_migrates_partitions_and_the_trace_is_unchanged(ray_instance, tmp_path):
    backend = migrating_run(tmp_path, kill_at=0)
    assert backend.transport.migrations > 0
    # The graph calls hosts by index: migrations need no recompiling.
    assert backend.transport.fleet.graph is backend.graph


@pytest.mark.parametrize(
    ("calls", "threshold"),
    [("direct", PIPELINE_FROM), ("plain", PIPELINE_FROM_PLAIN), ("compiled", math.inf)],
)
def test_rounds_are_pipelined_from_a_compute_that_pays_for_the_calls(
    ray_instance, tmp_path, calls, threshold
):
    scenario = load_scenario("quickstart", ["workload.jobs=20"])
    backend = KillingBackend(0, 0, compiled=calls == "compiled", direct=calls == "direct", pipeline_from=None)
    run(scenario, tmp_path / "ray", backend=backend)
    assert backend.transport.pipeline_from == threshold


@pytest.mark.parametrize(("pipeline_from", "rounds"), [(1e-12, 1), (1.0, None)], ids=["turns", "stays"])
def test_rounds_turn_pipelined_once_a_rounds_compute_reaches_pipeline_from(
    ray_instance, tmp_path, pipeline_from, rounds
):
    scenario = load_scenario("quickstart", ["workload.jobs=100"])
    run(scenario, tmp_path / "inproc")
    backend = KillingBackend(0, 0, compiled=False, in_driver=(0,), pipeline_from=pipeline_from)
    run(scenario, tmp_path / "ray", backend=backend)
    transport = backend.transport
    assert transport.pipelined == (rounds is not None)
    # Turning: one round measures compute past it, every call after it is pipelined.
    assert transport.barrier.count == (rounds or transport.rounds_seen) and transport.rounds_seen > 100
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


@pytest.mark.parametrize("pipeline_from", [math.inf, 0.0], ids=["rounds", "pipelined"])
def test_rebalancing_leaves_the_drivers_meta_partition_in_the_driver(ray_instance, tmp_path, pipeline_from):
    backend = migrating_run(
        tmp_path, kill_at=0, compiled=False, in_driver=(0,), groups=[[1], [2, 3]], pipeline_from=pipeline_from
    )
    assert backend.transport.migrations > 0
    assert sorted(pid for group in backend.transport.groups for pid in group) == [1, 2, 3]
    assert backend.transport.driver.pids == {0}


@pytest.mark.parametrize("pipeline_from", [math.inf, 0.0], ids=["rounds", "pipelined"])
def test_a_dead_actor_after_a_migration_is_rebuilt_with_its_current_partitions(
    ray_instance, tmp_path, pipeline_from
):
    backend = migrating_run(
        tmp_path, kill_at=3, compiled=False, after_migration=True, pipeline_from=pipeline_from
    )
    assert backend.transport.killed  # in the third round after the first migration: 2 logged rounds to replay


class KillingInMigration(Killing):
    """Kills actor 0 just before the first migration: one of its two ends, so partitions are half-moved."""

    def __init__(self, *args, **options) -> None:
        super().__init__(*args, **options)
        migrate = self.balance.migrate

        def killing_first(groups, horizon):
            if not self.killed:
                ray.kill(self.fleet.hosts[0], no_restart=True)
                self.killed = True
            return migrate(groups, horizon)

        self.balance.migrate = killing_first


def test_an_actor_dying_in_a_migration_rolls_every_actor_back_and_the_trace_is_unchanged(
    ray_instance, tmp_path
):
    backend = migrating_run(tmp_path, kill_at=0, compiled=False, kind=KillingInMigration)
    assert backend.transport.killed and backend.transport.migrations > 0  # later migrations went through


def test_actors_whose_socket_the_driver_cannot_reach_take_plain_ray_calls(
    ray_instance, tmp_path, monkeypatch
):
    def unreachable(path):
        raise PermissionError(13, "Permission denied", path)

    scenario = load_scenario("quickstart", ["workload.jobs=100"])
    run(scenario, tmp_path / "inproc")
    backend = ray_backend(hosts=2, checkpoint_every=0)
    run(scenario, tmp_path / "direct", backend=backend)
    assert backend.calls == "direct"
    monkeypatch.setattr("actors.calls.connect", unreachable)
    run(scenario, tmp_path / "ray", backend=backend)
    assert backend.calls == "plain"
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_ray_listens_on_loopback_only(ray_instance):
    listening = subprocess.run(["ss", "-tlnpH"], capture_output=True, text=True, check=False).stdout
    ray_lines = [
        line for line in listening.splitlines() if any(n in line for n in ("raylet", "gcs_server", "ray::"))
    ]
    assert ray_lines, listening
    for line in ray_lines:
        local = line.split()[3]
        assert local.startswith(("127.0.0.1:", "[::ffff:127.0.0.1]:", "[::1]:")), line


def test_actors_run_at_the_drivers_priority(ray_instance):
    # Ray starts its workers at niceness 15: any process at the default priority beside a run (a build,
    # another run, Ray's own agents) took the CPU from its actors, which then could not even start
    scenario = parse(many_clusters(4, 20), "four")
    with ray_backend(hosts=2, checkpoint_every=0)(scenario) as transport:
        pids = ray.get([host.pid.remote() for host in transport.fleet.hosts])
    assert len(set(pids)) == 2 and os.getpid() not in pids
    assert [os.getpriority(os.PRIO_PROCESS, pid) for pid in pids] == [os.getpriority(os.PRIO_PROCESS, 0)] * 2


def test_actors_given_their_cpus_that_do_not_start_are_said_to_be_slow_not_short_of_cpus(
    ray_instance, monkeypatch
):
    # both CPUs held by the two actors starting, none free: it used to say "no Ray node has that free"
    @ray.remote(num_cpus=1)
    class Slow:
        def __init__(self) -> None:
            time.sleep(60)

        def pid(self) -> int:
            return os.getpid()

    monkeypatch.setattr(placement, "START_SECONDS", 2.0)
    monkeypatch.setattr(placement, "POLL_SECONDS", 0.1)
    with pytest.raises(placement.Unplaced) as raised:
        placement.await_started([Slow.remote(), Slow.remote()], [[1, 2], [3]], 1.0, "for the run")
    said = str(raised.value)
    assert said.startswith("cannot start the Ray actor(s) hosting partition(s) [1, 2, 3] for the run: ")
    assert re.search(r"they had their CPUs but did not start within [23] s", said), said


SESSION = """
import sys
from actors.session import ray_session
with ray_session():
    if sys.argv[1] == "fails":
        raise ValueError("a bug")
"""


@pytest.mark.parametrize("ends, left", [("returns", 0), ("fails", 1)])
def test_a_local_ray_leaves_its_session_folder_only_when_an_error_ended_it(ends, left):
    # (Ray's logs may say more than the error did); each run used to leave one in /tmp/ray
    root = Path(tempfile.mkdtemp(prefix="gr-", dir="/tmp"))  # (short: Ray's socket paths must fit)
    try:
        env = {**os.environ, "RAY_TMPDIR": str(root)}
        done = subprocess.run([sys.executable, "-c", SESSION, ends], env=env, capture_output=True, text=True)
        assert done.returncode == (0 if ends == "returns" else 1), done.stderr
        assert len(list((root / "ray").glob("session_2*"))) == left
        assert (root / "ray" / "session_latest").is_symlink() == bool(left)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_a_local_ray_that_cannot_start_says_why_in_one_line_not_as_a_disk_error(tmp_path):
    # Ray's socket paths under a deep RAY_TMPDIR pass the AF_UNIX limit: it was said as an I/O error
    # of events.arrow.part, exit 3
    deep = tmp_path / ("d" * 80)
    deep.mkdir()
    argv = [sys.executable, "-m", "emulator.cli", "run", "quickstart", "--backend", "ray", "--quiet"]
    argv += ["--set", "workload.jobs=50", "--out", str(tmp_path / "run")]
    done = subprocess.run(argv, env={**os.environ, "RAY_TMPDIR": str(deep)}, capture_output=True, text=True)
    lines = done.stderr.splitlines()
    assert done.returncode == 4 and len(lines) == 1, done.stderr
    assert lines[0].startswith("gridemu: emulation failed: cannot start a local Ray: ")
    assert "AF_UNIX path length" in lines[0] and lines[0].endswith("set RAY_TMPDIR to a shorter folder)")


def test_a_ray_sweep_task_runs_its_point_in_the_nodes_session_folder(ray_instance, monkeypatch):
    # which goes with the session: a task killed mid-point left its run directory in /tmp
    from actors import sweep as ray_sweep
    from actors.session import session_folder
    from emulator.engine.sweep import Point

    seen = []
    monkeypatch.setattr(ray_sweep, "run_point", lambda scenario, point, scratch: seen.append(scratch))
    ray_sweep._run_here(load_scenario("quickstart"), Point(0, {}))
    assert len(seen) == 1 and seen[0].parent == session_folder() and not seen[0].exists()


def test_a_sweep_on_ray_tasks_matches_in_process_runs(ray_instance, tmp_path):
    from actors import ray_tasks
    from emulator.engine.sweep import points, run_point

    todo = points([("seed", [1, 2])], ["workload.jobs=60"])
    on_ray = sorted(ray_tasks()("quickstart", todo), key=lambda r: r.point.index)
    local = [run_point("quickstart", p) for p in todo]
    assert [r.files["events.arrow"] for r in on_ray] == [r.files["events.arrow"] for r in local]
    assert not any(r.error for r in on_ray)


@pytest.mark.parametrize(
    ("calls", "said"), [("direct", "direct lines to every actor"), ("plain", "plain Ray calls")]
)
def test_cli_run_on_ray_reports_the_barrier_and_its_calls(ray_instance, tmp_path, capsys, calls, said):
    from emulator.cli import main

    out = tmp_path / "run"
    argv = ["run", "quickstart", "--backend", "ray", "--partitions", "2", "--quiet", "--verbose"]
    argv += ["--ray-calls", calls, "--rebalance-every", "5", "--out", str(out), "--set", "workload.jobs=40"]
    assert main(argv) == 0
    printed = capsys.readouterr()
    assert "40 jobs: 40 finished" in printed.out and "barrier" in printed.out and "per round" in printed.out
    assert f"Ray calls: {said}\n" in printed.out
    assert '"backend": "ray"' in (out / "summary.json").read_text()


def test_cli_a_dead_actor_without_checkpoints_is_one_line_and_exit_4(
    ray_instance, tmp_path, capsys, monkeypatch
):
    # `gridemu run --backend ray --checkpoint-every 0` whose actor hosting partition 1 is killed at round 30
    import actors.transport
    from emulator.cli import main
    from emulator.cli_errors import EXIT_EMULATION

    class KilledAt30(Killing):
        kill_at = 30

    monkeypatch.setattr(actors.transport, "RayTransport", KilledAt30)
    out = tmp_path / "run"
    argv = [
        "run",
        "quickstart",
        "--backend",
        "ray",
        "--partitions",
        "2",
        "--checkpoint-every",
        "0",
        "--quiet",
    ]
    argv += ["--rebalance-every", "0", "--set", "workload.jobs=200", "--out", str(out)]
    assert main(argv) == EXIT_EMULATION
    err = capsys.readouterr().err
    assert "Traceback" not in err and re.match(
        r"gridemu: emulation failed: Ray actor hosting partition\(s\) \[1\] died in the round "
        r"before virtual time [0-9.e+]+ \(checkpoints are off, so the run cannot recover\)",
        err,
    ), err
    assert sorted(p.name for p in out.iterdir()) == [".running", "events.arrow.part", "scenario.toml"]
    assert err.count("\n") <= 2, err  # Ray's own multi-line error is quoted by its first line only


def test_a_plugin_only_the_driver_can_import_runs_in_actors_and_sweep_tasks(
    ray_instance, tmp_path, monkeypatch
):
    # The module is on this process's sys.path alone (not the working directory, not PYTHONPATH):
    # actors and tasks import it through the driver's import path (actors.session.driver_import_path).
    from actors import ray_tasks
    from emulator.engine.sweep import points

    from .test_plugins import PLUGINS, SCENARIO, SMALLEST_TIMES, times

    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / "hidden_smallest.py").write_text((PLUGINS / "smallest_first.py").read_text())
    monkeypatch.syspath_prepend(str(hidden))
    spec = "hidden_smallest:SmallestFirst"
    run(load_scenario(SCENARIO, [f"local.policy={spec}"]), tmp_path / "ray", backend=ray_backend(hosts=1))
    assert times(tmp_path / "ray") == SMALLEST_TIMES
    [result] = ray_tasks()(str(SCENARIO), points([("local.policy", [spec])]))
    assert not result.error and result.metrics["makespan"] == 19.0


FAILING_POLICY = """
from emulator.policies.local_base import LocalPolicy


class FailsAtThirdPass(LocalPolicy):
    passes = 0

    def schedule(self, view):
        self.passes += 1
        if self.passes == 3:
            raise ValueError(f"policy bug at {view.now:g}")
        return []
"""


@pytest.mark.parametrize("direct", [True, False], ids=["direct-lines", "plain-calls"])
def test_an_error_in_an_actors_partition_is_raised_in_the_driver_as_itself(
    ray_instance, tmp_path, monkeypatch, direct
):
    from .test_plugins import SCENARIO

    (tmp_path / "failing_policy.py").write_text(FAILING_POLICY)
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = load_scenario(SCENARIO, ["local.policy=failing_policy:FailsAtThirdPass"])
    with pytest.raises(ValueError, match=r"policy bug at [0-9]+"):
        run(scenario, tmp_path / "ray", backend=ray_backend(hosts=1, checkpoint_every=0, direct=direct))
    assert sorted(p.name for p in (tmp_path / "ray").iterdir()) == [
        ".running",
        "events.arrow.part",
        "scenario.toml",
    ]


def test_the_driver_import_path_leaves_the_interpreter_out(tmp_path, monkeypatch):
    import sys

    from actors.session import driver_import_path

    monkeypatch.syspath_prepend(str(tmp_path))
    entries = driver_import_path()["env_vars"]["PYTHONPATH"].split(":")
    assert entries[0] == str(tmp_path.resolve()) and entries[-1] == "${PYTHONPATH}"
    assert not any(entry.startswith(sys.prefix) for entry in entries)


def test_each_actor_is_sent_only_the_jobs_its_partitions_read(tmp_path):
    # Half the jobs name a cluster (they enter it directly), the others go through the meta-scheduler:
    # partitions built from each group's share make the trace the whole workload makes.
    scenario = parse(many_clusters(6, 120), "mixed")
    for job in scenario.jobs[::2]:
        job.site = f"c{job.id % 6}"
    scenario = replace(scenario, inputs=None)
    direct = {i: [j.id for j in scenario.jobs if j.site == f"c{i}"] for i in range(6)}
    via_meta = [j.id for j in scenario.jobs if not j.site]
    groups = [[0], [1, 4], [2, 3, 5, 6]]
    shares = [for_hosts(scenario, group) for group in groups]
    assert [j.id for j in shares[0].jobs] == via_meta
    assert [j.id for j in shares[1].jobs] == direct[0] + direct[3] + via_meta[:1]  # one stands for them
    assert len(shares[2].jobs) == sum(len(direct[i]) for i in (1, 2, 4, 5)) + 1
    assert shares[1].inputs is None and shares[1].extra is None

    @contextmanager
    def grouped(scenario):
        parts = [
            p for group, share in zip(groups, shares, strict=True) for p in build_partitions(share, group)
        ]
        yield coordinator.InProcess(parts)

    run(scenario, tmp_path / "whole")
    run(scenario, tmp_path / "shares", backend=grouped)
    assert same_files(tmp_path / "whole", tmp_path / "shares")
