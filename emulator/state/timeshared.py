"""Time sharing: PEs that several gridlets share, and GridSim 5.2's ``TimeShared`` timing.

GridSim's ``TimeShared`` allocation policy (``gridsim/TimeShared.java``) has
no queue: every gridlet runs from its arrival. Its rules, as the source has them:

- on submission an n-PE gridlet becomes a 1-PE gridlet of n times the length
  (``gridletSubmit``); it joins the end of the execution list, INEXEC at once,
  so its start time is its arrival time;
- shares (``getMIShare``): all gridlets share ``totalPE`` PEs (every machine's)
  of one rating, machine 0's PE 0 (``getMIPSRatingOfOnePE``), whatever the
  other machines' ratings. With n gridlets, ``k = n // P`` and ``r = n % P``:
  if ``k > 0`` the first ``(P - r) * k`` in list order get ``MIPS / k``, the
  rest ``MIPS / (k + 1)``; else each gets the whole ``MIPS``;
- progress (``updateGridletProcessing``): at every update, each gridlet gains
  ``MIPS * (now - last update)`` divided as above, counting the gridlets
  present before the update; updates happen on every submission and on every
  internal event whose time is not the last update time (``internalEvent``);
- completion (``forecastGridlet`` -> ``checkGridletCompletion``): after the
  update of a submission or of an internal event, every gridlet whose
  remaining length is <= 0 finishes, in list order. So a gridlet may finish
  at another gridlet's arrival, not only at an internal event;
- forecast (``forecastGridlet``, after each submission and each internal
  event): with the shares of the gridlets then present, each gridlet's
  ``remaining / share`` raised to at least 1 s; one internal event is sent
  at ``now +`` the least of them (exact, no +1 rounding). Every such event
  stays scheduled: an outdated one still updates, finishes what is done
  (a gridlet held back by the 1 s floor may end there) and forecasts again,
  and its float noise shows in the times. As for ``SpaceShared``, an exact
  re-implementation keeps the set of distinct internal-event times.
- GridSim records no machine or PE for a time-shared gridlet (TimeShared never
  calls ``ResGridlet.setMachineAndPEID``: both stay -1). gridemu records the
  least-loaded PE at the start (fewest gridlets, then first machine, lowest
  PE): the lowest free PE while one is free, as for space sharing.
"""

from __future__ import annotations

import numpy as np

from ..core.model import Cluster, Job
from ..core.resources import OverAllocation, Pes, Plan, Resources
from ..core.runs import Run
from .execution import ExecutionModel, Host


def mi_shares(total: float, gridlets: int, pes: int) -> tuple[float, float, int]:
    """GridSim's ``getMIShare``: ``(max share, min share, how many get max)`` for ``gridlets`` on ``pes``.

    ``total`` is what one PE does in the span (``MIPS * span``). The first
    ``count`` gridlets in list order get ``max``, the others ``min``:

    >>> mi_shares(100.0, 3, 2)  # PE 0 runs gridlet 0, PE 1 runs gridlets 1 and 2
    (100.0, 50.0, 1)
    """
    per_pe, extra = divmod(gridlets, pes)
    if per_pe > 0:
        return total / per_pe, total / (per_pe + 1), (pes - extra) * per_pe
    return total, total, gridlets


def least_loaded_pe(loads: list[int]) -> int:
    """The PE running the fewest jobs, lowest index first."""
    return loads.index(min(loads))


def least_loaded_machine(loads: list[list[int]], eligible: np.ndarray, cpus: int = 1) -> int | None:
    """The machine (among ``eligible`` ones with at least ``cpus`` PEs) holding the least-loaded PE."""
    best, best_load = None, 0
    for m, pe_loads in enumerate(loads):
        if eligible[m] and len(pe_loads) >= cpus:
            low = min(pe_loads)
            if best is None or low < best_load:
                best, best_load = m, low
    return best


class SharedResources(Resources):
    """A cluster's resources when PEs are time-shared: any number of jobs may hold one PE.

    :class:`Resources` keeps counting the idle PEs (``free``, ``free_cpus``:
    PEs running nothing) and the license copies; this class adds how many jobs
    each PE runs. A job takes the least-loaded PEs of its plan's machines (the
    lowest free PEs while there are any); a PE becomes free again when its
    last job ends. License copies are :class:`Resources`' business, on the
    plan's machines, as without sharing: every call to it names all of them,
    with the count of PEs that turn busy (or idle) on each, possibly 0.
    """

    READS = ("pe_loads",)

    def __init__(self, cluster: Cluster) -> None:
        super().__init__(cluster)
        self._loads = [[0] * m.cpus for m in cluster.machines]

    def pe_loads(self) -> list[list[int]]:
        """Jobs running on each PE, per machine (a copy a policy may change); none on a machine down."""
        if self.up_cpus == self.cluster.cpus:
            return [list(loads) for loads in self._loads]
        return [list(loads) if up else [] for loads, up in zip(self._loads, self.available, strict=True)]

    def _room(self, m: int) -> int:
        """Every PE of machine ``m``: time-shared, busy ones are shared."""
        return int(self.capacity[m])

    def allocate(
        self, job: Job, plan: Plan, chosen: Pes | None = None
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Take the plan's idle PEs through :class:`Resources` (with the licenses), then share busy ones.

        PEs are chosen by load here: a policy cannot name them (``chosen``).
        """
        if chosen is not None:
            raise OverAllocation(f"job {job.id}: time-shared PEs are chosen by load, not named by a policy")
        idle = tuple((m, min(n, int(self.free[m]))) for m, n in plan)
        machines, pes = (list(x) for x in super().allocate(job, idle))
        for m, pe in zip(machines, pes, strict=True):
            self._loads[m][pe] += 1
        for (m, n), (_, k) in zip(plan, idle, strict=True):
            loads = self._loads[m]
            for _ in range(n - k):
                pe = least_loaded_pe(loads)
                loads[pe] += 1
                machines.append(m)
                pes.append(pe)
        return tuple(machines), tuple(pes)

    def release(self, job: Job, plan: Plan, machines: tuple[int, ...], pes: tuple[int, ...]) -> None:
        """Give back the job's share; PEs it leaves idle (and its licenses) go back to :class:`Resources`."""
        idle: dict[int, list[int]] = {m: [] for m, _ in plan}  # (grouped by plan entry, as release wants)
        for m, pe in zip(machines, pes, strict=True):
            self._loads[m][pe] -= 1
            if self._loads[m][pe] == 0:
                idle[m].append(pe)
        idle_plan = tuple((m, len(idle[m])) for m, _ in plan)
        idle_m = tuple(m for m, _ in plan for _ in idle[m])
        super().release(job, idle_plan, idle_m, tuple(pe for m, _ in plan for pe in idle[m]))


class GridSimTimeShared(ExecutionModel):
    """GridSim 5.2 ``TimeShared`` timing (see the module docstring for the rules).

    ``part.state.running`` (start order) is GridSim's execution list. Hooks map to
    GridSim's methods: :meth:`arrived` is the update and completion check of a
    submission, :meth:`started` (called for each arrival's start, in arrival
    order, all at the arrival time) its forecast with the list as it then is,
    :meth:`tick` an internal event. Ticks at equal times are one tick: GridSim
    ignores the later ones (their time is the last update time).
    """

    def __init__(self) -> None:
        self.last_update = 0.0
        self.ticks: set[float] = set()
        self.mips = 0.0

    def _rating(self, part: Host) -> None:
        if not self.mips:  # machine 0's PE rating, for every gridlet; shared by all PEs that are up
            self.mips = float(part.state.cluster.machines[0].mips)

    def _update(self, part: Host) -> None:
        """``updateGridletProcessing``: progress since the last update, shared as the list was."""
        span = part.state.now - self.last_update
        if span <= 0.0:
            return
        self.last_update = part.state.now
        runs = part.state.running
        if not runs:
            return
        self._rating(part)
        high, low, count = mi_shares(self.mips * span, len(runs), part.state.resources.up_cpus)
        for i, run in enumerate(runs.values()):
            run.done += high if i < count else low

    @staticmethod
    def _finish_done(part: Host) -> None:
        """``checkGridletCompletion``: every gridlet with nothing left finishes now, in list order."""
        for run in list(part.state.running.values()):
            if run.job.runtime * run.job.bench - run.done <= 0.0:
                part.finish(run)

    def _forecast(self, part: Host) -> None:
        """``forecastGridlet``: finish what is done, then one internal event at the least forecast."""
        self._finish_done(part)
        runs = part.state.running
        if not runs:
            return  # GridSim sends an event with delay 0 here: it is ignored (no update at its time)
        self._rating(part)
        high, low, count = mi_shares(self.mips, len(runs), part.state.resources.up_cpus)
        least = 0.0
        for i, run in enumerate(runs.values()):
            time = (run.job.runtime * run.job.bench - run.done) / (high if i < count else low)
            time = max(time, 1.0)
            if i == 0 or time < least:
                least = time
        time = part.state.now + least
        if time not in self.ticks:
            self.ticks.add(time)
            part.push_tick(time)

    def started(self, part: Host, run: Run) -> None:
        self._update(part)  # a no-op when the arrival has just updated
        self._forecast(part)

    def arrived(self, part: Host) -> None:
        self._update(part)
        self._finish_done(part)  # GridSim checks after adding the gridlet: a new one is never done

    def tick(self, part: Host) -> None:
        self.ticks.discard(part.state.now)
        if self.last_update == part.state.now:
            return
        self._update(part)
        self._forecast(part)

    def preempted(self, part: Host, run: Run, keep: bool) -> float:
        """``run`` is stopped now (a failure, an outage): the MI it keeps (all it did, or 0)."""
        self._update(part)
        return run.done if keep else 0.0

    def stopped(self, part: Host) -> None:
        """Runs were taken off now: the others' shares change, so forecast again."""
        self._update(part)
        self._forecast(part)
