"""Whether this thread is tracing: the one check every op wrapper makes.

Part of the bottom layer (``ember/_base``, no imports from ember): the generated op
wrappers, ``Tensor`` and the tracer all read it (``ember.jit.frontend.tracing_state`` re-exports
it). ``STATE.active`` counts the traces open in any
thread, so the wrappers' test ``if _tr.active and _tr.claim()`` is one attribute read when
nothing is traced; ``claim()`` then looks at this thread's stack of traces.

Reference: PyTorch's ``tracer::isTracing()`` / ``TracingState`` (``torch/csrc/jit/frontend/
tracer.h``).
"""
from __future__ import annotations

import threading

__all__ = ["STATE"]


class _TracingStates:
    """``active``: open traces in all threads. Per thread: ``stack`` (open TracingStates,
    innermost last), ``paused``, and ``skip`` (the next wrapper call is the one the tracer
    itself is making, so it must run rather than record again)."""

    def __init__(self):
        self.active = 0
        self.local = threading.local()
        self.lock = threading.Lock()

    def stack(self) -> list:
        """This thread's open traces, innermost last (created on first use)."""
        s = getattr(self.local, "stack", None)
        if s is None:
            s = self.local.stack = []
        return s

    def current(self):
        """This thread's innermost open trace, or None (also while paused)."""
        s = getattr(self.local, "stack", None)
        if not s or getattr(self.local, "paused", False):
            return None
        return s[-1]

    def claim(self) -> bool:
        """Called by a wrapper when some trace is open: True if this call is to be recorded."""
        local = self.local
        if getattr(local, "skip", False):
            local.skip = False
            return False
        return bool(getattr(local, "stack", None)) and not getattr(local, "paused", False)


STATE = _TracingStates()
