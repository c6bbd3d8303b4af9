"""scripts/bench_ray.py's own logic: the weak-scaling rows, the tables a run keeps, its Ray folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

import bench_ray  # noqa: E402
from bench_markdown import Region  # noqa: E402


def test_the_default_weak_rows_end_with_512_clusters_at_30_s_links():
    assert bench_ray.weak_cases() == [
        (8, 1.0),
        (32, 1.0),
        (128, 1.0),
        (8, 30.0),
        (32, 30.0),
        (128, 30.0),
        (512, 30.0),
    ]
    assert bench_ray.weak_cases([512], [30.0]) == [(512, 30.0)]  # chosen rows only
    assert bench_ray.weak_cases(None, [1.0]) == [(8, 1.0), (32, 1.0), (128, 1.0)]


def test_a_run_of_some_tables_keeps_the_others_as_they_were(tmp_path):
    doc = tmp_path / "performance.md"
    doc.write_text(
        "prose\n<!-- bench_ray.py:begin -->\nMeasured 2026-11-28 on 2 cores.\nCommand: `old`\n\n"
        "**weak scaling**\n\n| clusters |\n| --- |\n| 8 |\n\n**sweep**\n\n| runs |\n| --- |\n| 20 |\n"
        "<!-- bench_ray.py:end -->\nmore prose\n"
    )
    region = Region.of(doc, "bench_ray.py")
    kept = bench_ray.kept_tables(region.body(), ["weak"])
    assert kept == [
        "**sweep**\n\n_Kept from an earlier run (Measured 2026-11-28 on 2 cores. Command: `old`)._\n\n"
        "| runs |\n| --- |\n| 20 |"
    ]
    region.replace(
        "Measured now.\nCommand: `new`", "**weak scaling**\n\n| clusters |\n| --- |\n| 512 |", *kept
    )
    # Kept again by the next partial run: the line says when it was measured, not when it was kept.
    assert bench_ray.kept_tables(region.body(), ["weak"]) == kept
    assert bench_ray.kept_tables(region.body(), ["weak", "sweep"]) == []
    text = doc.read_text()
    assert text.startswith("prose\n") and text.endswith("<!-- bench_ray.py:end -->\nmore prose\n")
    assert "| 512 |" in text and "| 8 |" not in text and "| 20 |" in text


def test_the_ray_folder_of_a_table_is_removed_when_it_ends(monkeypatch):
    folders = []

    def init_local(_temp_dir):  # Ray's session files, without starting Ray
        folders.append(Path(_temp_dir))
        (folders[-1] / "session_latest").mkdir()
        (folders[-1] / "session_latest" / "logs").write_text("x")

    monkeypatch.setattr(bench_ray, "init_local", init_local)
    monkeypatch.setattr(bench_ray.ray, "shutdown", lambda: None)
    with bench_ray.local_ray():
        assert (folders[0] / "session_latest" / "logs").is_file()
    assert not folders[0].exists()
    with pytest.raises(RuntimeError), bench_ray.local_ray():  # a table that fails leaves none either
        raise RuntimeError("failed")
    assert len(folders) == 2 and not folders[1].exists()
