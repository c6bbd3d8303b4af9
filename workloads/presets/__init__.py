"""The papers' experiments as scenario files: ``gridemu run --preset NAME``, ``gridemu presets``.

Each preset is a complete scenario (``NAME.toml`` beside this module) whose
``[platform]`` and ``[workload]`` tables name one of the papers' generators
(:mod:`workloads.generators`) with every distribution written out, so a
``--set workload.mean_interarrival=5`` varies one and the file documents
the rest. The first comment line is the preset's one-line summary.
"""

from __future__ import annotations

from ..named_files import NamedFiles

__all__ = ["names", "path", "summary"]

_FILES = NamedFiles(__name__, "preset", "presets")
names, path, summary = _FILES.names, _FILES.path, _FILES.summary
