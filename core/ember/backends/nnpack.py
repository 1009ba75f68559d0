"""``ember.backends.nnpack``: whether NNPACK-style CPU convolution is installed and on.

Mirrors ``torch.backends.nnpack``. The algorithms themselves come from the
``ember-nnpack-compat`` plugin (``pip install -e plugins/nnpack_compat``), which registers
them through the convolution-algorithm hook; each reads ``enabled`` in its
``supports(params)``, so switching it takes effect on the next call::

    import ember.backends.nnpack as nnpack
    nnpack.is_available()          # True with the plugin installed
    with nnpack.flags(enabled=False):
        y = F.conv2d(x, w, padding=1)   # native im2col
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["enabled", "flags", "is_available", "set_flags"]

enabled = True
"""Switch: False makes every nnpack algorithm decline (``explain`` says so)."""


def is_available() -> bool:
    """True when a plugin registered a CPU convolution algorithm named ``nnpack_*``.

    Loads plugins on first use. Follows ``torch.backends.nnpack.is_available``.
    """
    from .convolution import algorithms
    return any(a.name.startswith("nnpack") for a in algorithms("cpu"))


def set_flags(_enabled: bool) -> tuple:
    """Set ``enabled``; returns the previous flags as a tuple ``(enabled,)``."""
    global enabled
    previous = (enabled,)
    enabled = bool(_enabled)
    return previous


@contextmanager
def flags(enabled: bool = False):
    """Context manager that sets ``enabled`` and restores it on exit (even on error)."""
    previous = set_flags(enabled)
    try:
        yield
    finally:
        set_flags(*previous)
