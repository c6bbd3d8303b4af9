"""Starting Ray quietly on a laptop, or joining an existing cluster.

Local instances stay on loopback, start no dashboard, keep workers' logs away
from the driver and use a small object store. Joining a cluster goes through
its address (``--ray-address`` or ``RAY_ADDRESS``); its token authentication
stays as the cluster has it, and a join that cannot succeed says why in one
line within seconds (:func:`join`).
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

LOCAL_OBJECT_STORE = 256 * 1024 * 1024
"""Bytes: the barrier ships small msgpack batches; 256 MB is plenty and leaves a laptop its memory."""


WORKER_NICENESS = "RAY_worker_niceness"
"""What Ray adds to the niceness of the worker processes it starts (they inherit the driver's, in a
private local Ray): 15 unless set. Ray means its workers to yield to the driver; gridemu's actors are
the run itself, and at +15 any process at the driver's priority took the CPU from them: a second run,
a build, Ray's own agents. With two busy processes beside it, a 2-actor run's actors had not started
after 120 s, and the run ended (exit 4). A private local Ray adds nothing; a cluster joined keeps its
operator's setting."""


def init_local(num_cpus: int | None = None, **options) -> None:
    """Start a private local Ray instance, every process of it listening on 127.0.0.1 only
    (:func:`stay_on_loopback`), its workers at the driver's priority (:data:`WORKER_NICENESS`)."""
    import ray

    stay_on_loopback()
    os.environ.setdefault(WORKER_NICENESS, "0")  # (the processes it starts read it; a user's value stays)
    try:
        ray.init(
            address="local",  # (a cluster ``ray start`` left on this machine is not joined by default)
            num_cpus=num_cpus or os.cpu_count(),
            include_dashboard=False,
            log_to_driver=False,
            logging_level="ERROR",
            object_store_memory=LOCAL_OBJECT_STORE,
            **options,
        )
    except OSError as err:  # (the runner would name the file it writes, as if the disk had failed)
        raise RayNotStarted(f"cannot start a local Ray: {err}{_advice(err)}") from err


class RayNotStarted(RuntimeError):
    """A private local Ray could not start (Ray's reason, in one line)."""


def _advice(err: OSError) -> str:
    """What to do about ``err``, where gridemu knows."""
    if "AF_UNIX path length" in str(err):
        return " (Ray keeps its sockets under RAY_TMPDIR, else TMPDIR: set RAY_TMPDIR to a shorter folder)"
    return ""


def join(address: str) -> None:
    """Join the Ray cluster at ``address`` (``HOST:PORT``), or raise :class:`ClusterUnreachable` in one
    line, within seconds, saying why.

    Ray retries for 20 s where the cluster refuses this driver's token, and for
    minutes where nothing listens, then says only "Failed to connect", the cause
    being in its log. So the address is first dialled (:data:`REACH_SECONDS`),
    then asked for the cluster's id, which fails at once with Ray's own reason
    (a token missing or wrong). A cluster on loopback is joined by loopback:
    left to itself, Ray dials the machine's network address instead, where no
    one listens, and hangs.
    """
    import ray

    host, _, port = address.rpartition(":")
    if host and port.isdigit() and "://" not in address:  # ("auto" and "ray://..." go to Ray as they are)
        if _loopback(host):
            stay_on_loopback()
        _check_reachable(address, host, int(port))
        _check_admitted(address)
    try:
        ray.init(address=address, log_to_driver=False, logging_level="ERROR")
    except ConnectionError as err:
        raise ClusterUnreachable(f"cannot join the Ray cluster at {address}: {_reason(err)}") from err


class ClusterUnreachable(RuntimeError):
    """The Ray cluster at an address could not be joined: not listening, or refusing this driver.
    (Not an OSError: the CLI says those are the disk's, naming the file being written.)"""


REACH_SECONDS = 5.0
"""How long dialling a cluster's address may take before the cluster is said to be unreachable."""


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host.strip("[]"))).is_loopback
    except (OSError, ValueError):
        return False


def _check_reachable(address: str, host: str, port: int) -> None:
    try:
        socket.create_connection((host.strip("[]"), port), timeout=REACH_SECONDS).close()
    except OSError as err:
        raise ClusterUnreachable(
            f"cannot reach the Ray cluster at {address}: {err.strerror or err or 'timed out'} "
            "(is its head running, and is this its address and port?)"
        ) from err


def _check_admitted(address: str) -> None:
    """Ask the cluster's head for its id: a token it refuses fails here at once, in Ray's words."""
    from ray._raylet import GcsClient
    from ray.exceptions import AuthenticationError

    try:
        with _quiet_stderr():  # (Ray logs the refusal there too; the error says it once)
            GcsClient(address=address)
    except AuthenticationError as err:
        raise ClusterUnreachable(
            f"the Ray cluster at {address} refused this driver: {_first_sentence(err)} "
            "(set RAY_AUTH_MODE=token and the cluster's token: RAY_AUTH_TOKEN, RAY_AUTH_TOKEN_PATH "
            "or ~/.ray/auth_token)"
        ) from err


@contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 to /dev/null meanwhile: Ray's C++ code writes there, below Python's streams."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _reason(err: BaseException) -> str:
    """Ray's own reason for a failed join: the last line of what its last attempt raised."""
    cause = err.__cause__ or err
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return lines[-1] if lines else str(err)


def _first_sentence(err: BaseException) -> str:
    return str(err).strip().split(". ")[0]


def stay_on_loopback() -> None:
    """Keep this process and the Ray processes it starts on 127.0.0.1.

    Ray picks the machine's network address unless ``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER``
    is 0; the processes it starts read the variable, and this one read it when
    Ray was imported, so both are set.
    """
    from ray._private import ray_constants

    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    ray_constants.ENABLE_RAY_CLUSTER = False


@contextmanager
def ray_session(address: str | None = None, num_cpus: int | None = None) -> Iterator[None]:
    """Use the running Ray (if this process already started one), join ``address``, or start one.

    One started here is gone when the session ends, and its session folder too (logs, sockets:
    under Ray's ``/tmp/ray`` each run left one, 139 after a day of runs and test suites), unless an
    error ended it: Ray's logs may then say more than the error did."""
    import ray

    if ray.is_initialized():
        yield
        return
    address = address or os.environ.get("RAY_ADDRESS") or None
    folder = None
    with _own_sigterm():
        try:
            with _stops_after_start():
                if address:
                    join(address)
                else:
                    init_local(num_cpus)
                    folder = session_folder()
            yield
        except Exception:
            folder = None
            raise
        finally:
            if ray.is_initialized():
                ray.shutdown()
            if folder is not None:
                _remove_session(folder)


def session_folder() -> Path | None:
    """The folder of the Ray session this process started (None: it joined one, or Ray no longer
    says: the folder is then left where it is)."""
    from ray._private import worker

    node = getattr(worker, "_global_node", None)
    path = getattr(node, "get_session_dir_path", None) if node is not None else None
    return Path(path()) if path is not None else None


def _remove_session(folder: Path) -> None:
    """Remove a shut-down session's ``folder``, and Ray's ``session_latest`` link beside it if it
    names that folder (another session's link is left alone)."""
    shutil.rmtree(folder, ignore_errors=True)
    latest = folder.parent / "session_latest"
    with contextlib.suppress(OSError):
        if latest.is_symlink() and Path(os.readlink(latest)).name == folder.name:
            latest.unlink()


STOPS = (signal.SIGTERM, signal.SIGINT)
"""What stops a run: a batch system's cancel (or ``timeout``), and Ctrl-C."""


@contextmanager
def _stops_after_start() -> Iterator[None]:
    """A stop (:data:`STOPS`) inside ``ray.init`` takes effect once it returns, as Ray is shut down.

    Raised in the middle of it, the stop left Ray half started and the process
    crashed on its way out (exit 139 instead of 143, about one time in three
    when sent 1.8-3 s into a run). A second stop takes effect at once, so a join
    that hangs can still be stopped.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous = {stop: signal.getsignal(stop) for stop in STOPS}

    def restore() -> None:
        for stop, handler in previous.items():
            signal.signal(stop, handler)

    def hold(signum: int, frame) -> None:
        if held:  # (the second)
            restore()
            signal.raise_signal(signum)
        held.append(signum)

    for stop in STOPS:
        signal.signal(stop, hold)
    try:
        yield
    finally:
        restore()
        if held:
            signal.raise_signal(held[0])  # (the process's own handler: gridemu's raise, and close files)


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
