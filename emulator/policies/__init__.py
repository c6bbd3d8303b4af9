"""Scheduling policies: local (which queued job starts where) and meta (which cluster).

Importing this package registers every built-in policy in :data:`LOCAL` and :data:`META`: each
module of the package is imported, in name order, and its ``@LOCAL.register`` /
``@META.register`` decorators do the rest, so a new policy is one file and one registration line.
Modules in :data:`LAZY` register nothing and are left to load on first use (their imports are slow).
"""

import importlib
import pkgutil

from .registry import LOCAL, META, PolicyError, PolicySpec

LAZY = frozenset({"cs2_kernels"})
"""Helper modules skipped here: ``cs2_kernels`` imports numba (~0.1 s), which only a CS 2.0 plan needs
(:func:`emulator.policies.cs2_matrix` imports it then), not every command."""

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__) if m.name not in LAZY):
    importlib.import_module(f"{__name__}.{_module}")

__all__ = ["LOCAL", "META", "PolicyError", "PolicySpec"]
