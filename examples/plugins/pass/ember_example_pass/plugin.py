"""Registers ``fold_idempotent`` with ember (entry point ``example_pass`` in group
``ember``)."""
from __future__ import annotations

from ember.plugins import hookimpl

from .fold_idempotent import fold_idempotent


@hookimpl
def ember_jit_passes():
    """``[("optimization", fold_idempotent)]``: it runs at the end of the optimization
    stage, before autodiff splits the graph, so forward and backward both see the fold."""
    return [("optimization", fold_idempotent)]
