"""The Grid Workloads Format (GWF) reader: the Grid Workloads Archive's traces.

GWF extends SWF to grids: 29 whitespace-separated fields per job (a 30th, as
some archive files have, is ignored), ``#`` starts a comment. Fields 1-11
mean what they mean in SWF and are read by the SWF reader's ``pwa`` rules
(same loop, same messages); fields 12-29 are kept as text
(:data:`GWF_TEXT_COLUMNS`: grid logs name users, groups and sites with
words), and 3-16 also as SWF numbers where they are numbers, so a GWF trace
converts to SWF. The site fields map each job to a cluster: ``sites =
"origin"`` (field 17, where the job was submitted: the ``own-site`` meta
policy sends it back there) or ``"last-run"`` (field 18, where it ran), or
``"none"``. Users named by words get numbers in order of first appearance.
"""

from __future__ import annotations

from functools import partial
from os import PathLike

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .swf import Layout, SwfTrace, read_trace, shared_read
from .table import SWF_COLUMNS

__all__ = ["GWF", "GWF_FIELDS", "GWF_SITES", "GWF_TEXT_COLUMNS", "read_gwf"]

GWF_FIELDS = (
    *("JobID", "SubmitTime", "WaitTime", "RunTime", "NProcs", "AverageCPUTimeUsed", "UsedMemory"),
    *("ReqNProcs", "ReqTime", "ReqMemory", "Status", "UserID", "GroupID", "ExecutableID", "QueueID"),
    *("PartitionID", "OrigSiteID", "LastRunSiteID", "JobStructure", "JobStructureParams", "UsedNetwork"),
    *("UsedLocalDiskSpace", "UsedResources", "ReqPlatform", "ReqNetwork", "ReqLocalDiskSpace"),
    *("ReqResources", "VOID", "ProjectID"),
)
"""The Grid Workloads Format's 29 fields, in order."""

GWF_TEXT_COLUMNS = {
    12: "gwf_user",
    13: "gwf_group",
    14: "gwf_executable",
    15: "gwf_queue",
    16: "gwf_partition",
    17: "gwf_orig_site",
    18: "gwf_last_run_site",
    19: "gwf_job_structure",
    20: "gwf_job_structure_params",
    21: "gwf_used_network",
    22: "gwf_used_disk",
    23: "gwf_used_resources",
    24: "gwf_req_platform",
    25: "gwf_req_network",
    26: "gwf_req_disk",
    27: "gwf_req_resources",
    28: "gwf_vo",
    29: "gwf_project",
}
"""GWF fields 12-29 kept as text, by field number."""

GWF = Layout(29, b"#", {n: SWF_COLUMNS[n] for n in range(3, 17)}, GWF_TEXT_COLUMNS)
GWF_SITES = {"origin": "gwf_orig_site", "last-run": "gwf_last_run_site", "none": ""}


def read_gwf(path: str | PathLike[str], *, sites: str = "origin", site: str = "", **options) -> SwfTrace:
    """Read a GWF trace (plain, ``.gz`` or ``.zip``) into a jobs table.

    ``sites``: ``"origin"``, ``"last-run"`` or ``"none"`` (module docstring);
    ``site`` names one cluster for every job instead. The other options are
    :func:`workloads.swf.read_trace`'s (the rules are always ``pwa``).
    """
    if sites not in GWF_SITES:
        raise ValueError(f"unknown sites {sites!r}; accepted: {', '.join(map(repr, GWF_SITES))}")
    if site and sites != "none":
        raise ValueError(f"give either site ({site!r}) or sites ({sites!r}), not both")
    read = partial(_read_gwf, path, sites, site, options)  # (a sites platform, then the jobs: one read)
    return shared_read(read, path, GWF, site, sites, dict(options, rules="pwa"))


def _read_gwf(path, sites: str, site: str, options: dict) -> SwfTrace:
    trace = read_trace(path, GWF, rules="pwa", **options)
    users = trace.table.column("gwf_user")
    if trace.table.column("swf_user").null_count:
        codes = pc.dictionary_encode(users.combine_chunks()).indices.to_numpy(zero_copy_only=False)
        numbered = np.where(pc.equal(users, "-1").to_numpy(zero_copy_only=False), 0, codes + 1)
        trace.table = trace.table.set_column(
            trace.table.column_names.index("user"), "user", pa.array(numbered.astype(np.int64))
        )
    if site:
        trace.set_site(site)
    elif sites != "none":
        names = trace.table.column(GWF_SITES[sites])
        trace.set_site(pc.if_else(pc.equal(names, "-1"), "", names).combine_chunks())
    return trace
