"""Decompose ops: rewrite a few compound ops into the simpler ops a fuser and BatchMM see.

Before::

    graph(%b : Float(2, 4), %x : Float(2, 3), %w : Float(3, 4)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 4) = ember::addmm(%b, %x, %w, %one, %one)
      %z : Float(2, 4) = ember::relu(%y)
      return (%z)

After ``decompose_ops(g)``::

    graph(%b : Float(2, 4), %x : Float(2, 3), %w : Float(3, 4)):
      %one : int = prim::Constant[value=1]()
      %m : Float(2, 4) = ember::mm(%x, %w)
      %y : Float(2, 4) = ember::add(%m, %b, %one)
      %z : Float(2, 4) = ember::relu(%y)
      return (%z)

The rewrites (each fires only where the result keeps the op's dtype, shape and numbers):

- ``addmm(self, mat1, mat2, beta, alpha)`` -> ``add(mul(mm(mat1, mat2), alpha), self,
  alpha=beta)``, the ``mul`` dropped for ``alpha == 1`` and the ``add`` for ``beta == 0``
  (addmm ignores ``self`` then, NaN included). ``beta`` and ``alpha`` must be number
  constants; the three tensors must have one known dtype (addmm promotes them together, an
  ``add`` after the ``mm`` would not). Integer tensors need int scalars (the kernel truncates
  float ones), and float16/bfloat16 keep addmm: its kernel rounds once, the decomposition
  would round after the ``mm`` and again after the ``add``.
- ``linear(input, weight, bias)`` with a bias -> ``add(mm(input, t(weight)), bias)`` for a
  2-D input (so BatchMM can batch several linears reading one input), ``matmul`` for other
  ranks, with the same dtype conditions. Without a bias linear is left alone (as in
  PyTorch: there is nothing to fuse).
- ``batch_norm`` in evaluation (``training`` a False constant, running statistics given,
  ``eps`` a constant, input rank known and >= 2, statistics of the input's floating
  dtype) -> ``(input - mean) * rsqrt(var + eps) * weight + bias`` with the (C,) tensors
  reshaped to ``(1, C, 1, ...)``: the composite's own formula, so the numbers are the same.
- ``layer_norm`` (``normalized_shape`` and ``eps`` constants, a floating input dtype) ->
  ``mean``, ``sub``, ``mul``, ``mean``, ``add``, ``rsqrt``, ``mul`` (+ affine), again the
  composite's formula.

When: PyTorch decomposes addmm (alpha and beta equal to 1) and linear whenever they match,
not only where a pointwise op follows, because the pass after it, BatchMM, only looks at
``mm`` nodes, and the ``add`` then fuses with its pointwise users. ember does the same; on a
backend without a fuser the cost is one more pass over the (n, p) result. Nested blocks
are rewritten too; subgraph attributes are not entered. The new nodes keep the source
location and scope of the node they replace.

Reference: PyTorch's ``DecomposeOps`` (``torch/csrc/jit/passes/decompose_ops.cpp``).
"""
from __future__ import annotations

from typing import Optional

from ember.jit.ir.graph import (Block, Graph, IntType, ListType, Node, NoneType, TensorType,
                                Value, prim)
from ember.jit.passes.dead_code_elimination import destroy_if_dead

__all__ = ["decompose_ops"]

_LOW_FLOATS = ("float16", "bfloat16")


def decompose_ops(graph: Graph) -> None:
    """Rewrite, in place, the ops listed in the module docstring into simpler ones (nested
    blocks included) and destroy the constants the rewrites orphan. Returns None."""
    _run(graph.block)


def _run(block: Block) -> None:
    for n in list(block.nodes()):
        if n.destroyed:
            continue
        for b in n.blocks:
            _run(b)
        rule = _RULES.get(n.kind)
        if rule is None or len(n.outputs) != 1:
            continue
        with n.graph.insert_point_guard(n):
            new = rule(_Builder(n))
        if new is not None:
            name = n.output().debug_name
            n.output().replace_all_uses_with(new)
            destroy_if_dead(n)
            if n.destroyed and not name.isdigit():
                new.debug_name = name  # keep the traced name on the result


class _Builder:
    """Inserts nodes before ``node``, with its source location and scope."""

    def __init__(self, node: Node):
        self.node, self.graph = node, node.graph

    def op(self, kind: str, inputs, type: TensorType) -> Value:  # noqa: A002
        n = self.graph.create(kind, inputs)
        n.source_location, n.scope = self.node.source_location, self.node.scope
        n.output().type = type
        return self.graph.insert_node(n).output()

    def const(self, value, type=None) -> Value:  # noqa: A002
        return self.graph.insert_constant(value, type)


# -- the rules: each checks everything first, then builds and returns the new output ---------
def _addmm(b: _Builder) -> Optional[Value]:
    self_, m1, m2, beta, alpha = b.node.inputs
    bv, av = _number(beta), _number(alpha)
    dtype = _common_dtype(self_, m1, m2)
    if bv is None or av is None or not _ok_dtype(dtype):
        return None
    used = [s for s, trivial in ((av, av == 1), (bv, bv in (0, 1))) if not trivial]
    if not dtype.is_floating_point and any(type(s) is not int for s in used):
        return None  # the kernel truncates float scalars for integer tensors
    out = b.node.output().type
    y = b.op("ember::mm", [m1, m2], out)
    if av != 1:
        y = b.op("ember::mul", [y, alpha], out)
    if bv != 0:
        int_one = bv == 1 and type(bv) is float and not dtype.is_floating_point
        y = b.op("ember::add", [y, self_, b.const(1) if int_one else beta], out)
    return y


def _linear(b: _Builder) -> Optional[Value]:
    x, w, bias = b.node.inputs
    if not isinstance(bias.type, TensorType) or _rank(w) != 2:
        return None
    dtype = _common_dtype(x, w, bias)
    rank = _rank(x)
    if dtype is None or not (_ok_dtype(dtype) or (rank is not None and rank != 2)):
        return None  # the composite is one addmm for a 2-D input
    wt_sizes = tuple(reversed(w.type.sizes))
    wt = b.op("ember::t", [w], w.type.with_sizes(wt_sizes))
    out = b.node.output().type
    y = b.op("ember::mm" if rank == 2 else "ember::matmul", [x, wt], out)
    return b.op("ember::add", [y, bias, b.const(1)], out)


def _batch_norm(b: _Builder) -> Optional[Value]:
    x, mean, var, weight, bias, training, _momentum, eps = b.node.inputs
    rank, dtype = _rank(x), _dtype(x)
    if (_const(training) is not False or _number(eps) is None or rank is None
            or not _known_optionals(weight, bias)
            or rank < 2 or dtype is None or not dtype.is_floating_point
            or _dtype(mean) != dtype or _dtype(var) != dtype):
        return None
    out = b.node.output().type
    c = x.type.sizes[1]
    shape = [1, -1] + [1] * (rank - 2)
    stat = TensorType(dtype, x.type.device, sizes=(1, c) + (1,) * (rank - 2))
    size = b.const(shape)

    def stat_view(t: Value) -> Value:  # (C,) -> (1, C, 1, ...), as the composite does
        return b.op("ember::reshape", [t, size], stat.with_requires_grad(_requires_grad(t)))

    one = b.const(1)
    centered = b.op("ember::sub", [x, stat_view(mean), one], out)
    shifted = b.op("ember::add", [stat_view(var), eps, one], stat)
    y = b.op("ember::mul", [centered, b.op("ember::rsqrt", [shifted], stat)], out)
    return _affine(b, y, weight, bias, stat_view, one, out)


def _layer_norm(b: _Builder) -> Optional[Value]:
    x, normalized_shape, weight, bias, eps = b.node.inputs
    shape = _int_list(normalized_shape)
    dtype, rank = _dtype(x), _rank(x)
    if (not shape or _number(eps) is None
            or not _known_optionals(weight, bias)
            or dtype is None or not dtype.is_floating_point
            or (rank is not None and rank < len(shape))):
        return None
    out = b.node.output().type
    k = len(shape)
    stat = TensorType(dtype, x.type.device, sizes=None if rank is None else
                      tuple(x.type.sizes[:rank - k]) + (1,) * k)
    dims = b.const(list(range(-k, 0)), ListType(IntType()))
    keep, none, one = b.const(True), b.const(None), b.const(1)
    mean = b.op("ember::mean", [x, dims, keep, none], stat)
    centered = b.op("ember::sub", [x, mean, one], out)
    square = b.op("ember::mul", [centered, centered], out)
    var = b.op("ember::mean", [square, dims, keep, none], stat)
    shifted = b.op("ember::add", [var, eps, one], stat)
    y = b.op("ember::mul", [centered, b.op("ember::rsqrt", [shifted], stat)], out)
    return _affine(b, y, weight, bias, lambda t: t, one, out)


def _affine(b, y, weight, bias, view, one, out) -> Value:
    """``y * weight + bias`` for the optional per-feature tensors (the composites' order)."""
    if not isinstance(weight.type, NoneType):
        y = b.op("ember::mul", [y, view(weight)], out)
    if not isinstance(bias.type, NoneType):
        y = b.op("ember::add", [y, view(bias), one], out)
    return y


_RULES = {"ember::addmm": _addmm, "ember::linear": _linear,
          "ember::batch_norm": _batch_norm, "ember::layer_norm": _layer_norm}


# -- helpers ----------------------------------------------------------------------------------
def _const(v: Value):
    return v.to_ivalue() if v.is_constant else None


def _number(v: Value):
    """The value of an int or float constant (bools excluded), else None."""
    c = _const(v)
    return c if type(c) in (int, float) else None


def _int_list(v: Value) -> Optional[list]:
    """The ints of an ``int[]`` input: a list constant or a ListConstruct of int constants."""
    items = ([_const(i) for i in v.node.inputs] if v.node.kind == prim.ListConstruct
             else _const(v))
    ok = isinstance(items, (list, tuple)) and all(type(s) is int for s in items)
    return list(items) if ok else None


def _dtype(v: Value):
    return v.type.dtype if isinstance(v.type, TensorType) else None


def _rank(v: Value) -> Optional[int]:
    return v.type.rank if isinstance(v.type, TensorType) else None


def _requires_grad(v: Value) -> Optional[bool]:
    return v.type.requires_grad if isinstance(v.type, TensorType) else None


def _known_optionals(*values: Value) -> bool:
    """Whether each optional tensor is known to be a tensor or None (the rules branch)."""
    return all(isinstance(v.type, (TensorType, NoneType)) for v in values)


def _common_dtype(*values: Value):
    """The dtype all ``values`` share when it is known for each, else None."""
    dtypes = {_dtype(v) for v in values}
    return None if len(dtypes) != 1 or None in dtypes else dtypes.pop()


def _ok_dtype(dtype) -> bool:
    """A dtype whose matrix product rounds like the separate ops (see the docstring)."""
    return dtype is not None and dtype.name not in _LOW_FLOATS and dtype.name != "bool"


