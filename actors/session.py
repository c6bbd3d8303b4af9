"""Starting Ray quietly on a laptop, or joining an existing cluster.

Local instances stay on loopback, start no dashboard, keep workers' logs away
from the driver and use a small object store. Joining a cluster goes through
its address (``--ray-address`` or ``RAY_ADDRESS``); its token authentication
stays as the cluster has it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

LOCAL_OBJECT_STORE = 256 * 1024 * 1024
"""Bytes: the barrier ships small msgpack batches; 256 MB is plenty and leaves a laptop its memory."""


def init_local(num_cpus: int | None = None, **options) -> None:
    """Start a private local Ray instance, every process of it listening on 127.0.0.1 only.

    Ray picks the machine's network address unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``
    is 0; the processes it starts read the variable, and this one read it when
    Ray was imported, so both are set.
    """
    import ray
    from ray._private import ray_constants

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False
    ray.init(
        num_cpus=num_cpus or os.cpu_count(),
        include_dashboard=False,
        log_to_driver=False,
        logging_level="ERROR",
        object_store_memory=LOCAL_OBJECT_STORE,
        **options,
    )


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[None]:
    """Use the running Ray (if this process already started one), join ``address``, or start one."""
    import ray

    if ray.is_initialized():
        yield
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    if address:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    else:
        init_local(num_cpus)
    try:
        yield
    finally:
        ray.shutdown()
