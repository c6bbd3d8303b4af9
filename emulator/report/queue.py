"""Queue length over time per cluster: jobs that have arrived and are waiting for CPUs.

A job joins its cluster's queue when it arrives (or is preempted, or killed by a
failure or an outage) and leaves it when it starts (or resumes), when the
cluster rejects it after its arrival, or when an outage sends it back.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from matplotlib.figure import Figure

from ..data.metrics import INT, cluster_codes, is_in, numbers
from .data import RunData
from .style import last_time, new_figure, palette, steps, time_axis

JOIN, LEAVE = ("arrive", "preempt"), ("start", "resume", "return")


@dataclass(frozen=True)
class Queue:
    cluster: str
    time: np.ndarray
    length: np.ndarray
    origin: float = 0.0  # the run's start: times are labelled from it


def queue_lengths(run: RunData) -> list[Queue]:
    """Each cluster's queue length after every distinct event time, in platform order."""
    events = run.events
    cluster = cluster_codes(events)
    kinds = events.column("kind")
    keep = (cluster >= 0) & is_in(kinds, (*JOIN, *LEAVE, "reject", "kill"))
    events, cluster = events.filter(pa.array(keep)), cluster[keep]
    kinds, job = events.column("kind"), numbers(events, "job", INT)
    at = job * (len(run.clusters) + 1) + cluster  # one key per (job, cluster)
    arrive = is_in(kinds, ("arrive",))
    rejected = is_in(kinds, ("reject",)) & np.isin(at, at[arrive])
    delta = is_in(kinds, JOIN).astype(np.int64) - is_in(kinds, LEAVE) - rejected
    kills = is_in(kinds, ("kill",))
    if kills.any():  # requeued, unless killed at its estimate (it ends there)
        delta += kills & ~is_in(pc.fill_null(events.column("info"), ""), ("estimate",))
    time = numbers(events, "time")
    result = []
    for index, shape in enumerate(run.clusters):
        on = cluster == index
        result.append(Queue(shape.name, *steps(time[on], delta[on]), run.start))
    return result


def queue_figure(queues: list[Queue]) -> Figure:
    figure = new_figure(3.6)
    ax = figure.add_subplot()
    for queue, colour in zip(queues, palette([q.cluster for q in queues]), strict=True):
        ax.step(queue.time, queue.length, where="post", lw=1, color=colour, label=queue.cluster)
    ax.set(ylabel="queued jobs", ylim=(0, None))
    if queues:
        time_axis(ax.xaxis, queues[0].origin, last_time([q.time for q in queues], queues[0].origin))
    if len(queues) > 1:  # one cluster's line needs no name
        ax.legend(
            loc="upper left",
            bbox_to_anchor=(1.0, 1.0),
            fontsize="small",
            frameon=False,
            ncols=1 + len(queues) // 20,
        )
    return figure
