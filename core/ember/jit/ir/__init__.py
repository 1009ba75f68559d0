"""The JIT's graph IR: ``Graph`` -> ``Block`` -> ``Node`` -> ``Value`` (``graph``,
``block``, ``node``, ``value``), value types (``ir_types``), node attributes and kinds
(``attributes``, ``kinds``), the text form (``printer``, ``parser``), ``Graph.lint``
(``lint``) and the old spellings of the API (``_compat``). It imports nothing else of
the JIT.

``ember.jit.ir`` was one module before the sub-packages (issue 38): its names
(``from ember.jit.ir import Graph, TensorType``) still load from here, on first use
(PEP 562), out of :mod:`ember.jit.ir.graph`.

Reference: PyTorch's ``torch/csrc/jit/ir/``.
"""
from .._moved import names_of

__getattr__ = names_of(__name__, "ember.jit.ir.graph")
