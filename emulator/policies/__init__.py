"""Scheduling policies: local (which queued job starts where) and meta (which cluster).

Importing this package registers every built-in policy in :data:`LOCAL` and :data:`META`.
"""

from . import (  # noqa: F401  (registration)
    conservative,
    cs2,
    dll,
    easy,
    fcfs,
    flexible,
    gridsim_conservative,
    gridsim_easy,
    gridsim_spaceshared,
    gridsim_timeshared,
    mcrs,
    meta_simple,
    most_bandwidth,
    most_power,
    muscle,
    titan,
    two_level,
    wrand,
)
from .registry import LOCAL, META, PolicyError, PolicySpec

__all__ = ["LOCAL", "META", "PolicyError", "PolicySpec"]
