"""The garbage collector's pauses around a run's long-lived objects leave its state as they found it."""

from __future__ import annotations

import gc

from emulator.core.heap import YOUNG, frozen_heap, long_lived


def test_long_lived_pauses_collection_and_restores_it_nested():
    assert gc.isenabled()
    with long_lived():
        assert not gc.isenabled()
        with long_lived():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer block is still making its objects
    assert gc.isenabled()


def test_long_lived_restores_collection_after_an_error():
    try:
        with long_lived():
            raise ValueError
    except ValueError:
        pass
    assert gc.isenabled()


def test_frozen_heap_hides_what_exists_then_gives_it_back():
    with frozen_heap():
        assert gc.get_freeze_count() > 0
    assert gc.get_freeze_count() == 0


def test_frozen_heap_collects_the_young_rarely_then_as_before_even_after_an_error():
    before = gc.get_threshold()
    try:
        with frozen_heap():
            assert gc.get_threshold() == (YOUNG, *before[1:])
            raise ValueError
    except ValueError:
        pass
    assert gc.get_threshold() == before
