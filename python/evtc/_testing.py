"""Instrumentation for evtc's own tests, not part of the API: counts of branch reads."""

from __future__ import annotations

from . import _lib


def branch_reads() -> dict[str, int]:
    """Branch reads in this process since :func:`reset_branch_reads`, by branch name (how tests
    prove that a computation read only the branches it needed)."""
    return dict(_lib.branch_reads())


def reset_branch_reads() -> None:
    """Sets every count of :func:`branch_reads` back to zero."""
    _lib.reset_branch_reads()
