"""A cluster's state and what may read or act on it, below the policies.

``ClusterState`` (queue, running jobs, resources, priorities, preempted jobs),
the read-only views a policy gets (``views``, ``meta_view``), placement
(first fit, reservations), the execution models that decide when runs end
(``execution``, ``timeshared``) and the backlog a cluster reports. Imports
only :mod:`emulator.core`.
"""
