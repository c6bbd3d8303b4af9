"""EASY on deep queues: candidates found with one mask over the queue's columns, the same decisions.

``easy.DEEP`` decides from how many queued jobs a pass filters its later
candidates with numpy (:mod:`emulator.core.queue_columns`) instead of walking them.
The filter only leaves out jobs the walk would skip, so every decision, and
the trace, must be the same either way; checked on random deep queues with
licenses, spread and single placements, inexact estimates and machines of
several speeds.
"""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given
from hypothesis import strategies as st

from emulator import run
from emulator.core.model import Cluster, Job, Link, Machine
from emulator.core.queue_columns import QueueColumns
from emulator.core.resources import Resources
from emulator.data.scenario import parse
from emulator.policies import easy
from emulator.state.cluster_state import ClusterState

from .test_properties import SETTINGS


def test_columns_keep_queue_order_through_removals_and_requeues():
    columns = QueueColumns()
    for i in range(100):
        columns.append(Job(i, 0.0, 1 + i % 3, 10.0 * (i + 1)), fastest=2.0)
    for i in range(0, 90):
        columns.remove(i)  # squeezed along the way
    columns.append(Job(5, 0.0, 4, 1.0), fastest=4.0)  # requeued: at the end
    start, cpus, work, fastest = columns.after(90)
    assert [columns.jobs[start + i].id for i in range(cpus.size)] == [*range(91, 100), 5]
    assert cpus.tolist() == [1 + i % 3 for i in range(91, 100)] + [4]
    assert (work[-1], fastest[-1]) == (1.0, 4.0)


def test_a_state_builds_its_columns_when_asked_and_drops_them_when_its_queue_empties():
    cluster = Cluster("c", (Machine(4, 2.0),), Link(1.0))
    state = ClusterState(cluster, Resources(cluster))
    jobs = [Job(i, 0.0, 1 + i % 3, 10.0) for i in range(8)]
    for job in jobs[:5]:
        state.enqueue(job)
    assert state.columns is None  # nothing asked yet: no upkeep

    def queued() -> list[int]:
        columns = state.queue_columns()
        start, cpus, _, _ = columns.after(None)
        return [columns.jobs[start + i].id for i in range(cpus.size) if columns.jobs[start + i] is not None]

    assert queued() == [0, 1, 2, 3, 4]
    state.dequeue(jobs[1])
    for job in jobs[5:]:
        state.enqueue(job)
    assert queued() == list(state.queue) == [0, 2, 3, 4, 5, 6, 7]
    for i in list(state.queue):
        state.dequeue(state.queue[i])
    assert state.columns is None and queued() == []


machines = st.lists(
    st.fixed_dictionaries(
        {
            "cpus": st.integers(1, 4),
            "mips": st.sampled_from([1.0, 2.0]),
            "licenses": st.sampled_from([[], ["a"]]),
        }
    ),
    min_size=1,
    max_size=4,
)


@st.composite
def deep_queues(draw) -> dict:
    ms = draw(machines)
    widest, total = max(m["cpus"] for m in ms), sum(m["cpus"] for m in ms)
    jobs = []
    for i in range(draw(st.integers(20, 70))):
        placement = draw(st.sampled_from(["single", "spread"]))
        cpus = draw(st.integers(1, widest if placement == "single" else total))
        runtime = float(draw(st.integers(1, 50)))
        jobs.append(
            {
                "id": i,
                "submit": float(draw(st.integers(0, 20))),  # bursts: the queue grows deep
                "cpus": cpus,
                "runtime": runtime,
                "estimate": runtime * draw(st.sampled_from([1.0, 1.5, 3.0])),
                "placement": placement,
                "licenses": draw(st.sampled_from([[], ["a"]])) if any(m["licenses"] for m in ms) else [],
                "bench": 1.0,
            }
        )
    cluster = {"name": "c", "policy": "easy", "machines": ms, "licenses": {"a": 2}}
    return {
        "name": "t",
        "clusters": [cluster],
        "workload": {"source": "gridlets", "site": "c", "gridlets": jobs},
    }


@SETTINGS
@given(deep_queues())
def test_the_mask_finds_what_the_walk_finds(tmp_path_factory, raw):
    traces = []
    for deep in (0, 10, 1 << 30):  # always the mask; from 10 jobs (columns built mid-queue); never
        out = tmp_path_factory.mktemp("run")
        with patch.object(easy, "DEEP", deep):
            run(parse(raw, "deep queue"), out / "r")
        traces.append([(out / "r" / name).read_bytes() for name in ("events.arrow", "jobs.arrow")])
    assert traces[0] == traces[1] == traces[2]
