"""The ``gridemu`` command, called in-process: exit codes, output, and the run directory."""

from __future__ import annotations

import json

import pyarrow as pa

from emulator import cli
from emulator.cli import main


def read(path):
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def test_run_writes_a_complete_run_directory(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "quickstart", "--out", str(out), "--quiet", "--set", "workload.jobs=200"]) == 0
    printed = capsys.readouterr().out
    assert "grid" in printed and "200 jobs: 200 finished, 0 rejected" in printed
    assert sorted(p.name for p in out.iterdir()) == [
        "events.arrow",
        "jobs.arrow",
        "scenario.toml",
        "summary.json",
    ]
    summary = json.loads((out / "summary.json").read_text())
    jobs, events = read(out / "jobs.arrow"), read(out / "events.arrow")
    assert summary["jobs"] == {"total": 200, "finished": 200, "rejected": 0}
    assert jobs.num_rows == 200 and summary["run"]["events"] == events.num_rows == 5 * 200
    assert 'policy = "least-load"' in (out / "scenario.toml").read_text()
    assert "jobs = 200" in (out / "scenario.toml").read_text()


def test_default_out_dir_never_overwrites(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        assert main(["run", "quickstart", "--quiet", "--set", "workload.jobs=20"]) == 0
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [
        "quickstart-seed1-001",
        "quickstart-seed1-002",
    ]


def test_existing_out_dir_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main(["run", "quickstart", "--out", str(out), "--quiet"]) == 2
    assert "not empty" in capsys.readouterr().err
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


def test_bad_scenario_is_one_clear_line(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[[clusters]]\nname = 3\n")
    assert main(["run", str(bad), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gridemu: error: ") and "bad.toml" in err and "clusters[0].name" in err
    assert "Traceback" not in err


def test_seed_option_changes_the_run(tmp_path, capsys):
    outs = [tmp_path / "a", tmp_path / "b"]
    for out, seed in zip(outs, ("1", "2"), strict=True):
        assert (
            main(
                [
                    "run",
                    "quickstart",
                    "--out",
                    str(out),
                    "--quiet",
                    "--seed",
                    seed,
                    "--set",
                    "workload.jobs=50",
                ]
            )
            == 0
        )
    assert (outs[0] / "events.arrow").read_bytes() != (outs[1] / "events.arrow").read_bytes()


def test_inspect_prints_summary_and_counts(tmp_path, capsys):
    out = tmp_path / "run"
    main(["run", "quickstart", "--out", str(out), "--quiet", "--set", "workload.jobs=30"])
    capsys.readouterr()
    assert main(["inspect", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "arrive 30, dispatch 30, finish 30, start 30, submit 30" in printed


def test_inspect_of_a_non_run_directory(tmp_path, capsys):
    assert main(["inspect", str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_the_command_takes_arrows_buffers_from_the_systems_allocator_unless_told(monkeypatch):
    before = pa.default_memory_pool()
    try:
        monkeypatch.setenv("ARROW_DEFAULT_MEMORY_POOL", "mimalloc")
        pa.set_memory_pool(pa.mimalloc_memory_pool())
        cli._system_memory_pool()
        assert pa.default_memory_pool().backend_name == "mimalloc"
        monkeypatch.delenv("ARROW_DEFAULT_MEMORY_POOL")
        cli._system_memory_pool()
        assert pa.default_memory_pool().backend_name == "system"
    finally:
        pa.set_memory_pool(before)
