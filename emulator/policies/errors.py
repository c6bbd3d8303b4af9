"""The one error of policy names and parameters (the registry and the plug-in loader both raise it;
it is defined with the spec in :mod:`emulator.core.spec`, below the model, which carries parsed specs)."""

from __future__ import annotations

from ..core.spec import PolicyError

__all__ = ["PolicyError"]
