"""Scheduling policies: local (which queued job starts where) and meta (which cluster).

Importing this package registers every built-in policy in :data:`LOCAL` and :data:`META`: each
module of the package is imported, in name order, and its ``@LOCAL.register`` /
``@META.register`` decorators do the rest, so a new policy is one file and one registration line.
"""

import importlib
import pkgutil

from .registry import LOCAL, META, PolicyError, PolicySpec

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

__all__ = ["LOCAL", "META", "PolicyError", "PolicySpec"]
