"""The JIT's symbolic autodiff: ``differentiation`` (``differentiate(graph) ->
Gradient``), what it can differentiate (``differentiability``), backward formulas as
ops (``symbolic_formulas``), how its prims run (``autodiff_prims``, ``meta_group``)
and the runtime of ``prim::DifferentiableGraph`` (``differentiable_graph``).

``ember.jit.autodiff`` was one module before the sub-packages (issue 38): its names
(``from ember.jit.autodiff import differentiate``) still load from here, on first use
(PEP 562), out of :mod:`ember.jit.autodiff.differentiation`.

Reference: PyTorch's ``torch/csrc/jit/runtime/autodiff.cpp``.
"""
from .._moved import names_of

__getattr__ = names_of(__name__, "ember.jit.autodiff.differentiation")
