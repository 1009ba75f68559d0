"""Node attribute values: what a node may hold, and how attributes are copied.

An attribute is a Python value: None, bool, int, float, str, an ember dtype or Device, a
Tensor, a Graph (a subgraph), a Python callable (the function a ``prim::PythonOp`` calls),
or a list/tuple of those. A callable prints as ``pyobj("module.qualname")``; parsing that
text gives a :class:`PyObjectRef`, which names the object without holding it, so IR text
with Python ops still reads back (``PyObjectRef.resolve()`` imports the object).

Reference: PyTorch's attribute kinds (``torch/csrc/jit/ir/attributes.h``: i, f, s, t, g and
their lists) and ``ConcretePythonOp::pyobj``.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Hashable

__all__ = ["PyObjectRef", "check_attr_value", "copy_attr_value", "python_name"]


@dataclass(frozen=True)
class PyObjectRef:
    """The dotted name of a Python object, ``"package.module.Qualified.name"``."""

    name: str

    def resolve(self) -> Any:
        """Import the object. Raises ImportError/AttributeError if it cannot be found."""
        parts = self.name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ImportError:
                continue
            for attr in parts[i:]:
                obj = getattr(obj, attr)
            return obj
        raise ImportError(f"cannot import {self.name!r}: no importable module prefix")


def python_name(obj: Any) -> str:
    """The dotted name a callable prints as (``module.qualname``)."""
    if isinstance(obj, PyObjectRef):
        return obj.name
    module = getattr(obj, "__module__", None) or "<unknown>"
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return f"{module}.{qualname}"


def check_attr_value(kind: str, name: str, value: Any) -> None:
    """Raise TypeError unless ``value`` is an allowed attribute value (module docstring)."""
    from ember.jit.ir.graph import Graph, Node
    from ember.tensor import Tensor
    from ember.types import Device, ScalarType
    from ember.random import Generator
    if isinstance(value, Node):  # callable only for the deprecated ``value.node()``
        raise TypeError(f"{kind}: attribute {name!r} cannot hold a Node ({value.kind}); "
                        f"hold a Graph or a constant instead")
    # slices and generators come from traced indexing and random ops
    if value is None or value is Ellipsis or isinstance(
            value, (bool, int, float, str, ScalarType, Device, Tensor, Graph, PyObjectRef, slice,
                    Generator)) or callable(value):
        return
    if isinstance(value, (list, tuple)):
        for v in value:
            check_attr_value(kind, name, v)
        return
    raise TypeError(f"{kind}: attribute {name!r} cannot hold {type(value).__name__} "
                    f"({value!r}); allowed: None, bool, int, float, str, dtype, Device, Tensor, "
                    f"Graph, a callable, and lists/tuples of them")


def copy_attr_value(value: Any) -> Any:
    """The copy a cloned node gets: subgraphs deeply, lists and tuples rebuilt; tensors and
    callables shared (attributes are never mutated in place)."""
    from ember.jit.ir.graph import Graph
    if isinstance(value, Graph):
        return value.copy()
    if isinstance(value, (list, tuple)):
        return type(value)(copy_attr_value(v) for v in value)
    return value


def attrs_key(node) -> Hashable:
    """A key equal for two nodes exactly when their attributes are interchangeable."""
    return tuple((name, value_key(node.attr(name))) for name in node.attr_names)


def value_key(value: Any) -> Hashable:
    """A hashable key for an attribute value that keeps apart what ``==`` would merge:
    ``1``/``1.0``/``True``, ``0.0``/``-0.0``, and tensors by their bits (``==`` on tensors
    is elementwise). Graphs and callables compare by identity.
    """
    from ember.tensor import Tensor
    if isinstance(value, float):
        return (float, repr(value))  # repr keeps -0.0 apart and makes every nan equal
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(value_key(v) for v in value))
    if isinstance(value, Tensor):
        data = value.detach().numpy(force=True)
        return (Tensor, value.dtype, str(value.device), tuple(value.shape), data.tobytes())
    try:
        hash(value)
    except TypeError:
        return (type(value), id(value))
    return (type(value), value)
