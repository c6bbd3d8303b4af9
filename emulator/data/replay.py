"""Replaying an earlier run's job stream: its ``jobs.arrow`` under its own scenario or another.

A run's ``jobs.arrow`` holds every input attribute of every job (and the
trace columns of a trace's jobs), in the order the run had them, so the
stream can be run again exactly: under the run's ``scenario.toml`` (the
effective configuration, defaults filled in) with the same seed, the replay
writes the same ``events.arrow`` and ``jobs.arrow`` byte for byte; with
``--set`` overrides or another scenario it shows what other policies or
platforms would have done with the very same jobs.

The replayed scenario keeps everything of the chosen scenario but its
workload source, which becomes ``source = "arrow"`` on the jobs file; the
workload's ``direct`` and ``link`` keys (how jobs naming a cluster enter it)
are kept. The ``[stress]`` keys that changed the jobs themselves (``load``,
``bursts``, ``estimates``: the jobs table holds their result) are dropped;
the run-time perturbations (failures, outages, links...) are kept.

It builds a scenario, so it lives beside the scenario loader: the workloads package, which the
loader reads sources from, imports nothing of it.
"""

from __future__ import annotations

from pathlib import Path

from workloads.formats import ARROW

from ..core.config import ScenarioError
from .scenario import Scenario, load_raw, read_raw

__all__ = ["jobs_path", "replay_name", "replay_scenario"]

KEPT_WORKLOAD_KEYS = ("direct", "link")
WORKLOAD_STRESS_KEYS = ("load", "bursts", "estimates")
"""``[stress]`` keys that perturbed the jobs themselves (``workloads.perturb``): a replay drops them."""


def jobs_path(target: str | Path) -> Path:
    """The jobs table of a run directory, or the file itself."""
    path = Path(target)
    if path.is_dir():
        path = path / "jobs.arrow"
    if not path.is_file():
        raise FileNotFoundError(f"{target}: neither a run directory (with jobs.arrow) nor a jobs table")
    return path


def replay_scenario(
    target: str | Path,
    scenario: str | Path | None = None,
    overrides: list[str] = (),
    seed: int | None = None,
) -> Scenario:
    """The scenario that replays ``target``'s jobs (a run directory or a ``jobs.arrow``).

    ``scenario``: a scenario file or built-in name; default the run's
    ``scenario.toml`` beside the jobs table. ``overrides`` (``--set``) apply
    after the workload is replaced, so ``workload.limit=100`` replays the first
    hundred jobs.
    """
    jobs = jobs_path(target).resolve()
    if scenario is None:
        scenario = jobs.parent / "scenario.toml"
        if not scenario.is_file():
            raise ScenarioError(f"{jobs}: no scenario.toml beside it; give the scenario to replay under")
    raw, source, base = read_raw(scenario)
    workload = raw.get("workload", {}) if isinstance(raw.get("workload"), dict) else {}
    raw["workload"] = {"source": ARROW.name, "path": str(jobs)}
    raw["workload"] |= {key: workload[key] for key in KEPT_WORKLOAD_KEYS if key in workload}
    if isinstance(raw.get("stress"), dict):  # the jobs carry them already: applying them again doubles them
        raw["stress"] = {k: v for k, v in raw["stress"].items() if k not in WORKLOAD_STRESS_KEYS}
    raw["name"] = f"{raw.get('name', Path(source).stem)}-replay"
    return load_raw(raw, f"{source} (replaying {jobs})", base, overrides, seed)


NAME_LENGTH = 120
"""Characters of what changed a replay's directory name keeps (a path component holds 255 bytes)."""


def replay_name(
    target: str | Path,
    scenario: str | Path | None = None,
    overrides: list[str] = (),
    seed: int | None = None,
) -> str:
    """The default name of a replay's run directory: the replayed run's, then what the replay changed.

    ``<run>-replay`` alone means nothing changed (the same traces, byte for byte); else the other
    scenario's stem, the ``--set`` overrides and the seed follow, joined by ``+``, so a comparison
    of runs names each by what it tried. :func:`emulator.data.rundir.default_dir` makes it a
    plain path component and appends a number that makes it unique.

    >>> replay_name("runs/kth-seed1-001", overrides=["local.policy=conservative"])
    'kth-seed1-001-replay-local.policy=conservative'
    >>> replay_name("runs/kth-seed1-001/jobs.arrow", "fcfs.toml", ["meta.policy=round-robin"], seed=2)
    'kth-seed1-001-replay-fcfs+meta.policy=round-robin+seed=2'
    >>> replay_name("traces/mine.arrow")
    'mine-replay'
    """
    path = Path(target).resolve()
    run = path.parent.name if path.name == "jobs.arrow" else path.name.removesuffix(".arrow")
    changes = [Path(scenario).stem] if scenario is not None else []
    changes += [*overrides, *([f"seed={seed}"] if seed is not None else [])]
    changed = "+".join(changes)[:NAME_LENGTH]
    return f"{run}-replay" + (f"-{changed}" if changed else "")
