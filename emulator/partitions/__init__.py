"""The partitions: a cluster (its event loop and components) and the meta-scheduler.

``ClusterPartition`` (``cluster``) applies a cluster's events and runs its
local policy; its components act on its state through declared interfaces:
``faults`` (failures, outages, kills at the estimate) and ``reporting``
(status to the meta-scheduler); ``event_kinds`` orders its events.
``MetaPartition`` (``meta``) submits and dispatches. Above the policies and
:mod:`emulator.sync`, whose coordinator runs them.
"""
