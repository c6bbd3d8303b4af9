"""The model, at the bottom of the layers: what a grid, a job and a message are.

Platform, clusters, machines and links (``model``), policy specs (``spec``),
a cluster's CPUs, PEs and license copies (``resources``), a started job
(``runs``), preemption kinds, the messages partitions exchange, the scenario
key readers (``config``) and the stress models' keys and processes
(``failures``, ``links``), and the numerical helpers the policies share
(``queue_columns``, ``pe_profile``, ``composition``, ``genetic``). Imports
nothing from the layers above.
"""
