"""What Ray actors and tasks need from the driver besides the scenario: its import path, and the code
of the plug-in policies the scenario names, shipped through Ray.

A node that does not share the driver's disk has neither the driver's folders
nor the user's plug-in modules; Ray's ``py_modules`` uploads a module (its
file, or its top-level package's folder) to the cluster, and every worker
imports it from there. Installed modules are left out (they are installed
on the nodes as gridemu is), and so are gridemu's own packages.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType

from emulator.data.scenario import Scenario
from emulator.policies.plugins import is_reference

from .session import driver_import_path

OWN = ("emulator", "actors", "workloads")
"""gridemu's packages: installed on every node."""


def runtime_env(scenario: object) -> dict:
    """The ``runtime_env`` for the actors or tasks running ``scenario``: the driver's import path, and
    the plug-in policies' modules as ``py_modules`` (none for an object that is not a scenario: the
    benchmarks' synthetic partitions).

    >>> ray.remote(PartitionHost).options(runtime_env=runtime_env(scenario))  # doctest: +SKIP
    """
    env = driver_import_path()
    modules = plugin_modules(policy_names(scenario)) if isinstance(scenario, Scenario) else []
    return _uploaded(env | {"py_modules": modules}) if modules else env


def _uploaded(env: dict) -> dict:
    """``env`` with its ``py_modules`` uploaded to the cluster, as URIs: Ray uploads local folders only
    for the ``runtime_env`` given to ``ray.init``, and this process may have joined with none (Ray
    keeps one copy per content: uploading the same modules again costs a hash)."""
    from ray._private.runtime_env.py_modules import upload_py_modules_if_needed

    return upload_py_modules_if_needed(env, include_gitignore=True, logger=logging.getLogger("ray"))


def policy_names(scenario: Scenario) -> list[str]:
    """The meta policy's name and every cluster's local policy's."""
    return [scenario.meta.name, *(spec.name for spec in scenario.local)]


def plugin_modules(names: Iterable[str]) -> list[str]:
    """Where the top-level modules of the plug-in policies ``names`` (``module:Class``) are, for those
    neither installed nor gridemu's, as this process imported them (loading the scenario did): a
    package's folder, or a module's file; by module name."""
    found: dict[str, str] = {}
    for name in names:
        top = name.partition(":")[0].split(".")[0] if is_reference(name) else ""
        module = sys.modules.get(top)
        if module is not None and top not in OWN and not _installed(module):
            found[top] = str(Path(module.__file__).parent if hasattr(module, "__path__") else module.__file__)
    return [found[top] for top in sorted(found)]


def _installed(module: ModuleType) -> bool:
    """Whether ``module`` lives in the interpreter's folders (site-packages, the standard library)."""
    where = getattr(module, "__file__", None)
    if where is None:
        return True  # (a namespace package or a built-in: nothing to ship)
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    return bool(prefixes & set(Path(where).resolve().parents))


__all__ = ["OWN", "plugin_modules", "policy_names", "runtime_env"]
