"""One error path for the CLI: every failure a user can cause is one line and a distinct exit code.

``--debug`` shows the traceback instead. A failure not listed here is a bug,
and keeps its traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from contextlib import contextmanager, suppress

from .core.config import ScenarioError
from .core.preemption import PreemptionError
from .policies import PolicyError
from .policies.errors import DecisionError
from .sync.frontier import Stalled

EXIT_INPUT = 2
"""Bad input: a scenario, trace, parameter or path that is wrong or missing."""
EXIT_IO = 3
"""The disk failed us: full, read-only, permission denied."""
EXIT_EMULATION = 4
"""The emulation could not go on: virtual time stuck, a Ray actor lost (no checkpoints, no room left),
a Ray cluster that cannot be joined."""
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT)."""
EXIT_TERMINATED = 143
"""SIGTERM: a batch system's cancel, ``timeout``."""


KEPT = "the files written so far are kept (`gridemu inspect DIR` says what is there)"


class Terminated(BaseException):
    """Raised in the main thread on SIGTERM, so that files are closed as on Ctrl-C."""


def _input_errors() -> tuple[type[BaseException], ...]:
    from workloads.columns import TraceError

    return (
        ScenarioError,
        PolicyError,
        TraceError,
        FileExistsError,
        FileNotFoundError,
        UnicodeDecodeError,
        EOFError,
    )


def _emulation_errors() -> tuple[type[BaseException], ...]:
    errors: tuple[type[BaseException], ...] = (Stalled, PreemptionError, DecisionError)
    if "actors.transport" in sys.modules:  # these exist only where Ray was used
        ray_errors = [
            ("transport", "HostDied"),
            ("placement", "Unplaced"),
            ("session", "ClusterUnreachable"),
            ("session", "RayNotStarted"),
        ]
        errors += tuple(getattr(sys.modules[f"actors.{module}"], name) for module, name in ray_errors)
    return errors


def run_command(command: Callable[[], int], debug: bool = False) -> int:
    """Run ``command``; map what a user can cause to one line on stderr and its exit code."""
    with _sigterm_raises():
        if debug:
            return command()
        try:
            return command()
        except KeyboardInterrupt:
            return _say(f"interrupted; {KEPT}", EXIT_INTERRUPTED)
        except Terminated:
            return _say(f"terminated; {KEPT}", EXIT_TERMINATED)
        except BrokenPipeError:
            _silence_stdout()  # the reader (e.g. `head`) closed the pipe: nothing left to say
            return 0
        except _input_errors() as err:
            return _say(f"error: {_text(err)}", EXIT_INPUT)
        except _emulation_errors() as err:
            return _say(f"emulation failed: {_text(err)}", EXIT_EMULATION)
        except OSError as err:
            return _say(f"I/O error: {_text(err)}", EXIT_IO)
        except Exception as err:  # a stop raised inside a Ray call, which wraps it (a SystemError)
            if _caused_by(err, KeyboardInterrupt):
                return _say(f"interrupted; {KEPT}", EXIT_INTERRUPTED)
            if _caused_by(err, Terminated):
                return _say(f"terminated; {KEPT}", EXIT_TERMINATED)
            raise


def _caused_by(err: BaseException, kind: type[BaseException]) -> bool:
    """Whether ``kind`` is in the chain of exceptions that led to ``err``."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, kind):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


def _text(err: BaseException) -> str:
    if isinstance(err, OSError) and err.filename and str(err.filename) not in str(err.args):
        return f"{err.filename}: {err.strerror or err}"
    if isinstance(err, EOFError):
        return f"a compressed file ends early (truncated?): {err}"
    if isinstance(err, UnicodeDecodeError):
        return f"not UTF-8 text ({err.reason} at byte {err.start}); scenario files must be UTF-8 TOML"
    return str(err)


def _say(message: str, code: int) -> int:
    with suppress(OSError):
        print(f"gridemu: {message}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


@contextmanager
def _sigterm_raises():
    """SIGTERM raises :class:`Terminated` (main thread only; elsewhere it keeps its handler)."""
    try:
        previous = signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _terminate(signum, frame) -> None:
    raise Terminated
