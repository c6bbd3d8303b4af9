"""Scheduling policies: local (which queued job starts where) and meta (which cluster).

Importing this package registers every built-in policy in :data:`LOCAL` and :data:`META`.
"""

from . import (  # noqa: F401  (registration)
    easy,
    fcfs,
    gridsim_conservative,
    gridsim_easy,
    gridsim_spaceshared,
    gridsim_timeshared,
    meta_simple,
)
from .registry import LOCAL, META, PolicyError, PolicySpec

__all__ = ["LOCAL", "META", "PolicyError", "PolicySpec"]
