"""What a run reads and writes: scenarios, run directories, traces, metrics.

``scenario`` validates a scenario file into a ``Scenario`` (``replay``
rebuilds one from a run directory); ``trace`` writes ``events.arrow`` and
``jobs.arrow`` through ``rundir`` (claims, atomic names, recovery);
``metrics`` summarizes a run's tables. Above the partitions' layers; the
trace formats themselves live in :mod:`workloads`.
"""
