"""The verdict rule of ``docs/reproductions.md``: a paper's claim, our measured effect, what follows.

A claim is one number the paper states or implies, written so that the paper's
side is an :class:`Expect`: a direction (``> 0``, ``< 0``), a signed magnitude
(``+44.6``: the direction and its size), or a band around zero (``within ±20``:
"almost constant", "close to"). Ours is the mean of that effect over seeds,
paired by seed (every policy of a seed sees the same workload and platform),
with its 95% half-width (Student's t). The rule, applied in this order:

1. **within noise** when the interval cannot decide: for a direction or a
   magnitude, it contains 0; for a band, it contains the band's edge. The
   seeds needed to tell are ``ceil(n x (half-width / gap)^2)``, ``gap`` the
   distance from the mean to that deciding value (the half-width shrinks as
   one over the root of the seeds; the t quantile is held, so it is an
   upper estimate);
2. **contradicts** when the effect has the other sign, lies outside the
   band, or is more than 10 times larger or smaller than the paper's
   magnitude;
3. **agrees** when the direction holds and, with a magnitude, ours is within
   a factor of 2 of it, or the effect lies inside the band;
4. **qualitative** otherwise: the direction holds, the size is off by a
   factor of 2 to 10.

:func:`verdict` is the rule; :func:`ours_text` and :func:`parse_ours` write and
read our side of a row, and :meth:`Expect.parse` the paper's, so a test can
apply the rule to the committed numbers again (the generator judges the
numbers as printed, so the two always agree).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

AGREES, QUALITATIVE, CONTRADICTS, NOISE, IMPLEMENTED = (
    "agrees",
    "qualitative",
    "contradicts",
    "within noise",
    "implemented",
)
AGREE_FACTOR = 2.0
CONTRADICT_FACTOR = 10.0
MOST_SEEDS = 1000  # beyond this the doc says only "more than"


@dataclass(frozen=True)
class Expect:
    """The paper's side of a claim: ``> 0``, ``< 0``, ``+12.1`` or ``within ±20`` (see the module)."""

    sign: int = 1  # the direction claimed (a band has none)
    size: float | None = None  # a magnitude, or a band's half-width
    band: bool = False

    def __str__(self) -> str:
        if self.band:
            return f"within ±{self.size:g}"
        if self.size is None:
            return "> 0" if self.sign > 0 else "< 0"
        return f"{self.sign * self.size:+g}"

    @classmethod
    def parse(cls, text: str) -> Expect:
        """The inverse of ``str``: ``Expect.parse(str(e)) == e``."""
        text = text.strip()
        if text in ("> 0", "< 0"):
            return cls(1 if text == "> 0" else -1)
        if text.startswith("within ±"):
            return cls(size=float(text.removeprefix("within ±")), band=True)
        value = float(text)
        return cls(1 if value >= 0 else -1, abs(value))


def more(size: float | None = None) -> Expect:
    """The paper: the effect is positive (of ``size``, when it gives one)."""
    return Expect(1, size)


def less(size: float | None = None) -> Expect:
    """The paper: the effect is negative (of ``-size``, when it gives one)."""
    return Expect(-1, size)


def near_zero(band: float) -> Expect:
    """The paper: the effect is about zero, within ``band`` (our tolerance, shown in the row)."""
    return Expect(size=band, band=True)


def seeds_to_tell(seeds: int, half: float, gap: float) -> int | None:
    """Seeds for a half-width below ``gap``; ``None`` when the mean sits on the deciding value."""
    if gap <= 0:
        return None
    return max(seeds + 1, math.ceil(seeds * (half / gap) ** 2))


def verdict(expect: Expect, mean: float, half: float, seeds: int) -> tuple[str, int | None]:
    """The rule of the module docstring: the verdict, and for ``within noise`` the seeds to tell."""
    if expect.band:
        edge = expect.size
        if abs(abs(mean) - edge) < half:
            return NOISE, seeds_to_tell(seeds, half, abs(abs(mean) - edge))
        return (AGREES if abs(mean) <= edge else CONTRADICTS), None
    if abs(mean) <= half:
        return NOISE, seeds_to_tell(seeds, half, abs(mean))
    ours = mean * expect.sign
    if ours < 0:
        return CONTRADICTS, None
    if expect.size is None:
        return AGREES, None
    ratio = ours / expect.size
    if 1 / AGREE_FACTOR <= ratio <= AGREE_FACTOR:
        return AGREES, None
    if 1 / CONTRADICT_FACTOR <= ratio <= CONTRADICT_FACTOR:
        return QUALITATIVE, None
    return CONTRADICTS, None


def verdict_text(expect: Expect, mean: float, half: float, seeds: int) -> str:
    """:func:`verdict` as the doc writes it, e.g. ``within noise (about 14 seeds to tell)``."""
    found, needed = verdict(expect, mean, half, seeds)
    if found != NOISE:
        return found
    if needed is None or needed > MOST_SEEDS:
        return f"{NOISE} (more than {MOST_SEEDS} seeds to tell)"
    return f"{NOISE} (about {needed} seeds to tell)"


def ours_text(mean: float, half: float, seeds: int) -> str:
    """Our effect as the doc writes it: ``+12.3 ±4.5 (3 seeds)``."""
    return f"{mean:+.3g} ±{half:.2g} ({seeds} seeds)"


OURS = re.compile(r"^(?P<mean>[-+]?[0-9.e+-]+) ±(?P<half>[0-9.e+-]+) \((?P<seeds>\d+) seeds\)$")


def parse_ours(text: str) -> tuple[float, float, int]:
    """The inverse of :func:`ours_text` (to the digits it printed)."""
    found = OURS.match(text.strip())
    if found is None:
        raise ValueError(f"ours: {text!r}: expected e.g. '+12.3 ±4.5 (3 seeds)'")
    return float(found["mean"]), float(found["half"]), int(found["seeds"])
