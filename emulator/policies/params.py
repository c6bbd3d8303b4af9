"""Declared parameter checks: a policy states each parameter's choices or range once, at
registration (``@LOCAL.register("cs2", sort=Param(choices=SORTS))``), and the registry checks a
spec against them before the policy is built, so no policy writes the test or its message by hand.

>>> Param(choices=("quick", "counting")).expected("heap")
'one of quick, counting'
>>> Param(low=2, high=65536).expected(1)
'a number >= 2 and <= 65536'
>>> Param(above=0, finite=True).expected(7.5) is None
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import PolicyError


@dataclass(frozen=True)
class Param:
    """What one parameter's value may be: one of ``choices``, or a number within the bounds given
    (``low``/``high`` inclusive, ``above`` exclusive, ``finite`` ruling out infinity and NaN)."""

    choices: tuple[Any, ...] = ()
    low: float | None = None
    high: float | None = None
    above: float | None = None
    finite: bool = False

    def expected(self, value: Any) -> str | None:
        """What was expected, if ``value`` breaks the declaration; None when it is fine."""
        if self.choices:
            return None if value in self.choices else f"one of {', '.join(map(str, self.choices))}"
        return None if self._within(value) else self._range()

    def _within(self, value: float) -> bool:
        return (
            (self.low is None or value >= self.low)
            and (self.high is None or value <= self.high)
            and (self.above is None or value > self.above)
            and not (self.finite and not math.isfinite(value))
            and value == value  # NaN passes no bound
        )

    def _range(self) -> str:
        bounds = ((">=", self.low), (">", self.above), ("<=", self.high))
        text = "a number " + " and ".join(f"{op} {bound:g}" for op, bound in bounds if bound is not None)
        return text + (", finite" if self.finite else "")


def check(kind: str, policy: str, params: dict[str, Any], declared: dict[str, Param]) -> None:
    """Every value of ``params`` that ``declared`` constrains, checked; one line on the first bad one."""
    for key, value in params.items():
        expected = declared[key].expected(value) if key in declared else None
        if expected is not None:
            raise PolicyError(f"{kind} policy {policy!r}: {key} {value!r}: expected {expected}")
