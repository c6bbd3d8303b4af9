"""DLL, dynamic least load (seed 004's baseline): the eligible cluster with the least ``L_c``.

``L_c = sum over the jobs allocated to c of e_jc * s_j / m_c``: ``e_jc`` the
job's execution time on ``c`` by estimate (``length / MIPS`` of the machines
it would get there, :meth:`~emulator.partitions.meta.MetaView.speed`), ``s_j`` its CPUs,
``m_c`` the cluster's CPUs. Eligible: the cluster can run the job at all
(for rigid jobs without licenses, ``m_c >= s_j``).

"Allocated" (the paper's ``WQ_c``) is read as dispatched by this
meta-scheduler and not yet reported finished (``count = "unfinished"``, so
the load is dynamic); ``count = "queued"`` counts only jobs not yet reported
started. Jobs that entered a cluster directly are not counted (their sizes
are not reported). Ties go to the lowest index.
"""

from __future__ import annotations

import numpy as np

from ..core.model import Job, Platform
from .meta_base import Choice, MetaPolicy, dispatch_to, no_cluster
from .params import Param
from .registry import META

COUNTS = ("unfinished", "queued")


@META.register("dll", count=Param(choices=COUNTS))
class Dll(MetaPolicy):
    """Dynamic least load (see the module docstring)."""

    def __init__(self, *, count: str = "unfinished", rng=None, platform: Platform | None = None) -> None:
        super().__init__(rng=rng)
        self.count = count
        clusters = platform.clusters if platform is not None else ()
        self.cpus = np.array([c.cpus for c in clusters], dtype=float)
        self.load = np.zeros(len(clusters))
        self.jobs = np.zeros(len(clusters), dtype=np.int64)
        self.allocated: dict[int, tuple[int, float]] = {}  # job id -> (cluster, its share of L_c)

    def choose(self, job: Job, view) -> Choice:
        eligible = view.eligible(job)
        if not eligible.any():
            return no_cluster(job)
        c = int(np.argmin(np.where(eligible, self.load, np.inf)))
        share = job.length / view.speed(job)[c] * job.cpus / self.cpus[c]
        self.load[c] += share
        self.jobs[c] += 1
        self.allocated[job.id] = (c, share)
        return dispatch_to(c)

    def observe(self, cluster: int, status) -> None:
        gone = status.finished if self.count == "unfinished" else status.started
        for ids in (gone, status.rejected):
            for job_id in ids:
                entry = self.allocated.pop(job_id, None)
                if entry is not None:
                    c, share = entry
                    self.jobs[c] -= 1
                    self.load[c] = self.load[c] - share if self.jobs[c] else 0.0  # no float residue
