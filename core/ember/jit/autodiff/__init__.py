"""The JIT's symbolic autodiff: ``differentiation`` (``differentiate(graph) ->
Gradient``), what it can differentiate (``differentiability``), backward formulas as
ops (``symbolic_formulas``), how its prims run (``autodiff_prims``, ``meta_group``)
and the runtime of ``prim::DifferentiableGraph`` (``differentiable_graph``).

``ember.jit.autodiff`` was one module before the sub-packages (issue 38): its names
(``from ember.jit.autodiff import differentiate``) still load from here, on first use
(PEP 562), out of :mod:`ember.jit.autodiff.differentiation`.

Reference: PyTorch's ``torch/csrc/jit/runtime/autodiff.cpp``.
"""
import importlib

_HOME = "ember.jit.autodiff.differentiation"


def __getattr__(name):
    """The names of the old ``ember.jit.autodiff`` module, loaded on first use."""
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(_HOME), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} "
                             f"(nor has {_HOME})") from None
