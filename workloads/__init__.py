"""Job-stream sources: readers that turn workload traces into :class:`emulator.model.Job` lists.

For now, a Standard Workload Format reader (:func:`read_swf`) with GridSim's
``gridsim.util.Workload`` rules.
"""

from .swf import SkippedLine, SwfTrace, TraceError, read_swf

__all__ = ["SkippedLine", "SwfTrace", "TraceError", "read_swf"]
