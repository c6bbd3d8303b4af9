"""The reproduction scripts' options that change how a run is made: ``--quick`` and ``--match sort``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

import reproduce_cs2
from reproduce_common import add_quick, apply_quick


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser()
    made.add_argument("--seeds", type=int, default=20)
    made.add_argument("--jobs", type=int, default=5000)
    add_quick(made, {"seeds": 3, "jobs": 1000})
    return made


def test_quick_shrinks_only_the_options_left_at_their_default():
    made = parser()
    full = apply_quick(made, made.parse_args([]))
    assert (full.seeds, full.jobs) == (20, 5000)  # the documented full size stays the default
    quick = apply_quick(made, made.parse_args(["--quick"]))
    assert (quick.seeds, quick.jobs) == (3, 1000)
    mixed = apply_quick(made, made.parse_args(["--quick", "--seeds", "7"]))
    assert (mixed.seeds, mixed.jobs) == (7, 1000)


def test_match_sort_adds_the_global_sort_to_cs2_specs_only():
    add = reproduce_cs2.sorting_every_entry
    assert add("cs2") == "cs2[match=sort]"
    assert add("cs2[period=10,sort=counting]") == "cs2[match=sort,period=10,sort=counting]"
    assert add("easy") == "easy" and add("flexible[priority=ls]") == "flexible[priority=ls]"
