"""Sweep recipes: named ``gridemu sweep`` experiments, ``gridemu sweep --recipe NAME``.

A recipe is a small TOML file beside this module: the scenario it sweeps (a
preset, a built-in scenario or a path relative to the recipe), the ``--set``
overrides every point shares and the ``--vary`` lists, written exactly as on
the command line. The first comment line is its one-line summary. The stress
recipes sweep one perturbation's intensity (failure rate, burst factor,
staleness, estimate error) across a few dispatch policies, so ``gridemu report``
of the sweep draws each policy's degradation curve with its confidence band.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass

from emulator.core.config import ScenarioError, Table

from ..named_files import NamedFiles

__all__ = ["Recipe", "load", "merge_vary", "names", "path", "summary"]

_FILES = NamedFiles(__name__, "sweep recipe", "recipes")
names, path, summary = _FILES.names, _FILES.path, _FILES.summary


@dataclass(frozen=True)
class Recipe:
    """What ``gridemu sweep --recipe`` runs: a scenario, shared overrides, the varied keys."""

    name: str
    scenario: str
    set: tuple[str, ...]
    vary: tuple[str, ...]


def load(name: str) -> Recipe:
    """Read and check a recipe: errors name its file and key (or the known recipes)."""
    try:
        file = path(name)
    except KeyError as err:
        raise ScenarioError(err.args[0]) from None
    table = Table(tomllib.loads(file.read_text()), str(file))
    scenario = table.get("scenario", str)
    if (file.parent / scenario).is_file():
        scenario = str(file.parent / scenario)
    strings = {"check": lambda v: all(isinstance(x, str) for x in v), "expected": "a list of strings"}
    overrides = table.get("set", list, [], **strings)
    vary = table.get("vary", list, **strings)
    if not vary:
        raise table.fail("vary", vary, "at least one KEY=VALUES")
    table.done()
    return Recipe(name, scenario, tuple(overrides), tuple(vary))


def merge_vary(recipe: tuple[str, ...], extra: list[str]) -> list[str]:
    """The recipe's ``--vary`` items with the command line's: a key given on both takes the command line's."""
    given = {item.partition("=")[0].strip() for item in extra}
    kept = [item for item in recipe if item.partition("=")[0].strip() not in given]
    return [*kept, *extra]
