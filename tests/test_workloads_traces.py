"""Each real trace in ../shared/traces loads with the expected job count and processor totals.

The expected numbers were counted independently of the reader (awk on the
decompressed text): data lines, and the sum of allocated processors (field 5,
else requested, field 8) over the jobs the ``pwa`` rules keep.
"""

from __future__ import annotations

import pytest

from tests.conftest import shared_path
from workloads.alea import read_alea, read_machines
from workloads.swf import read_swf

# file: (lines, jobs kept by pwa, processors of those jobs, MaxProcs)
SWF_TRACES = {
    "KTH-SP2-1996-2.1-cln.swf.gz": (28_476, 28_475, 218_053, "100"),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (18_239, 18_239, 309_953, "128"),
    "UniLu-Gaia-2014-2.swf.gz": (51_987, 51_959, 518_194, "2004"),
    "LCG-2005-1.swf.gz": (188_041, 188_041, 188_041, "24515"),
}


@pytest.mark.parametrize("name", list(SWF_TRACES))
def test_swf_trace_loads(name):
    lines, jobs, procs, max_procs = SWF_TRACES[name]
    trace = read_swf(shared_path("traces", name), rules="pwa")
    assert trace.table.num_rows == jobs
    assert len(trace.skipped) == lines - jobs
    assert sum(trace.table.column("cpus").to_pylist()) == procs
    assert trace.header["MaxProcs"] == max_procs
    gridsim = read_swf(shared_path("traces", name))  # GridSim's rules keep every line, clamped
    assert gridsim.table.num_rows == lines


def test_lcg_partitions_name_170_sites():
    trace = read_swf(shared_path("traces", "LCG-2005-1.swf.gz"), rules="pwa", sites="partition")
    sites = set(trace.table.column("site").to_pylist())
    assert len(sites) == 170 and "" not in sites
    assert trace.table.column("site")[0].as_py() == "grid.ici.ro"  # partition 1 in the header


def test_gaia_status_filters():
    path = shared_path("traces", "UniLu-Gaia-2014-2.swf.gz")
    trace = read_swf(path, rules="pwa", failed="drop")
    assert trace.table.num_rows == 51_959 - 10_592  # status 0 among the jobs with a run time
    assert sum("failed" in s.reason for s in trace.skipped) == 10_592


def test_alea_wagap_jobs_and_machines():
    path = shared_path("traces", "alea", "wagap-2013.swf.gz")
    trace = read_alea(path)
    assert trace.table.num_rows == 17_898  # two of 17,900 lines have no run time
    assert sum(trace.table.column("cpus").to_pylist()) == 149_384
    assert [c.name for c in read_machines(path.with_name("wagap-2013.swf.machines"))] == ["zewura", "zegox"]
    sites = trace.table.column("site").to_pylist()
    assert (sites.count("zewura"), sites.count("zegox")) == (575, 320)  # jobs whose request names cl_...
    first = trace.table.slice(0, 1).to_pylist()[0]
    assert (first["alea_queue"], first["alea_request"], first["placement"]) == (
        "q_1d",
        "1:ppn=64:x86_64:cl_zewura#excl",
        "single",
    )


def test_alea_hpc2n_and_ngi_machines():
    trace = read_alea(shared_path("traces", "alea", "hpc2n.swf"))
    assert trace.table.num_rows == 3_145
    assert sum(trace.table.column("cpus").to_pylist()) == 63_578
    machines = read_machines(shared_path("traces", "alea", "NGI_CZ.swf.machines"))
    assert len(machines) == 47
    assert sum(c.nodes * c.cpus_per_node for c in machines) == sum(
        int(line.split()[2]) * int(line.split()[3])
        for line in shared_path("traces", "alea", "NGI_CZ.swf.machines").read_text().splitlines()
        if line.strip()
    )
