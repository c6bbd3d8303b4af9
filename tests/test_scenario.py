"""Scenario files: built-ins, overrides, and errors that name the file, key, value and expectation."""

from __future__ import annotations

import re

import pytest

from emulator.core.config import ScenarioError
from emulator.data.scenario import builtin_names, load, parse
from emulator.policies import LOCAL

GOOD = """
name = "tiny"
seed = 7
[meta]
policy = "round-robin"
[[clusters]]
name = "a"
latency = 0.5
  [[clusters.machines]]
  count = 2
  cpus = 4
  mips = 100
[workload]
source = "synthetic"
jobs = 20
"""


def write(tmp_path, text: str):
    path = tmp_path / "s.toml"
    path.write_text(text)
    return path


def test_quickstart_is_built_in_and_valid():
    assert "quickstart" in builtin_names()
    scenario = load("quickstart")
    assert [c.name for c in scenario.platform.clusters] == ["alpha", "beta", "gamma"]
    assert len(scenario.jobs) == 3000
    assert str(scenario.meta) == "least-load"


def test_effective_configuration_fills_defaults(tmp_path):
    scenario = load(write(tmp_path, GOOD))
    effective = scenario.effective
    assert effective["backend"] == "inproc"
    assert effective["local"] == {"policy": "fcfs", "params": LOCAL.defaults("fcfs")}  # filled in once
    assert "policy" not in effective["clusters"][0]  # [local]'s: a replay's --set local.policy reaches it
    assert effective["clusters"][0]["bandwidth"] == float("inf")
    assert effective["workload"]["mean_interarrival"] == 10.0
    assert effective["meta"] == {"policy": "round-robin", "params": {}}


def test_overrides_and_seed(tmp_path):
    scenario = load(
        write(tmp_path, GOOD), ["workload.jobs=5", "clusters.0.policy=easy", "meta.policy=random"], seed=3
    )
    assert (len(scenario.jobs), str(scenario.local[0]), str(scenario.meta), scenario.seed) == (
        5,
        "easy",
        "random",
        3,
    )


def test_same_seed_same_jobs_other_seed_other_jobs(tmp_path):
    path = write(tmp_path, GOOD)
    a, b, c = load(path), load(path), load(path, seed=8)
    assert [j.to_tuple() for j in a.jobs] == [j.to_tuple() for j in b.jobs]
    assert [j.submit for j in a.jobs] != [j.submit for j in c.jobs]


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ("name = \n", ["s.toml", "not valid TOML", "line 1"]),
        (
            GOOD.replace('policy = "round-robin"', 'policy = "best"'),
            ["meta.policy", "unknown meta policy 'best'", "least-load"],
        ),
        (GOOD.replace("cpus = 4", "cpus = -4"), ["clusters[0].machines[0].cpus", "-4", "integer >= 1"]),
        (GOOD.replace("latency = 0.5", "latency = 0"), ["clusters[0].latency", "0.0", ">= 1e-06"]),
        (GOOD.replace("jobs = 20", "jobs = 20\njbos = 3"), ["unknown key 'workload.jbos'"]),
        (
            GOOD.replace('source = "synthetic"', 'source = "csv"'),
            ["workload.source", "'csv'", "synthetic, swf, gridlets"],
        ),
        (GOOD.replace("mips = 100", 'mips = "fast"'), ["clusters[0].machines[0].mips", "'fast'", "number"]),
        (
            GOOD.replace('name = "a"', 'name = "a"\npolicy = "easy[depth=3]"'),
            ["clusters[0].policy", "no parameter 'depth'"],
        ),
        (GOOD.replace("[workload]", "[workload]\nestimate = [10, 1]"), ["workload.estimate", "low <= high"]),
        (GOOD.split("[[clusters]]")[0] + "[workload]\nsource = 'synthetic'\n", ["clusters"]),
    ],
)
def test_bad_scenarios_name_file_key_value_and_expectation(tmp_path, text, needles):
    with pytest.raises(ScenarioError) as err:
        load(write(tmp_path, text))
    for needle in needles:
        assert needle in str(err.value)


def test_unknown_scenario_name_lists_built_ins():
    with pytest.raises(ScenarioError, match=r"not a built-in scenario.*quickstart"):
        load("no-such-scenario")


def test_bad_override():
    with pytest.raises(ScenarioError, match="expected key=value"):
        load("quickstart", ["workload.jobs"])


def test_bad_swf_line_is_reported_with_file_and_line(tmp_path):
    trace = tmp_path / "t.swf"
    trace.write_text("1 0 -1 10 1 -1 -1 1 abc -1 1 1 1 1 1 -1 -1 -1\n")
    raw = {
        "clusters": [{"name": "a", "machines": [{"cpus": 1, "mips": 1}]}],
        "workload": {"source": "swf", "path": str(trace), "strict": True},
    }
    with pytest.raises(ScenarioError) as err:
        parse(raw, "x.toml")
    assert "t.swf" in str(err.value) and "line 1" in str(err.value) and "'abc'" in str(err.value)


def test_duplicate_job_ids_are_an_error():
    gridlets = [{"id": 1, "estimate": 1.0}, {"id": 1, "estimate": 2.0}]
    raw = {
        "clusters": [{"name": "a", "machines": [{"cpus": 1, "mips": 1}]}],
        "workload": {"source": "gridlets", "gridlets": gridlets},
    }
    with pytest.raises(ScenarioError, match="two jobs with id 1"):
        parse(raw, "x.toml")


def test_own_site_with_jobs_naming_no_site_is_refused_naming_meta_policy(tmp_path, capsys):
    """Synthetic jobs name no site: own-site would reject every one and the run exit 0 without a word."""
    from emulator.cli import main

    with pytest.raises(ScenarioError) as err:
        load(write(tmp_path, GOOD), ["meta.policy=own-site"])
    message = str(err.value)
    assert "\n" not in message and "key 'meta.policy' = 'own-site'" in message
    assert "no job of the workload names a cluster (a)" in message and "all 20" in message
    assert load(write(tmp_path, GOOD), ["meta.policy=own-site", "workload.site=a"]).notes == []
    assert main(["run", str(write(tmp_path, GOOD)), "--set", "meta.policy=own-site", "--quiet"]) == 2
    assert "key 'meta.policy'" in capsys.readouterr().err


def test_own_site_with_some_jobs_naming_no_site_says_how_many_will_be_rejected(tmp_path, capsys):
    from emulator.cli import main

    gridlets = [
        {"id": 1, "estimate": 1.0, "site": "a"},
        {"id": 2, "estimate": 1.0},
        {"id": 3, "estimate": 1.0},
    ]
    raw = {
        "meta": {"policy": "own-site"},
        "clusters": [{"name": "a", "machines": [{"cpus": 1, "mips": 1}]}],
        "workload": {"source": "gridlets", "gridlets": gridlets},
    }
    note = (
        "x.toml: meta.policy = 'own-site': 2 of 3 jobs name no cluster (a) as their site and will be rejected"
    )
    assert parse(raw, "x.toml").notes == [note]
    path = tmp_path / "mixed.toml"  # the CLI: one job of three names its site
    path.write_text(
        '[meta]\npolicy = "own-site"\n[[clusters]]\nname = "a"\n[[clusters.machines]]\ncpus = 1\nmips = 1\n'
        '[workload]\nsource = "gridlets"\ngridlets = [{ id = 1, estimate = 1.0, site = "a" }, '
        "{ id = 2, estimate = 1.0 }, { id = 3, estimate = 1.0 }]\n"
    )
    assert main(["run", str(path), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    out, err = capsys.readouterr()
    assert f"gridemu: note: {path}: meta.policy = 'own-site': 2 of 3 jobs name no cluster (a)" in err
    assert "3 jobs: 1 finished, 2 rejected" in out


def test_what_a_presets_comments_call_a_policys_default_is_its_default():
    """``NAME[key="value"] (..., the default ...)`` in a preset's comment: what NAME runs without params
    (the two-level preset's comment called priority "ms" flexible's default; the run used "ls")."""
    from emulator.policies import META
    from workloads import presets

    said = 0
    for name in presets.names():
        comments = " ".join(
            line.split("#", 1)[1] for line in presets.path(name).read_text().splitlines() if "#" in line
        )
        for policy, key, value, words in re.findall(r'([\w-]+)\[(\w+)="?([\w.-]+)"?\] \(([^)]*)\)', comments):
            if "default" in words:
                registry = LOCAL if policy in LOCAL.names() else META
                assert str(registry.defaults(policy)[key]) == value, f"preset {name}: {policy}[{key}={value}]"
                said += 1
    assert said  # the two-level preset's flexible[priority=...]
    two_level = load("two-level", ["workload.jobs=10"])
    assert (
        two_level.effective["local"]["params"]["priority"] == LOCAL.defaults("flexible")["priority"] == "ls"
    )
