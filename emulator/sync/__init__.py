"""Synchronization: the conservative coordinator, safe horizons, and the row merge.

``coordinator`` drives partitions through rounds to their safe horizons
(``horizons``: earliest output times over the link graph; ``frontier``: each
partition's standing); ``merge`` orders rows by (time, partition, sequence)
once no partition can still produce an earlier one; ``timing`` reports where
a run's time went. Knows partitions only by their protocol: imports only
:mod:`emulator.core`.
"""
