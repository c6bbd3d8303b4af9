"""Plug-in policies (emulator/policies/plugins.py): ``module:Class`` specs and entry points, from a
scenario file, ``--set``, sweeps and replays, with one-line errors for every bad spec.

The worked example of docs/policies.md is tests/plugins/smallest_first.py on
tests/plugins/four_jobs.toml: one 4-CPU machine at 1 MIPS, jobs entering it directly, so a job
lasts its runtime from its start. J1 (4 CPUs, 10 s) starts at 0; by t=10 J2 (3 CPUs, 5 s), J3
(2 CPUs, 4 s) and J4 (1 CPU, 6 s) wait.
"""

from __future__ import annotations

import csv
import re
import shlex
import textwrap
from pathlib import Path

import pyarrow as pa
import pytest

from emulator import load_scenario, run
from emulator.cli import main
from emulator.engine.sweep import Point, parse_vary, run_point
from emulator.policies import LOCAL, META, PolicyError

from .states import decide
from .test_policy_states import BUSY

PLUGINS = Path(__file__).parent / "plugins"
SCENARIO = PLUGINS / "four_jobs.toml"
SMALLEST = "tests.plugins.smallest_first:SmallestFirst"
FEWEST = "tests.plugins.fewest_cpus:FewestQueuedCpus"

# Smallest first at t=10: J4 (1 CPU) 10..16 and J3 (2 CPUs) 10..14 start; J2 (3 CPUs) finds one CPU
# free and blocks until J3 ends: 14..19.
SMALLEST_TIMES = {1: (0, 10), 2: (14, 19), 3: (10, 14), 4: (10, 16)}
# Largest first at t=10: J2 10..15; J3 finds one CPU and blocks; at 15 J3 15..19 and J4 15..21.
LARGEST_TIMES = {1: (0, 10), 2: (10, 15), 3: (15, 19), 4: (15, 21)}


def times(out: Path) -> dict[int, tuple[float, float]]:
    jobs = pa.ipc.open_file(out / "jobs.arrow").read_all().to_pylist()
    return {row["id"]: (row["start"], row["finish"]) for row in jobs}


def test_the_worked_example_runs_from_its_scenario_file(tmp_path):
    result = run(load_scenario(SCENARIO), tmp_path / "run")
    assert times(result.out_dir) == SMALLEST_TIMES


def test_the_worked_example_runs_from_the_cli_with_params_and_replays(tmp_path, capsys):
    out, again = tmp_path / "run", tmp_path / "replay"
    spec = f"{SMALLEST}[largest=true]"
    assert main(["run", str(SCENARIO), "--set", f"local.policy={spec}", "--out", str(out), "--quiet"]) == 0
    assert times(out) == LARGEST_TIMES
    saved = (out / "scenario.toml").read_text()
    assert f'policy = "{SMALLEST}"' in saved and "largest = true" in saved
    assert main(["replay", str(out), "--out", str(again), "--quiet"]) == 0
    assert (again / "events.arrow").read_bytes() == (out / "events.arrow").read_bytes()


def test_a_plugin_decides_on_a_hand_built_state():
    # BUSY: 2 CPUs free on machine 1; the 2-CPU jobs J3 and J4 come before the 4-CPU J2: J3 fits.
    assert decide(SMALLEST, [2, 2], **BUSY) == [(3, ((1, 2),))]


def test_a_meta_plugin_dispatches(tmp_path):
    result = run(load_scenario("quickstart", ["workload.jobs=50", f"meta.policy={FEWEST}"]), tmp_path / "run")
    assert result.summary["jobs"]["finished"] + result.summary["jobs"]["rejected"] == 50
    assert META.create(FEWEST).name == FEWEST


def test_sweep_varies_a_plugin_spec_whose_colons_and_brackets_survive(tmp_path, capsys):
    values = f"{SMALLEST}[largest=true],{SMALLEST},fcfs"
    assert parse_vary([f"local.policy={values}"]) == [
        ("local.policy", [f"{SMALLEST}[largest=true]", SMALLEST, "fcfs"])
    ]
    out = tmp_path / "sweep"
    assert (
        main(["sweep", str(SCENARIO), "--vary", f"local.policy={values}", "--out", str(out), "--quiet"]) == 0
    )
    rows = list(csv.DictReader((out / "sweep.csv").open()))
    assert [(r["local.policy"], r["status"], float(r["makespan"])) for r in rows] == [
        (f"{SMALLEST}[largest=true]", "ok", 21.0),
        (SMALLEST, "ok", 19.0),
        ("fcfs", "ok", 21.0),
    ]


def test_params_are_checked_as_a_built_ins():
    assert LOCAL.create(f"{SMALLEST}[largest=true]").largest is True
    assert LOCAL.defaults(SMALLEST) == {"largest": False}
    with pytest.raises(PolicyError) as err:
        LOCAL.create(f"{SMALLEST}[largst=true]")
    assert str(err.value) == f"local policy '{SMALLEST}' has no parameter 'largst'; parameters: largest"
    with pytest.raises(PolicyError) as err:
        LOCAL.create(f"{SMALLEST}[largest=3]")
    assert str(err.value) == f"policy '{SMALLEST}' parameter 'largest' = 3: expected bool (like False)"
    with pytest.raises(PolicyError, match="has no parameter 'rng'"):
        LOCAL.create(f"{SMALLEST}[rng=1]")  # the engine's arguments are never parameters


IMPORTABLE = "expected it importable (installed, on PYTHONPATH, or under the current directory)"
BAD_SPECS = [
    ("nopkg.policy:Mine", "no module named 'nopkg'; " + IMPORTABLE),
    ("tests.plugins.nothing:Mine", "no module named 'tests.plugins.nothing'; " + IMPORTABLE),
    (
        "tests.plugins.smallest_first:Biggest",
        "module 'tests.plugins.smallest_first' has no attribute 'Biggest'; "
        "expected a LocalPolicy subclass there",
    ),
    (FEWEST, f"{FEWEST} is a class derived from MetaPolicy; expected a subclass of LocalPolicy"),
    (
        "tests.plugins.smallest_first:Scratch.fit",
        "tests.plugins.smallest_first:Scratch.fit is a function, not a class; "
        "expected a subclass of LocalPolicy",
    ),
    ("tests.plugins:", "expected module.path:ClassName (a dotted module path, a colon, a class name)"),
    ("a-b:C", "expected module.path:ClassName (a dotted module path, a colon, a class name)"),
]


@pytest.mark.parametrize(("spec", "message"), BAD_SPECS)
def test_a_bad_spec_is_one_line_naming_it(spec, message):
    with pytest.raises(PolicyError) as err:
        LOCAL.create(spec)
    assert str(err.value) == f"local policy {spec!r}: {message}"


def test_a_plugin_that_fails_on_import_says_how(tmp_path, monkeypatch):
    (tmp_path / "broken_policy.py").write_text("import not_installed_dependency\n")
    (tmp_path / "raising_policy.py").write_text("raise RuntimeError('no config file\\nsecond line')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(PolicyError) as err:
        LOCAL.create("broken_policy:P")
    assert str(err.value) == (
        "local policy 'broken_policy:P': importing 'broken_policy' failed: "
        "ModuleNotFoundError: No module named 'not_installed_dependency'"
    )
    with pytest.raises(PolicyError) as err:
        LOCAL.create("raising_policy:P")
    assert str(err.value).endswith("importing 'raising_policy' failed: RuntimeError: no config file")


def test_the_cli_says_a_bad_spec_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", str(SCENARIO), "--set", f"local.policy={FEWEST}", "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"key 'local.policy': local policy '{FEWEST}': {FEWEST} is a class derived from MetaPolicy" in err


def test_an_unknown_name_points_at_plugins():
    with pytest.raises(
        PolicyError, match=re.escape("or a plug-in (module.path:ClassName, or an entry point")
    ):
        LOCAL.create("mine")


def install(tmp_path: Path, monkeypatch, entries: str, name: str = "demo_plugins") -> None:
    """A distribution declaring ``entries`` in group gridemu.policies, found on sys.path."""
    info = tmp_path / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[gridemu.policies]\n" + textwrap.dedent(entries))
    monkeypatch.syspath_prepend(str(tmp_path))


def test_entry_points_are_found_by_name_and_listed(tmp_path, monkeypatch, capsys):
    install(tmp_path, monkeypatch, f"smallest = {SMALLEST}\nfewest = {FEWEST}\n")
    assert LOCAL.create("smallest[largest=true]").largest is True
    assert META.create("fewest").name == "fewest"
    with pytest.raises(PolicyError) as err:
        LOCAL.create("fewest")
    assert str(err.value) == (
        f"local policy 'fewest' (entry point {FEWEST}): {FEWEST} is a class derived from MetaPolicy; "
        "expected a subclass of LocalPolicy"
    )
    assert LOCAL.installed() == {"smallest": SMALLEST} and META.installed() == {"fewest": FEWEST}
    assert "smallest" not in LOCAL.names()  # (the built-ins)
    assert main(["policies"]) == 0
    out = capsys.readouterr().out
    assert "  smallest              Start queued jobs fewest CPUs first" in out
    assert f"(plug-in {SMALLEST})" in out and "parameters: largest=false" in out
    assert f"(plug-in {FEWEST})" in out


def test_an_entry_point_never_shadows_a_built_in(tmp_path, monkeypatch):
    install(tmp_path, monkeypatch, f"easy = {SMALLEST}\n")
    assert type(LOCAL.create("easy")).__name__ == "Easy"  # built-ins never look at entry points
    with pytest.raises(PolicyError) as err:
        LOCAL.create("smallest")
    assert str(err.value) == (
        f"entry point 'easy' (group gridemu.policies, {SMALLEST}) takes the name of a built-in policy; "
        "expected a name of its own"
    )


def test_an_entry_point_declared_twice_is_an_error(tmp_path, monkeypatch):
    for folder, reference in (("one", SMALLEST), ("two", FEWEST)):
        (tmp_path / folder).mkdir()
        install(tmp_path / folder, monkeypatch, f"mine = {reference}\n", folder)
    with pytest.raises(PolicyError, match=r"entry point 'mine' .* is declared twice"):
        LOCAL.create("mine")


def test_the_docs_show_the_tested_plugin_files():
    docs = (Path(__file__).parents[1] / "docs" / "policies.md").read_text()
    for name in ("smallest_first.py", "fewest_cpus.py", "four_jobs.toml"):
        assert (PLUGINS / name).read_text().strip() in docs, name


def test_the_docs_commands_on_the_worked_example_run(tmp_path, monkeypatch, capsys):
    docs = (Path(__file__).parents[1] / "docs" / "policies.md").read_text()
    lines = [line for line in docs.splitlines() if line.startswith("gridemu ") and "four_jobs.toml" in line]
    assert len(lines) == 3
    monkeypatch.chdir(Path(__file__).parents[1])  # "from the repository's root"
    for i, line in enumerate(lines):
        argv = [*shlex.split(line)[1:], "--out", str(tmp_path / f"out{i}"), "--quiet"]
        assert main(argv) == 0, line
    assert times(tmp_path / "out0") == SMALLEST_TIMES and times(tmp_path / "out1") == LARGEST_TIMES


BAD_DECISIONS = {
    # every queued job on machine 0 at once: J2 (3 CPUs) while J1 holds all 4
    "over": "[(job, ((0, job.cpus),)) for job in view.queue.values()]",
    # a plan of fewer CPUs than the job asks
    "short": "[(job, ((0, 1),)) for job in view.queue.values() if job.cpus > 1][:1]",
    # a machine the cluster does not have
    "nowhere": "[(job, ((7, job.cpus),)) for job in view.queue.values()][:1]",
}


@pytest.mark.parametrize(
    "kind, message",
    [
        ("over", "at time 1: cannot start job 2: machine 0 has 0 free CPUs, not 3"),
        ("short", "at time 0: cannot start job 1: plan ((0, 1),) gives 1 CPUs, it asks 4"),
        ("nowhere", "at time 0: cannot start job 1: machine 7 does not exist (the cluster has 1)"),
    ],
)
def test_a_policys_bad_decision_is_one_line_naming_policy_cluster_time_and_job(
    tmp_path, monkeypatch, capsys, kind, message
):
    """Checked where it is applied, before it changes the cluster: exit 4 (the emulation could not go
    on), one line, and the run directory left for another run to replace (no live run holds it)."""
    (tmp_path / f"bad_{kind}.py").write_text(
        "from emulator.policies.local_base import LocalPolicy\n\n\n"
        "class Bad(LocalPolicy):\n"
        "    def schedule(self, view):\n"
        f"        return {BAD_DECISIONS[kind]}\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "run"
    args = ["run", str(SCENARIO), "--set", f"local.policy=bad_{kind}:Bad", "--out", str(out), "--quiet"]
    assert main(args) == 4
    err = capsys.readouterr().err
    assert err == f"gridemu: emulation failed: policy bad_{kind}:Bad on cluster c {message}\n"
    assert main([*args, "--overwrite", "--set", f"local.policy={SMALLEST}"]) == 0


def test_a_sweep_points_failure_shows_the_plugins_own_file_and_line(tmp_path, monkeypatch):
    """A plug-in that raises inside a sweep: the stored error is one line ending where, in the user's
    file, it was raised (not gridemu's outermost frames)."""
    plugin = tmp_path / "raising_plugin.py"
    plugin.write_text(
        "from emulator.policies.local_base import LocalPolicy\n\n\n"
        "class Raising(LocalPolicy):\n"
        "    def schedule(self, view):\n"
        "        raise ValueError('no plan for ' + str(len(view.queue)) + ' jobs')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    result = run_point(str(SCENARIO), Point(0, {"local.policy": "raising_plugin:Raising"}))
    assert result.error == (f"ValueError: no plan for 1 jobs (at {plugin.resolve()}, line 6, in schedule)")
