"""Alea data sets: the ``.machines`` platform file and Alea's extended SWF job lines.

Alea (the scheduling simulator by D. Klusacek) reads SWF traces whose job
lines may carry three more fields: the nodes the job ran on (``{1241,1241}``),
its queue name (``q_1d``) and its PBS resource request
(``1:ppn=64:x86_64:cl_zewura#excl``). They are kept as the trace columns
``alea_nodes``, ``alea_queue`` and ``alea_request``; the first 18 fields are
read by the SWF reader (same loop, same rules). The request decides two
things when asked (the defaults): ``placement = "request"`` puts a job
asking for one node on one machine (``single``) and others across machines
(``spread``); ``sites = "request"`` sends a job whose request names a
cluster property ``cl_NAME`` to that cluster.

A ``.machines`` file lists clusters, one per line: ``id name nodes
cpus_per_node speed RAM [properties] [GPUs]`` (``;`` comments); each becomes
a cluster of ``nodes`` machines with ``cpus_per_node`` CPUs at ``speed`` x
the scenario's ``mips``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from os import PathLike
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from emulator.core.model import MAX_CPUS_PER_MACHINE, MAX_MACHINES, PLACEMENTS, SINGLE, SPREAD

from .columns import TraceError
from .swf import SWF, Layout, SwfTrace, read_swf

__all__ = ["ALEA", "AleaCluster", "machines_path", "read_alea", "read_machines"]

ALEA = Layout(SWF.fields, SWF.comment, SWF.numbers, {19: "alea_nodes", 20: "alea_queue", 21: "alea_request"})
ALEA_PLACEMENTS = (*PLACEMENTS, "request")
ALEA_SITES = ("request", "none")


@dataclass(frozen=True)
class AleaCluster:
    """One line of a ``.machines`` file."""

    id: int
    name: str
    nodes: int
    cpus_per_node: int
    speed: float
    ram: float
    rest: tuple[str, ...] = ()


def read_machines(path: str | PathLike[str]) -> list[AleaCluster]:
    """The clusters of an Alea ``.machines`` file, in file order; errors name the file and line."""
    clusters = []
    names: dict[str, int] = {}
    for number, line in enumerate(Path(path).read_text(errors="replace").splitlines(), 1):
        words = line.split()
        if not words or words[0].startswith(";"):
            continue
        if len(words) < 6:
            raise TraceError(
                str(path), number, f"{len(words)} fields", "id name nodes cpus_per_node speed RAM"
            )
        try:
            cluster = AleaCluster(
                int(words[0]),
                words[1],
                int(words[2]),
                int(words[3]),
                float(words[4]),
                float(words[5]),
                tuple(words[6:]),
            )
        except ValueError:
            raise TraceError(
                str(path),
                number,
                f"unreadable line {line.strip()!r}",
                "integers for id, nodes, cpus; numbers for speed, RAM",
            ) from None
        if not (
            1 <= cluster.nodes <= MAX_MACHINES
            and 1 <= cluster.cpus_per_node <= MAX_CPUS_PER_MACHINE
            and 0 < cluster.speed < math.inf
        ):
            raise TraceError(
                str(path),
                number,
                f"cluster {cluster.name} has {line.strip()!r}",
                f"1 <= nodes <= {MAX_MACHINES}, 1 <= cpus <= {MAX_CPUS_PER_MACHINE}, a finite speed > 0",
            )
        if cluster.name in names:
            raise TraceError(
                str(path),
                number,
                f"cluster name {cluster.name} already used at line {names[cluster.name]}",
                "unique names",
            )
        names[cluster.name] = number
        clusters.append(cluster)
    if not clusters:
        raise TraceError(
            str(path), None, "no cluster line", "one line per cluster: id name nodes cpus_per_node speed RAM"
        )
    return clusters


def machines_path(trace: str | PathLike[str]) -> Path:
    """Where Alea keeps a trace's machines: ``X.swf.machines`` beside ``X.swf`` or ``X.swf.gz``."""
    path = Path(trace)
    stem = path.name[:-3] if path.name.endswith(".gz") else path.name
    return path.with_name(stem + ".machines")


def read_alea(
    path: str | PathLike[str],
    *,
    clusters: list[str] | None = None,
    placement: str = "request",
    sites: str = "request",
    rules: str = "pwa",
    **options,
) -> SwfTrace:
    """Read an Alea job file (18 SWF fields, optionally the three more) into a jobs table.

    ``clusters``: the cluster names a ``cl_NAME`` request may name (default:
    the trace's machines file, when it exists). The other options are
    :func:`workloads.swf.read_trace`'s.
    """
    if placement not in ALEA_PLACEMENTS:
        raise ValueError(
            f"unknown placement {placement!r}; accepted: {', '.join(map(repr, ALEA_PLACEMENTS))}"
        )
    if sites not in ALEA_SITES:
        raise ValueError(f"unknown sites {sites!r}; accepted: {', '.join(map(repr, ALEA_SITES))}")
    trace = read_swf(
        path, rules=rules, layout=ALEA, placement=SPREAD if placement == "request" else placement, **options
    )
    request = trace.table.column("alea_request").combine_chunks()
    if placement == "request":
        one_node = pc.match_substring_regex(request, r"^1(:|$)")
        column = pc.if_else(one_node, SINGLE, SPREAD)
        trace.table = trace.table.set_column(trace.table.column_names.index("placement"), "placement", column)
    if sites == "request":
        if clusters is None:
            machines = machines_path(path)
            clusters = [c.name for c in read_machines(machines)] if machines.is_file() else []
        trace.set_site(_requested_cluster(request, clusters))
    return trace


def _requested_cluster(request: pa.Array, clusters: list[str]) -> pa.Array:
    """The cluster a request's ``cl_NAME`` property names, if it is one of ``clusters``; else ""."""
    named = pc.extract_regex(request, r"(?:^|:)cl_(?P<name>[^:#]+)")
    names = pc.fill_null(pc.struct_field(named, "name"), "")
    known = pc.is_in(names, pa.array(clusters or [""], pa.string()))
    return pc.if_else(known, names, "")
