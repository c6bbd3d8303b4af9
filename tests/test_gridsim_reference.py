"""Every row of GridSim 5.2's reference outputs (shared/gridsim-ref/*.csv), reproduced by gridemu.

Each reference JSON describes the exact GridSim inputs; we translate it into a
scenario (one cluster, jobs entering it directly, local policy
``gridsim-spaceshared``) and compare start, finish, machine and PE of every
gridlet, times within 1e-9.
"""

from __future__ import annotations

import csv
import json

import pytest

from emulator import run
from emulator.data.scenario import parse

from .conftest import SHARED, shared_path

CASES = sorted(p.stem for p in (SHARED / "gridsim-ref").glob("*.json")) if SHARED.exists() else []


def scenario_from_reference(ref: dict, folder) -> dict:
    """The gridemu scenario (as a TOML document) equivalent to one GridSim reference JSON."""
    machines = [{"cpus": m["num_pe"], "mips": m["mips_per_pe"]} for m in ref["resource"]["machines"]]
    cluster = {"name": ref["resource"]["name"], "machines": machines, "policy": "gridsim-spaceshared"}
    if "gridlets" in ref:
        gridlets = [
            {"id": g["id"], "length": g["length_mi"], "cpus": g["num_pe"], "submit": g["submit_time"]}
            for g in ref["gridlets"]
        ]
        workload = {"source": "gridlets", "gridlets": gridlets}
    else:
        workload = {
            "source": "swf",
            "path": str(folder / "d_trace.swf"),
            "rules": "gridsim",
            "rating": float(ref["workload"]["rating_mips"]),
        }
        if "9600" in ref["workload"]["user_side_io"]:
            workload["link"] = {"baud_rate": 9600.0}  # GridSim Workload's default link, 1500-byte gridlets
    workload["site"] = cluster["name"]
    return {"name": ref["scenario"], "clusters": [cluster], "workload": workload}


@pytest.mark.parametrize("case", CASES)
def test_reference_rows_reproduced(case, tmp_path):
    folder = shared_path("gridsim-ref")
    ref = json.loads((folder / f"{case}.json").read_text())
    expected = list(csv.DictReader((folder / f"{case}.csv").open()))
    result = run(parse(scenario_from_reference(ref, folder), f"{case}.json"), tmp_path / "run")
    jobs = {row["id"]: row for row in result.jobs.to_pylist()}
    assert len(jobs) == len(expected)
    for row in expected:
        got = jobs[int(row["gridlet_id"])]
        assert got["status"] == "finished"
        assert got["arrive"] == pytest.approx(float(row["submission_time"]), abs=1e-9)
        assert got["start"] == pytest.approx(float(row["exec_start_time"]), abs=1e-9)
        assert got["finish"] == pytest.approx(float(row["finish_time"]), abs=1e-9), row["gridlet_id"]
        assert (got["machines"][0], got["pes"][0]) == (int(row["machine_id"]), int(row["pe_id"]))
        assert got["start"] - got["arrive"] == pytest.approx(float(row["waiting_time"]), abs=1e-9)


def test_every_reference_case_is_covered():
    shared_path("gridsim-ref")
    assert {
        "a_seq_1pe",
        "b_multi_pe",
        "d_swf_workload_default_io",
        "d_swf_workload_zero_io",
        "f_same_time_tie",
    } <= set(CASES)
