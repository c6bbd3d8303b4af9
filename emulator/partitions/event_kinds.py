"""The kinds of a cluster partition's events, as their priorities at equal times.

Completions and internal events come before arrivals (GridSim's order);
``PLAN_EVENT`` marks a planning time of a time-driven policy (``period``),
after everything else. Faults (:mod:`emulator.partitions.faults`) sit between: a job
killed at its estimate after the completions, then repairs and ends of
outages before failures and outages (back-to-back windows), all before
arrivals. Stress markers (:mod:`emulator.core.links`: a status report due, a
link change) sort after every other event of their time, so a time whose
first event is one has nothing else: it gets no scheduling pass (a report or
a link change frees nothing), only a report.
"""

FINISH_EVENT, TICK_EVENT, KILL_EVENT, REPAIR_EVENT, UP_EVENT, FAIL_EVENT, DOWN_EVENT = range(7)
ARRIVE_EVENT, SUBMIT_EVENT, PLAN_EVENT = range(7, 10)
REPORT_DUE_EVENT, LINK_CHANGE_EVENT = 90, 91
