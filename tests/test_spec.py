"""One parsed PolicySpec (emulator/core/spec.py) from the scenario to the cluster, its partition and the
metrics: parsed once, never kept twice."""

from __future__ import annotations

import numpy as np

from emulator.core.model import Cluster, Link, Machine
from emulator.core.spec import PolicySpec
from emulator.data.scenario import load
from emulator.partitions.cluster import ClusterPartition


def test_a_spec_prints_back_as_it_parses():
    text = "titan[pairing=text,w_over=12.0]"
    spec = PolicySpec.parse(text)
    assert (spec.name, spec.params, str(spec)) == ("titan", {"pairing": "text", "w_over": 12.0}, text)
    assert PolicySpec.of(spec) is spec


def test_a_cluster_built_in_code_parses_its_string_once():
    cluster = Cluster("c", (Machine(2, 1.0),), Link(1.0), policy="easy[order=sjf]")
    assert cluster.policy == PolicySpec("easy", {"order": "sjf"})
    part = ClusterPartition(1, cluster, np.random.SeedSequence(1))
    assert part.policy.order.name == "sjf"


def test_the_scenario_keeps_each_clusters_spec_once():
    scenario = load("quickstart", ["clusters.0.policy=conservative[order=wfp]"])
    specs = [cluster.policy for cluster in scenario.platform.clusters]
    assert all(a is b for a, b in zip(scenario.local, specs, strict=True))
    assert str(specs[0]) == "conservative[order=wfp]"
