"""Plug-in policies: classes from outside this package, named by a spec as ``module.path:ClassName``
or by an entry point of group :data:`GROUP` (entry name = policy name, value = ``module:Class``).

The registry comes here only for a name it does not hold, so a run of built-in policies never
scans the installed distributions, and a built-in name always means the built-in: an entry point
that takes one is an error, never a replacement. Every failure is one line naming the spec, what
was wrong and what was expected.

>>> from emulator.policies.local_base import LocalPolicy
>>> load("emulator.policies.fcfs:Fcfs", (LocalPolicy,), "local policy 'emulator.policies.fcfs:Fcfs'").name
'fcfs'
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable
from types import ModuleType

from .errors import PolicyError

GROUP = "gridemu.policies"
"""The entry-point group plug-in distributions declare their policies in."""

FORM = "module.path:ClassName"
_IDENTIFIERS = r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*"
REFERENCE = re.compile(rf"{_IDENTIFIERS}:{_IDENTIFIERS}")
"""A dotted module path, a colon and a (possibly nested) attribute: what ``FORM`` describes."""

IMPORTABLE = "importable (installed, on PYTHONPATH, or under the current directory)"


def is_reference(name: str) -> bool:
    """Whether a policy name points into a module (``module:Class``) rather than naming a policy."""
    return ":" in name


def load(reference: str, bases: tuple[type, ...], what: str) -> type:
    """The class ``reference`` (``module.path:ClassName``) names, checked to derive from one of
    ``bases``; ``what`` (e.g. ``local policy 'x:Y'``) starts every error."""
    if not REFERENCE.fullmatch(reference):
        raise PolicyError(f"{what}: expected {FORM} (a dotted module path, a colon, a class name)")
    module_name, _, attributes = reference.partition(":")
    expected = " or ".join(base.__name__ for base in bases)
    found: object = _import(module_name, what)
    for attribute in attributes.split("."):
        if not hasattr(found, attribute):
            raise PolicyError(
                f"{what}: module {module_name!r} has no attribute {attributes!r}; "
                f"expected a {expected} subclass there"
            )
        found = getattr(found, attribute)
    if not (isinstance(found, type) and issubclass(found, bases)):
        raise PolicyError(f"{what}: {reference} is {_describe(found)}; expected a subclass of {expected}")
    return found


def _import(module_name: str, what: str) -> ModuleType:
    """The module, or one line telling a missing module from one that fails as it is imported."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name and (module_name + ".").startswith(err.name + "."):
            raise PolicyError(f"{what}: no module named {err.name!r}; expected it {IMPORTABLE}") from err
        raise PolicyError(f"{what}: importing {module_name!r} failed: {_first_line(err)}") from err
    except Exception as err:  # the plug-in's own code failed: still the user's input, not our bug
        raise PolicyError(f"{what}: importing {module_name!r} failed: {_first_line(err)}") from err


def _first_line(err: Exception) -> str:
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__


def _describe(found: object) -> str:
    if isinstance(found, type):
        return f"a class derived from {found.__mro__[1].__name__}"
    return f"a {type(found).__name__}, not a class"


def entry_points(reserved: Iterable[str]) -> dict[str, str]:
    """The policies installed distributions declare in :data:`GROUP`, as name -> ``module:Class``.

    A name that is ``reserved`` (a built-in's) or declared twice with different classes is an error:
    which one a spec meant would depend on the installation.
    """
    from importlib import metadata  # (~10 ms: only when a name is not a built-in policy)

    found: dict[str, str] = {}
    for entry in metadata.entry_points(group=GROUP):
        if found.get(entry.name, entry.value) != entry.value:
            raise PolicyError(
                f"entry point {entry.name!r} (group {GROUP}) is declared twice: "
                f"{found[entry.name]} and {entry.value}; expected one class per name"
            )
        found[entry.name] = entry.value
    taken = sorted(set(found) & set(reserved))
    if taken:
        raise PolicyError(
            f"entry point {taken[0]!r} (group {GROUP}, {found[taken[0]]}) takes the name of a built-in "
            "policy; expected a name of its own"
        )
    return found
