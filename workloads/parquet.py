"""Parquet copies of jobs tables and a run's traces, for tools that read Parquet but not Arrow IPC
(DuckDB opens them with ``read_parquet``; our Arrow files need a community extension there).

zstd-compressed, one row group per Arrow batch (so a run's ``events.arrow`` is copied batch by batch,
in bounded memory), the Arrow schema and its metadata kept; written through ``NAME.part``, renamed when
complete. The same table gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterable
from os import PathLike
from pathlib import Path

import pyarrow as pa

from emulator.data.rundir import replacing

__all__ = ["RUN_TABLES", "copy_run", "write_parquet"]

RUN_TABLES = ("events", "jobs")
"""A run's tables: ``NAME.arrow`` is copied to ``NAME.parquet``."""
COMPRESSION = "zstd"


def write_parquet(table: pa.Table, path: str | PathLike[str], batch_rows: int = 65536) -> int:
    """Write ``table`` as a Parquet file; returns its rows."""
    return _write(table.schema, table.to_batches(max_chunksize=batch_rows), Path(path))


def copy_run(run: Path, out: Path) -> dict[str, int]:
    """Parquet copies of a run directory's ``events.arrow`` and ``jobs.arrow`` in ``out``; rows by file."""
    missing = [f"{name}.arrow" for name in RUN_TABLES if not (run / f"{name}.arrow").is_file()]
    if missing:
        raise FileNotFoundError(f"{run}: not a finished run's directory (no {', '.join(missing)})")
    out.mkdir(parents=True, exist_ok=True)
    written = {}
    for name in RUN_TABLES:
        with pa.memory_map(str(run / f"{name}.arrow")) as source:
            reader = pa.ipc.open_file(source)
            batches = (reader.get_batch(i) for i in range(reader.num_record_batches))
            written[f"{name}.parquet"] = _write(reader.schema, batches, out / f"{name}.parquet")
    return written


def _write(schema: pa.Schema, batches: Iterable[pa.RecordBatch], path: Path) -> int:
    import pyarrow.parquet as pq  # (~10 ms with pyarrow.fs and ssl: only commands that write Parquet)

    rows = 0
    with replacing(path) as part, pq.ParquetWriter(str(part), schema, compression=COMPRESSION) as writer:
        for batch in batches:
            writer.write_batch(batch)
            rows += batch.num_rows
    return rows
