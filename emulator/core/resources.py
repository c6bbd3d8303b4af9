"""A cluster's allocatable resources: PEs of each machine and license copies.

PE identity is kept (lowest-numbered free PE first, as GridSim does) so traces
can say which CPUs ran a job; policies mostly read the per-machine free counts,
a numpy array they can vectorize over. A policy that tracks PEs itself (a
profile of PEs booked ahead) may name the PEs a job takes.
"""

from __future__ import annotations

from bisect import insort
from collections import Counter

import numpy as np

from .model import Cluster, Job

Plan = tuple[tuple[int, int], ...]
"""Where a job runs: ``((machine index, CPUs on it), ...)``, machines ascending."""

Pes = tuple[int, ...]
"""PE indices chosen by a policy, one per CPU of a plan, machine by machine in plan order."""


class OverAllocation(RuntimeError):
    """A policy asked for CPUs or license copies that are not free (a policy bug)."""


class Resources:
    """Free PEs per machine and free license copies of one cluster."""

    READS: tuple[str, ...] = ()
    """Methods a policy may call beyond those :class:`~emulator.state.views.ResourcesView` offers
    (subclasses)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        machines = cluster.machines
        self.mips = np.array([m.mips for m in machines], dtype=float)
        self._speeds = self.mips.tolist()  # (what speed reads: list items cost less than array scalars)
        self._uniform = self._speeds[0] if len(set(self._speeds)) == 1 else None  # every plan's speed
        self.capacity = np.array([m.cpus for m in machines], dtype=np.int64)
        self._free = self.capacity.copy()
        self._expose_free()
        self._free_total = int(self.capacity.sum())
        self._free_pes = [list(range(m.cpus)) for m in machines]
        self.available = self.capacity.copy()  # CPUs of each machine that is up (0: failed, or cluster down)
        self.up_cpus = self._free_total  # CPUs of the machines that are up
        self.free_licenses: dict[str, int] = dict(sorted(cluster.licenses.items()))
        self.per_machine = cluster.license_per_machine
        self._holders: Counter[tuple[int, str]] = Counter()
        self._eligible: dict[tuple[str, ...], np.ndarray] = {}
        self._masks: dict[bytes, np.ndarray] = {}
        self._copies: dict[tuple[str, ...], dict[str, int]] = {}
        self._low = 0  # no machine below this one has a free CPU (see first_free)
        self.everywhere = self.eligible(())  # every machine: the mask of any license set all of them run

    def _expose_free(self) -> None:
        """``free``: a read-only view of the free counts, for policies (kept in step, never copied);
        ``_counts``: the same memory as a memoryview, what allocations update one machine at a time
        (an item of it costs a third of an array scalar's update)."""
        self.free = self._free.view()
        self.free.flags.writeable = False
        self._counts = memoryview(self._free)

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        del state["free"], state["_counts"]  # a pickled view would come back as a copy, no longer in step
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._expose_free()

    @property
    def free_cpus(self) -> int:
        return self._free_total

    def first_free(self) -> int:
        """The lowest machine with a free CPU (the machine count if none): where first fit by index
        starts looking.

        Kept as a lower bound that releases and repairs lower and this call raises, so on a cluster
        of thousands of machines it costs a search over only the machines filled since the last call.
        """
        free, low = self._free, self._low
        if low < free.size and free[low]:
            return low
        step = 64
        while low < free.size:
            hits = free[low : low + step].nonzero()[0]  # (np.flatnonzero's wrapper costs more than this)
            if hits.size:
                low += int(hits[0])
                break
            low, step = low + step, step * 4
        self._low = low = min(low, free.size)
        return low

    def speed(self, plan: Plan) -> float:
        """MIPS per CPU of a plan: a spread job runs at the pace of its slowest machine."""
        if self._uniform is not None:
            return self._uniform
        speeds = self._speeds
        if len(plan) == 1:
            return speeds[plan[0][0]]
        return min(speeds[m] for m, _ in plan)

    def eligible(self, licenses: tuple[str, ...]) -> np.ndarray:
        """Read-only mask of the machines able to run every license in ``licenses``.

        License sets that the same machines can run share one mask object, so
        callers may key caches on its ``id`` (e.g. every set, when every machine
        runs every license).
        """
        mask = self._eligible.get(licenses)
        if mask is None:
            mask = np.array([m.can_run(licenses) for m in self.cluster.machines], dtype=bool)
            mask = self._masks.setdefault(mask.tobytes(), mask)
            mask.flags.writeable = False
            self._eligible[licenses] = mask
        return mask

    def copies(self, job: Job) -> dict[str, int]:
        """Copies of each license ``job`` holds while it runs, when copies are counted per job."""
        need = self._copies.get(job.licenses)
        if need is None:
            need = self._copies[job.licenses] = dict(Counter(job.licenses))
        return need

    def fastest(self, licenses: tuple[str, ...]) -> float:
        """MIPS of the fastest machine able to run ``licenses`` (a bound on any plan's speed)."""
        key = ("fastest", licenses)
        fastest = self._eligible.get(key)
        if fastest is None:
            mask = self.eligible(licenses)
            fastest = self._eligible[key] = float(self.mips[mask].max()) if mask.any() else 0.0
        return fastest

    def license_need(
        self, job: Job, plan: Plan, held: set[tuple[int, str]] = frozenset(), fresh: bool = False
    ) -> dict[str, int]:
        """Copies ``job`` would take if started on ``plan`` now.

        With copies counted per machine, a machine already holding the license
        (now, or in ``held``: a policy's tentative starts) needs no new copy,
        unless ``fresh``: then every machine counts, as it keeps a copy busy
        until the job ends whoever else shares it (what a reservation must count).
        """
        if not job.licenses:
            return {}
        if not self.per_machine:
            return dict(Counter(job.licenses))
        need: Counter[str] = Counter()
        for lic in set(job.licenses):
            need[lic] = sum(
                1 for m, _ in plan if fresh or (self._holders[(m, lic)] == 0 and (m, lic) not in held)
            )
        return dict(need)

    def licenses_free_for(self, job: Job, plan: Plan = ()) -> bool:
        free = self.free_licenses
        return all(free.get(lic, 0) >= n for lic, n in self.license_need(job, plan).items())

    def allocate(
        self, job: Job, plan: Plan, chosen: Pes | None = None
    ) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """Take the plan's PEs and the job's licenses.

        By default each machine's lowest free PEs are taken. ``chosen`` names the
        PEs instead, one per CPU in plan order (machine by machine): a policy that
        books PEs ahead (a reservation keeps its PEs, as in GridSim's parallel
        package) says which; each must be free. Returns ``(machines, pes)``: one
        entry per CPU, the machine and its PE index.
        """
        need = self.license_need(job, plan) if job.licenses else {}
        for lic, n in need.items():
            if self.free_licenses.get(lic, 0) < n:
                raise OverAllocation(f"job {job.id}: license {lic} has no free copy")
        if chosen is not None:
            machines, pes = self._take_chosen(job, plan, chosen)
        else:
            machines, pes = self._take_lowest(job, plan)
        self._free_total -= len(pes)
        if not job.licenses:
            return tuple(machines), tuple(pes)
        for lic, n in need.items():
            self.free_licenses[lic] -= n
        if self.per_machine:
            for lic in set(job.licenses):
                for m, _ in plan:
                    self._holders[(m, lic)] += 1
        return tuple(machines), tuple(pes)

    def unfit(self, job: Job, plan: Plan) -> str | None:
        """Why ``job`` cannot start on ``plan`` now, or None: every entry a machine of this cluster with
        that many free CPUs, no machine twice, and its licenses free. What a policy's decision that
        :meth:`allocate` refused is reported with (only then: allocating checks as it goes)."""
        try:
            entries = [(int(m), int(n)) for m, n in plan]
        except (TypeError, ValueError):
            return f"job {job.id}: plan {plan!r} is not ((machine, CPUs), ...)"
        for m, n in entries:
            if not 0 <= m < len(self._free_pes):
                return f"job {job.id}: machine {m} does not exist (the cluster has {len(self._free_pes)})"
            if n < 1 or n > self._room(m):
                return f"job {job.id}: machine {m} has {self._room(m)} free CPUs, not {n}"
        if len({m for m, _ in entries}) < len(entries):
            return f"job {job.id}: plan {plan!r} names a machine twice"
        for lic, n in (self.license_need(job, plan) if job.licenses else {}).items():
            if self.free_licenses.get(lic, 0) < n:
                free = self.free_licenses.get(lic, 0)
                return f"job {job.id}: license {lic} has {free} free copies, not {n}"
        return None

    def _room(self, m: int) -> int:
        """CPUs of machine ``m`` a job may take now (space-shared: its free PEs)."""
        return len(self._free_pes[m])

    def _take_lowest(self, job: Job, plan: Plan) -> tuple[list[int], list[int]]:
        """Take each machine's lowest free PEs (see :meth:`allocate`). The hot path of every start: one
        pop (one CPU, the usual entry of a spread plan over single-CPU machines) or one slice of each
        machine's pool and one scalar update of the free counts per plan entry."""
        machines: list[int] = []
        pes: list[int] = []
        free, free_pes = self._counts, self._free_pes
        for m, n in plan:
            pool = free_pes[m]
            if n == 1 and pool:
                pes.append(pool.pop(0))
                machines.append(m)
                free[m] -= 1
                continue
            taken = pool[:n]
            if len(taken) < n:
                raise OverAllocation(f"job {job.id}: machine {m} has {len(pool)} free CPUs, not {n}")
            del pool[:n]
            pes += taken
            machines += [m] * n
            free[m] -= n
        return machines, pes

    def _take_chosen(self, job: Job, plan: Plan, chosen: Pes) -> tuple[list[int], list[int]]:
        """Take the PEs a policy named, machine by machine in plan order (see :meth:`allocate`)."""
        if len(chosen) != sum(n for _, n in plan):
            raise OverAllocation(f"job {job.id}: {len(chosen)} PEs named for a plan of other size")
        machines: list[int] = []
        pes = list(chosen)
        for m, n in plan:
            pool = self._free_pes[m]
            for pe in pes[len(machines) : len(machines) + n]:
                try:
                    pool.remove(pe)  # the pool stays sorted
                except ValueError:
                    raise OverAllocation(f"job {job.id}: PE {pe} of machine {m} is not free") from None
            machines.extend([m] * n)
            self._counts[m] -= n
        return machines, pes

    def fail(self, m: int) -> None:
        """Machine ``m`` goes down: its CPUs leave the pool until :meth:`repair` (stress tests).

        Its jobs must have been stopped first, so every CPU of it is free: policies
        then see it as a machine with nothing free (``free[m] == 0``), and
        ``available`` (what plans over whole machines start from) says 0 too.
        """
        if not self.available[m]:
            return
        n = int(self.capacity[m])
        if self._free[m] != n:
            raise OverAllocation(f"machine {m} fails with {n - int(self._free[m])} CPUs still allocated")
        self._free[m] = 0
        self._free_total -= n
        self._free_pes[m] = []
        self.available[m] = 0
        self.up_cpus -= n

    def repair(self, m: int) -> None:
        """Machine ``m`` is back: all its CPUs are free again."""
        if self.available[m]:
            return
        n = int(self.capacity[m])
        self._free[m] = n
        self._free_total += n
        self._free_pes[m] = list(range(n))
        self.available[m] = n
        self.up_cpus += n
        self._low = min(self._low, m)

    def release(self, job: Job, plan: Plan, machines: tuple[int, ...], pes: tuple[int, ...]) -> None:
        """Give back what :meth:`allocate` took: ``pes`` grouped by plan entry, in plan order, as
        :meth:`allocate` returns them. A machine's PEs go back as one slice and one sort of its pool
        (a C sort of a few items costs less than a Python step per CPU of a job of thousands)."""
        free_pes, free = self._free_pes, self._counts
        start = 0
        for m, n in plan:
            pool = free_pes[m]
            if n == 1:
                pe = pes[start]
                if pool and pool[-1] > pe:
                    insort(pool, pe)  # the pool stays sorted
                else:
                    pool.append(pe)
            else:
                pool += pes[start : start + n]
                pool.sort()
            free[m] += n
            start += n
        if machines:  # the lowest machine it frees (min over ints: a C loop)
            self._low = min(self._low, min(machines))
        self._free_total += len(pes)
        if not job.licenses:
            return
        if not self.per_machine:
            for lic in job.licenses:
                self.free_licenses[lic] += 1
            return
        for lic in set(job.licenses):
            for m, _ in plan:
                key = (m, lic)
                self._holders[key] -= 1
                if self._holders[key] == 0:
                    del self._holders[key]
                    self.free_licenses[lic] += 1
