"""Policy registries: a name maps to a policy class; specs carry parameters.

A spec is ``name`` or ``name[key=value,...]`` (as in dslab); values are parsed
as int, float, bool or string, and ``str(spec)`` prints them back the same way.
Parameters may also come from the scenario file as a table. Unknown names and
unknown or ill-typed parameters are errors that say what was expected. A name the registry does
not hold may be a plug-in (:mod:`emulator.policies.plugins`): ``module.path:ClassName`` or an
entry point's name; its parameters are checked as a built-in's.
"""

from __future__ import annotations

import inspect
from typing import Any

from ..core.spec import PolicySpec
from . import plugins
from .errors import PolicyError
from .local_base import LocalPolicy
from .meta_base import MetaPolicy
from .params import Param, check

ENGINE_ARGUMENTS = ("rng", "cluster", "platform")
"""Constructor arguments the engine passes when a policy asks for them (never parameters)."""


class Registry:
    """Name -> policy class, for one kind of policy ("local" or "meta"; its classes derive from ``base``)."""

    def __init__(self, kind: str, base: type = object) -> None:
        self.kind = kind
        self.base = base
        self._classes: dict[str, type] = {}

    def register(self, name: str, **checks: Param):
        """Register a class under ``name``; ``checks`` declare its parameters' choices and ranges,
        which :meth:`create` enforces (a plug-in may set ``param_checks`` on its class alike)."""

        def decorate(cls: type) -> type:
            if name in self._classes:
                raise PolicyError(f"{self.kind} policy {name!r} registered twice")
            cls.name = name
            cls.param_checks = {**getattr(cls, "param_checks", {}), **checks}
            self._classes[name] = cls
            return cls

        return decorate

    def names(self) -> list[str]:
        """The built-in policies' names (installed plug-ins: :meth:`installed`)."""
        return sorted(self._classes)

    def installed(self) -> dict[str, str]:
        """The entry points whose class is of this kind, name -> ``module:Class`` (each class loaded
        to tell local from meta): for listings."""
        return {
            name: reference
            for name, reference in sorted(entry_points().items())
            if issubclass(
                plugins.load(reference, POLICY_BASES, f"policy {name!r} (entry point {reference})"), self.base
            )
        }

    def lookup(self, name: str) -> type:
        """The class of policy ``name``: a built-in, a ``module:Class`` reference, or an entry point's."""
        if name in self._classes:
            return self._classes[name]
        what = f"{self.kind} policy {name!r}"
        if plugins.is_reference(name):
            return plugins.load(name, (self.base,), what)
        reference = entry_points().get(name)
        if reference is None:
            raise PolicyError(
                f"unknown {what}; expected one of: {', '.join(self.names())}, "
                f"or a plug-in ({plugins.FORM}, or an entry point of group {plugins.GROUP})"
            )
        return plugins.load(reference, (self.base,), f"{what} (entry point {reference})")

    def create(self, spec: PolicySpec | str, **context: Any) -> Any:
        """Instantiate ``spec``; ``context`` passes engine facts (seed stream, cluster) when wanted."""
        spec = PolicySpec.of(spec)
        cls = self.lookup(spec.name)
        signature = inspect.signature(cls.__init__)
        accepted = {n: p for n, p in signature.parameters.items() if n != "self" and p.kind == p.KEYWORD_ONLY}
        params = {}
        for key, value in spec.params.items():
            if key not in accepted or key in ENGINE_ARGUMENTS:
                options = ", ".join(k for k in accepted if k not in ENGINE_ARGUMENTS) or "none"
                raise PolicyError(
                    f"{self.kind} policy {spec.name!r} has no parameter {key!r}; parameters: {options}"
                )
            default = accepted[key].default
            known = default is not inspect.Parameter.empty and default is not None
            params[key] = _coerce(spec.name, key, value, default) if known else value
        check(self.kind, spec.name, params, getattr(cls, "param_checks", {}))
        wanted = {k: v for k, v in context.items() if k in accepted}
        policy = cls(**params, **wanted)
        policy.name = spec.name  # (a plug-in's class does not know the name it was asked by)
        return policy

    def defaults(self, name: str) -> dict[str, Any]:
        """The documented parameters of a policy with their defaults (for scenario.toml)."""
        signature = inspect.signature(self.lookup(name).__init__)
        return {
            n: p.default
            for n, p in signature.parameters.items()
            if p.kind == p.KEYWORD_ONLY and n not in ENGINE_ARGUMENTS
        }


def _coerce(policy: str, key: str, value: Any, default: Any) -> Any:
    expected = type(default)
    if isinstance(value, expected) and not (expected is int and isinstance(value, bool)):
        return value
    if expected is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    raise PolicyError(
        f"policy {policy!r} parameter {key!r} = {value!r}: expected {expected.__name__} (like {default!r})"
    )


LOCAL = Registry("local", LocalPolicy)
META = Registry("meta", MetaPolicy)
POLICY_BASES = (LocalPolicy, MetaPolicy)


def entry_points() -> dict[str, str]:
    """Plug-ins installed under an entry point, name -> ``module:Class``; none may take a built-in's name."""
    return plugins.entry_points({*LOCAL.names(), *META.names()})
