"""Property-based tests (hypothesis): invariants of every run on small random grids.

Generated scenarios: 1-3 clusters of 1-4 SMP machines (1-8 CPUs, mixed MIPS), 0-2
license types with 1-3 copies per cluster, optional per-machine license suitability,
``license_per_machine`` true or false, local policies fcfs / easy /
gridsim-spaceshared, meta policies round-robin / random / least-load, optional link
bandwidth; 1-25 gridlets with random (often equal) submit times, CPUs up to 10 (some
too large for every machine), runtime shorter, equal or longer than the estimate,
licenses, ``single`` / ``spread`` placement, some naming their cluster (direct entry).

Every run's ``events.arrow`` is replayed and checked:

1. resources: a PE is held by at most one job at a time, a machine never runs more
   CPUs than it has, a job runs only on machines able to run its licenses, and the
   license copies in use never exceed the pool (one per license per running job, or
   one per (machine, license) pair in use with ``license_per_machine``);
2. timing: submit <= arrive <= start < finish; a dispatched job arrives no earlier
   than dispatch + latency (+ transfer time); with gridemu's exact execution model
   finish = start + runtime * bench / (slowest MIPS of its machines);
3. outcome: every job ends exactly once, finished or rejected with a reason; a job
   that fits some cluster (an idle cluster's hardware and licenses) is never rejected,
   and one that fits none always is; ``jobs.arrow`` agrees with the events;
4. order: rows sorted by (time, partition); each job's rows read submit, [dispatch],
   arrive, start, finish (or end early with reject) at non-decreasing times;
5. local scheduling: under FCFS a blocked queue head starts exactly when it first
   fits given the jobs running when it became blocked (jobs start in arrival order);
   under EASY with exact estimates it starts no later than that (backfilling never
   delays it). EASY and FCFS on one cluster with exact estimates agree until the first
   time they differ, where EASY starts a superset of FCFS's jobs and the blocked head
   does not start later than under FCFS. Hand-made examples pin exact start times.

6. preemption (CS 2.0 clusters, ``cs2`` with each preemption kind, overheads, the
   counting sort and a period): a job's runs alternate start/resume and preempt/finish;
   freed CPUs and copies are free at once (property 1 covers every run); a suspended
   job resumes only on the machines it was suspended on; only checkpointable jobs are
   checkpointed; a job's progress (replayed from its runs, their machines' MIPS, resume
   overheads, and restarts from zero) never exceeds its length and equals it when it
   finishes; every job that fits finishes.

License-copy corner cases (copies counted per machine, duplicate licenses) have
regression tests at the end.
"""

from __future__ import annotations

import copy
import itertools
import math
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import emulator
from emulator.core.preemption import parse_resume
from emulator.data.scenario import parse

from .conftest import indexed

LICENSES = ("lic0", "lic1")
MIPS = (50.0, 100.0, 150.0, 400.0)
LOCAL_POLICIES = ("fcfs", "easy", "gridsim-spaceshared")
CS2_POLICIES = (
    "cs2",
    "cs2[preempt=stop]",
    "cs2[sort=counting,period=2]",
    "cs2[restart=false,suspend_overhead=1.5]",
    "cs2[checkpoint_overhead=0.5,stop_overhead=1]",
)
META_POLICIES = ("round-robin", "random", "least-load")
EPS = 1e-9

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# -- scenario builders (hypothesis strategies) ------------------------------------------------------


@st.composite
def cluster_dicts(draw, count: int, policies=LOCAL_POLICIES, per_machine=None) -> list[dict]:
    """``count`` [[clusters]] tables sharing 0-2 license types."""
    names = LICENSES[: draw(st.integers(0, 2))]
    clusters = []
    for c in range(count):
        machines = []
        for _ in range(draw(st.integers(1, 4))):
            machine = {"cpus": draw(st.integers(1, 8)), "mips": draw(st.sampled_from(MIPS))}
            if names and draw(st.booleans()):
                machine["licenses"] = draw(st.lists(st.sampled_from(names), unique=True))
            machines.append(machine)
        pool = {}
        for lic in names:
            if draw(st.integers(0, 3)) > 0:  # a cluster may lack a license type
                pool[lic] = draw(st.integers(1, 3))
        cluster = {
            "name": f"c{c}",
            "latency": draw(st.sampled_from((0.5, 1.0, 2.0))),
            "policy": draw(st.sampled_from(policies)),
            "license_per_machine": draw(st.booleans()) if per_machine is None else per_machine,
            "licenses": pool,
            "machines": machines,
        }
        if draw(st.integers(0, 3)) == 0:
            cluster["bandwidth"] = draw(st.sampled_from((100.0, 1000.0)))
        clusters.append(cluster)
    return clusters


@st.composite
def gridlet_dicts(draw, clusters: list[dict], max_jobs: int = 25, exact: bool = False, site=None):
    """1..max_jobs [[workload.gridlets]]; ``site``: every job's site (None: a few jobs get one)."""
    names = sorted({lic for c in clusters for lic in c["licenses"]})
    horizon = draw(st.sampled_from((0, 4, 15)))  # 0: every job at once; 15: few overlaps
    gridlets = []
    for i in range(draw(st.integers(1, max_jobs))):
        estimate = float(draw(st.sampled_from((1, 2, 3, 5, 8, 13, 20))))
        factor = 1.0 if exact else draw(st.sampled_from((0.25, 0.5, 1.0, 1.0, 1.5, 3.0)))
        if site is not None:
            where = site
        elif draw(st.integers(0, 4)) == 0:
            where = draw(st.sampled_from([c["name"] for c in clusters]))
        else:
            where = ""
        gridlets.append(
            {
                "id": i + 1,
                "submit": draw(st.integers(0, 2 * horizon)) / 2,  # many equal submit times
                "cpus": draw(st.integers(1, 10)),  # 9 and 10 fit no machine
                "estimate": estimate,
                "runtime": estimate * factor,
                "bench": draw(st.sampled_from((50.0, 100.0, 200.0))),
                "licenses": draw(st.lists(st.sampled_from(names), unique=True)) if names else [],
                "placement": draw(st.sampled_from(("single", "spread"))),
                "in_bytes": draw(st.sampled_from((0.0, 0.0, 500.0))),
                "site": where,
                "checkpointable": draw(st.booleans()),
            }
        )
        if draw(st.booleans()):  # a deadline, often tight
            gridlets[-1]["deadline"] = gridlets[-1]["submit"] + draw(st.sampled_from((1.0, 5.0, 30.0)))
    return gridlets


@st.composite
def grid_scenarios(draw, exact=None, policies=LOCAL_POLICIES) -> dict:
    clusters = draw(cluster_dicts(draw(st.integers(1, 3)), policies=policies))
    exact = draw(st.booleans()) if exact is None else exact
    workload = {"source": "gridlets", "gridlets": draw(gridlet_dicts(clusters, exact=exact))}
    if draw(st.integers(0, 3)) == 0:
        workload["link"] = {"bandwidth": 1000.0}  # jobs naming a cluster pay a transfer time
    return {
        "name": "prop",
        "seed": draw(st.integers(1, 5)),
        "meta": {"policy": draw(st.sampled_from(META_POLICIES))},
        "clusters": clusters,
        "workload": workload,
    }


# -- an independent model of the scenario -----------------------------------------------------------


@dataclass(frozen=True)
class Mach:
    cpus: int
    mips: float
    licenses: frozenset | None

    def can_run(self, licenses) -> bool:
        return self.licenses is None or set(licenses) <= self.licenses


@dataclass(frozen=True)
class Clu:
    name: str
    machines: tuple[Mach, ...]
    pool: dict
    per_machine: bool
    policy: str
    latency: float
    bandwidth: float


@dataclass(frozen=True)
class Jb:
    id: int
    submit: float
    cpus: int
    estimate: float
    runtime: float
    bench: float
    licenses: tuple
    placement: str
    in_bytes: float
    site: str
    checkpointable: bool = False


def model(raw: dict) -> tuple[list[Clu], dict[int, Jb], float | None]:
    """Clusters, jobs by id and the direct-entry bandwidth, read from the raw scenario dict."""
    clusters = []
    for c in raw["clusters"]:
        machines = []
        for m in c["machines"]:
            able = frozenset(m["licenses"]) if "licenses" in m else None
            machines += [Mach(m["cpus"], m["mips"], able)] * m.get("count", 1)
        clusters.append(
            Clu(
                c["name"],
                tuple(machines),
                dict(c.get("licenses", {})),
                c.get("license_per_machine", False),
                c.get("policy", "fcfs"),
                c.get("latency", 1.0),
                c.get("bandwidth", math.inf),
            )
        )
    jobs = {}
    for g in raw["workload"]["gridlets"]:
        estimate = g["estimate"]
        jobs[g["id"]] = Jb(
            g["id"],
            g.get("submit", 0.0),
            g.get("cpus", 1),
            estimate,
            g.get("runtime", estimate),
            g.get("bench", 1.0),
            tuple(g.get("licenses", ())),
            g.get("placement", "single"),
            g.get("in_bytes", 0.0),
            g.get("site", "") or raw["workload"].get("site", ""),
            g.get("checkpointable", False),
        )
    link = raw["workload"].get("link")
    return clusters, jobs, (link.get("bandwidth", math.inf) if link else None)


def shape(cl: Clu, job: Jb) -> tuple[int, str]:
    """(CPUs, placement) as the cluster runs the job: GridSim SpaceShared runs it on one PE,
    CS 2.0 on one machine."""
    if cl.policy == "gridsim-spaceshared":
        return 1, "single"
    if is_cs2(cl):
        return job.cpus, "single"
    return job.cpus, job.placement


def is_cs2(cl: Clu) -> bool:
    return cl.policy.split("[")[0] == "cs2"


def fits(cl: Clu, cpus: int, placement: str, licenses) -> bool:
    """Would the job fit the cluster when idle (hardware, suitability, license copies)?

    With copies counted per machine, a spread job needs one copy per machine of its
    idle first-fit plan.
    """
    if any(cl.pool.get(lic, 0) < n for lic, n in Counter(licenses).items()):
        return False
    able = [m.cpus for m in cl.machines if m.can_run(licenses)]
    if (max(able, default=0) if placement == "single" else sum(able)) < cpus:
        return False
    if not (cl.per_machine and placement == "spread" and licenses):
        return True
    plan = first_fit(cl, [m.cpus for m in cl.machines], cpus, placement, licenses)
    return all(len(plan) <= cl.pool.get(lic, 0) for lic in licenses)


def first_fit(cl: Clu, free: list[int], cpus: int, placement: str, licenses) -> list[int] | None:
    """Machines of the first-fit plan (lowest index first), or None."""
    able = [i for i, m in enumerate(cl.machines) if m.can_run(licenses)]
    if placement == "single":
        return next(([i] for i in able if free[i] >= cpus), None)
    plan, left = [], cpus
    for i in able:
        if left and free[i] > 0:
            plan.append(i)
            left -= min(left, free[i])
    return None if left else plan


def licenses_in_use(cl: Clu, running) -> Counter:
    """Copies taken by ``running`` ((machines, licenses) pairs) under the cluster's counting rule."""
    if cl.per_machine:
        return Counter(lic for m, lic in {(m, lic) for ms, lics in running for lic in lics for m in ms})
    return Counter(lic for _, lics in running for lic in lics)


def licenses_free_for(cl: Clu, plan: list[int], licenses, running) -> bool:
    used = licenses_in_use(cl, running)
    if cl.per_machine:
        held = {(m, lic) for ms, lics in running for lic in lics for m in ms}
        need = {lic: sum((m, lic) not in held for m in plan) for lic in set(licenses)}
    else:
        need = Counter(licenses)
    return all(cl.pool.get(lic, 0) - used[lic] >= n for lic, n in need.items())


# -- running and reading traces -----------------------------------------------------------------------


@dataclass
class Trace:
    raw: dict
    rows: list[dict]
    jobs_table: list[dict]


def run_raw(raw: dict) -> Trace:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        result = emulator.run(parse(copy.deepcopy(raw), "generated.toml"), out)
        with pa.memory_map(str(out / "events.arrow")) as source:
            rows = indexed(pa.ipc.open_file(source).read_all())
        return Trace(raw, rows, result.jobs.to_pylist())  # (jobs read from the run directory)


def by_job(rows: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for row in rows:
        out.setdefault(row["job"], []).append(row)
    return out


def first_row(rows: list[dict], kind: str) -> dict | None:
    return next((r for r in rows if r["kind"] == kind), None)


# -- the checks ----------------------------------------------------------------------------------------


def check_sorted(trace: Trace) -> None:
    keys = [(r["time"], r["partition"]) for r in trace.rows]
    for i in range(1, len(keys)):
        assert keys[i - 1] <= keys[i], (
            f"events not sorted by (time, partition) at row {i}: {trace.rows[i - 1]} then {trace.rows[i]}"
        )


META_PATTERNS = (
    ("submit", "reject"),
    ("submit", "dispatch", "arrive", "reject"),
    ("submit", "dispatch", "arrive", "start", "finish"),
)
DIRECT_PATTERNS = (("submit", "arrive", "reject"), ("submit", "arrive", "start", "finish"))


def check_job_lifecycles(trace: Trace) -> None:
    """Properties 2, 3 and 4: each job's rows, their times, and its outcome."""
    clusters, jobs, direct_bw = model(trace.raw)
    names = [c.name for c in clusters]
    rows = by_job(trace.rows)
    assert set(rows) == set(jobs), f"jobs without events: {sorted(set(jobs) - set(rows))}"
    table = {r["id"]: r for r in trace.jobs_table}
    for jid, job in jobs.items():
        mine = rows[jid]
        kinds = without_preemptions(tuple(r["kind"] for r in mine), jid)
        times = [r["time"] for r in mine]
        direct = job.site in names
        assert kinds in (DIRECT_PATTERNS if direct else META_PATTERNS), (
            f"job {jid} (site {job.site!r}): events {list(zip(kinds, times, strict=True))}"
        )
        assert times == sorted(times), (
            f"job {jid}: event times go backwards: {list(zip(kinds, times, strict=True))}"
        )
        assert mine[0]["time"] == job.submit, f"job {jid}: submitted at {mine[0]['time']}, not {job.submit}"
        ends = [r for r in mine if r["kind"] in ("finish", "reject")]
        assert len(ends) == 1, f"job {jid} ends {len(ends)} times: {ends}"
        end = ends[0]
        if end["kind"] == "reject":
            assert end["info"], f"job {jid} rejected at t={end['time']} without a reason"
        on = [r["cluster"] for r in mine if r["kind"] in ("dispatch", "arrive", "start", "finish")]
        assert len(set(on)) <= 1, f"job {jid} changes cluster: {on}"
        arrive = first_row(mine, "arrive")
        if arrive is not None:
            cl = clusters[arrive["cluster"]]
            if direct:
                assert cl.name == job.site, f"job {jid} names {job.site} but arrives at {cl.name}"
                transfer = job.in_bytes / direct_bw if direct_bw else 0.0
                if transfer == 0:
                    assert arrive["time"] == job.submit, (
                        f"job {jid}: arrives {arrive['time']}, submit {job.submit}"
                    )
                low = job.submit + transfer
            else:
                dispatch = first_row(mine, "dispatch")
                transfer = job.in_bytes / cl.bandwidth
                low = dispatch["time"] + cl.latency + transfer
                if transfer == 0:
                    assert arrive["time"] == low, (
                        f"job {jid}: dispatched {dispatch['time']}, arrives {arrive}"
                    )
                assert fits(cl, job.cpus, job.placement, job.licenses), (
                    f"job {jid} dispatched to cluster {cl.name}, which cannot run it"
                )
            assert arrive["time"] >= low - EPS, f"job {jid} arrives at {arrive['time']} < {low}"
        start = first_row(mine, "start")
        if start is not None:
            finish = end["time"]
            assert start["time"] >= max(job.submit, arrive["time"]), f"job {jid} starts before it arrives"
            assert finish > start["time"], f"job {jid}: finish {finish} <= start {start['time']}"
            cl = clusters[start["cluster"]]
            slowest = min(cl.machines[m].mips for m in start["machines"])
            if cl.policy == "gridsim-spaceshared":  # completions noticed at GridSim's internal events
                need = job.runtime * job.cpus * job.bench / slowest
                assert finish >= start["time"] + need - 1e-6, f"job {jid} finishes early: {finish}"
            elif first_row(mine, "preempt") is not None:
                check_progress(cl, job, mine)
            else:
                expected = start["time"] + job.runtime * job.bench / slowest
                assert math.isclose(finish, expected, rel_tol=1e-9, abs_tol=1e-9), (
                    f"job {jid} on {cl.name} machines {start['machines']}: "
                    f"finish {finish}, expected {expected}"
                )
        # never rejected when some cluster could run it; always rejected when none can
        if direct:
            cl = clusters[names.index(job.site)]
            can = fits(cl, *shape(cl, job), job.licenses)
        else:
            can = any(fits(cl, job.cpus, job.placement, job.licenses) for cl in clusters)
        assert (end["kind"] == "finish") == can, (
            f"job {jid} ({job.cpus} CPUs {job.placement}, licenses {list(job.licenses)}, site {job.site!r}): "
            f"{end['kind']} at t={end['time']} ({end['info']}) although it "
            f"{'fits' if can else 'fits no cluster'}"
        )
        out = table[jid]
        assert out["status"] == ("finished" if end["kind"] == "finish" else "rejected"), (jid, out)
        if start is not None:
            assert (out["start"], out["finish"]) == (start["time"], end["time"]), (jid, out)
        else:
            assert out["reason"] == end["info"], (jid, out)


def without_preemptions(kinds: tuple[str, ...], jid: int) -> tuple[str, ...]:
    """The job's kinds with each (preempt, resume) pair removed; a preempt is always resumed next."""
    out: list[str] = []
    rest = iter(kinds)
    for kind in rest:
        if kind == "preempt":
            assert next(rest, None) == "resume", f"job {jid}: a preemption not followed by a resume: {kinds}"
            continue
        assert kind != "resume", f"job {jid}: resumed without a preemption: {kinds}"
        out.append(kind)
    return tuple(out)


def check_progress(cl: Clu, job: Jb, mine: list[dict]) -> None:
    """Property 6: replay the job's runs (start/resume to preempt/finish): progress in MI grows
    at its machines' slowest MIPS once the resume overhead is paid, drops to 0 when it resumes
    from a stop, never exceeds the length, and equals it at the finish."""
    length, progress, opened = job.runtime * job.bench, 0.0, None
    for row in mine:
        if row["kind"] in ("start", "resume"):
            kind, overhead = parse_resume(row["info"]) if row["kind"] == "resume" else ("", 0.0)
            if kind == "stop":
                progress = 0.0
            opened = (row["time"] + overhead, min(cl.machines[m].mips for m in row["machines"]))
        elif row["kind"] in ("preempt", "finish"):
            since, mips = opened
            progress += max(0.0, row["time"] - since) * mips
            assert progress <= length * (1 + 1e-9) + 1e-9, (
                f"job {job.id}: progress {progress} MI exceeds its length {length} at t={row['time']}"
            )
    assert math.isclose(progress, length, rel_tol=1e-9, abs_tol=1e-6), (
        f"job {job.id} finished with {progress} of {length} MI done: {[(r['time'], r['kind']) for r in mine]}"
    )


def check_allocations(trace: Trace) -> None:
    """Property 1: replay starts and finishes in trace order; PEs, CPUs and licenses never oversubscribed."""
    clusters, jobs, _ = model(trace.raw)
    held: dict[tuple[int, int, int], int] = {}
    running: list[dict[int, tuple]] = [{} for _ in clusters]
    suspended: dict[int, tuple] = {}  # job -> (kind, machines) of its last preemption
    for row in trace.rows:
        kind, jid, c, t = row["kind"], row["job"], row["cluster"], row["time"]
        if kind not in ("start", "finish", "preempt", "resume"):
            continue
        cl, job = clusters[c], jobs[jid]
        machines, pes = row["machines"], row["pes"]
        if kind == "preempt":
            assert row["info"] != "checkpoint" or job.checkpointable, (
                f"t={t}: job {jid} is checkpointed but not checkpointable"
            )
            suspended[jid] = (row["info"], sorted(set(machines)))
        elif kind == "resume":
            was, where = suspended.pop(jid)
            if parse_resume(row["info"])[0] == "suspend":
                assert was == "suspend" and sorted(set(machines)) == where, (
                    f"t={t}: job {jid} suspended on machines {where} resumes on {sorted(set(machines))}"
                )
        if kind in ("finish", "preempt"):
            assert running[c].get(jid, (None,))[0] == (tuple(machines), tuple(pes)), (
                f"t={t}: job {jid} finishes on {machines}/{pes}, not where it started"
            )
            del running[c][jid]
            for m, pe in zip(machines, pes, strict=True):
                del held[(c, m, pe)]
            continue
        cpus, placement = shape(cl, job)
        assert len(machines) == len(pes) == row["cpus"] == cpus, f"t={t}: job {jid} start row {row}"
        if placement == "single":
            assert len(set(machines)) == 1, f"t={t}: single-machine job {jid} spread over {machines}"
        for m, pe in zip(machines, pes, strict=True):
            assert 0 <= m < len(cl.machines) and 0 <= pe < cl.machines[m].cpus, (
                f"t={t}: job {jid} on cluster {cl.name} machine {m} PE {pe}, which does not exist"
            )
            assert (c, m, pe) not in held, (
                f"t={t}: job {jid} starts on cluster {cl.name} machine {m} PE {pe}, "
                f"held by job {held.get((c, m, pe))}"
            )
            held[(c, m, pe)] = jid
        for m in set(machines):
            assert cl.machines[m].can_run(job.licenses), (
                f"t={t}: job {jid} needs {list(job.licenses)} but runs on cluster {cl.name} machine {m} "
                f"(can run {sorted(cl.machines[m].licenses or ())})"
            )
            used = sum(1 for (cc, mm, _) in held if (cc, mm) == (c, m))
            assert used <= cl.machines[m].cpus, f"t={t}: cluster {cl.name} machine {m} runs {used} CPUs"
        running[c][jid] = ((tuple(machines), tuple(pes)), job.licenses)
        in_use = licenses_in_use(cl, [(ms, lics) for (ms, _), lics in running[c].values()])
        for lic, n in in_use.items():
            assert n <= cl.pool.get(lic, 0), (
                f"t={t}: job {jid} starts and cluster {cl.name} uses {n} copies of {lic} "
                f"(pool {cl.pool.get(lic, 0)}, per machine: {cl.per_machine}); running: {sorted(running[c])}"
            )
    leftover = {c: sorted(r) for c, r in enumerate(running) if r}
    assert not leftover, f"jobs still running at the end of the trace: {leftover}"


def earliest_fit(cl: Clu, job: Jb, t: float, running: list[tuple[float, tuple, tuple]]) -> float:
    """First time >= t at which ``job`` fits by first fit if only ``running`` jobs
    ((finish, machines, licenses)) release resources (none start): FCFS's start time
    of a blocked head, and EASY's reservation when estimates are exact."""
    cpus, placement = shape(cl, job)
    for when in sorted({t} | {f for f, _, _ in running if f > t}):
        still = [(ms, lics) for f, ms, lics in running if f > when]
        free = [m.cpus for m in cl.machines]
        for ms, _ in still:
            for m in ms:
                free[m] -= 1
        plan = first_fit(cl, free, cpus, placement, job.licenses)
        if plan is not None and licenses_free_for(cl, plan, job.licenses, still):
            return when
    return math.inf


def check_heads(trace: Trace) -> int:
    """Property 5 on every cluster: FCFS heads start exactly when they first fit; EASY heads
    (exact estimates, one copy per job) no later. Returns the number of blocked heads checked."""
    clusters, jobs, _ = model(trace.raw)
    rows = by_job(trace.rows)
    checked = 0
    for c, cl in enumerate(clusters):
        if is_cs2(cl):  # plans, not a queue order: property 6 instead
            continue
        arrived = [r["job"] for r in trace.rows if r["kind"] == "arrive" and r["cluster"] == c]
        order = [j for j in arrived if first_row(rows[j], "start") is not None]
        if cl.policy == "easy":
            exact = all(jobs[j].runtime == jobs[j].estimate for j in order)
            if not exact:
                continue
        pos = {j: i for i, j in enumerate(order)}
        arrive = {j: first_row(rows[j], "arrive")["time"] for j in order}
        start = {j: first_row(rows[j], "start") for j in order}
        finish = {j: first_row(rows[j], "finish")["time"] for j in order}
        if cl.policy != "easy":
            for a, b in itertools.pairwise(order):
                assert start[a]["time"] <= start[b]["time"], (
                    f"{cl.policy} on {cl.name}: job {b} starts at {start[b]['time']} before job {a} "
                    f"(arrived earlier) at {start[a]['time']}"
                )
        times = sorted({r["time"] for r in trace.rows if r["partition"] == c + 1})
        for t in times:
            head = next((j for j in order if arrive[j] <= t < start[j]["time"]), None)
            if head is None:
                continue
            running = [
                (finish[j], tuple(start[j]["machines"]), jobs[j].licenses)
                for j in order
                if start[j]["time"] <= t < finish[j] and not (start[j]["time"] == t and pos[j] > pos[head])
            ]
            limit = earliest_fit(cl, jobs[head], t, running)
            got = start[head]["time"]
            checked += 1
            if cl.policy == "easy":
                assert got <= limit, (
                    f"easy on {cl.name}: head job {head}, blocked at t={t}, could start at {limit} but "
                    f"starts at {got} (delayed by backfilling); running at t: "
                    f"{[j for j in order if start[j]['time'] <= t < finish[j]]}"
                )
            else:
                assert got == limit, (
                    f"{cl.policy} on {cl.name}: head job {head}, blocked at t={t}, first fits at {limit} "
                    f"but starts at {got}"
                )
    return checked


# -- property tests ----------------------------------------------------------------------------------


@SETTINGS
@given(grid_scenarios())
def test_random_grids_keep_every_invariant(raw):
    trace = run_raw(raw)
    check_sorted(trace)
    check_allocations(trace)
    check_job_lifecycles(trace)
    check_heads(trace)


@settings(SETTINGS, max_examples=80)
@given(grid_scenarios(exact=True, policies=("easy", "easy", "fcfs")))
def test_exact_estimates_fcfs_and_easy_heads_are_never_delayed(raw):
    """Same checks with runtime == estimate everywhere, so EASY's guarantee is checked on every
    EASY cluster (copies counted per job) and FCFS's on every FCFS cluster."""
    trace = run_raw(raw)
    check_allocations(trace)
    check_job_lifecycles(trace)
    check_heads(trace)


@st.composite
def cs2_scenarios(draw) -> dict:
    raw = draw(grid_scenarios(policies=CS2_POLICIES))
    for gridlet in raw["workload"]["gridlets"]:
        gridlet["placement"] = "single"  # CS 2.0's jobs run on one SMP machine
    return raw


@settings(SETTINGS, max_examples=60)
@given(cs2_scenarios())
def test_preemptive_cs2_runs_keep_every_invariant(raw):
    """Properties 1-4 and 6 on CS 2.0 clusters, which preempt, resume, migrate and restart."""
    trace = run_raw(raw)
    check_sorted(trace)
    check_allocations(trace)
    check_job_lifecycles(trace)


@settings(SETTINGS, max_examples=40)
@given(grid_scenarios(), st.sampled_from((0.5, 3.0, 10.0)))
def test_stale_status_reports_keep_every_invariant(raw, period):
    """Properties 1-5 when clusters report only at multiples of ``[stress] status_period``."""
    trace = run_raw({**raw, "stress": {"status_period": period}})
    check_sorted(trace)
    check_allocations(trace)
    check_job_lifecycles(trace)
    check_heads(trace)


@st.composite
def one_cluster_exact(draw) -> dict:
    clusters = draw(cluster_dicts(1, policies=("easy",), per_machine=False))
    gridlets = draw(gridlet_dicts(clusters, exact=True, site="c0"))
    return {"name": "one", "clusters": clusters, "workload": {"source": "gridlets", "gridlets": gridlets}}


def start_sets(trace: Trace) -> dict[float, set]:
    out: dict[float, set] = {}
    for r in trace.rows:
        if r["kind"] == "start":
            out.setdefault(r["time"], set()).add((r["job"], tuple(r["machines"]), tuple(r["pes"])))
    return out


@SETTINGS
@given(one_cluster_exact())
def test_easy_and_fcfs_agree_until_easy_backfills(raw):
    """Same single-cluster workload, exact estimates: up to the first time the two schedules
    differ they are identical; at that time EASY starts everything FCFS starts plus
    backfilled jobs (each of which FCFS starts later), and the blocked head does not start
    later under EASY than under FCFS."""
    fcfs_raw = copy.deepcopy(raw)
    fcfs_raw["clusters"][0]["policy"] = "fcfs"
    easy, fcfs = run_raw(raw), run_raw(fcfs_raw)
    for trace in (easy, fcfs):
        check_allocations(trace)
        check_heads(trace)
    e, f = start_sets(easy), start_sets(fcfs)
    diverge = next((t for t in sorted(set(e) | set(f)) if e.get(t, set()) != f.get(t, set())), None)
    if diverge is None:
        assert easy.rows == fcfs.rows, "same starts but different traces"
        return
    only_fcfs = f.get(diverge, set()) - e.get(diverge, set())
    assert not only_fcfs, f"t={diverge}: FCFS starts {sorted(only_fcfs)} there, EASY does not"
    starts_f = {j: t for t, s in f.items() for j, *_ in s}
    starts_e = {j: t for t, s in e.items() for j, *_ in s}
    for jid, *_ in e[diverge] - f.get(diverge, set()):
        assert starts_f[jid] > diverge, (
            f"job {jid}: EASY backfills it at {diverge}, FCFS starts it at {starts_f[jid]}"
        )
    arrived = [r["job"] for r in fcfs.rows if r["kind"] == "arrive" and r["time"] <= diverge]
    head = next((j for j in arrived if j in starts_f and starts_f[j] > diverge), None)
    assert head is not None, f"t={diverge}: EASY backfilled although no job was blocked"
    assert starts_e[head] <= starts_f[head], (
        f"head job {head} (blocked at t={diverge}): "
        f"EASY starts it at {starts_e[head]}, FCFS at {starts_f[head]}"
    )


# -- hand-made examples ------------------------------------------------------------------------------


def one_cluster(policy: str, machines: list[dict], gridlets: list[dict], **cluster) -> dict:
    c = {"name": "c0", "policy": policy, "machines": machines, **cluster}
    return {
        "name": "hand",
        "clusters": [c],
        "workload": {"source": "gridlets", "site": "c0", "gridlets": gridlets},
    }


def gl(jid: int, cpus: int, estimate: float, licenses=(), submit: float = 0.0, **more) -> dict:
    return {
        "id": jid,
        "submit": submit,
        "cpus": cpus,
        "estimate": estimate,
        "licenses": list(licenses),
        **more,
    }


def schedule_of(trace: Trace) -> dict[int, tuple]:
    """job -> (start, finish, machine set) for finished jobs."""
    rows = by_job(trace.rows)
    out = {}
    for jid, mine in rows.items():
        start, finish = first_row(mine, "start"), first_row(mine, "finish")
        if start is not None:
            out[jid] = (start["time"], finish["time"], sorted(set(start["machines"])))
    return out


# M0: 4 CPUs at 100 MIPS, M1: 3 CPUs at 200 MIPS, one copy of L; bench 100, so a job lasts
# its estimate on M0 and half of it on M1. All jobs submitted at 0, in id order. J2 (4 CPUs,
# L) fits only M0; blocked by J1, it is reserved on M0 at t=10, leaving M1 (3 CPUs) spare.
# A wrong backfill (J4 holding L past 10, J8/J9 on M0 past 10) would delay it.
BACKFILL_MACHINES = [{"cpus": 4, "mips": 100.0}, {"cpus": 3, "mips": 200.0}]
BACKFILL_JOBS = [
    gl(1, 2, 10.0, bench=100.0),  # M0 0..10
    gl(2, 4, 10.0, ["L"], bench=100.0),  # the head: M0 10..20, never later
    gl(3, 2, 30.0, bench=100.0),  # fits M0 now but would outlive 10: spare M1, 0..15
    gl(4, 1, 50.0, ["L"], bench=100.0),  # would hold L past 10: waits, then head: M0 20..70
    gl(5, 1, 10.0, ["L"], bench=100.0),  # ends exactly at 10 (with L): backfilled, M0 0..10
    gl(6, 1, 40.0, bench=100.0),  # long: last spare CPU of M1, 0..20
    gl(7, 2, 40.0, bench=100.0),  # fits nowhere at 0; at 15 (J4 reserved for 20) M1 15..35
    gl(8, 1, 100.0, bench=100.0),  # fits M0 now, no spare left: waits, M0 20..120
    gl(9, 1, 10.5, bench=100.0),  # ends 10.5 > 10: waits, M0 20..30.5
    gl(10, 1, 10.0, bench=100.0),  # ends exactly at 10: backfilled, M0 0..10
]


def test_easy_backfilling_never_delays_the_reserved_head():
    trace = run_raw(one_cluster("easy", BACKFILL_MACHINES, BACKFILL_JOBS, licenses={"L": 1}))
    check_allocations(trace)
    assert schedule_of(trace) == {
        1: (0.0, 10.0, [0]),
        2: (10.0, 20.0, [0]),
        3: (0.0, 15.0, [1]),
        4: (20.0, 70.0, [0]),
        5: (0.0, 10.0, [0]),
        6: (0.0, 20.0, [1]),
        7: (15.0, 35.0, [1]),
        8: (20.0, 120.0, [0]),
        9: (20.0, 30.5, [0]),
        10: (0.0, 10.0, [0]),
    }


def test_fcfs_on_the_backfill_example_starts_the_head_at_the_same_time():
    trace = run_raw(one_cluster("fcfs", BACKFILL_MACHINES, BACKFILL_JOBS, licenses={"L": 1}))
    schedule = schedule_of(trace)
    assert schedule[1][0] == 0.0 and schedule[2][0] == 10.0
    assert [j for j, _ in sorted(schedule.items(), key=lambda kv: kv[1][0])] == list(range(1, 11))


def test_easy_may_delay_a_job_behind_the_head():
    """Why property 5 compares the blocked head, not the first job whose start differs.

    M0: 4 CPUs, M1: 2 CPUs, one copy of L. J1 (3 CPUs, L) runs 0..10; J2 (4 CPUs) waits for
    M0 at 10. J3 (2 CPUs, L) cannot start now (L is taken); J4 (2 CPUs, 100 s) fits M1,
    which J2's reservation does not need, so EASY backfills it. At 10, J2 starts under both
    policies; under FCFS J3 then takes M1 at 10, under EASY M1 is J4's and J3 waits for J2
    (15). J3 is the first job in arrival order whose start differs, and EASY starts it later.
    """
    machines = [{"cpus": 4, "mips": 1.0}, {"cpus": 2, "mips": 1.0}]
    jobs = [gl(1, 3, 10.0, ["L"]), gl(2, 4, 5.0), gl(3, 2, 100.0, ["L"]), gl(4, 2, 100.0)]
    easy = schedule_of(run_raw(one_cluster("easy", machines, jobs, licenses={"L": 1})))
    fcfs = schedule_of(run_raw(one_cluster("fcfs", machines, jobs, licenses={"L": 1})))
    assert {j: s[0] for j, s in easy.items()} == {1: 0.0, 2: 10.0, 3: 15.0, 4: 0.0}
    assert {j: s[0] for j, s in fcfs.items()} == {1: 0.0, 2: 10.0, 3: 10.0, 4: 15.0}


# -- license-copy corner cases (regressions) ------------------------------------------


def outcome(trace: Trace, jid: int) -> tuple[tuple[str, ...], str | None]:
    """The kinds of a job's rows and its reject reason (None if it was not rejected)."""
    mine = by_job(trace.rows)[jid]
    end = first_row(mine, "reject")
    return tuple(r["kind"] for r in mine), (end["info"] if end else None)


PER_MACHINE = {"license_per_machine": True}
PER_MACHINE_2X2 = [{"cpus": 2, "mips": 1.0, "count": 2}]
"""Two 2-CPU machines: a 3-CPU spread job needs both, so 2 copies counted per machine."""


def test_job_needing_more_copies_of_a_license_than_the_pool_is_rejected():
    # Was a bug: Cluster.fits only asked for >= 1 copy, so the job was accepted and never ended.
    raw = one_cluster("fcfs", [{"cpus": 2, "mips": 1.0}], [gl(1, 1, 1.0, ["a", "a"])], licenses={"a": 1})
    kinds, reason = outcome(run_raw(raw), 1)
    assert kinds == ("submit", "arrive", "reject") and reason


@pytest.mark.parametrize("policy", ["fcfs", "easy"])
def test_spread_job_needing_more_copies_than_the_pool_per_machine_is_not_dropped(policy):
    # Was a bug: the job was accepted and silently never ended. Now rejected with a reason.
    raw = one_cluster(
        policy, PER_MACHINE_2X2, [gl(1, 3, 1.0, ["a"], placement="spread")], licenses={"a": 1}, **PER_MACHINE
    )
    kinds, reason = outcome(run_raw(raw), 1)
    assert kinds[-1] == "reject" and reason


def test_easy_per_machine_backfill_sharing_a_copy_does_not_delay_the_head():
    # Was a bug. M0, M1: 3 CPUs each; one copy of L counted per machine. J1 (L, 0..10) and
    # J2 (0..100) run on M0. J3 (3 CPUs, L) is blocked and reserved on M1 at 10, when J1
    # frees the copy. J4 (1 CPU, L, 100 s) fits M0's last CPU sharing M0's copy: if
    # backfilled it keeps the copy on M0 busy until 100 and J3 starts at 100, not 10.
    raw = one_cluster(
        "easy",
        [{"cpus": 3, "mips": 1.0, "count": 2}],
        [gl(1, 1, 10.0, ["L"]), gl(2, 1, 100.0), gl(3, 3, 10.0, ["L"]), gl(4, 1, 100.0, ["L"])],
        licenses={"L": 1},
        **PER_MACHINE,
    )
    assert schedule_of(run_raw(raw))[3][0] == 10.0


def test_fcfs_runnable_job_behind_a_job_that_can_never_start_still_runs():
    # J1 (3 CPUs spread, L) would need 2 copies per machine, the pool has 1: it can never
    # start. J2 (1 CPU, no license) could run at once; FCFS keeps it behind J1, and when the
    # cluster is idle both are rejected ("cannot start on idle cluster").
    raw = one_cluster(
        "fcfs",
        PER_MACHINE_2X2,
        [gl(1, 3, 1.0, ["L"], placement="spread"), gl(2, 1, 1.0)],
        licenses={"L": 1},
        **PER_MACHINE,
    )
    trace = run_raw(raw)
    assert outcome(trace, 1)[0][-1] == "reject"
    assert outcome(trace, 2)[0][-1] == "finish", outcome(trace, 2)


def test_meta_never_sends_a_job_where_per_machine_copies_can_never_suffice():
    # c0: two 2-CPU machines, one copy of L per machine: a 3-CPU spread job needs 2 copies.
    # c1: one 4-CPU machine, one copy: runs it. Round-robin tries c0 first.
    c0 = {"name": "c0", "machines": PER_MACHINE_2X2, "licenses": {"L": 1}, **PER_MACHINE}
    c1 = {"name": "c1", "machines": [{"cpus": 4, "mips": 1.0}], "licenses": {"L": 1}}
    raw = {
        "name": "meta",
        "meta": {"policy": "round-robin"},
        "clusters": [c0, c1],
        "workload": {"source": "gridlets", "gridlets": [gl(1, 3, 1.0, ["L"], placement="spread")]},
    }
    kinds, reason = outcome(run_raw(raw), 1)
    assert kinds[-1] == "finish", (kinds, reason)


def test_easy_per_machine_reservation_counts_a_shared_copy_once():
    # Two copies of L, counted per machine. M0 (3 CPUs): J1 (no L, 0..5). M1 (4 CPUs): J2, J3
    # (L, 0..5) and J4 (L, 0..20) share one copy. M2 (2 CPUs): J5 (L, 0..100) the other.
    # J6 (3 CPUs, L) can start on M0 only when a copy is free: at 20 (J4 ends; FCFS: 20).
    # reserve() counts J2 and J3 as freeing 2 copies at 5: J6 reserved at 5 with a spare
    # copy, so J7 (L, 100 s) is backfilled on M1, keeps M1's copy busy until 100, and J6
    # starts at 100.
    machines = [{"cpus": 3, "mips": 1.0}, {"cpus": 4, "mips": 1.0}, {"cpus": 2, "mips": 1.0}]
    jobs = [
        gl(1, 3, 5.0),
        gl(2, 1, 5.0, ["L"]),
        gl(3, 1, 5.0, ["L"]),
        gl(4, 1, 20.0, ["L"]),
        gl(5, 2, 100.0, ["L"]),
        gl(6, 3, 10.0, ["L"]),
        gl(7, 1, 100.0, ["L"]),
    ]
    fcfs = schedule_of(run_raw(one_cluster("fcfs", machines, jobs, licenses={"L": 2}, **PER_MACHINE)))
    easy = schedule_of(run_raw(one_cluster("easy", machines, jobs, licenses={"L": 2}, **PER_MACHINE)))
    assert fcfs[6][0] == 20.0
    assert easy[6][0] <= 20.0, f"EASY starts the head J6 at {easy[6][0]}, FCFS at 20"
