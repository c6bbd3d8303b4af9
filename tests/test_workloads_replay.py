"""Replay: an earlier run's jobs.arrow re-run under its own scenario gives the same traces, byte for byte."""

from __future__ import annotations

from pathlib import Path

import pytest

from emulator import run
from emulator.core.config import ScenarioError
from emulator.data.replay import jobs_path, replay_scenario
from emulator.data.scenario import load, parse

FILES = ("events.arrow", "jobs.arrow")


def same_traces(a: Path, b: Path) -> bool:
    return all((a / name).read_bytes() == (b / name).read_bytes() for name in FILES)


def run_and_save(tmp_path: Path, scenario, name: str) -> Path:
    out = tmp_path / name
    run(scenario, out)
    (out / "scenario.toml").read_text()  # written
    return out


def test_replay_reproduces_a_synthetic_run(tmp_path):
    first = run_and_save(tmp_path, load("quickstart", ["workload.jobs=400"]), "first")
    replayed = run_and_save(tmp_path, replay_scenario(first), "replay")
    assert same_traces(first, replayed)
    assert 'source = "arrow"' in (replayed / "scenario.toml").read_text()


def test_replay_reproduces_a_trace_run_with_its_trace_columns(tmp_path):
    trace = tmp_path / "t.swf"
    lines = [
        f"{i} {3 * i} 1 {10 + i % 7} {1 + i % 3} -1 -1 2 30 -1 {i % 2} 5 1 -1 -1 -1 -1 -1"
        for i in range(1, 200)
    ]
    trace.write_text("; MaxNodes: 4\n; MaxProcs: 4\n" + "\n".join(lines) + "\n")
    raw = {
        "local": {"policy": "easy"},
        "platform": {"source": "swf", "path": str(trace)},
        "workload": {"source": "swf", "path": str(trace), "rules": "pwa", "site": "t"},
    }
    first = tmp_path / "first"
    result = run(parse(raw, str(tmp_path / "s.toml")), first)
    assert "swf_status" in result.jobs.column_names
    assert same_traces(first, run_and_save(tmp_path, replay_scenario(first / "jobs.arrow"), "replay"))


def test_replay_of_a_preset_run(tmp_path):
    from workloads import presets

    first = run_and_save(tmp_path, load(presets.path("muscle"), ["workload.jobs=300"]), "first")
    assert same_traces(first, run_and_save(tmp_path, replay_scenario(first), "replay"))


def test_replay_under_other_policies_keeps_the_jobs(tmp_path):
    first = run_and_save(tmp_path, load("quickstart", ["workload.jobs=300"]), "first")
    other = replay_scenario(first, overrides=["meta.policy=round-robin", "local.policy=fcfs"])
    original = load("quickstart", ["workload.jobs=300"])
    assert [j.to_tuple() for j in other.jobs] == [j.to_tuple() for j in original.jobs]
    result = run(other, tmp_path / "other")
    assert result.summary["jobs"]["total"] == 300
    assert not same_traces(first, tmp_path / "other")
    limited = replay_scenario(first, overrides=["workload.limit=50", "workload.interarrival_scale=0.5"])
    assert len(limited.jobs) == 50 and limited.jobs[10].submit == pytest.approx(original.jobs[10].submit / 2)


def test_replay_under_another_scenario(tmp_path):
    first = run_and_save(tmp_path, load("quickstart", ["workload.jobs=100"]), "first")
    other = tmp_path / "other.toml"
    other.write_text(
        '[[clusters]]\nname = "big"\nlicenses = { matlab = 50, ansys = 50 }\n'
        "  [[clusters.machines]]\n  count = 10\n  cpus = 16\n  mips = 300\n"
        '[workload]\nsource = "synthetic"\n'
    )
    scenario = replay_scenario(first / "jobs.arrow", other)
    assert [c.name for c in scenario.platform.clusters] == ["big"] and len(scenario.jobs) == 100
    assert run(scenario, tmp_path / "r").summary["jobs"]["finished"] == 100


def test_replay_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="neither a run directory"):
        jobs_path(tmp_path / "nothing")
    first = run_and_save(tmp_path, load("quickstart", ["workload.jobs=20"]), "first")
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "jobs.arrow").write_bytes((first / "jobs.arrow").read_bytes())
    with pytest.raises(ScenarioError, match=r"no scenario\.toml beside it"):
        replay_scenario(lone)
    (tmp_path / "not-jobs.arrow").write_bytes((first / "events.arrow").read_bytes())
    raw = {"clusters": [{"machines": [{"cpus": 1, "mips": 1}]}], "workload": {"source": "arrow"}}
    raw["workload"]["path"] = str(tmp_path / "not-jobs.arrow")
    with pytest.raises(ScenarioError, match="not a jobs table: no column id"):
        parse(raw, "s.toml")
