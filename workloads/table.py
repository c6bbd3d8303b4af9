"""Job streams as columns: the Arrow jobs table every source produces and every writer reads.

A job stream is an Arrow table with the emulator's input columns
(:data:`emulator.core.model.JOB_INPUTS`, the attributes of :class:`emulator.core.model.Job`)
plus, for streams read from traces, *trace columns*: the fields of the source
format the model does not use (an SWF log's wait time, status, queue...), kept
so that a stream written back in its own format loses nothing. Trace columns
are named by their format: ``swf_*`` (SWF fields 3-18, also GWF fields 3-16),
``gwf_*`` (GWF's text fields) and ``alea_*`` (Alea's extra fields). A run's
``jobs.arrow`` carries them too, after the outcome columns, so a replay or an
export keeps them.

Readers and generators build tables; :class:`~emulator.core.model.Job` objects are
made only when a scenario is run (:func:`to_jobs`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from os import PathLike
from pathlib import Path

import numpy as np
import pyarrow as pa

from emulator.core.model import JOB_INPUTS, Job
from emulator.data.rundir import WRITE_OPTIONS, replacing

__all__ = [
    "JOB_INPUTS",
    "SWF_COLUMNS",
    "TRACE_PREFIXES",
    "from_jobs",
    "job_table",
    "labels",
    "model_columns",
    "read_arrow",
    "to_jobs",
    "trace_columns",
    "write_arrow",
]

TRACE_PREFIXES = ("swf_", "gwf_", "alea_")

SWF_COLUMNS: dict[int, tuple[str, pa.DataType]] = {
    3: ("swf_wait", pa.float64()),
    4: ("swf_run_time", pa.float64()),
    5: ("swf_procs", pa.int64()),
    6: ("swf_cpu_time", pa.float64()),
    7: ("swf_memory", pa.float64()),
    8: ("swf_req_procs", pa.int64()),
    9: ("swf_req_time", pa.float64()),
    10: ("swf_req_memory", pa.float64()),
    11: ("swf_status", pa.int64()),
    12: ("swf_user", pa.int64()),
    13: ("swf_group", pa.int64()),
    14: ("swf_executable", pa.int64()),
    15: ("swf_queue", pa.int64()),
    16: ("swf_partition", pa.int64()),
    17: ("swf_preceding_job", pa.int64()),
    18: ("swf_think_time", pa.float64()),
}
"""SWF fields 3-18 as trace columns (field 1 is ``id``, field 2 is ``submit``); null = unreadable."""


def job_table(
    id: np.ndarray,
    submit: np.ndarray,
    cpus: np.ndarray,
    estimate: np.ndarray,
    runtime: np.ndarray | None = None,
    *,
    bench: float | np.ndarray = 1.0,
    licenses: pa.Array | None = None,
    deadline: np.ndarray | None = None,
    in_bytes: float | np.ndarray = 0.0,
    out_bytes: float | np.ndarray = 0.0,
    user: np.ndarray | int = 0,
    user_class: str | pa.Array = "regular",
    checkpointable: np.ndarray | bool = False,
    site: str | pa.Array = "",
    placement: str | pa.Array = "single",
    trace: dict[str, pa.Array] | None = None,
) -> pa.Table:
    """A jobs table from columns (numpy arrays or Arrow arrays); scalars fill a whole column.

    ``deadline``: ``inf`` (or NaN) means none and is stored as null, as in ``jobs.arrow``.
    """
    n = len(id)
    runtime = estimate if runtime is None else runtime
    if deadline is None:
        deadline_column = pa.nulls(n, pa.float64())
    else:
        deadline = np.asarray(deadline, dtype=float)
        deadline_column = pa.array(deadline, mask=~np.isfinite(deadline))
    columns = {
        "id": _numbers(id, n, np.int64),
        "submit": _numbers(submit, n, np.float64),
        "cpus": _numbers(cpus, n, np.int32),
        "estimate": _numbers(estimate, n, np.float64),
        "runtime": _numbers(runtime, n, np.float64),
        "bench": _numbers(bench, n, np.float64),
        "licenses": licenses if licenses is not None else _empty_lists(n),
        "deadline": deadline_column,
        "in_bytes": _numbers(in_bytes, n, np.float64),
        "out_bytes": _numbers(out_bytes, n, np.float64),
        "user": _numbers(user, n, np.int64),
        "user_class": _strings(user_class, n),
        "checkpointable": pa.array(np.broadcast_to(np.asarray(checkpointable, bool), (n,))),
        "site": _strings(site, n),
        "placement": _strings(placement, n),
    }
    table = pa.table(columns, schema=JOB_INPUTS)
    for name, column in (trace or {}).items():
        table = table.append_column(name, column)
    return table


def labels(codes: np.ndarray, names: tuple[str, ...] | list[str]) -> pa.Array:
    """Strings by index (a negative index: null), built in Arrow (no Python string per row)."""
    missing = codes < 0
    indices = pa.array(codes.astype(np.int32), mask=missing if missing.any() else None)
    return pa.DictionaryArray.from_arrays(indices, pa.array(list(names), pa.string())).cast(pa.string())


def _numbers(values, n: int, dtype) -> pa.Array:
    return pa.array(np.broadcast_to(np.asarray(values, dtype=dtype), (n,)))


def _strings(value: str | pa.Array, n: int) -> pa.Array:
    if isinstance(value, str):
        return pa.repeat(pa.scalar(value, pa.string()), n)
    return value.cast(pa.string()) if value.type != pa.string() else value


def _empty_lists(n: int) -> pa.Array:
    return pa.ListArray.from_arrays(np.zeros(n + 1, np.int32), pa.array([], pa.string()))


def trace_columns(table: pa.Table) -> list[str]:
    """The names of a table's trace columns, in table order."""
    return [name for name in table.column_names if name.startswith(TRACE_PREFIXES)]


def to_jobs(table: pa.Table) -> list[Job]:
    """The table's rows as :class:`Job` objects (for running; readers and writers stay columnar).

    Attributes are set directly: ``Job.__init__``'s conversions would cost more
    than the rest of reading a trace.
    """
    jobs: list[Job] = []
    for start in range(0, table.num_rows, JOBS_AT_ONCE):
        _add_jobs(jobs, table.slice(start, JOBS_AT_ONCE))
    return jobs


JOBS_AT_ONCE = 1 << 16
"""Rows made into :class:`Job` objects at a time: the columns' Python values are lists for these rows
only (for a million jobs at once, 15 lists of a million took 120 MB more while the jobs were made)."""


def _add_jobs(jobs: list[Job], table: pa.Table) -> None:
    """Append ``table``'s rows to ``jobs`` as :class:`Job` objects."""
    cols = [
        _python_values(table.column(name), math.inf if name == "deadline" else None)
        for name in JOB_INPUTS.names
    ]
    append, new = jobs.append, Job.__new__
    for (
        id_,
        submit,
        cpus,
        estimate,
        runtime,
        bench,
        licenses,
        deadline,
        in_bytes,
        out_bytes,
        user,
        user_class,
        checkpointable,
        site,
        placement,
    ) in zip(*cols, strict=True):
        job = new(Job)
        job.id = id_
        job.submit = submit
        job.cpus = cpus
        job.estimate = estimate
        job.runtime = runtime
        job.bench = bench
        job.licenses = licenses
        job.deadline = deadline
        job.in_bytes = in_bytes
        job.out_bytes = out_bytes
        job.user = user
        job.user_class = user_class
        job.checkpointable = checkpointable
        job.site = site
        job.placement = placement
        append(job)


def _python_values(column: pa.ChunkedArray, null: float | None = None) -> list:
    """A column as Python values the way ``Job`` holds them, without ``to_pylist``'s per-value cost.

    Numbers go through numpy (nulls become ``null``: a missing deadline is
    ``inf``); strings through their dictionary (few distinct values: one Python
    string each); license lists become tuples, built only for the jobs that
    need licenses. A column of one value (no deadlines, no input bytes) holds
    one Python object for all its rows, not one each (24 bytes a job).
    """
    column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    kind = column.type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        encoded = column.dictionary_encode()
        return list(map(encoded.dictionary.to_pylist().__getitem__, encoded.indices.to_numpy().tolist()))
    if pa.types.is_list(kind):
        offsets = column.offsets.to_numpy()
        values = _python_values(pa.chunked_array([column.flatten()]))
        lists: list = [()] * len(column)
        for i in np.flatnonzero(np.diff(offsets)).tolist():
            lists[i] = tuple(values[offsets[i] - offsets[0] : offsets[i + 1] - offsets[0]])
        return lists
    if column.null_count and null is None:
        return column.to_pylist()
    values = column.to_numpy(zero_copy_only=False)
    if column.null_count:
        values = np.where(column.is_null().to_numpy(zero_copy_only=False), null, values)
    bits = values.view(f"i{values.itemsize}") if values.dtype.kind == "f" else values  # (-0.0 is not 0.0)
    if bits.size and (bits == bits[0]).all():
        return [values[0].item()] * values.size
    return values.tolist()


def from_jobs(jobs: Sequence[Job]) -> pa.Table:
    """A jobs table (model columns only) from :class:`Job` objects."""
    columns = {name: [getattr(j, name) for j in jobs] for name in JOB_INPUTS.names}
    columns["deadline"] = [None if d == math.inf else d for d in columns["deadline"]]
    return pa.table(columns, schema=JOB_INPUTS)


def model_columns(table: pa.Table) -> pa.Table:
    """A jobs table's model columns exactly as ``from_jobs(to_jobs(table))`` makes them (one chunk,
    an infinite deadline as none), without the round trip through a Python object per job: on
    LCG-2005-1's 188k jobs, reading 15 attributes of each after a run took 0.25 s."""
    table = table.select(JOB_INPUTS.names).combine_chunks()
    for i, field in enumerate(table.schema):
        column = table.column(i)
        numeric = pa.types.is_floating(field.type) or pa.types.is_integer(field.type)
        if numeric and (column.null_count or field.name == "deadline"):
            table = table.set_column(i, field, _nulls_as_python(column, field.name == "deadline"))
    return table


def _nulls_as_python(column: pa.ChunkedArray, inf_is_null: bool) -> pa.Array:
    """A numeric column as ``pa.array`` makes it from Python values (``None`` for nulls, and for an
    infinite deadline): 0 under each null, so the bytes written are the same too."""
    values = column.fill_null(0).to_numpy()
    missing = column.is_null().to_numpy(zero_copy_only=False)
    if inf_is_null:
        missing |= np.isinf(values)
    values = np.where(missing, 0, values).astype(values.dtype)
    return pa.array(values, column.type, mask=missing if missing.any() else None)


def read_arrow(path: str | PathLike[str]) -> pa.Table:
    """An Arrow IPC file (``jobs.arrow`` of a run, or a converted trace), memory-mapped."""
    with pa.memory_map(str(path)) as source:
        return pa.ipc.open_file(source).read_all()


def write_arrow(table: pa.Table, path: str | PathLike[str], batch_rows: int = 65536) -> None:
    """Write ``table`` as an Arrow IPC file, compressed as a run's (via ``PATH.part``, renamed when
    complete; removed on an error)."""
    with (
        replacing(Path(path)) as part,
        pa.OSFile(str(part), "wb") as sink,
        pa.ipc.new_file(sink, table.schema, options=WRITE_OPTIONS) as writer,
    ):
        for batch in table.to_batches(max_chunksize=batch_rows):
            writer.write_batch(batch)
