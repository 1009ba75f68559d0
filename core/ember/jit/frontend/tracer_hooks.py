"""The tracer's part of ``Tensor`` and of the hand-written ops below the JIT.

``Tensor.to`` / ``detach`` / ``item``, ``shape`` and ``size()``, indexing, the factories,
the in-place view ops and custom autograd Functions record into an open trace, but they
sit below the JIT. They call the tracer through ``ember._base.hooks.TRACER``; the
composition root (``ember/_build.py``) hands that table ``load``, which imports the
tracer's module on a hook's first read. This module imports nothing, so ``import ember``
does not load the tracer (it loads with the first trace, as before).
"""
from __future__ import annotations

import importlib

__all__ = ["HOOKS", "load"]

#: hook name -> (module of ember.jit, function) that supplies it
HOOKS = {
    "record_python": ("tracer", "record_python"),
    "record_python_op": ("tracer", "record_python_op"),
    "warn_python_value": ("tracer", "warn_python_value"),
    "pause": ("tracer", "pause"),
    "record_factory": ("traced_factories", "record_factory"),
    "sym_shape": ("symbolic_sizes", "sym_shape"),
    "sym_size": ("symbolic_sizes", "sym_size"),
    "sym_numel": ("symbolic_sizes", "sym_numel"),
    "has_symbolic": ("symbolic_sizes", "has_symbolic"),
    "symbolic_getitem": ("symbolic_sizes", "symbolic_getitem"),
    "guarded_concrete": ("symbolic_sizes", "guarded_concrete"),
}


def load(name: str):
    """The tracer's function for hook ``name`` (its module imported on first use).

    Raises KeyError for a name the tracer does not supply."""
    module, fn = HOOKS[name]
    return getattr(importlib.import_module(f"{__package__}.{module}"), fn)
