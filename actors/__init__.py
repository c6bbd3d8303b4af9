"""The Ray backend: partitions hosted by Ray actors, driven by the same coordinator.

Nothing here knows scheduling. :func:`ray_backend` plugs into
:func:`emulator.engine.runner.run`; :class:`PartitionHost` is one actor's body;
:func:`group_partitions` balances partitions over actors;
:func:`ray_tasks` runs a sweep's points as Ray tasks.
Importing this package imports Ray; ``emulator`` never does.

Ray's core starts without its C++ failure signal handler (unless the user set
``RAY_DISABLE_FAILURE_SIGNAL_HANDLER``; Ray reads it when it is imported):
that handler took SIGTERM from the driver's threads and aborted (exit 134),
and left it the default action for seconds while Ray shut down (exit -15),
where gridemu closes its files and exits 143 (:mod:`actors.session`). It also
drops Ray's stack dumps on a crash in its C++ code.
"""

import os

os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")

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
