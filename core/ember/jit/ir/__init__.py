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
import importlib

_HOME = "ember.jit.ir.graph"


def __getattr__(name):
    """The names of the old ``ember.jit.ir`` module, loaded on first use."""
    if name.startswith("__") and name != "__all__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(importlib.import_module(_HOME), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} "
                             f"(nor has {_HOME})") from None
