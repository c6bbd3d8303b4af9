"""Starting Ray quietly on a laptop, or joining an existing cluster.

Local instances stay on loopback, start no dashboard, keep workers' logs away
from the driver and use a small object store. Joining a cluster goes through
its address (``--ray-address`` or ``RAY_ADDRESS``); its token authentication
stays as the cluster has it.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
        address="local",  # (a cluster ``ray start`` left on this machine is not joined by default)
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
    with _own_sigterm():
        if address:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        else:
            init_local(num_cpus)
        try:
            yield
        finally:
            ray.shutdown()


@contextmanager
def _own_sigterm() -> Iterator[None]:
    """For a whole Ray session, SIGTERM keeps the handler this process had (gridemu's: it closes the
    files as Ctrl-C does, exit 143).

    ``ray.init`` installs Python handlers (exit 15 or 1, gridemu's files left
    open): Ray's ``set_sigterm_handler`` does nothing in a session. (Its core's
    C++ handler is not installed at all: see :mod:`actors`.)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from ray._private import utils

    install = utils.set_sigterm_handler
    utils.set_sigterm_handler = _kept
    try:
        yield
    finally:
        utils.set_sigterm_handler = install


def _kept(handler) -> None:
    """Ray's ``set_sigterm_handler`` in a session (:func:`_own_sigterm`): the process keeps its own."""


def driver_import_path() -> dict:
    """A ``runtime_env`` giving actors and tasks this process's own import path, so that plug-in
    policies (``mymodule:MyPolicy``) import there as they did here.

    Ray adds only the driver's directory and script directory to a worker's path; entries added at
    run time (a notebook's ``sys.path.append``, PYTHONPATH of a driver that joined a running Ray)
    would be missing. The interpreter's own directories are left out: a node may run another
    Python. Ray expands ``${PYTHONPATH}``, so the worker's own entries follow.

    >>> ray.remote(PartitionHost).options(runtime_env=driver_import_path())  # doctest: +SKIP
    """
    interpreter = {Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()}
    own = [str(Path(entry).resolve()) for entry in sys.path]  # ("" is the current directory)
    entries = [e for e in dict.fromkeys(own) if not interpreter & {Path(e), *Path(e).parents}]
    return {"env_vars": {"PYTHONPATH": os.pathsep.join([*entries, "${PYTHONPATH}"])}}
