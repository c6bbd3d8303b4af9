"""Shared fixtures: where ``shared/`` (GridSim references, traces) is, and small scenario builders."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

SHARED = Path(os.environ.get("GRIDEMU_SHARED", Path(__file__).resolve().parents[2] / "shared"))


def shared_path(*parts: str) -> Path:
    """A file under ``shared/``; the test is skipped, saying why, when it is absent."""
    path = SHARED.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{path} not found: set GRIDEMU_SHARED to the shared/ folder to run this test")
    return path
