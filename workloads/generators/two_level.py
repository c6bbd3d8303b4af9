"""Two-level meta-scheduler experiment (seeds 000/001): 4 clusters, 5000 jobs with deadlines and licenses.

The paper's numbers: clusters of 120, 60, 30 and 15 machines; uniform
estimated [8000, 10000], benchmark [100, 500] (jobs and machines), margin
[1500, 5500], CPUs [4, 32] (jobs and machines), licenses ratio [50%, 70%];
30% of jobs need a license, 30% have no deadline
(``deadline = submit + estimated + margin``); exponential inter-arrival
times with mean ``t_a`` in {0, 5, 10, 15}. Where the paper is silent: jobs
run exactly their estimate; a job needing licenses asks for 1 to 3 of the
20 types; users are gold, silver or regular with equal odds; every machine
can run every license type.
"""

from __future__ import annotations

from ..synthetic import SyntheticSpec
from .licensed_grid import LicensedGrid

JOBS = SyntheticSpec(
    jobs=5000,
    mean_interarrival=10.0,
    estimate=(8000.0, 10000.0),
    runtime_factor=(1.0, 1.0),
    cpus=(4, 32),
    bench=(100.0, 500.0),
    license_share=0.3,
    licenses_per_job=(1, 3),
    deadline_share=0.7,
    margin=(1500.0, 5500.0),
    placement="single",
    user_classes=(1.0, 1.0, 1.0),
)
GRID = LicensedGrid(
    clusters=(120, 60, 30, 15),
    cpus=(4, 32),
    mips=(100.0, 500.0),
    licenses=20,
    license_ratio=(0.5, 0.7),
    license_suitability=1.0,
)
