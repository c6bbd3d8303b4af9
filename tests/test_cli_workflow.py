"""A researcher's workflow (issue 19): one set of trace defaults, policy overrides that reach every
cluster on run, replay and sweep, --vary lists with brackets and float ranges, --version, plain help
and `gridemu policies`."""

from __future__ import annotations

import shlex
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

from emulator.cli import _parser, describe_policy, format_policies, main
from emulator.cli_workloads import trace_scenario
from emulator.core.config import ScenarioError
from emulator.data.replay import replay_scenario
from emulator.data.scenario import load, load_raw
from emulator.engine.sweep import parse_vary, points
from emulator.policies import LOCAL, META, PolicySpec
from emulator.policies.registry import Registry


def small_trace(tmp_path: Path) -> Path:
    """60 jobs whose run times (field 4: 20-24 s) are shorter than their requested times (field 9: 40 s)."""
    lines = [
        f"{i} {5 * i} 0 {20 + i % 5} {1 + i % 4} -1 -1 {1 + i % 4} 40 -1 1 3 1 -1 -1 1 -1 -1"
        for i in range(1, 61)
    ]
    path = tmp_path / "tiny.swf"
    path.write_text("; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 8\n" + "\n".join(lines) + "\n")
    return path


def shape(scenario) -> list[tuple]:
    return [(j.id, j.submit, j.cpus, j.estimate, j.runtime) for j in scenario.jobs]


# --- item 2: one set of trace defaults ------------------------------------------------------------


def test_a_scenario_file_reads_a_trace_as_run_swf_does(tmp_path):
    trace = small_trace(tmp_path)
    swf = load_raw(trace_scenario(trace), "--swf", tmp_path)
    raw = trace_scenario(trace)
    del raw["workload"]["rules"]  # a scenario file that names no rules
    scenario = load_raw(raw, "s.toml", tmp_path)
    assert shape(scenario) == shape(swf)
    assert shape(scenario)[0] == (1, 5.0, 2, 40.0, 21.0)  # the archive's rules: run time field 4
    assert scenario.effective["workload"]["rules"] == "pwa"  # scenario.toml says which rules were used
    assert scenario.notes == [
        's.toml: [workload] names no rules: the trace is read by the archive\'s (rules = "pwa", as run '
        '--swf); rules = "gridsim" reads it as GridSim\'s Workload does'
    ]
    assert swf.notes == []
    gridsim = load_raw(trace_scenario(trace), "s.toml", tmp_path, ["workload.rules=gridsim"])
    assert shape(gridsim)[0] == (1, 5.0, 2, 40.0, 40.0)  # GridSim's Workload: the requested time runs
    assert gridsim.notes == []


def test_run_prints_a_note_only_when_the_rules_are_left_out(tmp_path, capsys):
    trace = small_trace(tmp_path)
    text = f"""
name = "tiny"
local.policy = "easy"
[platform]
source = "swf"
path = "{trace}"
[workload]
source = "swf"
path = "{trace}"
site = "tiny"
"""
    (tmp_path / "implicit.toml").write_text(text)
    (tmp_path / "explicit.toml").write_text(text + 'rules = "pwa"\n')
    assert main(["run", str(tmp_path / "implicit.toml"), "--out", str(tmp_path / "a"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert err.count("gridemu: note:") == 1 and "names no rules" in err
    assert main(["run", str(tmp_path / "explicit.toml"), "--out", str(tmp_path / "b"), "--quiet"]) == 0
    assert capsys.readouterr().err == ""
    for run in ("a", "b"):
        saved = tomllib.loads((tmp_path / run / "scenario.toml").read_text())
        assert saved["workload"]["rules"] == "pwa"
    assert (tmp_path / "a" / "jobs.arrow").read_bytes() == (tmp_path / "b" / "jobs.arrow").read_bytes()


# --- item 3: --set local.policy / meta.policy reach every cluster that takes the default ---------------


def test_the_readme_replay_under_fcfs_changes_the_trace(tmp_path, capsys):
    first = tmp_path / "first"
    assert main(["run", "quickstart", "--set", "workload.jobs=200", "--out", str(first), "--quiet"]) == 0
    saved = tomllib.loads((first / "scenario.toml").read_text())
    assert saved["local"] == {"policy": "easy", "params": LOCAL.defaults("easy")}
    assert [c.get("policy") for c in saved["clusters"]] == [None, "fcfs", None]  # only beta sets its own

    assert main(["replay", str(first), "--out", str(tmp_path / "same"), "--quiet"]) == 0
    assert (tmp_path / "same" / "events.arrow").read_bytes() == (first / "events.arrow").read_bytes()
    argv = ["replay", str(first), "--set", "local.policy=fcfs", "--out", str(tmp_path / "fcfs"), "--quiet"]
    assert main(argv) == 0
    assert (tmp_path / "fcfs" / "events.arrow").read_bytes() != (first / "events.arrow").read_bytes()
    replayed = replay_scenario(first, overrides=["local.policy=fcfs"]).local  # beta's saved params filled in
    assert [(s.name, {**LOCAL.defaults("fcfs"), **s.params}) for s in replayed] == [
        ("fcfs", LOCAL.defaults("fcfs"))
    ] * 3


def test_an_override_that_cannot_reach_an_explicit_cluster_policy_is_an_error(tmp_path, capsys):
    with pytest.raises(ScenarioError) as err:
        load("quickstart", ["local.policy=easy"])
    assert str(err.value) == (
        "built-in scenario 'quickstart': local.policy = easy does not reach cluster 'beta', which sets "
        "its own policy fcfs: override it too with --set clusters.1.policy=SPEC, or leave it out of the "
        "scenario"
    )
    reached = load("quickstart", ["local.policy=cs2[period=10]", "clusters.1.policy=easy"])
    assert [str(s) for s in reached.local] == ["cs2[period=10]", "easy", "cs2[period=10]"]
    assert [str(s) for s in load("quickstart", ["local.policy=fcfs"]).local] == ["fcfs"] * 3

    first = tmp_path / "first"
    assert main(["run", "quickstart", "--set", "workload.jobs=50", "--out", str(first), "--quiet"]) == 0
    argv = ["replay", str(first), "--set", "local.policy=easy", "--out", str(tmp_path / "r"), "--quiet"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "does not reach cluster 'beta'" in err and "--set clusters.1.policy=SPEC" in err


def test_a_cluster_with_its_own_params_keeps_them_and_is_its_own(tmp_path):
    raw = tomllib.loads((Path(__file__).parents[1] / "emulator/examples/quickstart.toml").read_text())
    raw["local"] = {"policy": "flexible"}
    del raw["clusters"][1]["policy"]
    raw["clusters"][2]["params"] = {"priority": "ms"}
    scenario = load_raw(raw, "q.toml", overrides=["workload.jobs=10"])
    assert [str(s) for s in scenario.local] == ["flexible", "flexible", "flexible[priority=ms]"]
    assert scenario.own_policy == (False, False, True)
    with pytest.raises(ScenarioError, match=r"does not reach cluster 'gamma'.*clusters\.2\.policy"):
        load_raw(raw, "q.toml", overrides=["local.policy=flexible[priority=ls]"])
    with pytest.raises(ScenarioError, match="local policy 'easy' has no parameter 'priority'"):
        load_raw(raw, "q.toml", overrides=["local.policy=easy"])  # its params go with [local]'s name


def test_a_sweep_over_local_policy_stops_at_once_on_an_explicit_cluster_policy(tmp_path, capsys):
    out = tmp_path / "sweep"
    argv = ["sweep", "quickstart", "--quiet", "--out", str(out), "--set", "workload.jobs=30"]
    assert main([*argv, "--vary", "local.policy=fcfs,easy"]) == 2
    err = capsys.readouterr().err
    assert "sweep point point-001 {'local.policy': 'easy'}" in err and "cluster 'beta'" in err
    assert not out.exists() or not any(out.iterdir())  # nothing ran


def test_a_sweep_over_local_policy_changes_every_defaulted_cluster(tmp_path):
    text = (Path(__file__).parents[1] / "emulator/examples/quickstart.toml").read_text()
    path = tmp_path / "q.toml"
    path.write_text(text.replace('policy = "fcfs"\n', ""))  # beta takes [local]'s policy
    varies = parse_vary(["local.policy=cs2[sort=counting,period=10],fcfs"])
    for point in points(varies, ["workload.jobs=10"]):
        seed, sets = point.overrides()
        policies = [str(s) for s in load(path, sets, seed=seed).local]
        assert policies == [str(PolicySpec.parse(point.values["local.policy"]))] * 3
    assert [str(s) for s in load(path, ["local.policy=fcfs"]).local] == ["fcfs"] * 3


def test_meta_policy_override_on_replay_replaces_the_saved_params(tmp_path, capsys):
    first = tmp_path / "first"
    argv = ["run", "--preset", "two-level", "--set", "workload.jobs=40", "--out", str(first), "--quiet"]
    assert main(argv) == 0
    assert tomllib.loads((first / "scenario.toml").read_text())["meta"]["params"]["window"] == 100
    other = replay_scenario(first, overrides=["meta.policy=round-robin"])  # used to fail on 'combine'
    assert str(other.meta) == "round-robin"
    narrower = replay_scenario(first, overrides=['meta.policy="two-level[window=50]"'])
    assert str(narrower.meta) == "two-level[window=50]"  # the saved window = 100 no longer wins
    with_param = replay_scenario(first, overrides=["meta.policy=two-level", "meta.params.levels=4"])
    assert str(with_param.meta) == "two-level[levels=4]"


def test_generated_clusters_with_their_own_policies_name_the_platform_key(tmp_path):
    path = tmp_path / "fig6.toml"
    path.write_text(
        'extends = "muscle"\n[platform]\npolicies = ["titan[w_over=12.0]", "titan", "titan", "titan"]\n'
    )
    with pytest.raises(ScenarioError) as err:
        load(path, ["workload.jobs=20", "local.policy=fcfs"])
    assert "does not reach cluster 'C1', which sets its own policy titan[w_over=12.0]" in str(err.value)
    assert "override it too with --set platform.policies=[...]" in str(err.value)
    policies = 'platform.policies=["fcfs", "easy", "fcfs", "fcfs"]'
    assert [str(s) for s in load(path, ["workload.jobs=20", "local.policy=fcfs", policies]).local] == [
        "fcfs",
        "easy",
        "fcfs",
        "fcfs",
    ]
    assert str(load("muscle", ["workload.jobs=20", "local.policy=fcfs"]).local[0]) == "fcfs"


# --- item 8: --vary parsing, --version, help, policies -----------------------------------------------


def test_vary_respects_brackets_and_quotes():
    assert parse_vary(
        [
            "local.policy=cs2[sort=counting,period=10],easy",
            "workload.path='a,b.swf', \"c.swf\"",
            "platform.cpus=[1, 2],[4, 8]",
        ]
    ) == [
        ("local.policy", ["cs2[sort=counting,period=10]", "easy"]),
        ("workload.path", ["a,b.swf", "c.swf"]),
        ("platform.cpus", [[1, 2], [4, 8]]),
    ]
    (point, _) = points(parse_vary(["local.policy=cs2[sort=counting,period=10],easy"]))
    assert point.overrides() == (None, ['local.policy="cs2[sort=counting,period=10]"'])
    assert str(load("cs2", point.overrides()[1]).local[0]) == "cs2[period=10,sort=counting]"


def test_vary_ranges_integer_and_float():
    assert parse_vary(["seed=1..20"]) == [("seed", list(range(1, 21)))]
    assert parse_vary(["seed=1..10:3"]) == [("seed", [1, 4, 7, 10])]
    assert parse_vary(["x=0.5..2.0:0.25"]) == [("x", [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0])]
    assert parse_vary(["x=0.1..0.3:0.1"]) == [("x", [0.1, 0.2, 0.3])]  # 0.1 + 2 * 0.1 > 0.3: tolerated
    assert parse_vary(["x=0..1:0.3"]) == [("x", [0.0, 0.3, 0.6, 0.9])]  # 1.0 is not on a step
    assert parse_vary(["x=1..2:0.5"]) == [("x", [1.0, 1.5, 2.0])]


@pytest.mark.parametrize(
    ("item", "message"),
    [
        ("x=0.5..2.0", "a range of non-integers needs a step, e.g. 0.5..2.0:0.25"),
        ("x=2..1", "empty range (1 < 2)"),
        ("x=1..2:0", "the step must be > 0"),
        ("x=1..2:-1", "the step must be > 0"),
        ("seed=a..b", "a value holding '..' goes in quotes"),
        ("x=cs2[sort=counting", "unclosed bracket in 'cs2[sort=counting'"),
        ("x='a,b", "unclosed ' in"),
        ("x=a],b", "']' at character 2 closes nothing"),
        ("x=a,,b", "an empty value"),
        ("x=0..1e9:0.001", "at most 100,000 in a range"),
    ],
)
def test_bad_vary_says_what_is_wrong(item, message):
    with pytest.raises(ScenarioError) as err:
        parse_vary([item])
    assert str(err.value).startswith(f"--vary {item!r}: ") and message in str(err.value)


def test_version_comes_from_the_installed_distribution(capsys):
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0
    assert capsys.readouterr().out == f"gridemu {metadata.version('gridemu')}\n"


def test_help_texts_have_no_sphinx_markup_and_run_has_a_description():
    parser = _parser()
    commands = parser._subparsers._group_actions[0].choices  # argparse keeps its subparsers here
    assert {"run", "replay", "sweep", "policies"} <= set(commands)
    for text in [parser.format_help(), *(sub.format_help() for sub in commands.values())]:
        assert "``" not in text and ":mod:`" not in text and ":class:`" not in text and ":func:`" not in text
    assert "Run a scenario (a TOML file, a built-in name, --swf TRACE or --preset NAME)" in (
        commands["run"].format_help()
    )


def test_policies_lists_every_registered_policy_with_its_parameters(capsys):
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":class:`" not in out
    listed = [line.split()[0] for line in out.splitlines() if line.startswith("  ") and line[2] != " "]
    assert listed == [*LOCAL.names(), *META.names()]
    for registry in (LOCAL, META):
        for name in registry.names():
            for key, default in registry.defaults(name).items():
                value = str(default).lower() if isinstance(default, bool) else str(default)
                assert f"{key}={value}" in out, (name, key)
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("  ") and line[2] != " "}
    for registry in (LOCAL, META):  # the first line of the class's docstring, or of its module's
        for name in registry.names():
            words = describe_policy(type(registry.create(name))).split()[:4]
            assert lines[name].split()[1:5] == words, name
    assert describe_policy(type(LOCAL.create("gridsim-spaceshared"))).startswith("GridSim 5.2 SpaceShared:")
    assert "w_d=15.0 w_c=40.0" in out and "window=100" in out


def test_policies_reads_any_registry():
    registry = Registry("local")

    @registry.register("shortest-first")
    class ShortestFirst:
        """Shortest ``estimate`` first, see :class:`~emulator.policies.fcfs.Fcfs`.

        More lines that are not listed.
        """

        def __init__(self, *, window: int = 3, strict: bool = False, rng=None) -> None:
            pass

    assert format_policies(registry, "mine:").splitlines() == [
        "mine:",
        "  shortest-first  Shortest estimate first, see Fcfs.",
        "                  parameters: window=3 strict=false",
    ]


def test_the_readme_sweeps_parse_and_load_as_described():
    readme = (Path(__file__).parents[1] / "README.md").read_text()
    block = readme.split("### Sweeps", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line.partition("#")[0]) for line in block.strip().splitlines()]
    varied = {}
    for argv in commands:
        items = [argv[i + 1] for i, word in enumerate(argv) if word == "--vary"]
        for key, values in parse_vary(items):
            varied[key] = values
        point = points(parse_vary(items), ["workload.jobs=20"])[0]
        seed, sets = point.overrides()
        load(argv[2], sets, seed=seed)  # each sweep's first point is a valid scenario
    assert varied["local.policy"] == ["cs2[sort=counting,period=10]", "easy"]
    assert varied["stress.load"] == [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0]
    assert varied["seed"] == [1, 2, 3, 4, 5]
