"""Ray transport for the partitions (the multi-process backend).

Nothing here knows scheduling: actors host partitions and the coordinator in
:mod:`emulator.coordinator` drives them through a transport. The Ray transport
itself is not built yet; ``gridemu run`` offers the in-process backend only.
"""

__all__: list[str] = []
