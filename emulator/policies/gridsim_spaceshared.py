"""GridSim 5.2 ``SpaceShared``: FCFS on single PEs with GridSim's timing.

A gridlet asking for n PEs runs on one PE with n times the length (GridSim
5.2 does not run multi-PE gridlets across PEs); PEs are taken from the first
machine in list order with a free PE, lowest PE first. The timing quirks live
in :class:`emulator.state.execution.GridSimSpaceShared`.
"""

from __future__ import annotations

from ..core.model import SINGLE, Job
from ..state import execution
from .fcfs import Fcfs
from .registry import LOCAL


def one_pe(job: Job) -> Job:
    """GridSim's rewrite of an n-PE gridlet into a 1-PE gridlet of n times the length."""
    if job.cpus <= 1:
        return job.replace(placement=SINGLE) if job.placement != SINGLE else job
    n = job.cpus
    return job.replace(cpus=1, estimate=job.estimate * n, runtime=job.runtime * n, placement=SINGLE)


@LOCAL.register("gridsim-spaceshared")
class GridSimSpaceShared(Fcfs):
    execution = execution.GridSimSpaceShared

    def __init__(self, *, rng=None, cluster=None) -> None:
        """GridSim's queue is in arrival order only: none of fcfs's other ``order`` parameters."""
        super().__init__(rng=rng, cluster=cluster)

    def admit(self, job: Job) -> Job:
        return one_pe(job)
