"""The workload commands in-process: presets, run --preset / --swf, replay, convert."""

from __future__ import annotations

from pathlib import Path

from emulator.cli import main


def small_trace(tmp_path: Path, name: str = "tiny.swf") -> Path:
    lines = [
        f"{i} {5 * i} 0 {20 + i % 5} {1 + i % 4} -1 -1 {1 + i % 4} 40 -1 1 3 1 -1 -1 1 -1 -1"
        for i in range(1, 61)
    ]
    path = tmp_path / name
    path.write_text("; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 8\n" + "\n".join(lines) + "\n")
    return path


def test_presets_lists_each_with_one_line(capsys):
    assert main(["presets"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in out[:5]] == ["cs2", "mcrs", "muscle", "stress", "two-level"]
    assert all(len(line.split()) > 3 for line in out[:5])
    recipes = out[out.index("sweep recipes:") + 1 :]
    assert [line.split()[0] for line in recipes[:4]] == [
        "stress-bursts",
        "stress-estimates",
        "stress-failures",
        "stress-staleness",
    ]


def test_run_preset_with_set(tmp_path, capsys):
    out = tmp_path / "run"
    argv = [
        "run",
        "--preset",
        "two-level",
        "--set",
        "workload.mean_interarrival=5",
        "--set",
        "workload.jobs=150",
    ]
    assert main([*argv, "--out", str(out), "--quiet"]) == 0
    assert "150 jobs: 150 finished" in capsys.readouterr().out
    assert "mean_interarrival = 5" in (out / "scenario.toml").read_text()
    assert main(["run", "--preset", "nope", "--quiet"]) == 2
    assert "no preset 'nope'" in capsys.readouterr().err


def test_run_swf_without_a_scenario_file(tmp_path, capsys):
    trace = small_trace(tmp_path)
    out = tmp_path / "run"
    assert main(["run", "--swf", str(trace), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "tiny" in printed and "60 jobs: 60 finished, 0 rejected" in printed
    text = (out / "scenario.toml").read_text()
    assert 'policy = "easy"' in text and 'rules = "pwa"' in text and 'site = "tiny"' in text
    assert main(["replay", str(out), "--out", str(tmp_path / "again"), "--quiet"]) == 0
    for name in ("events.arrow", "jobs.arrow"):
        assert (out / name).read_bytes() == (tmp_path / "again" / name).read_bytes()


def test_run_swf_with_an_alea_machines_file(tmp_path, capsys):
    trace = small_trace(tmp_path, "jobs.swf")
    (tmp_path / "jobs.swf.machines").write_text("0 north 2 4 1 100\n1 south 3 2 2 100\n")
    assert main(["run", "--swf", str(trace), "--out", str(tmp_path / "run"), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "north" in printed and "south" in printed and "60 jobs: 60 finished" in printed


def test_run_needs_exactly_one_source(capsys):
    assert main(["run", "--quiet"]) == 2
    assert "give one of SCENARIO, --swf TRACE or --preset NAME" in capsys.readouterr().err
    assert main(["run", "quickstart", "--preset", "cs2", "--quiet"]) == 2
    assert main(["run", "quickstart", "--sites", "partition", "--quiet"]) == 2
    assert "--machines and --sites go with --swf" in capsys.readouterr().err


def test_replay_with_overrides(tmp_path, capsys):
    first = tmp_path / "first"
    main(["run", "quickstart", "--set", "workload.jobs=80", "--out", str(first), "--quiet"])
    argv = ["replay", str(first / "jobs.arrow"), "--set", "local.policy=fcfs", "--out", str(tmp_path / "r")]
    assert main([*argv, "--quiet"]) == 0
    assert "80 jobs: 80 finished" in capsys.readouterr().out
    assert 'policy = "fcfs"' in (tmp_path / "r" / "scenario.toml").read_text()
    assert main(["replay", str(tmp_path / "missing"), "--quiet"]) == 2


def test_convert_round_trip_and_errors(tmp_path, capsys):
    trace = small_trace(tmp_path)
    assert main(["convert", str(trace), str(tmp_path / "t.arrow")]) == 0
    assert "60 jobs" in capsys.readouterr().out
    assert main(["convert", str(tmp_path / "t.arrow"), str(tmp_path / "back.swf")]) == 0
    assert main(["convert", str(tmp_path / "back.swf"), str(tmp_path / "t.gwf"), "--limit", "10"]) == 0
    capsys.readouterr()
    rows = lambda p: [r.split()[:18] for r in p.read_text().splitlines() if not r.startswith((";", "#"))]  # noqa: E731
    assert rows(tmp_path / "back.swf") == rows(trace)
    assert len(rows(tmp_path / "t.gwf")) == 10
    assert main(["convert", str(trace), str(tmp_path / "x.txt")]) == 2
    assert "cannot tell the format" in capsys.readouterr().err
    assert main(["convert", str(tmp_path / "t.arrow"), str(tmp_path / "y.swf"), "--rules", "gridsim"]) == 2
    bad = tmp_path / "bad.swf"
    bad.write_text("1 2 3\n1 0 0 x 1 -1 -1 1 1 -1 1 1 1 -1 -1 -1 -1 -1\n")
    assert main(["convert", str(bad), str(tmp_path / "bad.arrow")]) == 0
    printed = capsys.readouterr().out
    assert "2 line(s) skipped, e.g. line 1: 3 fields, expected 18" in printed
