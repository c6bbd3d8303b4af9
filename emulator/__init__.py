"""gridemu: a GridSim-compatible grid and cluster scheduling emulator.

The documented API: load a scenario, run it in this process, read the results;
for notebooks, :func:`emulate` and :func:`open_run` give a :class:`RunDir` with
its tables, metrics and figures (see :mod:`emulator.api`).

>>> from emulator import load_scenario, run
>>> result = run(load_scenario("quickstart", ["workload.jobs=50"]), out_dir=None)  # doctest: +SKIP
>>> from emulator import emulate
>>> emulate("quickstart", set=["workload.jobs=50"]).plot("gantt", cluster="alpha")  # doctest: +SKIP
"""

from .api import RunDir, SweepDir, emulate, open_run, open_sweep
from .core.config import ScenarioError
from .core.model import Cluster, Job, Link, Machine, Platform
from .data.scenario import Scenario
from .data.scenario import load as load_scenario
from .engine.runner import RunResult, run
from .policies import LOCAL, META, PolicyError, PolicySpec

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
    "RunDir",
    "RunResult",
    "Scenario",
    "ScenarioError",
    "SweepDir",
    "emulate",
    "load_scenario",
    "open_run",
    "open_sweep",
    "run",
]
