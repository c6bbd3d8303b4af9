"""Sweep recipes (``gridemu sweep --recipe``) and scenarios that ``extends`` another."""

from __future__ import annotations

import pyarrow as pa
import pytest

from emulator.cli import main
from emulator.core.config import ScenarioError
from emulator.data.scenario import load
from emulator.engine.sweep import parse_vary, points
from workloads import presets, recipes


@pytest.mark.parametrize("name", recipes.names())
def test_every_recipe_names_a_scenario_and_values_it_accepts(name):
    recipe = recipes.load(name)
    assert recipes.summary(name)
    for point in points(parse_vary(recipe.vary), [*recipe.set, "workload.jobs=20"]):
        if point.values.get("seed", 1) == 1:  # every value of every key, once
            seed, sets = point.overrides()
            assert len(load(recipe.scenario, sets, seed=seed).jobs) == 20


def test_the_stress_recipes_sweep_one_perturbation_across_dispatch_policies():
    assert {n for n in recipes.names() if n.startswith("stress-")} == {
        "stress-bursts",
        "stress-estimates",
        "stress-failures",
        "stress-staleness",
    }
    for name in recipes.names():
        keys = [key for key, _ in parse_vary(recipes.load(name).vary)]
        assert keys[0] == "meta.policy" and keys[-1] == "seed" and len(keys) == 3


def test_a_command_line_vary_replaces_the_recipes_own_for_that_key():
    merged = recipes.merge_vary(("meta.policy=a,b", "seed=1..5"), ["seed=1", "x=2"])
    assert merged == ["meta.policy=a,b", "seed=1", "x=2"]


def test_unknown_recipes_are_named_with_the_known_ones():
    with pytest.raises(ScenarioError, match="no sweep recipe 'nope'; recipes: stress-bursts"):
        recipes.load("nope")


def test_a_recipe_sweep_runs_from_the_command_line(tmp_path, capsys):
    out = tmp_path / "sweep"
    args = ["sweep", "--recipe", "stress-staleness", "--set", "workload.jobs=60", "--quiet"]
    args += ["--vary", "seed=1", "--vary", "meta.policy=least-load", "--out", str(out)]
    assert main(args) == 0
    rows = pa.ipc.open_file(str(out / "sweep.arrow")).read_all()
    assert rows.column("stress.status_period").to_pylist() == [0, 60, 600, 3600]
    assert set(rows.column("status").to_pylist()) == {"ok"}
    assert "4 of 4 runs done" in capsys.readouterr().out


def test_a_recipe_and_another_scenario_do_not_mix(capsys):
    assert main(["sweep", "quickstart", "--recipe", "stress-bursts", "--quiet"]) == 2
    assert "--recipe stress-bursts sweeps 'stress'; leave the scenario out" in capsys.readouterr().err


def test_the_stress_preset_extends_two_level(tmp_path):
    stress, base = load("stress", ["workload.jobs=30"]), load("two-level", ["workload.jobs=30"])
    machines = [[c.machines for c in s.platform.clusters] for s in (stress, base)]
    assert machines[0] == machines[1]  # the extended preset's generator and seed
    assert stress.name == "stress" and stress.local[0].name == "easy"
    assert stress.effective["workload"]["cpus"] == [1, 8]
    assert stress.effective["workload"]["license_share"] == base.effective["workload"]["license_share"]
    assert "stress" in presets.names()


def test_extends_merges_tables_and_reports_loops(tmp_path):
    (tmp_path / "base.toml").write_text('extends = "quickstart"\nname = "base"\n[workload]\njobs = 7\n')
    (tmp_path / "child.toml").write_text(
        'extends = "base.toml"\nseed = 4\n[workload]\nmean_interarrival = 3.0\n'
    )
    child, quick = load(tmp_path / "child.toml"), load("quickstart")
    assert (child.name, child.seed, len(child.jobs)) == ("base", 4, 7)
    assert child.effective["workload"]["mean_interarrival"] == 3.0
    assert child.platform == quick.platform
    (tmp_path / "a.toml").write_text('extends = "b.toml"\n')
    (tmp_path / "b.toml").write_text('extends = "a.toml"\n')
    with pytest.raises(ScenarioError, match="'extends' goes round in a circle"):
        load(tmp_path / "a.toml")
    (tmp_path / "bad.toml").write_text("extends = 3\n")
    with pytest.raises(ScenarioError, match="key 'extends' = 3: expected the name or path of a scenario"):
        load(tmp_path / "bad.toml")


def test_a_failure_sweep_reports_degradation_curves_of_the_jobs_killed(tmp_path):
    from emulator.report import plan_report

    out = tmp_path / "sweep"
    args = ["sweep", "--recipe", "stress-failures", "--set", "workload.jobs=80", "--quiet", "--out", str(out)]
    args += [
        "--vary",
        "meta.policy=least-load",
        "--vary",
        "stress.failures.mttf=20000,2000000",
        "--vary",
        "seed=1,2",
    ]
    assert main(args) == 0
    rows = pa.ipc.open_file(str(out / "sweep.arrow")).read_all().to_pylist()
    killed = {(r["stress.failures.mttf"], r["seed"]): r["jobs_killed"] for r in rows}
    assert all(killed[20000, seed] > killed[2000000, seed] for seed in (1, 2))
    names = [figure.name for figure in plan_report(out).figures]
    assert "sweep-jobs_killed" in names and "sweep-utilization" in names


def test_set_switches_a_files_failure_and_estimate_models_off_without_deleting_their_keys():
    off = ["stress.failures.model=none", "stress.estimates.model=trace", "workload.jobs=20"]
    scenario = load(presets.path("stress"), off)
    stress = scenario.effective["stress"]
    assert stress["failures"] == {"model": "none"} and stress["estimates"] == {"model": "trace"}
    assert scenario.failures is None
    weibull = load(presets.path("stress"), ["stress.failures.model=weibull", "workload.jobs=20"])
    assert weibull.effective["stress"]["failures"] == {
        "model": "weibull",
        "mttf": 2592000.0,
        "mttr": 7200.0,
        "shape": 0.7,
    }
    with pytest.raises(ScenarioError, match=r"unknown key 'stress\.failures\.mtff'"):
        load(presets.path("stress"), ["stress.failures.mtff=5"])  # a typo is still one
