"""The examples in docstrings run as written (python -m doctest, module by module)."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts)
    for folder in ("emulator", "workloads", "actors", "tests")
    for path in (ROOT / folder).rglob("*.py")
    if ">>>" in path.read_text() and path.name != "test_doctests.py"
)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    failed, _ = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert not failed  # (the examples that need Ray or a run directory say +SKIP)
