"""Remove expands: drop ``ember::expand`` nodes whose result only feeds ops that broadcast.

Before (``%b`` is expanded to ``(2, 3)`` only to be added to a ``(2, 3)`` tensor, which
broadcasts ``(3,)`` by itself)::

    graph(%a : Float(2, 3), %b : Float(3)):
      %s : int[] = prim::Constant[value=[2, 3]]()
      %one : int = prim::Constant[value=1]()
      %e : Float(2, 3) = ember::expand(%b, %s)
      %y : Float(2, 3) = ember::add(%a, %e, %one)
      %z : Float(2, 3) = ember::mul(%e, %y)
      return (%z)

After ``remove_expands(g)``::

    graph(%a : Float(2, 3), %b : Float(3)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 3) = ember::add(%a, %b, %one)
      %z : Float(2, 3) = ember::mul(%b, %y)
      return (%z)

When it is valid: a pointwise op broadcasts its tensor operands, so reading ``x`` or
``x.expand(S)`` gives the same values wherever the result has the same shape. So an expand
is dropped when every use of its output is a broadcasting operand of an op in
``BROADCASTING_OPS`` (never a block return or graph output, whose shape would change) and,
for each such use, the broadcast of the other operands' shapes with ``x``'s shape equals
their broadcast with ``S``. Without that check ``(3,).expand(2, 3) + (3,)`` would become
``(3,)``. Hence every size involved must be known (Python numbers count as ``()``).
``x`` must have at least one dim unless ``S`` has none: type promotion ranks a 0-dim tensor
below a dimensioned one (``float64 0-dim + float32 (3,)`` is float32, but after
``expand(3)`` it is float64), so dropping that expand could change the dtype.

Like PyTorch, which runs its RemoveExpands after fusion to drop the expands the tracer
recorded for broadcasting, this saves the expanded views and lets a fuser see the
original shapes. Nested blocks are handled; subgraph attributes are not entered.

Reference: PyTorch's ``RemoveExpands`` (``torch/csrc/jit/passes/remove_expands.cpp``).
"""
from __future__ import annotations

from typing import Optional

from ember.jit.ir.graph import (Block, FloatType, Graph, IntType, Node, TensorType, Value,
                                prim)
from ember.jit.passes.dead_code_elimination import destroy_if_dead

__all__ = ["remove_expands", "BROADCASTING_OPS"]

# op kind -> the input positions that broadcast with each other (the result's shape is their
# broadcast); other inputs (alpha, rounding_mode) are not tensors.
_BINARY = ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
           "pow", "atan2", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge",
           "logical_and", "logical_or", "logical_xor")
BROADCASTING_OPS = {**{f"ember::{op}": (0, 1) for op in _BINARY},
                    "ember::where": (0, 1, 2)}


def remove_expands(graph: Graph) -> None:
    """Drop, in place, each ``ember::expand`` whose uses all broadcast it anyway (see the
    module docstring for the exact condition); nested blocks included. Returns None."""
    _run(graph.block)


def _run(block: Block) -> None:
    for n in list(block.nodes()):
        if n.destroyed:
            continue
        for b in n.blocks:
            _run(b)
        if n.kind == "ember::expand" and _removable(n):
            n.output().replace_all_uses_with(n.input(0))
            destroy_if_dead(n)


def _removable(n: Node) -> bool:
    x, e = n.input(0), n.output()
    x_shape = _shape(x)
    e_shape = _shape(e) or _expanded(x_shape, n.input(1))
    if x_shape is None or e_shape is None or not e.has_uses:
        return False
    if len(x_shape) == 0 and len(e_shape) > 0:
        return False  # a 0-dim tensor promotes differently from a dimensioned one
    for use in e.uses:
        positions = BROADCASTING_OPS.get(use.user.kind)
        if positions is None or use.offset not in positions:
            return False
        operands = [use.user.inputs[i] for i in positions if i < len(use.user.inputs)]
        others = [_shape(v) for v in operands if v is not e]
        if any(s is None for s in others):
            return False
        count = sum(v is e for v in operands)
        before = _broadcast([e_shape] * count + others)
        if before is None or _broadcast([x_shape] * count + others) != before:
            return False
    return True


def _shape(v: Value) -> Optional[tuple]:
    """The concrete shape of a tensor operand, ``()`` for a number, else None (unknown)."""
    if isinstance(v.type, TensorType):
        return v.type.concrete_sizes()
    return () if isinstance(v.type, (IntType, FloatType)) else None


def _expanded(x_shape: Optional[tuple], sizes: Value) -> Optional[tuple]:
    """The result shape of ``expand`` from its ``int[]`` argument (-1 keeps a dim)."""
    if x_shape is None:
        return None
    node = sizes.node
    if node.kind == prim.Constant:
        items = node.attr("value")
    elif node.kind == prim.ListConstruct:
        items = [v.to_ivalue() if v.is_constant else None for v in node.inputs]
    else:
        return None
    if not isinstance(items, (list, tuple)) or any(type(s) is not int for s in items):
        return None
    lead = len(items) - len(x_shape)
    if lead < 0:
        return None
    shape = tuple(x_shape[i - lead] if s == -1 and i >= lead else s
                  for i, s in enumerate(items))
    return shape if all(s >= 0 for s in shape) else None


def _broadcast(shapes: list) -> Optional[tuple]:
    """NumPy's broadcast of ``shapes``, or None when they do not broadcast."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(rank):
        dims = {s[i - rank + len(s)] for s in shapes if i - rank + len(s) >= 0} - {1}
        if len(dims) > 1:
            return None
        out.append(dims.pop() if dims else 1)
    return tuple(out)
