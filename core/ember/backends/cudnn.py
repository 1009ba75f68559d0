"""``ember.backends.cudnn``: whether cuDNN convolution is installed, and its switches.

Mirrors ``torch.backends.cudnn``. The algorithm itself comes from the ``ember-cuda``
plugin (``pip install "ember-cuda[cuda13,cudnn]"``), registered through the
convolution-algorithm hook under the name ``cudnn``. ``ember.nn.functional.conv*`` pass
the three switches to ``_convolution`` on every call (``flags_tuple``), so changes take
effect on the next call::

    import ember.backends.cudnn as cudnn
    cudnn.is_available()                 # True with ember-cuda, a GPU and cuDNN
    cudnn.benchmark = True               # time cuDNN's engines once per configuration
    with cudnn.flags(enabled=False):
        y = F.conv2d(x, w)               # the native algorithm (im2col on CuPy)

* ``enabled``: False makes the cudnn algorithm decline (``explain`` says so).
* ``benchmark``: pick the fastest engine by timing the candidates on the first call of
  each configuration (PyTorch's ``cudnn.benchmark``); otherwise cuDNN's heuristics pick.
* ``deterministic``: use only engines whose results do not depend on scheduling (no
  atomics in the backward passes), like ``torch.backends.cudnn.deterministic``.
* ``allow_tf32``: let float32 convolutions use TensorFloat-32 Tensor Core engines (inputs
  rounded to a 10-bit mantissa, about 1e-3 relative; accumulation in float32). True by
  default, as ``torch.backends.cudnn.allow_tf32``; set it False for float32-exact results.
"""
from __future__ import annotations

from contextlib import contextmanager

__all__ = ["enabled", "benchmark", "deterministic", "allow_tf32", "flags", "set_flags",
           "flags_tuple", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False
allow_tf32 = True


def flags_tuple() -> tuple:
    """``(benchmark, deterministic, enabled)`` in ``_convolution``'s argument order."""
    return benchmark, deterministic, enabled


def _algorithm():
    from .convolution import algorithms
    return next((a for a in algorithms("cuda") if a.name == "cudnn"), None)


def is_available() -> bool:
    """True when a plugin registered the ``cudnn`` convolution algorithm (ember-cuda with
    a GPU and the cuDNN Frontend package). Loads plugins on first use."""
    return _algorithm() is not None


def version():
    """cuDNN's version as an int (``90800`` for 9.8.0), or None when not available."""
    algo = _algorithm()
    return getattr(algo, "version", lambda: None)() if algo is not None else None


def set_flags(_enabled=None, _benchmark=None, _deterministic=None, _allow_tf32=None) -> tuple:
    """Set the given switches (None keeps one); returns the previous
    ``(enabled, benchmark, deterministic, allow_tf32)``."""
    global enabled, benchmark, deterministic, allow_tf32
    previous = (enabled, benchmark, deterministic, allow_tf32)
    if _enabled is not None:
        enabled = bool(_enabled)
    if _benchmark is not None:
        benchmark = bool(_benchmark)
    if _deterministic is not None:
        deterministic = bool(_deterministic)
    if _allow_tf32 is not None:
        allow_tf32 = bool(_allow_tf32)
    return previous


@contextmanager
def flags(enabled=None, benchmark=None, deterministic=None, allow_tf32=None):
    """Context manager that sets the switches and restores them on exit (also on error),
    like ``torch.backends.cudnn.flags``."""
    previous = set_flags(enabled, benchmark, deterministic, allow_tf32)
    try:
        yield
    finally:
        set_flags(*previous)
