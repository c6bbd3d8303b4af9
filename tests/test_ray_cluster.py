"""A Ray cluster of three nodes on this machine (``ray.cluster_utils.Cluster``, loopback, token
authentication on): actors on every node, a node lost mid-run, a sweep over the nodes, a driver whose
files the nodes cannot read, and joins that fail in one line.

One cluster serves every test here (starting it costs ~10 s); a test that removes a node adds one back.
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from actors import PartitionHost, RayTransport, group_partitions, static_weights  # noqa: E402
from actors.placement import actor_share  # noqa: E402
from actors.session import join, stay_on_loopback  # noqa: E402
from actors.sweep import RayTasks  # noqa: E402
from emulator import load_scenario, run  # noqa: E402
from emulator.cli_errors import EXIT_EMULATION, run_command  # noqa: E402
from emulator.data.scenario import load, parse  # noqa: E402
from emulator.engine.sweep import parse_vary, points, run_point  # noqa: E402

GRIDEMU = str(Path(sys.executable).with_name("gridemu"))
NODES = 3
TOKEN_ENV = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")
HEALTH_CHECKS = {
    "health_check_period_ms": 500,
    "health_check_timeout_ms": 500,
    "health_check_failure_threshold": 3,
}
"""The head declares a lost node dead within ~2 s, not Ray's default ~15-30 s: the tests wait for it."""


def _reload_auth() -> None:
    """This process's Ray reads its authentication settings again (they are cached when Ray starts)."""
    from ray._raylet import AuthenticationTokenLoader, Config

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


@pytest.fixture(scope="module")
def cluster():
    """Three nodes of 1 CPU each (the head, where the driver runs, and two others), on 127.0.0.1,
    refusing drivers without the cluster's token."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    saved = {name: os.environ.get(name) for name in TOKEN_ENV}
    os.environ.update(RAY_AUTH_MODE="token", RAY_AUTH_TOKEN=secrets.token_hex(16))
    _reload_auth()
    stay_on_loopback()
    temp = tempfile.mkdtemp(prefix="grc-")  # session files go here, not under /tmp/ray
    try:
        nodes = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1,
                "temp_dir": temp,
                "include_dashboard": False,
                # (workers at the driver's priority on every node, as a private Ray's: the suite's
                # other processes would otherwise starve the actors, actors.session.WORKER_NICENESS)
                "_system_config": {**HEALTH_CHECKS, "worker_niceness": 0},
            },
        )
        for _ in range(NODES - 1):
            nodes.add_node(num_cpus=1)
    except Exception as err:  # (a machine where Ray cannot start processes or bind loopback ports)
        shutil.rmtree(temp, ignore_errors=True)
        pytest.skip(f"Ray cannot start a local cluster here: {type(err).__name__}: {err}")
    join(nodes.address)
    yield nodes
    ray.shutdown()
    nodes.shutdown()
    shutil.rmtree(temp, ignore_errors=True)
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    _reload_auth()


def same_files(a: Path, b: Path) -> bool:
    return all((a / name).read_bytes() == (b / name).read_bytes() for name in ("events.arrow", "jobs.arrow"))


def node_ids() -> set[str]:
    return {node["NodeID"] for node in ray.nodes() if node["Alive"]}


class NodeHost(PartitionHost):
    """A partition host that says which node it runs on."""

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()


class LosingNode(RayTransport):
    """Removes a node (not the driver's) hosting an actor, after ``lose_at`` rounds or calls."""

    cluster = None
    lose_at = 0
    seen = 0
    lost: str | None = None
    before: list[str] | None = None  # the node of each host when one was lost
    rebuilt = 0

    def finish(self):
        return self._seen(super().finish())

    def collect(self):
        return self._seen(super().collect())

    def _seen(self, results):
        self.seen += 1
        if self.seen == self.lose_at:
            self._lose()
        return results

    def counting_rebuilds(self) -> None:
        """Count the actors the transport's recovery rebuilds."""
        rebuild = self.recovery.rebuild

        def counted(h: int) -> None:
            self.rebuilt += 1
            rebuild(h)

        self.recovery.rebuild = counted

    def _lose(self) -> None:
        """As a machine lost: its Ray processes and its actors' processes killed (Ray's node removal
        leaves workers running until they notice, and calls to them may still be answered)."""
        head = ray.get_runtime_context().get_node_id()
        self.before = [ray.get(host.node.remote()) for host in self.fleet.hosts]
        node = next(n for n in self.cluster.worker_nodes if n.node_id in set(self.before) - {head})
        self.lost = node.node_id
        pids = [
            ray.get(host.pid.remote())
            for host, at in zip(self.fleet.hosts, self.before, strict=True)
            if at == node.node_id
        ]
        self.cluster.remove_node(node, allow_graceful=False)
        for pid in pids:
            os.kill(pid, signal.SIGKILL)


@dataclass
class ClusterBackend:
    """Opens a transport of ``kind`` over ``hosts`` actors (the meta partition in the driver) and keeps it."""

    hosts: int = NODES
    checkpoint_every: int = 0
    kind: type = LosingNode
    cluster: object = None
    lose_at: int = 0
    transport: RayTransport | None = None
    nodes: list[str] | None = None  # the node of each host at the run's end

    @contextmanager
    def __call__(self, scenario):
        weights = static_weights(scenario)
        groups = group_partitions(weights, self.hosts, list(range(1, len(weights))))
        transport = self.kind(scenario, groups, self.checkpoint_every, host=NodeHost, in_driver=(0,))
        transport.cluster, transport.lose_at = self.cluster, self.lose_at
        transport.counting_rebuilds()
        self.transport = transport
        try:
            yield transport
            self.nodes = [ray.get(host.node.remote()) for host in transport.fleet.hosts]  # (before they go)
        finally:
            transport.close()


def grid(jobs: int = 150, clusters: int = 6, policy: str = ""):
    """A small meta-scheduled grid: ``clusters`` clusters (actors of two each by default), ``jobs`` jobs,
    their local policies easy and fcfs in turn, or all ``policy``."""
    return parse(
        {
            "name": "grid",
            "seed": 5,
            "meta": {"policy": "least-load"},
            "clusters": [
                {
                    "name": f"c{i}",
                    "latency": 0.5 + i % 3,
                    "policy": policy or ("easy", "fcfs")[i % 2],
                    "machines": [{"count": 2, "cpus": 2 + i % 3, "mips": 100.0 * (1 + i % 2)}],
                }
                for i in range(clusters)
            ],
            "workload": {"source": "synthetic", "jobs": jobs, "mean_interarrival": 3.0, "cpus": [1, 4]},
        },
        "test",
    )


def test_actors_run_on_every_node_and_the_trace_is_byte_identical(cluster, tmp_path):
    scenario = grid()
    run(scenario, tmp_path / "inproc")
    backend = ClusterBackend()
    run(scenario, tmp_path / "ray", backend=backend)
    transport = backend.transport
    assert set(backend.nodes) == node_ids()
    assert len(node_ids()) == NODES
    assert transport.calls == "direct+plain"  # a line to the driver's node, Ray calls to the others
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_more_actors_than_cpus_share_them_on_every_node(cluster, tmp_path):
    # Four actors on three 1-CPU nodes: half a CPU each (three quarters each would fit one per node).
    scenario = grid(jobs=60)
    run(scenario, tmp_path / "inproc")
    backend = ClusterBackend(hosts=4)
    run(scenario, tmp_path / "ray", backend=backend)
    assert backend.transport.fleet._cpus == 0.5
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


@pytest.mark.parametrize(
    ("cpus", "actors", "share"),
    [
        ([1, 1, 1], 3, 1.0),
        ([1, 1, 1], 4, 0.5),
        ([2], 3, 0.6666),
        ([4, 1], 6, 0.8),
        ([2, 2], 1, 1.0),
        ([0, 2], 4, 0.5),
    ],
)
def test_actor_share_lets_every_actor_fit_on_some_node(cpus, actors, share):
    assert actor_share(cpus, actors) == pytest.approx(share)


def test_a_lost_node_is_replaced_by_a_spare_and_the_trace_is_byte_identical(cluster, tmp_path):
    cluster.add_node(num_cpus=1)  # the spare
    scenario = grid(jobs=200)
    run(scenario, tmp_path / "inproc")
    backend = ClusterBackend(checkpoint_every=20, cluster=cluster, lose_at=50)
    run(scenario, tmp_path / "ray", backend=backend)
    transport = backend.transport
    assert transport.rebuilt == 1
    assert transport.lost not in backend.nodes and len(set(backend.nodes)) == NODES  # rebuilt on the spare
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


@pytest.mark.parametrize(
    ("checkpoint_every", "said"),
    [
        (
            0,
            r"partition\(s\) \[\d+, \d+\] died .* before virtual time [0-9.]+ \(checkpoints are off",
        ),
        (
            20,
            r"cannot start the Ray actor\(s\) hosting partition\(s\) \[\d+, \d+\] to replace one that died: "
            r"each needs 1 CPU and no Ray node has that free \(free CPUs by node: 0, 0\)",
        ),
    ],
    ids=["checkpoints-off", "no-room-left"],
)
def test_a_lost_node_with_no_room_left_ends_the_run_in_one_line_with_status_4(
    cluster, tmp_path, capsys, checkpoint_every, said
):
    scenario = grid(jobs=200)
    backend = ClusterBackend(checkpoint_every=checkpoint_every, cluster=cluster, lose_at=50)
    start = time.monotonic()
    try:
        code = run_command(lambda: run(scenario, tmp_path / "ray", backend=backend))
        took = time.monotonic() - start
    finally:
        cluster.add_node(num_cpus=1)
    assert backend.transport.lost is not None
    assert code == EXIT_EMULATION
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and re.search(said, lines[0]), lines
    assert took < 60


def test_the_cli_joins_a_loopback_cluster_by_its_loopback_address(cluster, tmp_path):
    run(load_scenario("quickstart", ["workload.jobs=100"]), tmp_path / "inproc")
    done, _ = gridemu_run(tmp_path, cluster.address)
    assert done.returncode == 0, done.stderr
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_the_cli_says_in_one_line_and_at_once_that_no_cluster_listens_at_an_address(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        address = f"127.0.0.1:{probe.getsockname()[1]}"
    done, took = gridemu_run(tmp_path, address)
    assert done.returncode == EXIT_EMULATION
    assert done.stderr.splitlines() == [
        f"gridemu: emulation failed: cannot reach the Ray cluster at {address}: Connection refused "
        "(is its head running, and is this its address and port?)"
    ]
    assert took < 30  # (Ray itself retried for minutes)


def test_the_cli_says_in_one_line_and_at_once_that_a_cluster_refused_its_token(cluster, tmp_path):
    done, took = gridemu_run(tmp_path, cluster.address, RAY_AUTH_TOKEN="not-the-clusters-token-0123456789")
    assert done.returncode == EXIT_EMULATION
    [line] = done.stderr.splitlines()
    assert line.startswith(
        f"gridemu: emulation failed: the Ray cluster at {cluster.address} refused this driver: "
    )
    assert "InvalidAuthToken" in line and "RAY_AUTH_TOKEN" in line
    assert took < 30  # (Ray itself retried for 20 s, then said only "Failed to connect")


def gridemu_run(tmp_path: Path, address: str, **env: str) -> tuple[subprocess.CompletedProcess, float]:
    """``gridemu run`` of a small quickstart joining ``address`` (``env`` over this process's), and
    how long it took."""
    more = ["--ray-address", address, "--out", str(tmp_path / "ray")]
    start = time.monotonic()
    done = subprocess.run(
        [GRIDEMU, "run", "quickstart", "--set", "workload.jobs=100", "--backend", "ray", "--quiet", *more],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ | env,
    )
    return done, time.monotonic() - start


TRACE_SCENARIO = """
name = "trace"
seed = 2
[meta]
policy = "least-load"
[[clusters]]
name = "a"
machines = [{ count = 2, cpus = 2, mips = 1.0 }]
[[clusters]]
name = "b"
latency = 2.0
machines = [{ count = 1, cpus = 4, mips = 2.0 }]
[[clusters]]
name = "c"
policy = "fcfs"
machines = [{ count = 3, cpus = 1, mips = 1.0 }]
[workload]
source = "swf"
path = "trace.swf"
"""


def trace_scenario(folder: Path, jobs: int = 120) -> tuple[Path, Path]:
    """A scenario file reading an SWF trace beside it: both paths."""
    lines = [
        f"{i} {7 * i} 0 {20 + 13 * (i % 5)} {1 + i % 3} -1 -1 {1 + i % 3} 90 -1 1 1 1 -1 -1 -1 -1 -1"
        for i in range(1, jobs + 1)
    ]
    trace = folder / "trace.swf"
    trace.write_text("\n".join(lines) + "\n")
    scenario = folder / "trace.toml"
    scenario.write_text(TRACE_SCENARIO)
    return scenario, trace


def test_a_run_ships_its_workload_so_the_nodes_need_none_of_the_drivers_files(cluster, tmp_path):
    path, trace = trace_scenario(tmp_path)
    scenario = load_scenario(str(path))
    run(scenario, tmp_path / "inproc")
    trace.unlink()
    path.unlink()
    run(scenario, tmp_path / "ray", backend=ClusterBackend())
    assert same_files(tmp_path / "inproc", tmp_path / "ray")


def test_a_sweep_runs_its_points_on_every_node_from_files_only_the_driver_reads(
    cluster, tmp_path, monkeypatch
):
    path, trace = trace_scenario(tmp_path)
    todo = points(parse_vary(["meta.policy=least-load,random", "seed=1..3"]))
    expected = [run_point(str(path), point) for point in todo]
    # The trace is there only while the driver loads a point: a task reading it would fail.
    hidden = trace.with_name("hidden.swf")
    trace.rename(hidden)

    def load_shown(*args, **kwargs):
        hidden.rename(trace)
        try:
            return load(*args, **kwargs)
        finally:
            trace.rename(hidden)

    monkeypatch.setattr("actors.sweep.load", load_shown)
    execute = RayTasks()
    results = sorted(execute(str(path), todo), key=lambda result: result.point.index)
    assert [result.error for result in results] == [""] * len(todo)
    for result, alone in zip(results, expected, strict=True):
        assert result.metrics == alone.metrics | {"wall_seconds": result.metrics["wall_seconds"]}
        assert {name: result.files[name] for name in ("events.arrow", "jobs.arrow")} == {
            name: alone.files[name] for name in ("events.arrow", "jobs.arrow")
        }
    assert len(execute.nodes) == NODES and sum(execute.nodes.values()) == len(todo)


def test_plugin_policies_are_shipped_to_the_nodes_with_the_scenario(cluster, tmp_path, monkeypatch):
    # A plug-in package in a folder on the driver's path alone: the nodes import it from what Ray ships.
    package = tmp_path / "plugs" / "myplugins"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    shutil.copy(Path(__file__).parent / "plugins" / "smallest_first.py", package / "smallest.py")
    monkeypatch.syspath_prepend(str(package.parent))
    scenario = grid(jobs=100, policy="myplugins.smallest:SmallestFirst")  # (the driver imports it here)
    run(scenario, tmp_path / "inproc")
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry != str(package.parent)])
    run(scenario, tmp_path / "ray", backend=ClusterBackend())
    assert same_files(tmp_path / "inproc", tmp_path / "ray")
