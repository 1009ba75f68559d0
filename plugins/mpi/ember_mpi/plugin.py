"""Registers the ``mpi`` process-group backend (``ember_mpi.group.MpiBackend``) for
``ember.distributed``; importing mpi4py is left to ``init_process_group``."""
from __future__ import annotations

from ember.plugins import hookimpl

from .group import MpiBackend


@hookimpl
def ember_process_group_backends():
    """``[MpiBackend()]``: ``init_process_group("mpi")`` on ``MPI.COMM_WORLD``."""
    return [MpiBackend()]
