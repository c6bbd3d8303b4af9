"""``[stress]`` workload perturbations: load scaling, bursts, estimate models (workloads/perturb.py)."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emulator import run
from emulator.cli import main
from emulator.core.config import ScenarioError
from emulator.data.replay import replay_scenario
from emulator.data.scenario import load, parse
from workloads import perturb
from workloads.perturb import Burst, Estimates, WorkloadStress
from workloads.table import job_table

from .conftest import job, machine

INF = math.inf


def table(submit, runtime=None, deadline=None, estimate=None) -> pa.Table:
    submit = np.asarray(submit, float)
    n = submit.size
    runtime = np.full(n, 100.0) if runtime is None else np.asarray(runtime, float)
    return job_table(
        np.arange(1, n + 1),
        submit,
        np.ones(n),
        runtime if estimate is None else np.asarray(estimate, float),
        runtime,
        deadline=deadline,
    )


def column(t: pa.Table, name: str) -> list:
    return t.column(name).to_pylist()


def stress(**keys) -> WorkloadStress:
    return WorkloadStress(**keys)


def raw_scenario(jobs: list[dict], stress_table: dict | None = None, seed: int = 1) -> dict:
    raw = {
        "name": "t",
        "seed": seed,
        "clusters": [{"name": "a", "machines": [machine(4)]}],
        "workload": {"source": "gridlets", "gridlets": jobs},
    }
    if stress_table is not None:
        raw["stress"] = stress_table
    return raw


# --- load scaling ----------------------------------------------------------------------------------


def test_load_2_halves_submit_times_and_deadlines_keep_their_margin():
    t = table([0.0, 10.0, 30.0, 31.0], deadline=[100.0, INF, 50.0, 40.0])
    out = perturb.apply(t, stress(load=2.0), seed=1)
    assert column(out, "submit") == [0.0, 5.0, 15.0, 15.5]
    assert column(out, "deadline") == [100.0, None, 35.0, 24.5]  # deadline - submit kept; none stays none
    assert column(out, "estimate") == column(t, "estimate") and column(out, "id") == [1, 2, 3, 4]


def test_load_keeps_the_first_submit_time_and_divides_the_gaps():
    out = perturb.apply(table([100.0, 120.0, 160.0]), stress(load=4.0), seed=1)
    assert column(out, "submit") == [100.0, 105.0, 115.0]


def test_load_applies_to_gridlets_and_generators_alike():
    jobs = [job(1, 0.0, 1, 10.0, deadline=50.0), job(2, 8.0, 1, 10.0), job(3, 20.0, 1, 10.0, deadline=60.0)]
    scenario = parse(raw_scenario(jobs, {"load": 2.0}), "t.toml")
    assert [(j.submit, j.deadline) for j in scenario.jobs] == [(0.0, 50.0), (4.0, INF), (10.0, 50.0)]
    plain = load("quickstart", ["workload.jobs=50"])
    loaded = load("quickstart", ["workload.jobs=50", "stress.load=2"])
    assert [j.submit / 2 for j in plain.jobs] == [j.submit for j in loaded.jobs]
    assert [j.runtime for j in plain.jobs] == [j.runtime for j in loaded.jobs]


# --- bursts ----------------------------------------------------------------------------------------


def test_a_burst_compresses_the_gaps_inside_its_window_and_shifts_the_rest():
    # [10, 20) at 2x: the window takes the stream's [10, 30), every later job arrives 10 s earlier
    submit = [0.0, 9.0, 10.0, 14.0, 20.0, 28.0, 30.0, 40.0]
    out = perturb.apply(table(submit), stress(bursts=(Burst(10.0, 20.0, 2.0),)), seed=1)
    assert column(out, "submit") == [0.0, 9.0, 10.0, 12.0, 15.0, 19.0, 20.0, 30.0]


def test_a_lull_stretches_its_window_and_delays_the_rest():
    submit = [0.0, 10.0, 12.0, 14.0, 20.0]
    out = perturb.warp_bursts(np.array(submit), [Burst(10.0, 20.0, 0.5)])  # takes the stream's [10, 15)
    assert out.tolist() == [0.0, 10.0, 14.0, 18.0, 25.0]


def test_two_bursts_compose_in_the_emulation_clock():
    bursts = [Burst(10.0, 20.0, 2.0), Burst(25.0, 30.0, 0.5)]
    # stream -> emulation: [10, 30) -> [10, 20); then -10 s; [35, 37.5) -> [25, 30); then -7.5 s
    submit = np.array([5.0, 20.0, 30.0, 34.0, 35.0, 36.0, 37.5, 40.0])
    assert perturb.warp_bursts(submit, bursts).tolist() == [5.0, 15.0, 20.0, 24.0, 25.0, 27.0, 30.0, 32.5]


def test_bursts_move_deadlines_and_keep_job_count_and_order():
    t = table([0.0, 10.0, 14.0, 40.0], deadline=[5.0, 100.0, INF, 41.0])
    out = perturb.apply(t, stress(load=1.0, bursts=(Burst(10.0, 20.0, 2.0),)), seed=1)
    assert column(out, "id") == [1, 2, 3, 4]
    assert column(out, "submit") == [0.0, 10.0, 12.0, 30.0]
    assert column(out, "deadline") == [5.0, 100.0, None, 31.0]


def test_load_then_bursts_in_the_scaled_clock():
    out = perturb.apply(table([0.0, 20.0, 28.0, 60.0]), stress(load=2.0, bursts=(Burst(10.0, 20.0, 2.0),)), 1)
    assert column(out, "submit") == [0.0, 10.0, 12.0, 20.0]  # scaled: 0, 10, 14, 30


def test_bursts_read_from_the_scenario_in_any_order():
    jobs = [job(i, 10.0 * i, 1, 5.0) for i in range(1, 6)]
    bursts = [{"start": 30.0, "end": 40.0, "factor": 2.0}, {"start": 0.0, "end": 10.0, "factor": 1.0}]
    scenario = parse(raw_scenario(jobs, {"bursts": bursts}), "t.toml")
    assert [j.submit for j in scenario.jobs] == [10.0, 20.0, 30.0, 35.0, 40.0]
    assert scenario.effective["stress"]["bursts"] == bursts


# --- estimate models -------------------------------------------------------------------------------

RUNTIMES = np.array([10.0, 100.0, 1000.0, 3000.0, 5000.0, 50.0])


def stream(seed: int = 7) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=perturb.ESTIMATE_STREAM))


def estimates_of(spec: Estimates, seed: int = 7, runtime=RUNTIMES) -> np.ndarray:
    t = table(np.arange(len(runtime), dtype=float), runtime=runtime, estimate=np.full(len(runtime), 9e9))
    out = perturb.apply(t, stress(estimates=spec), seed)
    assert column(out, "runtime") == list(runtime)  # the actual runtime never changes
    return out.column("estimate").to_numpy()


def test_trace_estimates_are_kept_and_exact_estimates_are_the_runtimes():
    t = table([0.0, 1.0], runtime=[5.0, 6.0], estimate=[50.0, 60.0])
    assert perturb.apply(t, stress(estimates=Estimates("trace")), 1) is t
    assert estimates_of(Estimates("exact")).tolist() == RUNTIMES.tolist()


def test_factor_uniform_estimates_are_the_runtime_times_the_seeded_draws():
    got = estimates_of(Estimates("factor", "uniform", range=(0.5, 2.0)))
    assert got.tolist() == (RUNTIMES * stream().uniform(0.5, 2.0, RUNTIMES.size)).tolist()
    assert np.all((got >= 0.5 * RUNTIMES) & (got <= 2.0 * RUNTIMES))


def test_factor_lognormal_estimates():
    got = estimates_of(Estimates("factor", "lognormal", mu=0.5, sigma=1.0))
    assert got.tolist() == (RUNTIMES * stream().lognormal(0.5, 1.0, RUNTIMES.size)).tolist()
    assert np.all(got > 0)


def test_f_model_estimates_lie_in_runtime_to_f_plus_1_times_runtime():
    got = estimates_of(Estimates("f-model", f=3.0))
    assert got.tolist() == (RUNTIMES * stream().uniform(1.0, 4.0, RUNTIMES.size)).tolist()
    assert np.all((got >= RUNTIMES) & (got <= 4.0 * RUNTIMES))
    assert estimates_of(Estimates("f-model", f=0.0)).tolist() == RUNTIMES.tolist()  # f = 0: exact


def test_tsafrir_head_values_for_a_one_hour_and_an_18_hour_maximum():
    minutes = [v // 60 for v in perturb._head_times(3600)]
    assert minutes == [60, 5, 10, 15, 20, 25, 30, 35, 40, 45, 50, 55]  # the joint values, then 5-min steps
    hours = [v / 3600 for v in perturb._head_times(18 * 3600)]
    assert hours[0] == 18 and len(hours) == 20
    joint = [v / 60 for v in (5, 10, 15, 20, 30)] + [1, 2, 3, 4, 5, 6, 8, 10, 12]
    assert hours[1:] == [*joint, 13, 14, 15, 16, 17]  # round steps: 15 (5 h), 16, 14 (2 h), 17, 13 (1 h)


def test_tsafrir_histogram_is_modal_with_the_maximum_most_popular():
    times, weights = perturb.tsafrir_histogram(3000, 18 * 3600, stream())
    assert len(times) == 47  # the job count's number of values: 35 + 2000 x 55 / 9000
    assert np.all(np.diff(times) > 0) and abs(weights.sum() - 1.0) < 1e-12
    head = np.isin(times, perturb._head_times(18 * 3600))
    assert abs(weights[head].sum() - 0.89) < 1e-12  # 20 values hold 89% of the jobs
    assert times[np.argmax(weights)] == 18 * 3600
    assert abs(weights.max() - 0.2173) < 1e-3  # 89% minus ranks 2..20 of the exponential model
    for seed in range(200):  # the popularity ranks are a permutation, the maximum first
        ranks = perturb._popularity_ranks(np.random.default_rng(seed))
        assert sorted(ranks) == list(range(1, 21)) and ranks[0] == 1


def test_tsafrir_estimates_come_from_the_histogram_and_never_undercut_the_runtime():
    runtime = np.random.default_rng(3).uniform(1.0, 30000.0, 2000)
    got = estimates_of(Estimates("tsafrir"), runtime=runtime)
    rng = stream()
    times, _ = perturb.tsafrir_histogram(runtime.size, 9 * 3600, rng)  # auto: longest runtime up to hours
    assert set(got.tolist()) <= set(times.tolist())
    assert np.all(got >= runtime)
    values, counts = np.unique(got, return_counts=True)
    assert values[np.argmax(counts)] == 9 * 3600  # the maximum is the most popular estimate
    assert len(values) <= len(times)


def test_tsafrir_jobs_longer_than_the_maximum_get_the_maximum():
    got = estimates_of(Estimates("tsafrir", max_estimate=3600), runtime=np.array([10.0, 3600.0, 7200.0]))
    assert got[1:].tolist() == [3600.0, 3600.0] and 300 <= got[0] <= 3600


def test_estimates_are_deterministic_and_their_stream_is_their_own():
    spec = Estimates("f-model", f=2.0)
    assert estimates_of(spec, seed=5).tolist() == estimates_of(spec, seed=5).tolist()
    assert estimates_of(spec, seed=5).tolist() != estimates_of(spec, seed=6).tolist()
    t = table([0.0, 10.0, 20.0], runtime=[1.0, 2.0, 3.0])
    alone = perturb.apply(t, stress(estimates=spec), 5)
    loaded = perturb.apply(t, stress(load=3.0, bursts=(Burst(0.0, 5.0, 2.0),), estimates=spec), 5)
    assert column(alone, "estimate") == column(loaded, "estimate")
    plain = load("quickstart", ["workload.jobs=30"])
    tsafrir = load("quickstart", ["workload.jobs=30", "stress.estimates.model='tsafrir'"])
    for a, b in zip(plain.jobs, tsafrir.jobs, strict=True):  # the workload's own draws are untouched
        assert (a.submit, a.runtime, a.cpus, a.deadline) == (b.submit, b.runtime, b.cpus, b.deadline)


def test_changed_estimates_replace_the_trace_requested_time_for_exports():
    t = table([0.0, 1.0]).append_column("swf_req_time", pa.array([500.0, 600.0]))
    assert column(perturb.apply(t, stress(load=2.0), 1), "swf_req_time") == [500.0, 600.0]
    out = perturb.apply(t, stress(estimates=Estimates("exact")), 1)
    assert column(out, "swf_req_time") == [None, None]  # SWF field 9 falls back to the estimate


# --- scenario keys and their errors ----------------------------------------------------------------


def test_effective_configuration_fills_in_the_defaults():
    scenario = parse(raw_scenario([job(1, 0.0, 1, 5.0)]), "t.toml")
    ours = {key: scenario.effective["stress"][key] for key in ("load", "bursts", "estimates")}
    assert ours == {"load": 1.0, "bursts": [], "estimates": {"model": "trace"}}
    keys = {"estimates": {"model": "factor", "distribution": "lognormal", "sigma": 0.5}}
    scenario = parse(raw_scenario([job(1, 0.0, 1, 5.0)], keys), "t.toml")
    assert scenario.effective["stress"]["estimates"] == {
        "model": "factor",
        "distribution": "lognormal",
        "mu": 0.0,
        "sigma": 0.5,
    }


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"load": 0}, "t.toml: key 'stress.load' = 0.0: expected a finite number > 0.0"),
        ({"load": "inf"}, "key 'stress.load' = 'inf': expected a finite number > 0.0"),
        ({"load": math.inf}, "key 'stress.load' = inf: expected a finite number > 0.0"),
        ({"bursts": [{"start": 1.0, "end": 5.0, "factor": 0.0}]}, "key 'stress.bursts[0].factor' = 0.0"),
        ({"bursts": [{"start": 1.0, "end": 5.0, "factor": -2}]}, "key 'stress.bursts[0].factor' = -2.0"),
        ({"bursts": [{"start": 5.0, "end": 5.0, "factor": 2.0}]}, "key 'stress.bursts[0].end' = 5.0"),
        ({"bursts": [{"start": 5.0, "end": 1.0, "factor": 2.0}]}, "expected a number > start (5.0)"),
        ({"bursts": [{"start": 5.0, "factor": 2.0}]}, "missing key 'stress.bursts[0].end'"),
        (
            {"bursts": [{"start": 0.0, "end": 10.0, "factor": 2}, {"start": 5.0, "end": 20.0, "factor": 2}]},
            "key 'stress.bursts[1].start' = 5.0: expected a window not overlapping stress.bursts[0]",
        ),
        ({"bursts": [{"start": 0.0, "end": 1.0, "factor": 2, "x": 1}]}, "unknown key 'stress.bursts[0].x'"),
        ({"estimates": {"model": "guess"}}, "key 'stress.estimates.model' = 'guess': expected one of trace"),
        ({"estimates": {"model": "f-model"}}, "missing key 'stress.estimates.f'"),
        ({"estimates": {"model": "f-model", "f": -1}}, "key 'stress.estimates.f' = -1.0"),
        (
            {"estimates": {"model": "factor", "distribution": "lognormal"}},
            "missing key 'stress.estimates.sigma'",
        ),
        ({"estimates": {"model": "factor"}}, "missing key 'stress.estimates.range'"),
        (
            {"estimates": {"model": "factor", "range": [0.0, 2.0]}},
            "key 'stress.estimates.range' = [0.0, 2.0]",
        ),
        (
            {"estimates": {"model": "factor", "range": [3.0, 2.0]}},
            "key 'stress.estimates.range' = [3.0, 2.0]",
        ),
        ({"estimates": {"model": "exact", "ff": 2.0}}, "unknown key 'stress.estimates.ff'"),
        (
            {"estimates": {"model": "tsafrir", "max_estimate": 600}},
            "key 'stress.estimates.max_estimate' = 600",
        ),
        ({"lod": 2}, "unknown key 'stress.lod'"),
    ],
)
def test_errors_name_the_file_and_the_key(keys, message):
    with pytest.raises(ScenarioError) as err:
        parse(raw_scenario([job(1, 0.0, 1, 5.0)], keys), "t.toml")
    assert str(err.value).startswith("t.toml: ") and message in str(err.value)


# --- properties ------------------------------------------------------------------------------------


@st.composite
def perturbed_tables(draw):
    n = draw(st.integers(0, 40))
    submit = sorted(draw(st.lists(st.floats(0.0, 1e5, allow_nan=False), min_size=n, max_size=n)))
    runtime = draw(st.lists(st.floats(0.01, 1e5), min_size=n, max_size=n))
    deadline = [
        s + m if m is not None else INF
        for s, m in zip(
            submit, draw(st.lists(st.none() | st.floats(0.0, 1e4), min_size=n, max_size=n)), strict=True
        )
    ]
    edges = sorted(draw(st.lists(st.floats(0.0, 2e5), min_size=0, max_size=6, unique=True)))
    bursts = tuple(
        Burst(a, b, draw(st.floats(0.05, 20.0))) for a, b in zip(edges[::2], edges[1::2], strict=False)
    )
    spec = draw(
        st.sampled_from(
            [
                Estimates(),
                Estimates("exact"),
                Estimates("factor", "uniform", range=(0.2, 3.0)),
                Estimates("factor", "lognormal", mu=0.0, sigma=2.0),
                Estimates("f-model", f=5.0),
                Estimates("tsafrir"),
            ]
        )
    )
    load_factor = draw(st.sampled_from([1.0, 0.5, 2.0, 7.3]))
    return table(submit, runtime=runtime, deadline=deadline), WorkloadStress(load_factor, bursts, spec)


@settings(max_examples=150, deadline=None)
@given(perturbed_tables(), st.integers(0, 2**32))
def test_perturbations_keep_jobs_order_and_meaning(case, seed):
    t, spec = case
    out = perturb.apply(t, spec, seed)
    assert out.num_rows == t.num_rows and column(out, "id") == column(t, "id")
    assert column(out, "runtime") == column(t, "runtime") and column(out, "cpus") == column(t, "cpus")
    submit = out.column("submit").to_numpy()
    assert np.all(submit >= 0) and np.all(np.diff(submit) >= 0)
    before = t.column("submit").to_numpy()
    assert np.all(np.diff(submit)[np.diff(before) == 0] == 0)  # equal submit times stay equal
    estimate = out.column("estimate").to_numpy()
    assert np.all(estimate > 0)
    margins_before = t.column("deadline").to_numpy(zero_copy_only=False) - before
    margins_after = out.column("deadline").to_numpy(zero_copy_only=False) - submit
    assert np.array_equal(np.isnan(margins_before), np.isnan(margins_after))
    ok = ~np.isnan(margins_before)
    assert np.allclose(
        margins_after[ok], margins_before[ok], rtol=1e-9, atol=1e-6 * (1 + before.max(initial=0))
    )
    assert column(perturb.apply(t, spec, seed), "estimate") == column(out, "estimate")


# --- runs ------------------------------------------------------------------------------------------


def test_gridemu_run_with_a_load_override(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["run", "quickstart", "--out", str(out), "--quiet", "--set", "workload.jobs=200"]
    assert main([*argv, "--set", "stress.load=2"]) == 0
    assert "200 jobs: 200 finished, 0 rejected" in capsys.readouterr().out
    effective = tomllib.loads((out / "scenario.toml").read_text())["stress"]
    assert (
        effective["load"] == 2.0
        and effective["bursts"] == []
        and effective["estimates"] == {"model": "trace"}
    )


def test_a_scenario_without_stress_runs_as_before_and_a_perturbed_run_replays(tmp_path):
    base = ["workload.jobs=300"]
    run(load("quickstart", base), tmp_path / "plain")
    run(
        load("quickstart", [*base, "stress.load=1.0", "stress.estimates.model='trace'"]), tmp_path / "neutral"
    )
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "neutral" / name).read_bytes()
    keys = [*base, "stress.load=1.7", "stress.estimates.model='tsafrir'"]
    keys.append("stress.bursts=[{start = 100.0, end = 400.0, factor = 4.0}]")
    run(load("quickstart", keys), tmp_path / "stressed")
    run(replay_scenario(tmp_path / "stressed"), tmp_path / "replayed")  # the stress is in the jobs already
    for name in ("events.arrow", "jobs.arrow"):
        assert (tmp_path / "stressed" / name).read_bytes() == (tmp_path / "replayed" / name).read_bytes()
