"""Platforms from traces: SWF headers, Alea machines files, one cluster per site; [platform] in scenarios."""

from __future__ import annotations

import numpy as np
import pytest

from emulator.core.config import ScenarioError
from emulator.data.scenario import parse
from workloads.alea import machines_path, read_machines
from workloads.columns import TraceError
from workloads.platforms import from_machines, from_sites, from_swf_header, trace_name
from workloads.table import job_table


def test_swf_header_shares_procs_over_nodes():
    (gaia,) = from_swf_header({"MaxNodes": "151", "MaxProcs": "2004"}, "gaia")
    assert gaia["machines"] == [
        {"count": 41, "cpus": 14, "mips": 1.0},
        {"count": 110, "cpus": 13, "mips": 1.0},
    ]
    (lcg,) = from_swf_header({"MaxProcs": "24515"}, "lcg", mips=2.0, latency=0.5)
    assert lcg["machines"] == [{"count": 24515, "cpus": 1, "mips": 2.0}] and lcg["latency"] == 0.5
    (kth,) = from_swf_header({"MaxNodes": "100", "MaxProcs": "100"}, "kth")
    assert kth["machines"] == [{"count": 100, "cpus": 1, "mips": 1.0}]
    with pytest.raises(ValueError, match="neither MaxProcs nor MaxNodes"):
        from_swf_header({"Version": "2.2"}, "x")


def test_machines_file(tmp_path):
    path = tmp_path / "t.swf.machines"
    path.write_text("; id name nodes cpus speed ram\n0\tseth\t120\t2\t1\t1048576\n1 fast 4 8 2.5 64 gpu 1\n")
    clusters = read_machines(path)
    assert [(c.name, c.nodes, c.cpus_per_node, c.speed, c.rest) for c in clusters] == [
        ("seth", 120, 2, 1.0, ()),
        ("fast", 4, 8, 2.5, ("gpu", "1")),
    ]
    tables = from_machines(clusters, mips=100)
    assert tables[1]["machines"] == [{"count": 4, "cpus": 8, "mips": 250.0}]
    assert machines_path(tmp_path / "t.swf.gz") == path == machines_path(tmp_path / "t.swf")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("0 a 1 2\n", "line 1: 4 fields"),
        ("0 a x 2 1 1\n", "line 1: unreadable line"),
        ("0 a 0 2 1 1\n", "1 <= nodes"),
        ("0 a 1 2 1 1\n1 a 1 2 1 1\n", "line 2: cluster name a already used at line 1"),
        ("; nothing\n", "no cluster line"),
    ],
)
def test_machines_file_errors_name_file_and_line(tmp_path, text, match):
    path = tmp_path / "bad.machines"
    path.write_text(text)
    with pytest.raises(TraceError, match=match) as info:
        read_machines(path)
    assert "bad.machines" in str(info.value)


def test_one_cluster_per_site_sized_by_its_peak():
    # site a: [0, 10) 2 CPUs, [5, 15) 3 CPUs, [10, 20) 4 CPUs (starts as the first ends) -> peak 7
    table = job_table(
        np.arange(1, 6),
        np.array([0.0, 5.0, 10.0, 0.0, 0.0]),
        np.array([2, 3, 4, 1, 6]),
        np.array([10.0, 10.0, 10.0, 1.0, 1.0]),
        site=__import__("pyarrow").array(["a", "a", "a", "b", ""]),
    )
    clusters = from_sites(table)
    assert [(c["name"], c["machines"][0]["count"]) for c in clusters] == [("a", 7), ("b", 1)]


def test_trace_name():
    assert trace_name("/x/KTH-SP2-1996-2.1-cln.swf.gz") == "KTH-SP2-1996-2.1-cln"
    assert trace_name("runs/jobs.arrow") == "jobs"


def swf(tmp_path, *lines):
    path = tmp_path / "t.swf"
    header = ["; MaxNodes: 2", "; MaxProcs: 8", "; Partition: 1 north", "; Partition: 2 south"]
    path.write_text("\n".join(header + list(lines)) + "\n")
    return path


def job(i, submit=0, run=10, procs=2, partition=1):
    return f"{i} {submit} 0 {run} {procs} -1 -1 {procs} {run} -1 1 1 1 -1 -1 {partition} -1 -1"


def test_platform_table_from_a_trace_header(tmp_path):
    path = swf(tmp_path, job(1), job(2, procs=8))
    raw = {
        "platform": {"source": "swf", "path": str(path), "mips": 10},
        "workload": {"source": "swf", "path": str(path), "rules": "pwa", "site": "t"},
    }
    scenario = parse(raw, "s.toml")
    (cluster,) = scenario.platform.clusters
    assert (cluster.name, cluster.cpus, len(cluster.machines), cluster.machines[0].mips) == ("t", 8, 2, 10)
    assert scenario.effective["platform"]["name"] == "t"


def test_platform_table_per_site(tmp_path):
    path = swf(tmp_path, job(1, partition=1), job(2, partition=2, procs=3), job(3, submit=5, partition=2))
    raw = {
        "platform": {"source": "swf", "path": str(path), "sites": "partition"},
        "workload": {"source": "swf", "path": str(path), "rules": "pwa", "sites": "partition"},
    }
    scenario = parse(raw, "s.toml")
    assert [(c.name, c.cpus) for c in scenario.platform.clusters] == [("north", 2), ("south", 5)]
    assert [j.site for j in scenario.jobs] == ["north", "south", "south"]


def test_platform_and_clusters_are_exclusive(tmp_path):
    raw = {
        "platform": {"source": "two-level"},
        "clusters": [{"machines": [{"cpus": 1, "mips": 1}]}],
        "workload": {"source": "synthetic", "jobs": 1},
    }
    with pytest.raises(ScenarioError, match="either \\[\\[clusters\\]\\] or \\[platform\\]"):
        parse(raw, "s.toml")


@pytest.mark.parametrize(
    ("platform", "message"),
    [
        ({"source": "nowhere"}, "key 'platform.source' = 'nowhere'"),
        ({"source": "two-level", "cpus": [8, 4]}, "key 'platform.cpus' = [8, 4]: expected [low, high]"),
        ({"source": "two-level", "typo": 1}, "unknown key 'platform.typo'"),
        ({"source": "muscle", "sizes": [1, 2], "rates": [1.0]}, "one entry per cluster"),
        ({"source": "swf", "path": "missing.swf"}, "key 'platform.path'"),
    ],
)
def test_platform_errors_name_the_key(platform, message):
    raw = {"platform": platform, "workload": {"source": "synthetic", "jobs": 1}}
    with pytest.raises(ScenarioError, match=message.replace("[", "\\[").replace("]", "\\]")):
        parse(raw, "s.toml")
