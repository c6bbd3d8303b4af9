"""Job.to_tuple / Job.from_tuple: the flat form a job crosses partitions in (every dispatch)."""

import pytest

from emulator.core.model import Job


def test_from_tuple_gives_back_every_field():
    job = Job(7, 1.5, 3, 10.0, 8.0, 2.0, ("matlab",), 99.0, 5.0, 6.0, 4, "vip", True, "kth", "spread")
    again = Job.from_tuple(job.to_tuple())
    assert {name: getattr(again, name) for name in Job.FIELDS} == {
        name: getattr(job, name) for name in Job.FIELDS
    }
    assert again.to_tuple() == job.to_tuple()


def test_from_tuple_takes_a_list_of_licenses_as_a_tuple():
    values = list(Job(1, 0.0, 1, 1.0, licenses=("a", "b")).to_tuple())
    values[Job.FIELDS.index("licenses")] = ["a", "b"]  # (as msgpack gives it back)
    assert Job.from_tuple(values).licenses == ("a", "b")


def test_from_tuple_refuses_a_short_tuple():
    with pytest.raises(ValueError):
        Job.from_tuple(Job(1, 0.0, 1, 1.0).to_tuple()[:-1])
