"""A replay's default run directory says what the replay changed, is one plain path component, and is new."""

from __future__ import annotations

import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.data.replay import NAME_LENGTH, replay_name
from emulator.data.rundir import safe_name


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    out = tmp_path_factory.mktemp("replay") / "kth-seed1-001"
    run(load_scenario("quickstart", ["workload.jobs=20"]), out)
    return out


@pytest.mark.parametrize(
    ("argv", "name"),
    [
        ([], "kth-seed1-001-replay-001"),
        (["--set", "local.policy=fcfs"], "kth-seed1-001-replay-local.policy=fcfs-001"),
        (
            ["--set", "local.policy=fcfs", "--set", "meta.policy=round-robin", "--seed", "4"],
            "kth-seed1-001-replay-local.policy=fcfs+meta.policy=round-robin+seed=4-001",
        ),
    ],
)
def test_the_default_directory_names_what_changed(first, tmp_path, monkeypatch, argv, name):
    monkeypatch.chdir(tmp_path)
    assert main(["replay", str(first), *argv, "--quiet"]) == 0
    assert [p.name for p in (tmp_path / "runs").iterdir()] == [name]
    assert main(["replay", str(first / "jobs.arrow"), *argv, "--quiet"]) == 0  # the same change again
    assert sorted(p.name for p in (tmp_path / "runs").iterdir()) == [name, name[:-3] + "002"]


def test_a_name_is_one_path_component_of_bounded_length(tmp_path):
    name = replay_name(tmp_path / "run", "../other.toml", ["workload.path=/data/x y.swf", "a=" + "9" * 300])
    assert name.startswith("run-replay-other+workload.path=/data/x y.swf+a=999")
    assert len(name) == len("run-replay-") + NAME_LENGTH
    # rundir.safe_name makes it a plain component: slashes and spaces become "_", "=" stays
    assert safe_name(name).startswith("run-replay-other+workload.path=_data_x_y.swf+a=999")
