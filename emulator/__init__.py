"""gridemu: a GridSim-compatible grid and cluster scheduling emulator.

The documented API: load a scenario, run it in this process, read the results.

>>> from emulator import load_scenario, run
>>> result = run(load_scenario("quickstart", ["workload.jobs=50"]), out_dir=None)  # doctest: +SKIP
"""

from .config import ScenarioError
from .model import Cluster, Job, Link, Machine, Platform
from .policies import LOCAL, META, PolicyError, PolicySpec
from .runner import RunResult, run
from .scenario import Scenario
from .scenario import load as load_scenario

__all__ = [
    "LOCAL",
    "META",
    "Cluster",
    "Job",
    "Link",
    "Machine",
    "Platform",
    "PolicyError",
    "PolicySpec",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "load_scenario",
    "run",
]
