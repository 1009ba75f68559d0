"""The canonical text form of a graph (``str(graph)``), read back by ``ember.jit.ir.parser``.

::

    graph(%x : Float(2, 3),
          %c : bool):
      %2 : int = prim::Constant[value=1]()
      %3 : Float(2, 3) = prim::If(%c) # scope: features.0; loc: model.py:12
        block0():
          %4 : Float(2, 3) = ember::neg(%x)
          -> (%4)
        block1():
          -> (%x)
      %5 : Float(2, 3) = prim::FusionGroup_0(%3, %x)
      return (%5)
    with prim::FusionGroup_0 = graph(%0 : Float(2, 3),
          %1 : Float(2, 3)):
      %2 : Float(2, 3) = ember::mul(%0, %1)
      return (%2)

- A node is ``outputs = kind[attributes](inputs)``; a node without outputs prints as
  ``= prim::Print(%x)``. Nested blocks follow, indented, as ``blockN(params):`` ...
  ``-> (returns)``.
- Attributes print sorted by name as ``name=value``: ``1``, ``2.5``, ``True``, ``None``,
  ``"str"`` (JSON escapes), ``float32`` (a dtype), ``device("cuda:0")``, ``[1, 2]``,
  ``(1, 2)``, ``tensor([1.0, 2.0], dtype=float32)``, ``pyobj("mod.Fn")`` (a callable).
  Tensors of more than ``MAX_TENSOR_ELEMENTS`` elements are elided as
  ``<Tensor float32 (100, 100)>`` (such text cannot be parsed back).
- A graph-valued attribute prints as a label ``<node kind>_<n>`` (numbered through the
  whole text) and its graph in a ``with <label> = graph(...)`` section after the main
  graph; the attribute ``Subgraph`` is written in the node kind itself, as PyTorch does
  (``prim::FusionGroup_0(...)``).
- ``source_location`` and ``scope`` print as a trailing ``# scope: ...; loc: ...`` comment.

Reference: PyTorch's ``Graph::print`` / ``Node::print`` (``torch/csrc/jit/ir/ir.cpp``).
"""
from __future__ import annotations

import json
from typing import Any

from ember.jit.ir.attributes import python_name

__all__ = ["print_graph", "format_node", "format_attr_value", "MAX_TENSOR_ELEMENTS"]

MAX_TENSOR_ELEMENTS = 64


def print_graph(graph, source_info: bool = True) -> str:
    """The canonical text of ``graph``; ``source_info=False`` leaves out the comments."""
    return _Printer(source_info).graph(graph)


def format_node(node) -> str:
    """One node as its printed line, without indentation or nested blocks."""
    try:
        return _Printer(True).head(node)
    except Exception:  # noqa: BLE001 - used in error messages about broken graphs
        return f"<{node.kind} node>"


def format_attr_value(value: Any) -> str:
    """An attribute value as printed (a graph value prints as ``<Graph>``)."""
    return _Printer(True).attr_value(value, None)


class _Printer:
    def __init__(self, source_info: bool):
        self.source_info = source_info
        self.lines: list = []
        self.pending: list = []  # (label, graph) waiting for their ``with`` section
        self.counter = 0

    def graph(self, g) -> str:
        self.lines.append("graph(" + _decls(g.inputs, ",\n      ") + "):")
        self.body(g.block, 2, "return")
        while self.pending:
            label, sub = self.pending.pop(0)
            self.lines.append(f"with {label} = graph(" + _decls(sub.inputs, ",\n      ") + "):")
            self.body(sub.block, 2, "return")
        return "\n".join(self.lines) + "\n"

    def body(self, block, indent: int, ret: str) -> None:
        pad = " " * indent
        for n in block.nodes():
            self.lines.append(pad + self.head(n))
            for i, b in enumerate(n.blocks):
                self.lines.append(f"{pad}  block{i}(" + _decls(b.inputs, ", ") + "):")
                self.body(b, indent + 4, "->")
        self.lines.append(f"{pad}{ret} ({_names(block.outputs)})")

    def head(self, n) -> str:
        outs = _decls(n.outputs, ", ")
        kind, attrs = n.kind, n.attr_names
        if self.is_graph(n._attrs.get("Subgraph")):
            kind = self.label(n.kind, n._attrs["Subgraph"])
            attrs.remove("Subgraph")
        text = f"{outs} = " if outs else "= "
        text += kind
        if attrs:
            text += "[" + ", ".join(f"{a}={self.attr_value(n._attrs[a], n.kind)}"
                                    for a in attrs) + "]"
        text += f"({_names(n.inputs)})"
        if self.source_info and (n.scope or n.source_location):
            parts = ([f"scope: {n.scope}"] if n.scope else []) + (
                [f"loc: {n.source_location}"] if n.source_location else [])
            text += " # " + "; ".join(parts)
        return text

    def label(self, kind: str, graph) -> str:
        label = f"{kind}_{self.counter}"
        self.counter += 1
        self.pending.append((label, graph))
        return label

    @staticmethod
    def is_graph(value) -> bool:
        from ember.jit.ir.graph import Graph
        return isinstance(value, Graph)

    def attr_value(self, v: Any, kind) -> str:
        from ember.tensor import Tensor
        from ember.types import Device, ScalarType
        if v is None or isinstance(v, (bool, int)):
            return str(v)
        if isinstance(v, float):
            return repr(v)
        if isinstance(v, str):
            return json.dumps(v, ensure_ascii=False)
        if isinstance(v, ScalarType):
            return v.name
        if isinstance(v, Device):
            return f'device("{v}")'
        if isinstance(v, list):
            return "[" + ", ".join(self.attr_value(x, kind) for x in v) + "]"
        if isinstance(v, tuple):
            inner = ", ".join(self.attr_value(x, kind) for x in v)
            return f"({inner},)" if len(v) == 1 else f"({inner})"
        if isinstance(v, Tensor):
            return _tensor(v, self)
        if self.is_graph(v):
            return "<Graph>" if kind is None else self.label(kind, v)
        return f"pyobj({json.dumps(python_name(v))})"


def _tensor(t, printer: _Printer) -> str:
    shape = tuple(t.shape)
    if t.numel() > MAX_TENSOR_ELEMENTS:
        return f"<Tensor {t.dtype.name} {shape}>"
    text = f"tensor({printer.attr_value(t.tolist(), None)}, dtype={t.dtype.name}"
    if t.device.type != "cpu":
        text += f', device="{t.device}"'
    if t.numel() == 0:  # tolist() loses the shape of an empty tensor
        text += f", shape={printer.attr_value(shape, None)}"
    return text + ")"


def _decls(values, sep: str) -> str:
    return sep.join(f"%{v.debug_name} : {v.type}" for v in values)


def _names(values) -> str:
    return ", ".join(f"%{v.debug_name}" for v in values)
