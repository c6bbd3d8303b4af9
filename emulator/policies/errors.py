"""Policies' errors: of names and parameters (:class:`PolicyError`: the registry and the plug-in loader
both raise it; it is defined with the spec in :mod:`emulator.core.spec`, below the model, which carries
parsed specs), and of decisions that cannot be applied (:class:`DecisionError`)."""

from __future__ import annotations

from ..core.spec import PolicyError

__all__ = ["DecisionError", "PolicyError"]


class DecisionError(RuntimeError):
    """A policy decided what cannot be done (CPUs or licenses that are not free, a job that is not
    queued, a plan of another size than the job): a bug in the policy, named with the cluster, the
    job and the virtual time where its decision was applied, before any of it changed the cluster."""
