"""Check in-place: refuse, before anything runs, a graph whose in-place op writes a leaf
tensor that requires grad (a graph input), which autograd would refuse at run time.

This graph raises :class:`InplaceError` (``%w`` is an input with ``requires_grad=1``; the
``add_`` writes it through the view ``%v``)::

    graph(%w : Float(2, 3, requires_grad=1), %x : Float(2, 3)):
      %one : int = prim::Constant[value=1]()
      %s : int[] = prim::Constant[value=[6]]()
      %v : Float(6, requires_grad=1) = ember::view(%w, %s)
      %y : Float(6, requires_grad=1) = ember::add_(%v, %one, %one)
      return (%y)

while this one passes unchanged (the written input does not require grad)::

    graph(%w : Float(2, 3, requires_grad=0)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 3, requires_grad=0) = ember::add_(%w, %one, %one)
      return (%y)

An in-place op is a node whose kind is a registered op with ``op_info(kind).inplace``
(``ember::add_``, ``ember::index_put_``); it writes its first input. The written value is
followed back through the nodes whose result aliases an input (views such as ``view`` or
``select``, ``split`` through ``prim::ListUnpack``, and other in-place ops, per the alias
annotations of their schemas) to the tensor that owns the memory. When that is a graph
input whose type says ``requires_grad=True`` the pass raises; an unknown requires_grad
passes (the check is for what is known before running). Like PyTorch it also refuses a
``prim::PythonOp`` marked with a true ``inplace`` attribute. Nested blocks are checked;
the graph is never changed.

The check assumes grad mode is on, as the executor's ArgumentSpec types inputs that way:
under ``ember.no_grad()`` an input's type says ``requires_grad=0``.

Reference: PyTorch's ``CheckInplace`` (``torch/csrc/jit/passes/inplace_check.cpp``) and
autograd's "a leaf Variable that requires grad is being used in an in-place operation".
"""
from __future__ import annotations

from typing import Optional

from ember.jit.ir.graph import Block, Graph, Node, TensorType, Value, prim
from ember.jit.runtime.op_registry import is_op_kind, op_info
from ember.jit.passes.pass_manager import UserGraphError

__all__ = ["check_inplace", "InplaceError"]


class InplaceError(UserGraphError):
    """An in-place op in a graph writes a leaf tensor that requires grad.

    Attributes:
        node: the in-place node; value: the graph input it writes.
    """

    def __init__(self, message: str, node: Optional[Node] = None,
                 value: Optional[Value] = None):
        super().__init__(message)
        self.node, self.value = node, value


def check_inplace(graph: Graph) -> None:
    """Raise :class:`InplaceError` if an in-place node of ``graph`` (nested blocks
    included) writes a graph input known to require grad, directly or through views; also
    for a ``prim::PythonOp`` with a true ``inplace`` attribute. Otherwise returns None and
    leaves the graph unchanged."""
    _check(graph.block, graph)


def _check(block: Block, graph: Graph) -> None:
    for n in block.nodes():
        for b in n.blocks:
            _check(b, graph)
        if n.kind == prim.PythonOp and n.attr("inplace", False):
            raise InplaceError(f"check_inplace: in-place {_python_op_name(n)} "
                               f"{_where(n)}is not supported in the JIT; make the custom "
                               f"Function return a new tensor instead", node=n)
        if not (n.inputs and is_op_kind(n.kind) and op_info(n.kind).inplace):
            continue
        written = n.input(0)
        base = _base(written)
        t = base.type
        if (base.node is not graph.param_node or not isinstance(t, TensorType)
                or t.requires_grad is not True):
            continue
        through = "" if base is written else f" through the view %{written.debug_name}"
        op = n.kind.partition("::")[2]
        raise InplaceError(
            f"check_inplace: {n.kind} {_where(n)}writes the graph input %{base.debug_name}"
            f"{through}, a leaf tensor that requires grad; autograd refuses that ('a leaf "
            f"Variable that requires grad is being used in an in-place operation'). Use the "
            f"out-of-place {op[:-1]}, clone the input first (x.clone().{op}(...)), or run "
            f"under 'with ember.no_grad():' if you mean to change the leaf's data",
            node=n, value=base)


def _base(v: Value) -> Value:
    """The value owning ``v``'s memory: follow results that alias an input."""
    seen = set()
    while v not in seen:
        seen.add(v)
        n = v.node
        if n.kind == prim.ListUnpack:
            v = n.input(0)
            continue
        source = _aliased_input(n, v.offset)
        if source is None:
            return v
        v = source
    return v


def _aliased_input(n: Node, offset: int) -> Optional[Value]:
    """The input whose memory output ``offset`` of ``n`` shares, per the op's schema
    (``view(Tensor(a) self, ...) -> Tensor(a)``), or None."""
    if not is_op_kind(n.kind):
        return None
    schema = op_info(n.kind).schema
    if schema is None or offset >= len(schema.returns):
        return None
    alias = schema.returns[offset].alias
    if alias is None:
        return None
    for a, v in zip(schema.arguments, n.inputs):
        if a.alias is not None and a.alias.set == alias.set:
            return v
    return None


def _where(n: Node) -> str:
    return f"at {n.source_location} " if n.source_location else ""


def _python_op_name(n: Node) -> str:
    return str(n.attr("name", "PythonOp"))
