"""Trace files: ``events.arrow`` (one row per event) and ``jobs.arrow`` (one row per job).

Only the driver writes. Rows arrive per round, partitions running ahead of
each other; :class:`~emulator.sync.merge.RowMerger` releases them in
``(time, partition, sequence)`` order once no partition can produce an
earlier one, and they are written in batches, as columns from there on
(:class:`~emulator.sync.rows.RowBlock`). Files are written under ``NAME.part`` and renamed when
complete: a crash never leaves a corrupt file under the final name (after a
Python error the ``.part`` file is closed and readable up to the last batch).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from operator import itemgetter
from pathlib import Path
from time import monotonic

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..core.failures import ESTIMATE
from ..core.messages import (
    ARRIVE,
    DISPATCHED,
    EVENT_KINDS,
    FINISH,
    KILL,
    PREEMPT,
    REJECT,
    RESUME,
    START,
    SUBMIT,
)
from ..core.model import JOB_INPUTS, PLATFORM_KEY, Job, Platform, platform_metadata
from ..core.preemption import STOP, parse_resume
from ..sync.merge import Chunk, RowMerger
from ..sync.rows import Ragged, RowBlock, as_block
from . import rundir
from .rundir import WRITE_OPTIONS

EVENT_SCHEMA = pa.schema(
    [
        ("time", pa.float64()),
        ("kind", pa.dictionary(pa.int8(), pa.string())),
        ("job", pa.int64()),
        ("cluster", pa.dictionary(pa.int32(), pa.string())),
        ("partition", pa.int32()),
        ("cpus", pa.int32()),
        ("machines", pa.list_(pa.int32())),
        ("pes", pa.list_(pa.int32())),
        ("info", pa.string()),
    ]
)
_KINDS = pa.array(EVENT_KINDS, pa.string())
JOB_OUTCOMES = pa.schema(
    [
        ("status", pa.string()),
        ("reason", pa.string()),
        ("cluster", pa.string()),
        ("arrive", pa.float64()),
        ("start", pa.float64()),
        ("finish", pa.float64()),
        ("wait", pa.float64()),
        ("machines", pa.list_(pa.int32())),
        ("pes", pa.list_(pa.int32())),
    ]
)
"""What became of each job, after its inputs (:data:`~emulator.core.model.JOB_INPUTS`) in ``jobs.arrow``."""
PLACEMENT_COLUMNS = ("machines", "pes")
"""``jobs.arrow``'s lists of where each job last started: the largest columns, and no metric reads them."""
STATUSES = ("finished", "killed", "rejected")
"""``jobs.arrow``'s ``status`` values."""
JOB_PREEMPTIONS = pa.schema(
    [
        ("preemptions", pa.int32()),
        ("run_time", pa.float64()),
        ("wasted_cpu_seconds", pa.float64()),
        ("kills", pa.int32()),
    ]
)
"""Then each job's preemptions and kills, its seconds on CPUs and the CPU-seconds it lost."""
JOBS_SCHEMA = pa.schema([*JOB_INPUTS, *JOB_OUTCOMES, *JOB_PREEMPTIONS])
"""``jobs.arrow``'s columns, in order (a trace's own columns follow them)."""


class PartFile:
    """An Arrow IPC file written as ``path.part`` and renamed to ``path`` on :meth:`commit`."""

    def __init__(self, path: Path, schema: pa.Schema) -> None:
        self.path = Path(path)
        self.part = self.path.with_name(self.path.name + ".part")
        self._sink = pa.OSFile(str(self.part), "wb")
        self._writer = pa.ipc.new_file(self._sink, schema, options=WRITE_OPTIONS)
        self._sealed = False

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write_batch(batch)

    def sync(self) -> None:
        """Push what was written to the disk: a run killed later leaves it readable
        (:func:`emulator.data.rundir.recover`)."""
        self._sink.flush()
        os.fsync(self._sink.fileno())

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._sink.close()
            self._writer = None

    def seal(self, batch_rows: int | None = None) -> None:
        """Close and sync, under the ``.part`` name: a complete file (footer and all) that
        :func:`emulator.data.rundir.promote` can still rename if the run stops before :meth:`commit`.
        ``batch_rows``: first re-cut the batches to exactly that many rows (after flushes by the clock,
        so the final file's bytes depend on its rows alone)."""
        self.close()
        if batch_rows is not None:
            _rebatch(self.part, batch_rows)
        with open(self.part, "rb+") as file:
            os.fsync(file.fileno())
        self._sealed = True

    def commit(self, batch_rows: int | None = None) -> None:
        """:meth:`seal` (if not sealed yet), then rename."""
        if not self._sealed:
            self.seal(batch_rows)
        os.replace(self.part, self.path)
        rundir.fsync_dir(self.path.parent)


COLUMNS_AT = 4096
"""Rows of a run of releases (a round's each) that become columns as soon as they are waiting, not when
their batch is written (if all rows waiting list at most :data:`BATCH_WIDTH` machines and PEs, as a
batch may): on Ray the driver writes a round's rows while the actors compute the next, and turning a
whole batch of tuples into columns at once (~25 ms for 65,536 rows) kept them waiting (bench_ray's
128 clusters at 30 s links: ~0.1 s of 2.9)."""

BATCH_WIDTH = 1 << 22
"""Machines and PEs listed in one batch at most (its rows are fewer when they are wide): building a
batch of 65,536 rows that each list 2,048 PEs would take gigabytes."""


def batch_cut(widths: np.ndarray, rows: int) -> int | None:
    """Rows in the next batch: ``rows``, or fewer once their widths (machines + PEs listed) reach
    :data:`BATCH_WIDTH`; None if ``widths`` (the rows waiting) reach neither yet. A function of the
    rows alone, so a file's batches, and its bytes, are too."""
    reached = np.flatnonzero(np.cumsum(widths[:rows]) >= BATCH_WIDTH)
    if reached.size:
        return int(reached[0]) + 1
    return rows if widths.size >= rows else None


def _widths(table: pa.Table) -> np.ndarray:
    """Machines + PEs each row lists."""
    machines, pes = (pc.list_value_length(table.column(name)).to_numpy() for name in ("machines", "pes"))
    return (machines + pes).astype(np.int64)


def _rebatch(path: Path, rows: int) -> None:
    """Rewrite the IPC file ``path`` in the batches :func:`batch_cut` gives (after flushes by the clock).
    Read, not mapped: the pages of a mapped file count in the run's resident memory, and its buffers
    are compressed, so mapping would save no copy."""
    fresh = path.with_name(path.name + ".rebatch")
    with pa.OSFile(str(path), "rb") as source:
        reader = pa.ipc.open_file(source)
        with (
            pa.OSFile(str(fresh), "wb") as sink,
            pa.ipc.new_file(sink, reader.schema, options=WRITE_OPTIONS) as writer,
        ):
            pending = pa.Table.from_batches([], schema=reader.schema)
            for i in range(reader.num_record_batches + 1):
                if i < reader.num_record_batches:
                    pending = pa.concat_tables([pending, pa.Table.from_batches([reader.get_batch(i)])])
                last = i == reader.num_record_batches
                while (n := batch_cut(_widths(pending), rows)) is not None or (last and pending.num_rows):
                    n = n or pending.num_rows
                    writer.write_table(pending.slice(0, n).combine_chunks())
                    pending = pending.slice(n)
    os.replace(fresh, path)


class Outcomes:
    """Each job's outcome, filled from the event rows as they are written.

    ``start`` is a job's first start (its wait ends there); ``machines``/``pes``
    are those of its last (re)start, where it finished. ``run_time`` is the
    seconds on CPUs over all its runs, overheads included (``finish - start``
    for a job never preempted); ``wasted_cpu_seconds`` the CPU-seconds lost to
    preemption: each resume's overhead, and the progress thrown away when it
    restarts from zero (a ``resume`` row of kind ``stop``; see
    :mod:`emulator.core.preemption`).

    Failures (:mod:`emulator.core.failures`): a ``kill`` row by a failure or an
    outage counts as a preemption for these sums (and in ``kills``, not in
    ``preemptions``); a job sent back by an outage that starts again elsewhere
    (a second ``start`` row) restarts from zero, keeping its first start; a
    job killed at its estimate ends there (status ``killed``: all its CPU time
    wasted, no finish time).
    """

    def __init__(self, jobs: list[Job], platform: Platform) -> None:
        self.names = [c.name for c in platform.clusters]
        self._ids = np.fromiter((job.id for job in jobs), dtype=np.int64, count=len(jobs))
        self._order = _sorting(self._ids)  # (None: the ids ascend, as a generator's and most traces' do)
        n = len(jobs)
        self.cluster = np.full(n, -1, dtype=np.int32)
        self.arrive = np.full(n, np.nan)
        self.start = np.full(n, np.nan)
        self.finish = np.full(n, np.nan)
        self.reason: list[str | None] = [None] * n
        self.placed = Placements(n)  # machines and PEs of each job's last (re)start
        self.preemptions = np.zeros(n, dtype=np.int32)
        self.kills = np.zeros(n, dtype=np.int32)  # kills by failures and outages
        self.killed = np.zeros(n, dtype=bool)  # killed at its estimate
        self.wasted = np.zeros(n)
        self._ran = np.zeros(n)  # preempted jobs: seconds on CPUs over their closed runs
        self._kept = np.zeros(n)  # preempted jobs: CPU-seconds of progress since their last zero
        self._opened: dict[int, tuple] = {}  # resumed jobs: (current run's start, overhead, CPUs)

    def record(self, rows: RowBlock) -> None:
        """Each job's outcome from its rows: at once, by column, when every row only moves a job along
        (dispatch, arrival, a first start, finish, rejection); row by row when preemptions, kills,
        resumptions or a second start make each depend on the one before."""
        kind = rows.kind
        index = self._positions(rows.job)
        starts = kind == START
        involved = np.isin(kind, _SEQUENTIAL).any()
        if involved or _repeats(index[starts]) or not np.isnan(self.start[index[starts]]).all():
            self._record_rows(rows.tuples())
            return
        moved = (kind == DISPATCHED) | (kind == ARRIVE)
        _assign_last(self.cluster, index[moved], rows.cluster[moved])
        arrived = kind == ARRIVE
        _assign_last(self.arrive, index[arrived], rows.time[arrived])
        started = index[starts]
        self.start[started] = rows.time[starts]
        if started.size:
            at = np.flatnonzero(starts)
            self.placed.take(started, rows.machines.take(at), rows.pes.take(at))
        finished = kind == FINISH
        _assign_last(self.finish, index[finished], rows.time[finished])
        rejected = kind == REJECT
        for i, reason in zip(index[rejected].tolist(), rows.info[rejected].tolist(), strict=True):
            self.reason[i] = reason

    def _positions(self, jobs: np.ndarray) -> np.ndarray:
        """The positions of job ids ``jobs`` in the jobs' order: a binary search in the ids, not a dict
        from id to position (a million jobs' dict and position ints took ~70 MB for the whole run)."""
        if self._order is None:
            return np.searchsorted(self._ids, jobs)
        return self._order[np.searchsorted(self._ids[self._order], jobs)]

    def _record_rows(self, rows: list[tuple]) -> None:
        jobs = np.fromiter((row[2] for row in rows), dtype=np.int64, count=len(rows))
        for i, (time, kind, _, cluster, cpus, machines, pes, info) in zip(
            self._positions(jobs).tolist(), rows, strict=True
        ):
            if kind == SUBMIT:  # (a quarter of the rows, and no outcome: spare them every test below)
                continue
            if kind in (DISPATCHED, ARRIVE):
                self.cluster[i] = cluster
                if kind == ARRIVE:
                    self.arrive[i] = time
            elif kind == START:
                if self.start[i] != self.start[i]:  # NaN: its first start
                    self.start[i] = time
                else:  # sent back by an outage, started elsewhere: from zero
                    self.wasted[i] += self._kept[i]
                    self._kept[i] = 0.0
                    self._opened[i] = (time, 0.0, cpus)
                self.placed.set(i, machines, pes)
            elif kind == FINISH:
                self.finish[i] = time
            elif kind == REJECT:
                self.reason[i] = info
            elif kind in (PREEMPT, KILL):
                opened, overhead, _ = self._opened.get(i, (self.start[i], 0.0, cpus))
                span = time - opened
                self._ran[i] += span
                self.wasted[i] += cpus * min(overhead, span)
                self._kept[i] += cpus * max(0.0, span - overhead)
                if kind == PREEMPT:
                    self.preemptions[i] += 1
                elif info == ESTIMATE:  # ends here: everything it did is lost
                    self.killed[i] = True
                    self.wasted[i] += self._kept[i]
                    self._kept[i] = 0.0
                else:
                    self.kills[i] += 1
            elif kind == RESUME:
                resumed, overhead = parse_resume(info)
                if resumed == STOP:  # restarts from zero: the progress it had is wasted
                    self.wasted[i] += self._kept[i]
                    self._kept[i] = 0.0
                self._opened[i] = (time, overhead, cpus)
                self.placed.set(i, machines, pes)

    def table(self, jobs: list[Job], inputs: pa.Table | None = None) -> pa.Table:
        """``jobs.arrow``'s table: the jobs' inputs (``inputs``, else from ``jobs``), then their outcomes."""
        from workloads.table import from_jobs, labels  # (most runs read their jobs as a table: see Scenario)

        if inputs is None:
            inputs = from_jobs(jobs)
        elif not np.array_equal(inputs.column("id").to_numpy(), self._ids):
            raise ValueError("the jobs' input columns are not those of the jobs run, in their order")
        status = np.where(~np.isnan(self.finish), 0, np.where(self.killed, 1, 2))
        if self.killed.any():
            for i in np.flatnonzero(self.killed).tolist():
                self.reason[i] = "killed at its estimate"
        submit = inputs.column("submit").to_numpy()
        outcome = {
            "status": labels(status, STATUSES),
            "reason": self.reason,
            "cluster": labels(self.cluster, self.names),
            "arrive": self.arrive,
            "start": self.start,
            "finish": self.finish,
            "wait": self.start - submit,
            **self._preemption_columns(),
        }
        outcome["machines"], outcome["pes"] = self.placed.columns()
        for field in (*JOB_OUTCOMES, *JOB_PREEMPTIONS):
            column = outcome[field.name]
            if not isinstance(column, pa.Array):
                column = pa.array(column, field.type, from_pandas=True)
            inputs = inputs.append_column(field, column)
        return inputs

    def _preemption_columns(self) -> dict[str, np.ndarray | list]:
        """``preemptions``, ``run_time``, ``wasted_cpu_seconds`` (runs closed at the finish), ``kills``."""
        ran, wasted = self.finish - self.start, self.wasted.copy()
        for i, (opened, overhead, cpus) in self._opened.items():
            span = self.finish[i] - opened
            if not np.isnan(span):
                ran[i] = self._ran[i] + span
                wasted[i] += cpus * min(overhead, span)
        ended = ~np.isnan(self.start) & np.isnan(self.finish)
        if ended.any():  # killed at their estimate or lost: their runs all closed at a kill, all lost
            ran[ended] = self._ran[ended]
            wasted[ended] += self._kept[ended]
        return {
            "preemptions": self.preemptions,
            "run_time": ran,
            "wasted_cpu_seconds": wasted,
            "kills": self.kills,
        }


class Placements:
    """The machines and PEs each job last (re)started on, for ``jobs.arrow``.

    Kept as the ragged int32 columns of the start rows that set them (a row
    per job, found by index), not as a tuple per job: on a wide trace
    (1,000 x 8 CPUs, jobs listing up to 2,048 PEs) Python tuples of Python
    ints took 300 MB more. Lists set row by row (:meth:`Outcomes._record_rows`)
    are kept as given and win over older rows.
    """

    def __init__(self, jobs: int) -> None:
        empty = Ragged(np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int32))  # one row: no list
        self._machines, self._pes = [empty], [empty]  # row 0 of the columns: jobs never started
        self._rows = 0
        self._at = np.full(jobs, -1, dtype=np.int64)  # each job's row in the columns (-1: the empty one)
        self._given: dict[int, tuple[tuple, tuple]] = {}  # by job position, set row by row

    def take(self, jobs: np.ndarray, machines: Ragged, pes: Ragged) -> None:
        """Jobs at positions ``jobs`` (re)started on the lists of ``machines`` and ``pes``, in order."""
        self._machines.append(machines)
        self._pes.append(pes)
        self._at[jobs] = self._rows + np.arange(len(jobs))
        self._rows += len(jobs)
        for i in jobs.tolist() if self._given else ():
            self._given.pop(i, None)

    def set(self, job: int, machines: tuple, pes: tuple) -> None:
        self._given[job] = (machines, pes)

    def columns(self) -> tuple[pa.Array, pa.Array]:
        """Both columns in job order; once only: each column's rows are let go as they are copied into
        it (a deep trace's PE lists are hundreds of MB, and copies of them held at once set the run's
        peak)."""
        rows = self._at + 1
        columns = [_gather(parts, rows) for parts in (self._machines, self._pes)]
        if not self._given:
            return columns[0], columns[1]
        lists = [column.to_pylist() for column in columns]
        for job, (machines, pes) in self._given.items():
            lists[0][job], lists[1][job] = list(machines), list(pes)
        return tuple(pa.array(column, pa.list_(pa.int32())) for column in lists)


GATHER_JOBS = 1 << 16
"""Jobs whose lists :func:`_gather` copies at once: its index arrays (8 bytes per PE copied) stay
small beside the column, however large a part is."""


def _gather(parts: list[Ragged], rows: np.ndarray) -> pa.ListArray:
    """The lists at ``rows`` of ``parts`` taken end to end (row ``i`` of job ``i``), as one Arrow
    column built in place: each part is copied where its rows go and let go, so neither the parts
    joined nor a copy of the column is ever held beside it (``parts`` is emptied)."""
    bounds = np.cumsum([0] + [len(part.offsets) - 1 for part in parts])
    lengths = np.concatenate([part.lengths() for part in parts])[rows]
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    values = np.empty(int(offsets[-1]), dtype=np.int32)
    order = np.argsort(rows, kind="stable")
    cuts = np.searchsorted(rows[order], bounds)
    for k, part in enumerate(parts):
        parts[k] = None  # (let go once copied: this loop holds the last reference)
        for at in range(cuts[k], cuts[k + 1], GATHER_JOBS):
            jobs = order[at : min(at + GATHER_JOBS, cuts[k + 1])]
            counts = lengths[jobs]
            step = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
            source = np.repeat(part.offsets[rows[jobs] - bounds[k]], counts) + step
            values[np.repeat(offsets[jobs], counts) + step] = part.values[source]
        del part
    parts.clear()
    return pa.ListArray.from_arrays(pa.array(offsets.astype(np.int32)), pa.array(values))


_SEQUENTIAL = np.array([PREEMPT, KILL, RESUME], dtype=np.int8)
"""Row kinds whose effect on a job depends on its rows before (:meth:`Outcomes.record`)."""


def _sorting(ids: np.ndarray) -> np.ndarray | None:
    """The order that sorts ``ids``; None when they ascend already."""
    return None if np.all(ids[1:] > ids[:-1]) else np.argsort(ids, kind="stable")


def _repeats(index: np.ndarray) -> bool:
    return index.size > 1 and np.unique(index).size < index.size


def _assign_last(target: np.ndarray, index: np.ndarray, values: np.ndarray) -> None:
    """``target[index] = values`` where the last of repeated indices wins, as row-by-row assignment
    would (numpy leaves the winner of a repeated fancy assignment unspecified)."""
    if _repeats(index):
        _, last = np.unique(index[::-1], return_index=True)
        keep = index.size - 1 - last
        index, values = index[keep], values[keep]
    target[index] = values


Waiting = tuple[Chunk, list[int] | np.ndarray]
"""Released rows not yet written, and their partitions (:meth:`TraceWriter._take`)."""

FLUSH_SECONDS = 2.0
"""Wall seconds after which rows waiting for a full batch are written anyway (and synced): what a run
killed with ``kill -9`` leaves is at most this old, plus one call
(:data:`~emulator.sync.coordinator.CALL_SECONDS`: rows reach the writer between calls). The final file
is re-cut into full batches."""


class TraceWriter:
    """Collects each round's rows, writes ``events.arrow`` in sorted batches, then ``jobs.arrow``.

    ``extra``: more columns for ``jobs.arrow`` (a trace's fields the model does
    not use), one row per job in ``jobs`` order, written after the outcomes;
    ``inputs``: the jobs as columns, when the scenario has them (:attr:`Scenario.inputs`).
    """

    def __init__(
        self,
        out_dir: Path,
        jobs: list[Job],
        platform: Platform,
        on_progress: Callable[[int], None] | None = None,
        batch_rows: int = 65536,
        *,
        extra: pa.Table | None = None,
        inputs: pa.Table | None = None,
    ) -> None:
        self.out_dir = Path(out_dir)
        self.extra = extra
        self.inputs = inputs
        self.platform = platform
        self.on_progress = on_progress
        self.jobs_ended = 0
        self.jobs = jobs
        self.outcomes = Outcomes(jobs, platform)
        self._names = pa.array([c.name for c in platform.clusters], pa.string())  # (events.cluster's)
        self.events = PartFile(self.out_dir / "events.arrow", EVENT_SCHEMA)
        self.batch_rows = batch_rows
        self._written_at = monotonic()  # flushes by the clock (FLUSH_SECONDS): crash-readable
        self._uneven = False  # a batch shorter than batch_rows was written before the last one
        self._merger = RowMerger()
        self._waiting: list[Waiting] = []  # released by the merger, not yet written
        self._count = 0  # rows waiting
        self._width = 0  # machines + PEs they list (batch_cut)
        self.rows_written = 0
        self._settled = True  # False while a round's rows are taken (a stop then writes no more: close)

    def __call__(self, watermark: float, results: dict) -> int:
        """A round's rows: those below ``watermark`` are final (:mod:`~emulator.sync.merge`); returns
        rows held."""
        self._settled = False
        for pid, result in results.items():
            self._merger.add(pid, result[2])
        self._take(*self._merger.release(watermark))
        if self._count >= self.batch_rows or self._width >= BATCH_WIDTH:
            self.flush()
        elif self._count and monotonic() - self._written_at > FLUSH_SECONDS:
            self.flush(last=True)  # a short batch, so a killed run leaves recent rows readable
            self._uneven = True
        self._settled = True
        return self._merger.held

    def flush(self, last: bool = False, sync: bool = True) -> None:
        """Write the final rows (already in the trace's order: releases follow each other in time).

        In the batches :func:`batch_cut` gives (``batch_rows`` rows, fewer when
        they list many machines and PEs), so the file's bytes depend on its
        rows alone, not on how the partitions were called.
        """
        if not self._count:
            return
        waiting = self._waiting
        widths = np.concatenate([_row_widths(rows) for rows, _ in waiting])
        bounds = np.cumsum([0] + [len(block) for block, _ in waiting]).tolist()
        start = 0
        while start < widths.size:
            n = batch_cut(widths[start:], self.batch_rows)
            if n is None and not last:
                break
            n = n or widths.size - start
            pieces = _span(waiting, bounds, start, start + n)
            rows = RowBlock.concat([as_block(rows) for rows, _ in pieces])
            self._write(rows, np.concatenate([np.asarray(pids, dtype=np.int32) for _, pids in pieces]))
            start += n
        self._waiting = _span(waiting, bounds, start, widths.size)
        self._count, self._width = widths.size - start, int(widths[start:].sum())
        if sync:
            self.events.sync()
        self._written_at = monotonic()

    def _take(self, rows: Chunk, pids: list[int] | np.ndarray) -> None:
        """Released rows, to write in this order, as they came: tuples become columns a batch at a
        time (:meth:`flush`), never a whole release at once beside its tuples (a wide trace's release
        can be all of its rows); a run of small releases as soon as it holds :data:`COLUMNS_AT` rows."""
        if not len(rows):
            return
        self._count += len(rows)
        self._width += int(_row_widths(rows).sum())
        waiting = self._waiting
        if isinstance(rows, RowBlock):
            waiting.append((rows, pids))
            return
        if waiting and isinstance(waiting[-1][0], list):  # one list for a run of releases
            waiting[-1][0].extend(rows)
            waiting[-1][1].extend(pids)
        else:
            waiting.append((list(rows), list(pids)))
        tuples, their_pids = waiting[-1]
        if COLUMNS_AT <= len(tuples) <= self.batch_rows and self._width <= BATCH_WIDTH:  # (all waiting)
            waiting[-1] = (RowBlock.of(tuples), their_pids)

    def _write(self, rows: RowBlock, pids: np.ndarray) -> None:
        self.outcomes.record(rows)
        self.events.write(_event_batch(rows, pids, self._names))
        self.rows_written += len(rows)
        if self.on_progress is not None:
            kinds = rows.kind
            self.jobs_ended += int(np.count_nonzero((kinds == FINISH) | (kinds == REJECT)))
            kills = kinds == KILL
            if kills.any():  # jobs killed at their estimate end there too
                self.jobs_ended += int(np.count_nonzero(kills & (rows.info == ESTIMATE)))
            self.on_progress(self.jobs_ended)

    def close(self, ok: bool, end: float = math.inf) -> pa.Table | None:
        """Flush and finish the files: commit both on success, leave readable ``.part`` files otherwise.

        ``end``: rows from there on are past the run's end (background events
        some partition processed ahead: :func:`emulator.sync.horizons.tail_end`).
        A run that failed or was stopped writes only the rows it had released
        (below a watermark): those a partition made ahead of the others are not
        final while a laggard could still make earlier ones, and writing them
        would leave a file sorted by time with a hole in it. So what it leaves
        is the same prefix of the complete run's trace a ``kill -9`` leaves.
        """
        if ok:
            self._take(*self._merger.release(end))
        if ok or self._settled:  # (stopped inside a round's rows: its state is half-changed)
            self.flush(last=True, sync=not ok)  # (a commit syncs the file anyway)
        if not ok:
            self.events.close()
            return None
        table = self.outcomes.table(self.jobs, self.inputs)
        self.outcomes = None  # (the table holds them now: let the run's summary have their memory)
        metadata = {}
        if self.extra is not None:  # a trace's own fields, one row per job in the same order
            for name, column in zip(self.extra.column_names, self.extra.columns, strict=True):
                table = table.append_column(name, column)
            metadata.update(self.extra.schema.metadata or {})  # the trace's header
        metadata[PLATFORM_KEY] = platform_metadata(self.platform)
        table = table.replace_schema_metadata(metadata)
        jobs_file = PartFile(self.out_dir / "jobs.arrow", table.schema)
        for batch in table.to_batches(max_chunksize=self.batch_rows):
            jobs_file.write(batch)
        jobs_file.seal()  # complete before events.arrow is: a stop between the renames loses nothing
        self.events.commit(self.batch_rows if self._uneven else None)
        jobs_file.commit()
        return table


def _span(waiting: list[Waiting], bounds: list[int], start: int, stop: int) -> list[Waiting]:
    """Rows ``start`` to ``stop`` of the blocks ``waiting`` (which begin at ``bounds``), as views of
    them: a batch is copied alone, never everything waiting (on the wide 1,000 x 8 trace, joining
    every block waiting first took 260 MB more at the peak)."""
    pieces = []
    for (block, pids), first, end in zip(waiting, bounds, bounds[1:], strict=False):
        a, b = max(start, first), min(stop, end)
        if a < b:
            rows = (
                block.cut(a - first, b - first)
                if isinstance(block, RowBlock)
                else block[a - first : b - first]
            )
            pieces.append((rows, pids[a - first : b - first]))
    return pieces


def _row_widths(rows: Chunk) -> np.ndarray:
    """Machines + PEs each row lists (:func:`batch_cut`)."""
    if isinstance(rows, RowBlock):
        return rows.widths()
    machines, pes = (np.fromiter(map(len, map(itemgetter(k), rows)), np.int64, len(rows)) for k in (5, 6))
    return machines + pes


def _event_batch(rows: RowBlock, pids: np.ndarray, names: pa.Array) -> pa.RecordBatch:
    """The rows as a batch; ``cluster`` holds the cluster's name (``names``, the platform's: its codes
    are the cluster indices), null where the row is none's (the meta-scheduler's)."""
    columns = [
        pa.array(rows.time),
        pa.DictionaryArray.from_arrays(pa.array(rows.kind), _KINDS),
        pa.array(rows.job),
        pa.DictionaryArray.from_arrays(pa.array(rows.cluster, mask=rows.cluster < 0), names),
        pa.array(pids.astype(np.int32, copy=False)),
        pa.array(rows.cpus),
        rows.machines.arrow(),
        rows.pes.arrow(),
        pa.array(rows.info, pa.string()),
    ]
    return pa.RecordBatch.from_arrays(columns, schema=EVENT_SCHEMA)
