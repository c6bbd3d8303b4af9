"""The meta partition: the job source and the meta-scheduler.

It submits jobs at their submit time, asks the meta policy for a cluster, and
dispatches each job over that cluster's link (latency plus the input data's
transfer time, transfers on one link serialized). It knows the clusters only
from the static platform and their status messages.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from .messages import DISPATCH, DISPATCHED, META, NO_CPUS, REJECT, SUBMIT, Message, Status
from .model import Job, LinkClock, Platform
from .policies import META as META_POLICIES
from .policies.registry import PolicySpec

_STATUS, _SUBMIT = 0, 1  # status reports at a time are applied before that time's submissions


class MetaView:
    """What a meta policy may read. Arrays are indexed by cluster; do not mutate them."""

    def __init__(self, platform: Platform, rng: np.random.Generator) -> None:
        self.platform = platform
        self.rng = rng
        self.now = 0.0
        n = len(platform.clusters)
        self.cluster_index = {c.name: i for i, c in enumerate(platform.clusters)}
        self.reported_queued = np.zeros(n, dtype=np.int64)
        self.running = np.zeros(n, dtype=np.int64)
        self.free_cpus = np.array([c.cpus for c in platform.clusters], dtype=np.int64)
        self.queued_work = np.zeros(n)
        self.in_flight: list[set[int]] = [set() for _ in range(n)]
        self._eligible: dict[tuple, np.ndarray] = {}

    @property
    def queued(self) -> np.ndarray:
        """Jobs believed queued at each cluster: last report plus dispatches not yet reported."""
        return self.reported_queued + np.array([len(s) for s in self.in_flight], dtype=np.int64)

    def eligible(self, job: Job) -> np.ndarray:
        """Clusters whose hardware and licenses can ever run ``job`` (cached per job shape)."""
        key = (job.cpus, job.placement, job.licenses)
        mask = self._eligible.get(key)
        if mask is None:
            mask = np.array([not c.fits(job) for c in self.platform.clusters], dtype=bool)
            mask.flags.writeable = False
            self._eligible[key] = mask
        return mask

    def apply(self, c: int, status: Status) -> None:
        self.reported_queued[c] = status.queued
        self.running[c] = status.running
        self.free_cpus[c] = status.free_cpus
        self.queued_work[c] = status.queued_work
        self.in_flight[c].difference_update(status.arrived)
        self.in_flight[c].difference_update(status.rejected)


class MetaPartition:
    """Partition 0: submits the jobs that do not enter a cluster directly and dispatches them."""

    pid = META

    def __init__(
        self, platform: Platform, policy: PolicySpec, seed_seq: np.random.SeedSequence, jobs: list[Job]
    ):
        self.platform = platform
        self.rng = np.random.default_rng(seed_seq)
        self.policy = META_POLICIES.create(policy, rng=self.rng)
        self.view = MetaView(platform, self.rng)
        self.links = [LinkClock(c.link) for c in platform.clusters]
        self.now = 0.0
        self._seq = 0
        self._msg_seq = 0
        self._events = [(job.submit, _SUBMIT, i, job) for i, job in enumerate(jobs)]
        self._seq = len(jobs)
        heapq.heapify(self._events)
        self._rows: list[tuple] = []
        self._outbox: list[Message] = []

    @property
    def next_time(self) -> float:
        return self._events[0][0] if self._events else math.inf

    def advance(self, horizon: float, inbox: list[Message]) -> tuple[list[Message], float, list[tuple]]:
        """Apply status reports, submit and dispatch every job due before ``horizon``."""
        for msg in inbox:
            self._seq += 1
            heapq.heappush(self._events, (msg.time, _STATUS, self._seq, (msg.src - 1, msg.payload)))
        events = self._events
        while events and events[0][0] < horizon:
            self.now = self.view.now = time = events[0][0]
            submitted: list[Job] = []
            while events and events[0][0] == time:
                _, kind, _, data = heapq.heappop(events)
                if kind == _STATUS:
                    self.view.apply(*data)
                else:
                    submitted.append(data)
                    self._rows.append((time, SUBMIT, data.id, -1, 0, NO_CPUS, NO_CPUS, None))
            if submitted:
                self._dispatch(submitted)
        out, rows = self._outbox, self._rows
        self._outbox, self._rows = [], []
        return out, self.next_time, rows

    def _dispatch(self, jobs: list[Job]) -> None:
        for job, choice in zip(jobs, self.policy.select(jobs, self.view), strict=True):
            if isinstance(choice, str):
                self._rows.append((self.now, REJECT, job.id, -1, 0, NO_CPUS, NO_CPUS, choice))
                continue
            self._rows.append((self.now, DISPATCHED, job.id, choice, 0, NO_CPUS, NO_CPUS, None))
            self.view.in_flight[choice].add(job.id)
            deliver = self.links[choice].send(self.now, job.in_bytes)
            self._msg_seq += 1
            self._outbox.append(
                Message(deliver, META, self._msg_seq, choice + 1, DISPATCH, (job.to_tuple(), 0))
            )
