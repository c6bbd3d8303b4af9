"""Job-stream sources: trace readers and writers, the papers' generators, Arrow replay.

Every source produces a jobs table (:mod:`workloads.table`: the emulator's
job attributes as Arrow columns, plus the trace's own fields);
:class:`emulator.core.model.Job` objects are built from it only to run.

>>> from workloads import read_swf, write_swf
>>> trace = read_swf("KTH-SP2-1996-2.1-cln.swf.gz", rules="pwa", limit=1000)  # doctest: +SKIP
>>> write_swf(trace.table, "first-1000.swf")  # its header line for line  # doctest: +SKIP
"""

from .alea import read_alea, read_machines
from .batsim import write_batsim
from .columns import SkippedLine, TraceError
from .convert import convert, read_any
from .export import write_gwf, write_swf
from .gwf import read_gwf
from .parquet import write_parquet
from .swf import SwfTrace, read_swf
from .table import job_table, read_arrow, to_jobs, write_arrow

__all__ = [
    "SkippedLine",
    "SwfTrace",
    "TraceError",
    "convert",
    "job_table",
    "read_alea",
    "read_any",
    "read_arrow",
    "read_gwf",
    "read_machines",
    "read_swf",
    "to_jobs",
    "write_arrow",
    "write_batsim",
    "write_gwf",
    "write_parquet",
    "write_swf",
]
