"""GridSim 5.2 ``TimeShared``: no queue, every gridlet runs from its arrival on a shared PE.

A gridlet asking for n PEs runs as a 1-PE gridlet of n times the length (as
``TimeShared.gridletSubmit`` rewrites it). Each queued job starts at once on
the least-loaded PE (fewest jobs, then first machine, lowest PE), which may
already run others: the cluster's PEs are :class:`~emulator.state.timeshared.SharedResources`.
How fast each gridlet progresses, and when it ends, is
:class:`emulator.state.timeshared.GridSimTimeShared`. A job waits only for license
copies (GridSim has none).
"""

from __future__ import annotations

from ..core.model import Job
from ..state import timeshared
from .gridsim_spaceshared import one_pe
from .local_base import Decision, LocalPolicy
from .registry import LOCAL


@LOCAL.register("gridsim-timeshared")
class GridSimTimeShared(LocalPolicy):
    execution = timeshared.GridSimTimeShared
    resources_class = timeshared.SharedResources
    """The partition builds this cluster's resources from it: PEs may run several jobs at once."""

    def admit(self, job: Job) -> Job:
        return one_pe(job)

    def schedule(self, view) -> list[Decision]:
        res = view.resources
        loads = res.pe_loads()
        licenses = dict(res.free_licenses)
        held: set[tuple[int, str]] = set()  # (machine, license) taken by this pass (per-machine copies)
        starts: list[Decision] = []
        for job in view.queue.values():
            m = timeshared.least_loaded_machine(loads, res.eligible(job.licenses), job.cpus)
            if m is None:
                continue
            plan = ((m, job.cpus),)
            need = res.license_need(job, plan, held)
            if any(licenses.get(lic, 0) < n for lic, n in need.items()):
                continue
            for lic, n in need.items():
                licenses[lic] -= n
            held.update((m, lic) for lic in job.licenses)
            for _ in range(job.cpus):
                loads[m][timeshared.least_loaded_pe(loads[m])] += 1
            starts.append((job, plan))
        return starts
