"""Starting Ray quietly on a laptop, or joining an existing cluster.

Local instances stay on loopback, start no dashboard, keep workers' logs away
from the driver and use a small object store. Joining a cluster goes through
its address (``--ray-address`` or ``RAY_ADDRESS``); its token authentication
stays as the cluster has it.
"""

from __future__ import annotations

import _thread
import os
import signal
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
    with _sigterm_to_main():
        if address:
            ray.init(address=address, log_to_driver=False, logging_level="ERROR")
        else:
            init_local(num_cpus)
        try:
            yield
        finally:
            ray.shutdown()


@contextmanager
def _sigterm_to_main() -> Iterator[None]:
    """For a whole Ray session, a SIGTERM runs the handler this process had, in its main thread.

    Ray replaces it: ``ray.init`` installs Python handlers that exit 15 or 1
    without closing gridemu's files, its core installs a C++ one that may
    abort, and while Ray shuts down SIGTERM has the default action for
    seconds (exit -15); its threads may take a signal sent to the process. So
    SIGTERM is blocked in the main thread for the session (every thread Ray
    starts inherits the block), one watcher thread takes it and raises it in
    the main thread, where gridemu's handler closes the files as Ctrl-C does
    (exit 143), and Ray's ``set_sigterm_handler`` does nothing meanwhile.
    Threads started before the session keep their mask: numpy's BLAS pool
    (``OPENBLAS_NUM_THREADS=1`` starts none) may still take a SIGTERM while
    Ray has left it the default action.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    from ray._private import utils

    before = signal.getsignal(signal.SIGTERM)
    install = utils.set_sigterm_handler
    utils.set_sigterm_handler = _kept
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    watcher = _SigtermWatcher()
    watcher.start()
    try:
        yield
    finally:
        watcher.stop()
        utils.set_sigterm_handler = install
        if before is not None:  # (also over a handler Ray's C++ core installed)
            signal.signal(signal.SIGTERM, before)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # (one that came since: delivered now)


def _kept(handler) -> None:
    """Ray's ``set_sigterm_handler`` in a session (:func:`_sigterm_to_main`): the process keeps its own."""


class _SigtermWatcher(threading.Thread):
    """Takes SIGTERM (blocked in every other thread of a Ray session) and raises it in the main thread."""

    POLL = 0.1
    """Seconds between looks at whether the session ended (a signal is taken at once)."""

    def __init__(self) -> None:
        super().__init__(name="gridemu-sigterm", daemon=True)
        self._ended = threading.Event()

    def run(self) -> None:
        while not self._ended.is_set():
            if signal.sigtimedwait({signal.SIGTERM}, self.POLL) is not None:
                _raise_in_main()

    def stop(self) -> None:
        self._ended.set()
        self.join()


def _raise_in_main() -> None:
    """SIGTERM as if the main thread had taken it: its Python handler runs there; with none (an API
    user's script), the default action ends the process, as it would have without Ray."""
    handler = signal.getsignal(signal.SIGTERM)
    if callable(handler):
        _thread.interrupt_main(signal.SIGTERM)
    elif handler != signal.SIG_IGN:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        signal.pthread_kill(threading.get_ident(), signal.SIGTERM)


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
