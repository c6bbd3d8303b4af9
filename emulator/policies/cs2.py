"""Convergent Scheduling 2.0 (seed 002): a plan for every job in the cluster at each event.

At each scheduling event (or every ``period`` seconds: the time-driven
variants) the policy rebuilds a *plan* for all jobs in the cluster, running
and queued: the Job-Machine matrix ``P[i, m]`` over the machines each job can
use (enough CPUs, able to run its licenses: the *minimal requirements*
heuristic) is the weighted sum of the deadline, overhead minimization,
licenses, wait minimization and anti-aging heuristics
(:mod:`~emulator.policies.cs2_matrix`), computed with numpy at every eligible
entry at once. The entries are ordered (``sort = "quick"``: by their float value;
``"counting"``: the paper's "Cs" variant, a counting sort over ``classes``
integer classes) and matched greedily (``match = "merge"``: speed-ranked rows merged, no
global sort; ``"sort"``: every entry sorted first, as the paper does, the same placements). Then:

- a running job placed on its machine continues;
- a running job left out is preempted: ``checkpoint`` if it is checkpointable
  (and ``checkpoint = true``), else ``preempt`` (``"suspend"``: progress kept,
  resumes only on the same machine; ``"stop"``: progress lost);
- a running job placed on another machine migrates: with a checkpoint, or
  else stopped and restarted from zero there (every machine supports
  stop/restart, as the paper assumes); a suspended job placed on another
  machine likewise restarts from zero. With ``restart = false`` jobs never
  lose progress to move: a running or suspended job that cannot checkpoint
  is eligible only on its own machine;
- a queued job placed starts (or resumes); the others wait.

Each kind may carry an overhead (``suspend_overhead``...): seconds the job
spends on its CPUs before progressing again when it resumes.

Readings where the paper is silent (each a parameter or documented here):

- ``remT(i, m)`` uses the *estimated* remaining instructions (estimate x bench
  minus the MI executed and kept), never less than 1e-6 MI; for a job whose
  move would lose its progress (running or suspended, not checkpointable),
  remT on the other machines is its whole length.
- ``elapsed(i, m)`` (overhead minimization) is the time since the job last
  (re)started on ``m`` if it runs there now, else 0.
- ``rho_l`` counts every job in the cluster (running and queued) asking for ``l``.
- Counting sort classes: the plan's priorities mapped affinely from their
  ``[min, max]`` onto ``classes`` integers (the coarser keys the paper describes).
- Ties (equal priority, or one class) go to running jobs first (in start
  order), then queued jobs in queue order (arrival; a preempted job re-enters
  at the tail), then the lower machine index.
- Jobs are the paper's SMP jobs: a ``spread`` job is run as a single-machine
  job of the same size (rejected if no machine is large enough).
- With an empty queue the engine does not call the policy (nothing could
  start; a plan could only move running jobs). With ``period > 0`` the engine
  calls it at multiples of the period while jobs wait (``LocalPolicy.period``).
"""

from __future__ import annotations

from operator import attrgetter

import numpy as np

from ..core.model import SINGLE, Job
from ..core.preemption import CHECKPOINT, STOP, SUSPEND, Preempt
from . import cs2_matrix as cs
from .local_base import Decision, LocalPolicy
from .params import Param
from .registry import LOCAL

SORTS = ("quick", "counting")
MATCHES = ("merge", "sort")
"""How the matching orders the entries: ``merge`` their speed-ranked rows (no global sort; the
default), or ``sort`` them all as the paper does (same placements; isolates what the sort costs)."""
PREEMPT_KINDS = (SUSPEND, STOP)
SECONDS = Param(low=0, finite=True)
"""A duration parameter: seconds, 0 or more."""
MIN_REMAINING = 1e-6
"""MI: the least remaining work a job is assumed to have (it may outrun its estimate)."""


@LOCAL.register(
    "cs2",
    sort=Param(choices=SORTS),
    match=Param(choices=MATCHES),
    preempt=Param(choices=PREEMPT_KINDS),
    classes=Param(low=2, high=1 << 16),
    period=SECONDS,
    suspend_overhead=SECONDS,
    checkpoint_overhead=SECONDS,
    stop_overhead=SECONDS,
)
class ConvergentScheduling(LocalPolicy):
    """CS 2.0 (see the module docstring); weights ``w_*`` are the paper's defaults."""

    def __init__(
        self,
        *,
        w_d: float = 15.0,
        w_c: float = 40.0,
        w_aa: float = 5.0,
        w_l: float = 5.0,
        w_wm: float = 8.0,
        sort: str = "quick",
        match: str = "merge",
        classes: int = 1024,
        period: float = 0.0,
        preempt: str = SUSPEND,
        checkpoint: bool = True,
        restart: bool = True,
        suspend_overhead: float = 0.0,
        checkpoint_overhead: float = 0.0,
        stop_overhead: float = 0.0,
        rng=None,
        cluster=None,
    ) -> None:
        super().__init__(rng=rng, cluster=cluster)
        overheads = {SUSPEND: suspend_overhead, CHECKPOINT: checkpoint_overhead, STOP: stop_overhead}
        self.weights = cs.Weights(deadline=w_d, overhead=w_c, aging=w_aa, licenses=w_l, wait=w_wm)
        self.sort, self.match, self.classes, self.period = sort, match, classes, float(period)
        self.preempt, self.checkpoint, self.restart, self.overheads = preempt, checkpoint, restart, overheads
        self._jobs: _JobColumns | None = None
        self._scratch = cs.Scratch()

    def admit(self, job: Job) -> Job:
        """CS 2.0 places each job on one SMP machine: a spread job runs as a single-machine one."""
        return job if job.placement == SINGLE else job.replace(placement=SINGLE)

    def kind(self, job: Job) -> str:
        """How a running ``job`` left out of the plan is preempted."""
        return CHECKPOINT if self.checkpoint and job.checkpointable else self.preempt

    def schedule(self, view) -> list[Decision | Preempt]:
        if self._jobs is None:
            self._jobs = _JobColumns(view.resources)
        state = self._state(view)
        plan = self.plan(view.now, state)
        return self._decisions(view, state, plan)

    # -- the plan ---------------------------------------------------------------------------------

    def _state(self, view) -> dict:
        """Arrays over the plan's jobs (running in start order, then queued in queue order)."""
        now, res, cols, scratch = view.now, view.resources, self._jobs, self._scratch
        runs = list(view.running.values())
        queued = list(view.queue.values())
        r = len(runs)
        rows = cols.rows([run.job for run in runs], view.queue)
        n = len(rows)
        done, elapsed = np.zeros(n), np.zeros(n)
        current = np.full(n, -1, dtype=np.int64)
        pinned, lossy = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
        if r:  # progress as the exact execution model has it (Run.progress), vectorized
            start = _field(runs, "start")
            ran = now - start - _field(runs, "overhead")
            done[:r] = _field(runs, "done") + np.maximum(ran, 0.0) * _field(runs, "speed")
            elapsed[:r] = now - start
            current[:r] = np.fromiter((run.plan[0][0] for run in runs), np.int64, r)
            lossy[:r] = ~(cols.checkpointable[rows[:r]] & self.checkpoint)
        if view.preempted:  # they wait in the queue with the progress they kept
            slot = dict(zip(view.queue, range(r, n), strict=True))
            for job_id, held in view.preempted.items():
                k = slot.get(job_id)
                if k is not None:
                    done[k] = held.done
                    if held.kind == SUSPEND:
                        current[k], lossy[k] = held.machines[0], True
        if not self.restart:
            pinned, lossy = lossy & (current >= 0), np.zeros(n, dtype=bool)
        width = len(res.mips)
        eligible = scratch("eligible", n * width, bool).reshape(n, width)
        np.take(cols.masks, cols.shape[rows], axis=0, out=eligible, mode="clip")
        if pinned.any():  # its own machine only
            jobs = np.flatnonzero(pinned)
            keep = eligible[jobs, current[jobs]]
            eligible[jobs] = False
            eligible[jobs, current[jobs]] = keep
        entries = cs.Entries.of(eligible, scratch)
        own = entries.on(current)
        length = cols.length[rows]
        remaining = np.maximum(length - done, MIN_REMAINING)
        elsewhere = np.where(lossy, length, remaining)  # a lossy job would start from zero elsewhere
        remt = cs.remaining_times(entries, remaining, elsewhere, own, res.mips, scratch)
        running = np.flatnonzero((own >= 0) & (elapsed > 0))
        return {
            "runs": runs,
            "queued": queued,
            "rows": rows,
            "cpus": cols.cpus[rows],
            "entries": entries,
            "remt": remt,
            "deadline": cols.deadline[rows],
            "running": own[running],
            "elapsed": elapsed[running],
            "current": current,
            "age": now - cols.submit[rows],
        }

    def plan(self, now: float, s: dict) -> np.ndarray:
        """Each job's machine in the new plan (-1: not placed): matrix, sort, greedy matching."""
        cols, entries = self._jobs, s["entries"]
        keys = cols.key[s["rows"]]
        uses = cols.uses[keys] if cols.copies.size else np.zeros((len(keys), 0), dtype=bool)
        values = cs.priorities(
            s["remt"],
            entries,
            now,
            s["deadline"],
            s["age"],
            uses,
            cols.copies,
            s["running"],
            s["elapsed"],
            self.weights,
            self._scratch,
        )
        key = cs.sort_keys(values, self.sort, self.classes, self._scratch)
        order = cs.entry_order(key, self.sort, self.classes) if self.match == "sort" else None
        available = cols.res.available
        return cs.match(
            key,
            entries,
            cols.rank,
            s["cpus"],
            available,
            cols.needs(),
            keys,
            cols.copies,
            cols.per_machine,
            order,
        )

    def _decisions(self, view, s: dict, where: np.ndarray) -> list[Decision | Preempt]:
        """Preemptions first (they free what the starts use), then starts and resumes."""
        runs, current = s["runs"], s["current"]
        preempts: list[Preempt] = []
        starts: list[Decision] = []
        for i in np.flatnonzero(where[: len(runs)] != current[: len(runs)]).tolist():
            job, m = runs[i].job, int(where[i])
            if m < 0:
                kind = self.kind(job)
                preempts.append(Preempt(job.id, kind, self.overheads[kind]))
                continue
            # moving: with its checkpoint, or from zero
            moving = CHECKPOINT if self.kind(job) == CHECKPOINT else STOP
            preempts.append(Preempt(job.id, moving, self.overheads[moving]))
            starts.append((job, ((m, job.cpus),)))
        queued, r = s["queued"], len(runs)
        for k in np.flatnonzero(where[r:] >= 0).tolist():
            job, m = queued[k], int(where[r + k])
            if current[r + k] >= 0 and m != current[r + k]:  # suspended, placed elsewhere: from zero
                preempts.append(Preempt(job.id, STOP, self.overheads[STOP]))
            starts.append((job, ((m, job.cpus),)))
        return preempts + starts


def _field(runs: list, name: str) -> np.ndarray:
    """Attribute ``name`` of every run, as a float array."""
    return np.fromiter(map(attrgetter(name), runs), float, len(runs))


class _JobColumns:
    """Per-job constants as numpy columns, one row per job ever seen (rows are never reused).

    Filled once per job, so a plan gathers its jobs' attributes with one
    dictionary lookup per job and vectorized indexing. License sets are
    interned: ``key`` indexes ``uses`` (the set as a row over the cluster's
    licenses) and the rows of ``needs()`` (copies per license, for the matching); so are
    (license set, CPUs) shapes: ``shape`` indexes ``masks``, the machines a
    job of that shape may use (minimal requirements).
    """

    def __init__(self, res) -> None:
        self.res = res
        self.capacity = res.capacity
        self.per_machine = res.per_machine
        self.names = sorted(res.cluster.licenses)
        self.index = {name: i for i, name in enumerate(self.names)}
        self.copies = np.array([res.cluster.licenses[n] for n in self.names], dtype=np.int64)
        self.rank = cs.machine_ranks(res.mips)
        self.row: dict[int, int] = {}
        self._sets: dict[tuple[str, ...], int] = {}
        self._shapes: dict[tuple[tuple[str, ...], int], int] = {}
        self.masks = np.zeros((0, len(res.mips)), dtype=bool)
        self.uses = np.zeros((0, len(self.names)), dtype=bool)
        self._needs: list[cs.Needs] = []
        self._table: cs.LicenseNeeds | None = None
        self.size = 0
        self._grow(256)

    def _grow(self, capacity: int) -> None:
        def grown(old, dtype):
            new = np.zeros(capacity, dtype=dtype)
            new[: self.size] = old[: self.size]
            return new

        empty = np.zeros(0)
        self.cpus = grown(getattr(self, "cpus", empty), np.int64)
        self.key = grown(getattr(self, "key", empty), np.int64)
        self.shape = grown(getattr(self, "shape", empty), np.int64)
        self.checkpointable = grown(getattr(self, "checkpointable", empty), bool)
        for name in ("length", "deadline", "submit"):
            setattr(self, name, grown(getattr(self, name, empty), float))

    def rows(self, running: list[Job], queue: dict[int, Job]) -> np.ndarray:
        """The rows of the running jobs then the queued ones, in order (new jobs get a row)."""
        found = [self.row.get(job.id) for job in running]
        found += map(self.row.get, queue)  # dict keys: job ids, at C speed
        if None in found:
            jobs = [*running, *queue.values()]
            found = [self._add(jobs[i]) if r is None else r for i, r in enumerate(found)]
        return np.array(found, dtype=np.int64)

    def _add(self, job: Job) -> int:
        r = self.size
        if r == len(self.cpus):
            self._grow(2 * r)
        self.size += 1
        self.row[job.id] = r
        self.cpus[r] = job.cpus
        self.length[r] = job.estimate * job.bench
        self.deadline[r] = job.deadline
        self.submit[r] = job.submit
        self.checkpointable[r] = job.checkpointable
        self.key[r] = self._set(job.licenses)
        shape = self._shapes.get((job.licenses, job.cpus))
        if shape is None:
            shape = self._shapes[(job.licenses, job.cpus)] = len(self.masks)
            mask = self.res.eligible(job.licenses) & (self.capacity >= job.cpus)
            self.masks = np.vstack((self.masks, mask[None, :]))
        self.shape[r] = shape
        return r

    def _set(self, licenses: tuple[str, ...]) -> int:
        key = self._sets.get(licenses)
        if key is None:
            key = self._sets[licenses] = len(self._needs)
            use = np.zeros((1, len(self.names)), dtype=bool)
            counts: dict[int, int] = {}
            for lic in licenses:
                i = self.index[lic]  # admission rejects jobs asking for a license the cluster lacks
                use[0, i] = True
                counts[i] = counts.get(i, 0) + 1
            self.uses = np.vstack((self.uses, use))
            self._needs.append(tuple(sorted(counts.items())))
            self._table = None
        return key

    def needs(self) -> cs.LicenseNeeds:
        """The copies each license set needs, rebuilt only after a new set was seen."""
        if self._table is None:
            self._table = cs.LicenseNeeds.of(self._needs)
        return self._table
