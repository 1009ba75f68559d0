"""Peephole: local algebraic identities that make a node equal to one of its inputs.

Before::

    graph(%x : Float(2, 3)):
      %one : int = prim::Constant[value=1]()
      %zero : int = prim::Constant[value=0]()
      %a : Float(2, 3) = ember::mul(%x, %one)
      %b : Float(2, 3) = ember::add(%a, %zero, %one)
      %t1 : Float(3, 2) = ember::t(%b)
      %t2 : Float(2, 3) = ember::t(%t1)
      %c1 : Float(2, 3) = ember::contiguous(%t2)
      %c2 : Float(2, 3) = ember::contiguous(%c1)
      return (%c2)

After ``peephole(g)`` (the rewritten nodes and the constants they orphaned are gone)::

    graph(%x : Float(2, 3)):
      %c1 : Float(2, 3) = ember::contiguous(%x)
      return (%c1)

The identities, each applied only where it cannot change a result's dtype, shape or value:

- ``x * 1``, ``1 * x``, ``x / 1``, ``x + 0``, ``0 + x`` (alpha 1), ``x + 0 * alpha``,
  ``x - 0 * alpha`` -> ``x``, for a Python-number constant (not a bool) and a tensor ``x``
  whose dtype is known, when that dtype is also the result dtype (a float constant would
  promote an int tensor, an int one a bool tensor, and true division an int tensor). ``/``
  needs ``rounding_mode=None`` on floats, or ``'trunc'``/``'floor'`` by an int 1 on ints.
  The alpha of ``+ 0``/``- 0`` must be a finite number (``inf * 0`` is NaN), and an int
  when ``x`` is integral (a float alpha raises there). ``x + 0`` turns ``-0.0`` into
  ``0.0``; like PyTorch we accept that.
- ``x.expand(sizes)`` -> ``x`` when each entry is -1 or ``x``'s known size there.
- ``x.view(sizes)`` / ``x.reshape(sizes)`` -> ``x`` when ``x``'s sizes are all known and the
  list equals them (one -1 is allowed when the other sizes are not 0).
- ``x.type_as(y)`` -> ``x`` when both dtypes are known and equal (the op returns ``x``).
- ``x.contiguous().contiguous()`` -> ``x.contiguous()``.
- ``x.t().t()`` -> ``x``, unless ``x`` is known to have more than 2 dims (``t`` would raise);
  as in PyTorch an unknown rank is taken as valid, since a traced graph already ran.
- ``a.mm(b).t()`` -> ``b.t().mm(a.t())`` when nothing else reads the product, with
  ``x.t().t()`` folded to ``x`` on the way. Not an identity of values but of layouts: the
  result is a fresh row-major matrix instead of a transposed view, and the transposes of
  ``a`` and ``b`` are views the matrix product reads as they are. Backward graphs make
  this pattern (a weight's gradient ``t(mm(t(x), g))`` from ``mm``'s and ``t``'s
  formulas); it becomes ``mm(t(g), x)``, one op fewer, and a gradient AccumulateGrad can
  keep without copying it.

A rewrite never fires when a known annotation on the node's output contradicts ``x``'s
type. Arithmetic, ``expand`` and transposed-product rewrites change aliasing (``x * 1`` is
a new tensor, an expanded view is read-only, ``mm(b.t(), a.t())`` is no view of the
product), so they are skipped in a graph with in-place ops. Nested blocks (``prim::If``,
``prim::Loop``) are rewritten too; subgraph attributes are not.

Reference: PyTorch's ``PeepholeOptimize`` (``torch/csrc/jit/passes/peephole.cpp``).
"""
from __future__ import annotations

import math
from typing import Optional

from ember.jit.ir.graph import Block, Graph, IntType, Node, TensorType, Value, prim
from ember.jit.ir.kinds import is_inplace_kind
from ember.jit.passes.dead_code_elimination import destroy_if_dead

__all__ = ["peephole"]

_ARITH = frozenset({"ember::mul", "ember::div", "ember::true_divide", "ember::add",
                    "ember::sub"})


def peephole(graph: Graph) -> None:
    """Apply the identities of the module docstring to ``graph`` in place (nested blocks
    included) and destroy the nodes the rewrites leave unused. Returns None."""
    mutates = any(is_inplace_kind(n.kind) for n in graph.all_nodes())
    _run(graph.block, allow_alias_change=not mutates)


def _run(block: Block, allow_alias_change: bool) -> None:
    for n in list(block.nodes()):
        if n.destroyed:
            continue
        for b in n.blocks:
            _run(b, allow_alias_change)
        rule = _RULES.get(n.kind)
        new = rule(n, allow_alias_change) if rule is not None else None
        if new is not None:
            n.output().replace_all_uses_with(new)
            destroy_if_dead(n)


# -- the rules: each returns the value that replaces the node's output, or None ---------------
def _arith(n: Node, alias_change_ok: bool) -> Optional[Value]:
    if not alias_change_ok:  # x * 1 is a new tensor, x is not
        return None
    ins = n.inputs
    if n.kind == "ember::mul":
        for x, c in ((ins[0], ins[1]), (ins[1], ins[0])):
            if _number(c) == 1 and _keeps_dtype(x, c, n):
                return x
    elif n.kind in ("ember::div", "ember::true_divide"):
        x, c = ins[0], ins[1]
        mode = _const(ins[2], "?") if len(ins) > 2 else None
        dtype = _tensor_dtype(x)
        if _number(c) != 1 or dtype is None or not _agrees(x, n):
            return None
        if mode is None:
            return x if dtype.is_floating_point else None
        if mode in ("trunc", "floor"):  # keeps integral dtypes; floor(1.5 / 1) is not 1.5
            return x if _is_integral(dtype) and type(c.to_ivalue()) is int else None
    else:  # add / sub: self + alpha * other
        x, c, alpha = ins
        if _number(c) == 0 and _keeps_dtype(x, c, n) and _alpha_ok(alpha, x):
            return x
        if (n.kind == "ember::add" and _number(ins[0]) == 0 and _number(alpha) == 1
                and _keeps_dtype(ins[1], ins[0], n)):
            return ins[1]
    return None


def _expand(n: Node, alias_change_ok: bool) -> Optional[Value]:
    if not alias_change_ok:  # an expanded view is read-only, x is not
        return None
    x = n.input(0)
    sizes = _int_list(n.input(1))
    t = x.type
    if (sizes is None or not isinstance(t, TensorType) or t.sizes is None
            or len(sizes) != len(t.sizes) or not _agrees(x, n)):
        return None
    if all(s == -1 or (k is not None and s == k) for s, k in zip(sizes, t.sizes)):
        return x
    return None


def _view(n: Node, _alias_change_ok: bool) -> Optional[Value]:
    x = n.input(0)
    sizes = _int_list(n.input(1))
    have = x.type.concrete_sizes() if isinstance(x.type, TensorType) else None
    if sizes is None or have is None or len(sizes) != len(have) or not _agrees(x, n):
        return None
    if sizes.count(-1) > 1 or any(s != -1 and s != k for s, k in zip(sizes, have)):
        return None
    if -1 in sizes and math.prod(s for s in sizes if s != -1) == 0:
        return None  # -1 next to a 0 size cannot be inferred: the op raises
    return x


def _type_as(n: Node, _alias_change_ok: bool) -> Optional[Value]:
    x, y = n.inputs
    dx, dy = _tensor_dtype(x), _tensor_dtype(y)
    return x if dx is not None and dx == dy and _agrees(x, n) else None


def _contiguous(n: Node, _alias_change_ok: bool) -> Optional[Value]:
    inner = n.input(0)
    return inner if inner.node.kind == "ember::contiguous" else None


def _t(n: Node, alias_change_ok: bool) -> Optional[Value]:
    inner = n.input(0).node
    if inner.kind == "ember::mm":  # a fresh product for a transposed view of one
        return _transposed_product(n) if alias_change_ok else None
    if inner.kind != "ember::t":
        return None
    x = inner.input(0)
    rank = x.type.rank if isinstance(x.type, TensorType) else None
    return x if (rank is None or rank <= 2) and _agrees(x, n) else None


def _transposed_product(n: Node) -> Optional[Value]:
    product = n.input(0)
    if len(product.uses) != 1 or not isinstance(n.output().type, TensorType):
        return None
    a, b = product.node.inputs
    graph = n.graph
    with graph.insert_point_guard(n):
        mm = graph.insert_node(graph.create("ember::mm", [_transposed(b), _transposed(a)]))
    mm.output().type = n.output().type
    return mm.output()


def _transposed(v: Value) -> Value:
    """``v.t()`` inserted at the insert point; ``x`` itself when ``v`` is ``x.t()`` (an
    input of ``mm`` is 2-D, so ``x`` is too)."""
    if v.node.kind == "ember::t":
        return v.node.input(0)
    t = v.type
    if isinstance(t, TensorType) and t.sizes is not None:
        t = t.with_sizes(tuple(reversed(t.sizes)))
    node = v.graph.insert_node(v.graph.create("ember::t", [v]))
    node.output().type = t
    return node.output()


# kind -> rule(node, alias_change_ok) -> the value replacing the node's output, or None;
# alias_change_ok is False in a graph with in-place ops, where a rule that changes
# aliasing (a new tensor for a view, or the reverse) must not fire
_RULES = {"ember::view": _view, "ember::reshape": _view, "ember::type_as": _type_as,
          "ember::contiguous": _contiguous, "ember::t": _t, "ember::expand": _expand,
          **{kind: _arith for kind in _ARITH}}


# -- helpers ----------------------------------------------------------------------------------
def _const(v: Value, default=None):
    return v.to_ivalue() if v.is_constant else default


def _number(v: Value):
    """The value of an int or float constant (bools excluded), else None."""
    c = _const(v)
    return c if type(c) in (int, float) else None


def _int_list(v: Value) -> Optional[list]:
    """The ints of an ``int[]`` input: a list constant or a ListConstruct of int constants."""
    if v.is_constant:
        c = v.to_ivalue()
        ok = isinstance(c, (list, tuple)) and all(type(s) is int for s in c)
        return list(c) if ok else None
    if v.node.kind == prim.ListConstruct:
        items = [_const(i) for i in v.node.inputs]
        return items if all(type(s) is int for s in items) else None
    return None


def _tensor_dtype(v: Value):
    return v.type.dtype if isinstance(v.type, TensorType) else None


def _is_integral(dtype) -> bool:
    return not dtype.is_floating_point and dtype.name != "bool"


def _agrees(x: Value, n: Node) -> bool:
    """Whether no known property of ``n``'s output contradicts the type of ``x``."""
    a, b = x.type, n.output().type
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        return False
    if a.dtype is not None and b.dtype is not None and a.dtype != b.dtype:
        return False
    if a.rank is not None and b.rank is not None:
        if a.rank != b.rank:
            return False
        if any(p is not None and q is not None and p != q for p, q in zip(a.sizes, b.sizes)):
            return False
    return not (a.device is not None and b.device is not None and a.device != b.device)


def _keeps_dtype(x: Value, c: Value, n: Node) -> bool:
    """Whether ``x (op) c`` for the number constant ``c`` has ``x``'s dtype and shape."""
    dtype = _tensor_dtype(x)
    if dtype is None or not _agrees(x, n):
        return False
    if dtype.is_floating_point:
        return True
    return _is_integral(dtype) and type(c.to_ivalue()) is int


def _alpha_ok(alpha: Value, x: Value) -> bool:
    """Whether ``alpha * 0`` is 0 and the op accepts ``alpha`` for ``x``'s dtype."""
    a = _number(alpha)
    if a is None:  # not a constant: an int is finite and fits every non-bool dtype
        return isinstance(alpha.type, IntType)
    return math.isfinite(a) and (type(a) is int or _tensor_dtype(x).is_floating_point)


