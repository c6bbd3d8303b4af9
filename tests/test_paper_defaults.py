"""Defaults follow the papers' text; the readings that differ are options, never the reverse."""

from __future__ import annotations

import sys
from pathlib import Path

from emulator.policies.registry import META

from .conftest import job, machine, run_scenario

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import reproduce_muscle


def test_muscle_collects_by_default_at_seed_004s_longest_execution_time(tmp_path):
    # One cluster of 2 CPUs, latency 1. J1 (2 CPUs, 1000 s) goes at once (idle grid) and
    # starts at 1. t=5: (2000 - 2 x (5 - 1)) / 2 = 996 s of work per CPU > 100: J2 is held.
    # t=950: (2000 - 2 x 949) / 2 = 51 <= 100: J2 goes with J3, both arrive at 951.
    jobs = [job(1, 0, 2, 1000, placement="spread"), job(2, 5, 1, 10), job(3, 950, 1, 10)]
    cluster = {"name": "a", "latency": 1.0, "machines": [machine(1, count=2)]}
    rows = run_scenario(tmp_path, [cluster], jobs, meta="muscle")
    assert [rows[i]["arrive"] for i in (1, 2, 3)] == [1, 951, 951]
    assert META.create("muscle").threshold == 100.0
    assert META.create("muscle[threshold=inf]").threshold == float("inf")  # the option: never collects


def test_pars_and_bars_default_to_the_papers_single_criterion():
    assert META.create("most-power").load is False
    assert META.create("most-bandwidth").load is False


def test_fig7_runs_use_the_papers_log_size_law_unless_told_otherwise(monkeypatch):
    monkeypatch.setattr(reproduce_muscle, "interarrival_for_load", lambda *args: 1.0)
    laws = {s for _, _, sets in reproduce_muscle.fig7_points(1.0, []) for s in sets if "size_law" in s}
    assert laws == {'workload.size_law="log"'}
    uniform = reproduce_muscle.fig7_points(1.0, [], "uniform")
    assert {s for _, _, sets in uniform for s in sets if "size_law" in s} == {'workload.size_law="uniform"'}
