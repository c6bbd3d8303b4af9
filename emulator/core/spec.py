"""Policy specs (``easy[order=sjf]``) and their error, below the model and the registries.

A leaf module: :class:`emulator.core.model.Cluster` carries its parsed spec, and the model sits below
the policies, so the spec cannot live in :mod:`emulator.policies` without an import cycle. The
spec is parsed once, where the scenario is read; the partition and the metrics read that object.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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
    """A policy name with its parameters, e.g. ``easy[order=fastest]``.

    >>> spec = PolicySpec.parse("cs2[sort=counting,period=10]")
    >>> spec.name, spec.params, str(spec)
    ('cs2', {'period': 10, 'sort': 'counting'}, 'cs2[period=10,sort=counting]')
    """

    name: str
    params: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str, params: dict[str, Any] | None = None) -> PolicySpec:
        """``name[key=value,...]``, values read as int, float, bool or string; ``params`` (a scenario's
        ``params`` table) on top."""
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

    @classmethod
    def of(cls, spec: PolicySpec | str) -> PolicySpec:
        """``spec`` itself, or parsed when code hands a string (tests, notebooks build clusters so)."""
        return spec if isinstance(spec, PolicySpec) else cls.parse(spec)

    def __str__(self) -> str:
        if not self.params:
            return self.name
        inner = ",".join(f"{k}={_format_value(v)}" for k, v in self.params.items())
        return f"{self.name}[{inner}]"
