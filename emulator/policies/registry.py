"""Policy registries: a name maps to a policy class; specs carry parameters.

A spec is ``name`` or ``name[key=value,...]`` (as in dslab); values are parsed
as int, float, bool or string, and ``str(spec)`` prints them back the same way.
Parameters may also come from the scenario file as a table. Unknown names and
unknown or ill-typed parameters are errors that say what was expected.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any

ENGINE_ARGUMENTS = ("rng", "cluster", "platform")
"""Constructor arguments the engine passes when a policy asks for them (never parameters)."""


class PolicyError(ValueError):
    """A policy name or parameter that cannot be used."""


def _parse_value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def _format_value(value: Any) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


@dataclass(frozen=True)
class PolicySpec:
    """A policy name with its parameters, e.g. ``easy[order=fastest]``."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, params: dict[str, Any] | None = None) -> PolicySpec:
        text = text.strip()
        merged: dict[str, Any] = {}
        name = text
        if "[" in text:
            if not text.endswith("]"):
                raise PolicyError(f"policy spec {text!r}: expected name[key=value,...]")
            name, inner = text[:-1].split("[", 1)
            for item in filter(None, (part.strip() for part in inner.split(","))):
                key, sep, value = item.partition("=")
                if not sep:
                    raise PolicyError(f"policy spec {text!r}: {item!r} is not key=value")
                merged[key.strip()] = _parse_value(value.strip())
        merged.update(params or {})
        return cls(name.strip(), dict(sorted(merged.items())))

    def __str__(self) -> str:
        if not self.params:
            return self.name
        inner = ",".join(f"{k}={_format_value(v)}" for k, v in self.params.items())
        return f"{self.name}[{inner}]"


class Registry:
    """Name -> policy class, for one kind of policy ("local" or "meta")."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._classes: dict[str, type] = {}

    def register(self, name: str):
        def decorate(cls: type) -> type:
            if name in self._classes:
                raise PolicyError(f"{self.kind} policy {name!r} registered twice")
            cls.name = name
            self._classes[name] = cls
            return cls

        return decorate

    def names(self) -> list[str]:
        return sorted(self._classes)

    def create(self, spec: PolicySpec | str, **context: Any) -> Any:
        """Instantiate ``spec``; ``context`` passes engine facts (seed stream, cluster) when wanted."""
        if isinstance(spec, str):
            spec = PolicySpec.parse(spec)
        cls = self._classes.get(spec.name)
        if cls is None:
            raise PolicyError(
                f"unknown {self.kind} policy {spec.name!r}; expected one of: {', '.join(self.names())}"
            )
        signature = inspect.signature(cls.__init__)
        accepted = {n: p for n, p in signature.parameters.items() if n != "self" and p.kind == p.KEYWORD_ONLY}
        params = {}
        for key, value in spec.params.items():
            if key not in accepted or key in context:
                options = ", ".join(k for k in accepted if k not in context) or "none"
                raise PolicyError(
                    f"{self.kind} policy {spec.name!r} has no parameter {key!r}; parameters: {options}"
                )
            default = accepted[key].default
            known = default is not inspect.Parameter.empty and default is not None
            params[key] = _coerce(spec.name, key, value, default) if known else value
        wanted = {k: v for k, v in context.items() if k in accepted}
        return cls(**params, **wanted)

    def defaults(self, name: str) -> dict[str, Any]:
        """The documented parameters of a policy with their defaults (for scenario.toml)."""
        cls = self._classes[name]
        signature = inspect.signature(cls.__init__)
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


LOCAL = Registry("local")
META = Registry("meta")
