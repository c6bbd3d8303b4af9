"""Reading nested TOML tables with errors that name the file, the key, the value and what was expected.

Every key a reader takes is recorded with its final value (defaults filled
in), so the effective configuration can be written back as ``scenario.toml``;
keys nobody asked for are reported as errors (a typo must not be ignored).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any


class ScenarioError(ValueError):
    """A scenario that cannot be run: the message says where and what was expected."""


_MISSING = object()


def _type_name(value: Any) -> str:
    return "table" if isinstance(value, dict) else type(value).__name__


class Table:
    """One TOML table being read: ``path`` is its dotted key (e.g. ``clusters[1].machines[0]``)."""

    def __init__(self, data: dict, source: str, path: str = "") -> None:
        if not isinstance(data, dict):
            raise ScenarioError(f"{source}: {path or 'the file'} must be a table, got {_type_name(data)}")
        self.data = data
        self.source = source
        self.path = path
        self.effective: dict[str, Any] = {}
        self._other: set[str] = set()

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, name: str, value: Any, expected: str) -> ScenarioError:
        return ScenarioError(f"{self.source}: key '{self.key(name)}' = {value!r}: expected {expected}")

    def has(self, name: str) -> bool:
        return name in self.data

    def _raw(self, name: str, default: Any) -> Any:
        value = self.data.get(name, default)
        if value is _MISSING:
            raise ScenarioError(f"{self.source}: missing key '{self.key(name)}'")
        return value

    def get(
        self,
        name: str,
        kind: type | tuple,
        default: Any = _MISSING,
        check: Callable | None = None,
        expected: str = "",
    ) -> Any:
        """The value of ``name``, of type ``kind`` (ints accepted for floats), passing ``check``."""
        value = self._raw(name, default)
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        want = expected or " or ".join(k.__name__ for k in kinds)
        if not ok or (check is not None and not check(value)):
            raise self.fail(name, value, want)
        self.effective[name] = value
        return value

    def number(
        self,
        name: str,
        default: Any = _MISSING,
        low: float = -math.inf,
        strict_low: bool = False,
        integer: bool = False,
        finite: bool = False,
        high: float = math.inf,
    ) -> Any:
        """A number ``>= low`` (``> low`` if ``strict_low``) and ``<= high``, an integer if asked, finite
        if ``finite``. Counts get a ``high``: a count of 1e12 is a typo, not a run to start."""
        kind = int if integer else float
        sign = ">" if strict_low else ">="
        noun = "an integer" if integer else "a finite number" if finite else "a number"
        what = f"{noun} {sign} {low}" if low > -math.inf else noun if finite else kind.__name__
        if high < math.inf:
            what += f" and <= {high:g}"
        above = (lambda v: v > low) if strict_low else (lambda v: v >= low)
        bound = lambda v: above(v) and v <= high  # noqa: E731
        check = math.isfinite if finite else (lambda v: not (isinstance(v, float) and math.isnan(v)))
        return self.get(name, kind, default, check=lambda v: check(v) and bound(v), expected=what)

    def choice(self, name: str, options: tuple[str, ...], default: Any = _MISSING) -> str:
        return self.get(
            name, str, default, check=lambda v: v in options, expected=f"one of {', '.join(options)}"
        )

    def pair(self, name: str, default: tuple, integer: bool = False, low: float = 0.0) -> tuple:
        """A ``[low, high]`` range of finite numbers ``>= low`` (ranges of sizes, times and factors)."""
        value = self._raw(name, list(default))
        kind = int if integer else (int, float)
        if (
            not isinstance(value, list)
            or len(value) != 2
            or not all(isinstance(v, kind) and not isinstance(v, bool) and math.isfinite(v) for v in value)
            or value[0] > value[1]
            or value[0] < low
        ):
            noun = "integers" if integer else "finite numbers"
            raise self.fail(name, value, f"[low, high] with {low:g} <= low <= high ({noun})")
        result = tuple(int(v) if integer else float(v) for v in value)
        self.effective[name] = list(result)
        return result

    def table(self, name: str, default: Any = _MISSING) -> Table:
        sub = Table(self._raw(name, default), self.source, self.key(name))
        self.effective[name] = sub.effective
        return sub

    def tables(self, name: str, default: Any = _MISSING) -> list[Table]:
        items = self._raw(name, default)
        if not isinstance(items, list):
            raise self.fail(name, items, "an array of tables ([[...]])")
        subs = [Table(item, self.source, f"{self.key(name)}[{i}]") for i, item in enumerate(items)]
        self.effective[name] = [s.effective for s in subs]
        return subs

    def choose(self, name: str, keys: dict[str, tuple[str, ...]], default: str) -> str:
        """One of the alternatives ``keys`` names (``model = ...``), whose own keys follow.

        The other alternatives' keys are accepted unread and left out of the
        effective configuration, so ``--set stress.failures.model=none`` switches
        off a file's failure model without deleting its ``mttf``.
        """
        chosen = self.choice(name, tuple(keys), default)
        self._other.update(k for other, names in keys.items() if other != chosen for k in names)
        self._other.difference_update(keys[chosen])
        return chosen

    def done(self) -> None:
        """Reject keys nobody read (typos, misplaced keys)."""
        unknown = [k for k in self.data if k not in self.effective and k not in self._other]
        if unknown:
            known = ", ".join(sorted(self.effective)) or "none"
            raise ScenarioError(
                f"{self.source}: unknown key '{self.key(unknown[0])}'; keys read here: {known}"
            )
