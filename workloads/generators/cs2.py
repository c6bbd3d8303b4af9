"""Convergent Scheduling 2.0 experiment (seed 002): one cluster of 150 machines, 1500 jobs, 20 licenses.

The paper's numbers: uniform estimated [500, 3000], deadline [25, 150],
CPUs [1, 8], benchmark [200, 600] (jobs and machines), license ratio [55%,
65%], license suitability 90% (the odds a machine can run a type), license
needs 20%, 30% of jobs without deadline, 2% checkpointable; exponential
inter-arrival times with mean 1, 4, 6, 8, 10 or 12. Readings: the deadline
range is the margin after the estimate (``deadline = submit + estimated +
margin``, as in the two-level paper by the same group); machines draw their
CPUs from the jobs' range; license copies are counted per machine (CS 2.0's
model); jobs run exactly their estimate and ask for 1 or 2 license types.
"""

from __future__ import annotations

from ..synthetic import SyntheticSpec
from .licensed_grid import LicensedGrid

JOBS = SyntheticSpec(
    jobs=1500,
    mean_interarrival=6.0,
    estimate=(500.0, 3000.0),
    runtime_factor=(1.0, 1.0),
    cpus=(1, 8),
    bench=(200.0, 600.0),
    license_share=0.2,
    licenses_per_job=(1, 2),
    deadline_share=0.7,
    margin=(25.0, 150.0),
    placement="single",
    checkpointable_share=0.02,
)
GRID = LicensedGrid(
    clusters=(150,),
    cpus=(1, 8),
    mips=(200.0, 600.0),
    licenses=20,
    license_ratio=(0.55, 0.65),
    license_suitability=0.9,
    license_per_machine=True,
)
