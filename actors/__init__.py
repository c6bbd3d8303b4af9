"""The Ray backend: partitions hosted by Ray actors, driven by the same coordinator.

Nothing here knows scheduling. :func:`ray_backend` plugs into
:func:`emulator.engine.runner.run`; :class:`PartitionHost` is one actor's body;
:func:`group_partitions` balances partitions over actors;
:func:`ray_tasks` runs a sweep's points as Ray tasks.
Importing this package imports Ray; ``emulator`` never does.
"""

from .grouping import group_partitions, static_weights
from .host import PartitionHost
from .session import ray_session
from .sweep import ray_tasks
from .transport import HostDied, RayBackend, RayTransport, ray_backend

__all__ = [
    "HostDied",
    "PartitionHost",
    "RayBackend",
    "RayTransport",
    "group_partitions",
    "ray_backend",
    "ray_session",
    "ray_tasks",
    "static_weights",
]
