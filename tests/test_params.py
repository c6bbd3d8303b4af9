"""Declared parameter checks (emulator/policies/params.py): a policy states choices and ranges once
at registration, the registry refuses a spec that breaks them with one line naming the policy, the
parameter, the value and what was expected."""

from __future__ import annotations

from typing import ClassVar

import pytest

from emulator.policies import LOCAL, META, PolicyError
from emulator.policies.local_base import LocalPolicy
from emulator.policies.params import Param
from emulator.policies.registry import Registry


@pytest.mark.parametrize(
    ("registry", "spec", "message"),
    [
        (LOCAL, "cs2[sort=heap]", "local policy 'cs2': sort 'heap': expected one of quick, counting"),
        (LOCAL, "cs2[classes=1]", "local policy 'cs2': classes 1: expected a number >= 2 and <= 65536"),
        (LOCAL, "cs2[period=-5]", "local policy 'cs2': period -5.0: expected a number >= 0, finite"),
        (LOCAL, "easy[half_life=0]", "local policy 'easy': half_life 0.0: expected a number > 0, finite"),
        (LOCAL, "titan[population=0]", "local policy 'titan': population 0: expected a number >= 1"),
        (LOCAL, "titan[w_over=-1.0]", "local policy 'titan': w_over -1.0: expected a number >= 0"),
        (META, "muscle[threshold=-1]", "meta policy 'muscle': threshold -1.0: expected a number >= 0"),
        (META, "mcrs[power=peak]", "meta policy 'mcrs': power 'peak': expected one of placed, mean"),
        (META, "two-level[window=0]", "meta policy 'two-level': window 0: expected a number >= 1"),
    ],
)
def test_a_bad_choice_or_range_names_policy_parameter_value_and_expectation(registry, spec, message):
    with pytest.raises(PolicyError) as err:
        registry.create(spec)
    assert str(err.value) == message


def test_values_within_the_declaration_build_the_policy():
    assert LOCAL.create("cs2[sort=counting,classes=2,period=0]").classes == 2
    assert META.create("muscle[threshold=0]").threshold == 0.0


class Planned(LocalPolicy):
    """A plug-in's own declaration: ``param_checks`` on the class, as ``register`` would set it."""

    param_checks: ClassVar[dict[str, Param]] = {"depth": Param(low=1, high=8)}

    def __init__(self, *, depth: int = 2, rng=None, cluster=None) -> None:
        super().__init__(rng=rng, cluster=cluster)
        self.depth = depth


def test_a_plug_in_declares_its_checks_on_its_class():
    assert LOCAL.create(f"{__name__}:Planned[depth=8]").depth == 8
    with pytest.raises(PolicyError, match=rf"'{__name__}:Planned': depth 9: expected a number >= 1 and <= 8"):
        LOCAL.create(f"{__name__}:Planned[depth=9]")


def test_register_keeps_the_declaration_with_the_class():
    registry = Registry("local", LocalPolicy)

    @registry.register("picky", mode=Param(choices=("a", "b")))
    class Picky(LocalPolicy):
        def __init__(self, *, mode: str = "a", rng=None, cluster=None) -> None:
            super().__init__(rng=rng, cluster=cluster)

    assert Picky.param_checks == {"mode": Param(choices=("a", "b"))}
    with pytest.raises(PolicyError, match="local policy 'picky': mode 'c': expected one of a, b"):
        registry.create("picky[mode=c]")


def test_gridsim_space_shared_takes_no_queue_order():
    # GridSim's SpaceShared queues in arrival order; fcfs's orders, which it builds on, are not GridSim's.
    with pytest.raises(PolicyError, match="'gridsim-spaceshared' has no parameter 'order'; parameters: none"):
        LOCAL.create("gridsim-spaceshared[order=sjf]")
    assert LOCAL.create("gridsim-spaceshared").order.arrival
