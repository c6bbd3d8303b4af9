"""Replicates of one trace: what a run's seed changes when the jobs come from a log.

A trace is one history: run twice it gives the same numbers, so a sweep over
seeds prints ``± 0`` and says nothing of how much a result owes to that one
history. These ``[workload]`` keys make each seed a replicate (``gridemu sweep
--seeds 1..10`` then gives ten and a confidence interval):

- ``resample = "window"``: the trace's submit span cut into ``windows`` equal
  spans; seed ``s`` runs span ``s mod windows`` (seeds ``1..K`` cover each of
  ``K`` once). Jobs keep their times; the cluster starts empty at the window's
  start, which ``[metrics] warmup`` can trim from the job metrics.
- ``resample = "bootstrap"``: the trace's arrival times kept, the job at each
  (size, run time, estimate, user, its trace fields) drawn with replacement
  from all the trace's jobs (a bootstrap over jobs: the arrival process and
  the mix stay the trace's, their pairing is redrawn).
- ``estimate_noise = sigma`` (with any of them): every estimate multiplied by
  ``exp(sigma * Z)``, ``Z`` standard normal, at least 1 s: how much a
  backfilling result owes to the users' estimates.

Draws come from the workload's seeded stream, so a seed gives the same
replicate on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

RESAMPLES = ("none", "window", "bootstrap")
DEFAULT_WINDOWS = 10
KEPT = ("id", "submit")
"""The columns a bootstrap keeps in place: each arrival keeps its id and time, its job is redrawn."""


@dataclass(frozen=True)
class Resample:
    """How one run's jobs are drawn from the trace (see the module docstring)."""

    how: str = "none"
    windows: int = DEFAULT_WINDOWS
    estimate_noise: float = 0.0

    @property
    def active(self) -> bool:
        return self.how != "none" or self.estimate_noise > 0


def apply(table: pa.Table, resample: Resample, seed: int, rng: np.random.Generator) -> pa.Table:
    """``table`` as seed ``seed``'s replicate; unchanged when nothing is asked."""
    if resample.how == "window":
        table = window(table, resample.windows, seed % resample.windows)
    elif resample.how == "bootstrap":
        table = bootstrap(table, rng)
    if resample.estimate_noise > 0:
        table = noisy_estimates(table, resample.estimate_noise, rng)
    return table


def window(table: pa.Table, windows: int, index: int) -> pa.Table:
    """The jobs submitted in span ``index`` of ``windows`` equal spans of the trace's submit times
    (the last span holds the last job)."""
    submit = table.column("submit").to_numpy()
    if not submit.size:
        return table
    edges = np.linspace(submit.min(), submit.max(), windows + 1)
    keep = (submit >= edges[index]) & (submit < edges[index + 1])
    if index == windows - 1:
        keep |= submit == edges[-1]
    return table.filter(pa.array(keep))


def bootstrap(table: pa.Table, rng: np.random.Generator) -> pa.Table:
    """Each arrival (id and submit time kept) given a job drawn with replacement from the table."""
    if not table.num_rows:
        return table
    drawn = table.take(pa.array(rng.integers(0, table.num_rows, table.num_rows)))
    for name in KEPT:
        drawn = drawn.set_column(drawn.column_names.index(name), name, table.column(name))
    return drawn


def noisy_estimates(table: pa.Table, sigma: float, rng: np.random.Generator) -> pa.Table:
    """Estimates multiplied by ``exp(sigma * Z)``, at least one second."""
    estimate = table.column("estimate").to_numpy()
    noisy = np.maximum(estimate * np.exp(sigma * rng.standard_normal(estimate.size)), 1.0)
    return table.set_column(table.column_names.index("estimate"), "estimate", pa.array(noisy))
