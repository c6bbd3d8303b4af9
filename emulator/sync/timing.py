"""Where a run's time went (``gridemu run --verbose``): rounds, work per round, each partition's share.

Wall clock, so it varies from run to run and never enters the trace.
"""

from __future__ import annotations

from ..core.messages import META
from .coordinator import RunStats

SHOWN = 8
"""Partitions listed by name, the busiest first; the rest are summed in one line."""


def format_timing(stats: RunStats, cluster_names: list[str]) -> str:
    """A few lines: rounds and calls, compute and barrier per round, then each partition's compute share."""
    per_round = 1e3 / max(stats.rounds, 1)
    free = f" ({stats.barrier_free} of them one host's call, no barrier)" if stats.barrier_free else ""
    lines = [
        f"{stats.rounds} rounds{free}, {stats.calls} partition calls, {stats.messages} messages; "
        f"start-up {stats.startup_seconds:.3f} s, shut-down {stats.shutdown_seconds:.3f} s",
        f"per round: compute {stats.compute_seconds * per_round:.3f} ms, "
        f"barrier {stats.barrier_seconds * per_round:.3f} ms ({stats.barrier_share:.0%} of round time)",
    ]
    if stats.throttled:
        lines.append(f"{stats.throttled} round(s) called only the laggards: the writer held too many rows")
    shares = _shares(stats.partition_seconds or {}, cluster_names)
    if shares:
        lines.append("compute by partition: " + ", ".join(f"{name} {share:.1%}" for name, share in shares))
    return "\n".join(lines)


def _shares(seconds: dict[int, float], cluster_names: list[str]) -> list[tuple[str, float]]:
    total = sum(seconds.values())
    if total <= 0:
        return []
    ranked = sorted(seconds.items(), key=lambda item: (-item[1], item[0]))
    named = [("meta" if pid == META else cluster_names[pid - 1], spent / total) for pid, spent in ranked]
    if len(named) <= SHOWN:
        return named
    rest = len(named) - SHOWN
    return [*named[:SHOWN], (f"{rest} others", sum(share for _, share in named[SHOWN:]))]
