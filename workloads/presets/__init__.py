"""The papers' experiments as scenario files: ``gridemu run --preset NAME``, ``gridemu presets``.

Each preset is a complete scenario (``NAME.toml`` beside this module) whose
``[platform]`` and ``[workload]`` tables name one of the papers' generators
(:mod:`workloads.generators`) with every distribution written out, so a
``--set workload.mean_interarrival=5`` varies one and the file documents
the rest. The first comment line is the preset's one-line summary.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["names", "path", "summary"]


def names() -> list[str]:
    folder = resources.files(__name__)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def path(name: str) -> Path:
    """The preset's scenario file; KeyError naming the known presets when there is none."""
    if name not in names():
        raise KeyError(f"no preset {name!r}; presets: {', '.join(names())}")
    return Path(str(resources.files(__name__) / f"{name}.toml"))


def summary(name: str) -> str:
    """The preset's first comment line."""
    for line in path(name).read_text().splitlines():
        if line.startswith("#"):
            return line.lstrip("# ").strip()
    return ""
