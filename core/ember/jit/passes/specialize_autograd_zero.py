"""Specialize AutogradZero: use which incoming gradients are undefined to simplify ``df``.

A backward graph takes one gradient per forward output, and any of them may be undefined
(None: that output did not reach the loss). The executor keys plans by ArgumentSpec, so
in a plan each gradient input is known to be defined (a ``Tensor`` type) or undefined
(typed ``NoneType``); this pass propagates that through the autograd prims
(:mod:`ember.jit.runtime.autograd_prims`). An input that may be either must be typed ``Tensor?``
(nothing is then assumed about it).

Before (``%gb`` is undefined; ``%x`` and ``%y`` are saved forward values)::

    graph(%ga : Float(2, 3),
          %gb : NoneType,
          %x : Float(2, 3),
          %y : Float(2, 3)):
      %gx : Tensor = prim::GradOf[name="ember::neg"](%ga)
        block0():
          %n : Float(2, 3) = ember::neg(%ga)
          -> (%n)
      %gy : Tensor = prim::GradOf[name="ember::exp"](%gb)
        block0():
          %e : Float(2, 3) = ember::mul(%gb, %y)
          -> (%e)
      %s : Tensor = prim::AutogradAdd(%gx, %gy)
      %any : bool = prim::AutogradAnyNonZero(%gb, %ga)
      return (%s, %gy, %any)

After ``specialize_autograd_zero(g)``::

    graph(%ga : Float(2, 3),
          %gb : NoneType,
          %x : Float(2, 3),
          %y : Float(2, 3)):
      %n : Float(2, 3) = ember::neg(%ga)
      %0 : Tensor = prim::AutogradZero()
      %1 : bool = prim::Constant[value=True]()
      return (%n, %0, %1)

What each value is known to be: *zero* (undefined) for a ``NoneType`` graph input (its
uses now read a ``prim::AutogradZero``) and for ``prim::AutogradZero``; *defined* for a
``Tensor``-typed graph input and the output of an ``ember::`` op (an op never returns
None); *unknown* otherwise (the outputs of ``prim::If``, ``prim::GradOf``, ...). Then:

- ``prim::AutogradAdd(a, b)``: a zero operand -> the other one; both defined -> a plain
  ``ember::add(a, b, 1)`` that later passes can optimize and fuse.
- ``prim::AutogradAnyNonZero``: all inputs zero -> ``False``; any defined -> ``True``;
  else the zero inputs are dropped.
- ``prim::If`` on a constant condition: the taken block is inlined.
- ``prim::GradSumToSize(g, meta)`` with a zero ``meta`` (its ``prim::ReduceMeta`` found no
  reduction needed) -> ``g``; otherwise it is as defined as ``g``.
- ``prim::ListConstruct`` of gradients with one defined -> defined (a list gradient is
  nonzero when one of its items is).
- ``prim::AutogradFormula`` whose incoming gradients are all defined -> each output whose
  type has a floating dtype is defined: the formulas of ``derivatives.yaml`` return
  tensors, and only a non-floating input gets None. The formula of ``chunk``/``split``
  (``unbind``) on a ``prim::ListConstruct`` of defined pieces' gradients is
  ``cat(pieces, dim)`` (``stack``): it becomes that op, which later passes see (the
  formula itself fills the undefined pieces with zeros first; PyTorch's symbolic_script
  writes chunk's gradient as ``cat`` alone).
- ``prim::GradOf``: all inputs zero -> its outputs are ``prim::AutogradZero`` (one per
  gradient type, :func:`~ember.jit.runtime.autograd_prims.zero_type`) and the node goes; some
  input defined -> its block always runs, so it is inlined in place.

Inlined nodes are visited in turn, nested blocks too; dead code is removed last.

Reference: PyTorch's ``specializeAutogradZero``
(``torch/csrc/jit/passes/specialize_autogradzero.cpp``).
"""
from __future__ import annotations

from enum import Enum

import ember.jit.runtime.autograd_prims as ap
from ember.jit.autodiff.differentiation import AUTOGRAD_FORMULA, GRAD_SUM_TO_SIZE
from ember.jit.ir.graph import Block, Graph, Node, NoneType, TensorType, Value, prim
from ember.jit.passes.dead_code_elimination import eliminate_dead_code

__all__ = ["specialize_autograd_zero"]


# ops whose formula (split_backward, unbind_backward) joins the pieces' gradients along the
# op's ``dim``, zeros standing in for undefined ones
_JOIN_OF_PIECES = {"ember::chunk": "ember::cat", "ember::split": "ember::cat",
                   "ember::split.sizes": "ember::cat", "ember::unbind": "ember::stack"}


class _State(Enum):
    ZERO = "zero"
    DEFINED = "defined"
    UNKNOWN = "unknown"


def specialize_autograd_zero(graph: Graph) -> None:
    """Simplify, in place, the autograd prims of ``graph`` using which graph inputs are
    undefined gradients (typed ``NoneType``), then eliminate dead code (see the module
    docstring). Returns None."""
    state: dict = {}
    for v in graph.inputs:
        if isinstance(v.type, NoneType):
            state[v] = _State.ZERO
            if v.has_uses:
                zero = graph.create(ap.AUTOGRAD_ZERO).insert_after(graph.param_node)
                v.replace_all_uses_with(zero.output())
        elif isinstance(v.type, TensorType):
            state[v] = _State.DEFINED
    _Specializer(graph, state).block(graph.block)
    eliminate_dead_code(graph)


class _Specializer:
    def __init__(self, graph: Graph, state: dict):
        self.graph, self.state = graph, state

    def of(self, v: Value) -> _State:
        return self.state.get(v, _State.UNKNOWN)

    def block(self, block: Block) -> None:
        node = block.param_node.next
        while node is not block.return_node:
            node = self.visit(node)

    def visit(self, n: Node) -> Node:
        """Specialize ``n``; returns the next node to visit (inlined nodes come first)."""
        kind = n.kind
        if kind == ap.AUTOGRAD_ZERO:
            self.state[n.output()] = _State.ZERO
        elif kind == ap.AUTOGRAD_ADD:
            return self.autograd_add(n)
        elif kind == ap.AUTOGRAD_ANY_NONZERO:
            return self.any_nonzero(n)
        elif kind == prim.If and n.input(0).is_constant:
            return self.inline(n, n.blocks[0 if n.input(0).to_ivalue() else 1])
        elif kind == ap.GRAD_OF:
            states = [self.of(v) for v in n.inputs]
            if all(s is _State.ZERO for s in states):
                zeros: dict = {}
                for o in n.outputs:
                    t = ap.zero_type(o.type)
                    if t not in zeros:
                        zero = self.graph.create(ap.AUTOGRAD_ZERO).insert_before(n)
                        zero.output().type = t
                        zeros[t] = zero.output()
                        self.state[zeros[t]] = _State.ZERO
                    o.replace_all_uses_with(zeros[t])
                return _destroy(n)
            if _State.DEFINED in states:
                return self.inline(n, n.blocks[0])
        elif kind == GRAD_SUM_TO_SIZE:
            g, meta = n.inputs
            if self.of(meta) is _State.ZERO:  # no reduction needed (ReduceMeta gave None)
                n.output().replace_all_uses_with(g)
                return _destroy(n)
            self.state[n.output()] = self.of(g)
        elif kind == prim.ListConstruct:
            if any(self.of(v) is _State.DEFINED for v in n.inputs):
                self.state[n.output()] = _State.DEFINED
        elif kind == AUTOGRAD_FORMULA:
            if n.attr("op") in _JOIN_OF_PIECES and self.all_pieces_defined(n.input(0)):
                return self.join_pieces(n)
            grads = n.inputs[:n.attr("num_grads")]
            if all(self.of(v) is _State.DEFINED for v in grads):
                for o in n.outputs:
                    t = o.type
                    if isinstance(t, TensorType) and t.dtype is not None and \
                            t.dtype.is_floating_point:
                        self.state[o] = _State.DEFINED
        elif kind.startswith("ember::"):
            for o in n.outputs:
                if isinstance(o.type, TensorType):
                    self.state[o] = _State.DEFINED
        for b in n.blocks:
            self.block(b)
        return n.next

    def autograd_add(self, n: Node) -> Node:
        a, b = n.inputs
        if self.of(a) is _State.ZERO or self.of(b) is _State.ZERO:
            n.output().replace_all_uses_with(b if self.of(a) is _State.ZERO else a)
            return _destroy(n)
        if self.of(a) is _State.DEFINED and self.of(b) is _State.DEFINED:
            with self.graph.insert_point_guard(n):
                one = self.graph.insert_constant(1)
                add = self.graph.insert_node(self.graph.create("ember::add", [a, b, one]))
            add.output().type = n.output().type
            self.state[add.output()] = _State.DEFINED
            n.output().replace_all_uses_with(add.output())
            return _destroy(n)
        return n.next

    def all_pieces_defined(self, grads: Value) -> bool:
        node = grads.node
        return node.kind == prim.ListConstruct and bool(node.inputs) and \
            all(self.of(v) is _State.DEFINED for v in node.inputs)

    def join_pieces(self, n: Node) -> Node:
        """The split/unbind formula ``n`` as ``cat``/``stack`` of its list gradient."""
        dim = n.inputs[n.attr("param_inputs")[list(n.attr("params")).index("dim")]]
        with self.graph.insert_point_guard(n):
            join = self.graph.insert_node(self.graph.create(
                _JOIN_OF_PIECES[n.attr("op")], [n.input(0), dim]))
        join.output().type = n.output().type
        self.state[join.output()] = _State.DEFINED
        n.output().replace_all_uses_with(join.output())
        return _destroy(n)

    def any_nonzero(self, n: Node) -> Node:
        states = [self.of(v) for v in n.inputs]
        if _State.DEFINED in states or all(s is _State.ZERO for s in states):
            with self.graph.insert_point_guard(n):
                const = self.graph.insert_constant(_State.DEFINED in states)
            n.output().replace_all_uses_with(const)
            return _destroy(n)
        for i in reversed(range(len(states))):
            if states[i] is _State.ZERO:
                n.remove_input(i)
        return n.next

    def inline(self, n: Node, block: Block) -> Node:
        """Move ``block``'s nodes before ``n``, make ``n``'s outputs its outputs, drop
        ``n``; returns the first moved node (or what followed ``n``)."""
        first = block.param_node.next
        for inner in list(block.nodes()):
            inner.move_before(n)
        for o, v in zip(n.outputs, block.outputs):
            o.replace_all_uses_with(v)
        nxt = _destroy(n)
        return nxt if first is block.return_node else first


def _destroy(n: Node) -> Node:
    """Destroy ``n``; returns the node that followed it."""
    nxt = n.next
    n.destroy()
    return nxt
