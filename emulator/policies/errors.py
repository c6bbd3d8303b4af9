"""The one error of policy names and parameters (its own module: the registry and the plug-in
loader both raise it, and the loader sits below the registry)."""

from __future__ import annotations


class PolicyError(ValueError):
    """A policy name or parameter that cannot be used."""
