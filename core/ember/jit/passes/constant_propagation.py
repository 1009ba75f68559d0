"""Constant propagation: compute at compile time what depends on constants only.

Before (``%w2`` and ``%dims`` read only constants; ``%y``'s condition is constant; the
dropout is random, so it must run every time)::

    graph(%x : Float(3, 2)):
      %one : int = prim::Constant[value=1]()
      %zero : int = prim::Constant[value=0]()
      %t : bool = prim::Constant[value=True]()
      %p : float = prim::Constant[value=0.5]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %w2 : Tensor = ember::mul(%w, %w)
      %dims : int[] = prim::ListConstruct(%one, %zero)
      %y : Tensor = prim::If(%t)
        block0():
          %a : Tensor = ember::add(%x, %w2, %one)
          -> (%a)
        block1():
          -> (%x)
      %z : Tensor = ember::permute(%y, %dims)
      %n : Tensor = ember::dropout(%w, %p, %t)
      return (%z, %n)

After ``constant_propagation(g)`` (the taken branch is inlined; the folded nodes and the
constants nobody reads any more are gone)::

    graph(%x : Float(3, 2)):
      %one : int = prim::Constant[value=1]()
      %t : bool = prim::Constant[value=True]()
      %p : float = prim::Constant[value=0.5]()
      %w : Tensor = prim::Constant[value=tensor([1.0, 2.0], dtype=float32)]()
      %w2 : Float(2, requires_grad=0, device=cpu) =
          prim::Constant[value=tensor([1.0, 4.0], dtype=float32)]()
      %dims : int[] = prim::Constant[value=[1, 0]]()
      %a : Tensor = ember::add(%x, %w2, %one)
      %z : Tensor = ember::permute(%a, %dims)
      %n : Tensor = ember::dropout(%w, %p, %t)
      return (%z, %n)

What is folded: a node whose inputs are all ``prim::Constant`` outputs, of kind
``ember::<op>`` (not in place, not random: ``NONDETERMINISTIC_KINDS``, no side effects) or
``prim::ListConstruct``/``TupleConstruct``/``ListUnpack``/``TupleUnpack``. It runs once
through :func:`ember.jit.runtime.interpreter.run_node` (under ``no_grad``) and its outputs become
constants. Other ``prim::`` kinds and ``prim::PythonOp`` are never run. A node that raises
is left alone, so the error surfaces when the graph runs, as it would have without the
pass. Control flow: ``prim::If`` with a constant condition is replaced by the nodes of the
branch it takes; ``prim::Loop`` whose trip count is a constant <= 0 or whose start
condition is a constant False is replaced by its initial carried values. As in PyTorch,
``prim::If`` outputs that both branches return unchanged (the same outer value, or equal
constants) and loop-carried values the body passes through unchanged are removed too.
Finally dead code is eliminated.

Tensor results: PyTorch folds tensors of any size; here a node is folded only when the
tensors it yields hold at most ``MAX_FOLDED_NUMEL`` elements per output in all, since a
constant lives in every compiled plan and a large one is memory paid for once per plan to
save work that is usually cheap (a parameter's transpose, say). Folded tensors are copies,
so no constant aliases another. Where the graph has in-place ops or Python ops (which may
write to tensors; ember has no alias analysis yet), nodes reading or producing tensors are
not folded at all.

Reference: PyTorch's ``ConstantPropagation``
(``torch/csrc/jit/passes/constant_propagation.cpp``).
"""
from __future__ import annotations

from typing import Any, Optional

from ember.ops import namespace as E
from ember._base.grad_mode import no_grad
from ember.jit.ir.attributes import attrs_key
from ember.jit.runtime.interpreter import run_node
from ember.jit.ir.graph import AnyType, Block, Graph, ListType, Node, Value, constant_type, prim
from ember.jit.runtime.op_registry import is_op_kind, op_info
from ember.jit.passes.common_subexpression_elimination import NONDETERMINISTIC_KINDS
from ember.jit.passes.dead_code_elimination import eliminate_dead_code

__all__ = ["constant_propagation", "MAX_FOLDED_NUMEL"]

# The most tensor elements one folded output may hold (see the module docstring).
MAX_FOLDED_NUMEL = 16

_CONTAINER_KINDS = frozenset({prim.ListConstruct, prim.TupleConstruct, prim.ListUnpack,
                              prim.TupleUnpack})
# Side effects that write no tensor another node can read.
_NON_WRITING_KINDS = frozenset({prim.Print, prim.RaiseException})


def constant_propagation(graph: Graph) -> None:
    """Fold, in place, the nodes of ``graph`` (nested blocks included) that depend on
    constants only, simplify control flow with constant conditions, then remove dead code
    (see the module docstring). Returns None; never raises for a node that fails to fold.
    """
    tensors_ok = not any(n.has_side_effects and not n.blocks
                         and n.kind not in _NON_WRITING_KINDS for n in graph.all_nodes())
    _propagate_block(graph.block, tensors_ok)
    eliminate_dead_code(graph)


def _propagate_block(block: Block, tensors_ok: bool) -> None:
    # Destroying the node just yielded, or inserting before it, is safe while iterating.
    for node in block.nodes():
        _propagate_node(node, tensors_ok)


def _propagate_node(node: Node, tensors_ok: bool) -> None:
    constant_inputs = all(v.is_constant for v in node.inputs)
    if node.kind == prim.If:
        if constant_inputs and isinstance(_value_of(node.input(0)), bool):
            _inline_if(node, tensors_ok)
            return
        for b in node.blocks:
            _propagate_block(b, tensors_ok)
        _remove_extra_if_outputs(node)
    elif node.kind == prim.Loop:
        if _loop_will_not_run(node):
            for out, init in zip(node.outputs, node.inputs[2:]):
                out.replace_all_uses_with(init)
            node.destroy()
            return
        _propagate_block(node.blocks[0], tensors_ok)
        _remove_extra_loop_outputs(node)
    elif constant_inputs and _foldable(node, tensors_ok):
        _fold(node)
    else:
        for b in node.blocks:
            _propagate_block(b, tensors_ok)


def _value_of(v: Value) -> Any:
    # NOTE: a parsed ``prim::Constant()`` (no attribute) is None, as in PyTorch.
    return v.node.attr("value", None)


# ---- folding ------------------------------------------------------------------------------
def _foldable(node: Node, tensors_ok: bool) -> bool:
    if node.blocks or not node.outputs or node.kind == prim.Constant:
        return False
    if node.kind not in _CONTAINER_KINDS:
        if not node.kind.startswith("ember::") or not is_op_kind(node.kind):
            return False
        if (op_info(node.kind).inplace or node.kind in NONDETERMINISTIC_KINDS
                or node.has_side_effects):
            return False
    if not tensors_ok and any(v.type.contains_tensor or isinstance(v.type, AnyType)
                              for v in node.inputs + node.outputs):
        return False
    for o in node.outputs:  # skip running what would be too large to keep anyway
        sizes = getattr(o.type, "concrete_sizes", lambda: None)()
        if sizes is not None and _prod(sizes) > MAX_FOLDED_NUMEL:
            return False
    return True


def _fold(node: Node) -> None:
    try:
        with no_grad():
            results = run_node(node, [_value_of(v) for v in node.inputs])
    except Exception:  # noqa: BLE001 - it must fail at run time, where the user sees it
        return
    if len(results) != len(node.outputs):
        return
    constants = []
    for out, result in zip(node.outputs, results):
        c = _as_constant(result, out.type)
        if c is None:
            return
        constants.append(c)
    graph = node.graph
    names, new = [o.debug_name for o in node.outputs], []
    with graph.insert_point_guard(node):
        for out, (value, type_) in zip(node.outputs, constants):
            new.append(graph.insert_constant(value, type_))
            out.replace_all_uses_with(new[-1])
    node.destroy()
    for v, name in zip(new, names):  # the folded values keep their names, for readers
        v.debug_name = name


def _as_constant(result: Any, declared) -> Optional[tuple]:
    """``(value, type)`` for a ``prim::Constant`` holding ``result``, or None when it cannot
    (or should not) be one."""
    if isinstance(declared, ListType) and isinstance(result, tuple):
        result = list(result)  # ``Tensor[]`` returns come back as tuples
    if _tensor_numel(result) > MAX_FOLDED_NUMEL:
        return None
    value = _copy_tensors(result)
    try:
        return value, constant_type(value)
    except ValueError:
        if value == [] and isinstance(declared, ListType):
            return value, declared
        return None
    except TypeError:
        return None


def _tensor_numel(x: Any) -> int:
    if isinstance(x, E.Tensor):
        return x.numel()
    if isinstance(x, (list, tuple)):
        return sum(_tensor_numel(e) for e in x)
    return 0


def _copy_tensors(x: Any) -> Any:
    if isinstance(x, E.Tensor):
        with no_grad():
            return x.detach().clone()
    if isinstance(x, list):
        return [_copy_tensors(e) for e in x]
    if isinstance(x, tuple):  # a namedtuple or ember.Size becomes a plain tuple
        return tuple(_copy_tensors(e) for e in x)
    return x


def _prod(sizes) -> int:
    n = 1
    for s in sizes:
        n *= s
    return n


# ---- control flow -------------------------------------------------------------------------
def _inline_if(node: Node, tensors_ok: bool) -> None:
    taken = node.blocks[0 if _value_of(node.input(0)) else 1]
    _propagate_block(taken, tensors_ok)
    for n in list(taken.nodes()):
        n.move_before(node)
    for out, v in zip(node.outputs, taken.outputs):
        out.replace_all_uses_with(v)
    node.destroy()


def _remove_extra_if_outputs(node: Node) -> None:
    then_block, else_block = node.blocks
    graph = node.graph
    for i in reversed(range(len(node.outputs))):
        t, f = then_block.outputs[i], else_block.outputs[i]
        if t is f:  # defined outside the If, so it dominates the If's users
            new = t
        elif t.is_constant and f.is_constant and _same_constant(t.node, f.node):
            new = graph.create_clone(t.node, {}).insert_before(node).output()
        else:
            continue
        node.outputs[i].replace_all_uses_with(new)
        then_block.erase_output(i)
        else_block.erase_output(i)
        node.erase_output(i)


def _same_constant(a: Node, b: Node) -> bool:
    return attrs_key(a) == attrs_key(b) and a.output().type == b.output().type


def _loop_will_not_run(node: Node) -> bool:
    trips, cond = node.inputs[0], node.inputs[1]
    if trips.is_constant:
        n = _value_of(trips)
        if isinstance(n, int) and not isinstance(n, bool) and n <= 0:
            return True
    return cond.is_constant and _value_of(cond) is False


def _remove_extra_loop_outputs(node: Node) -> None:
    # Carried value j is node input 2+j, body input 1+j, body output 1+j and node output j.
    body = node.blocks[0]
    for j in reversed(range(len(node.outputs))):
        if body.inputs[1 + j] is not body.outputs[1 + j]:
            continue
        init = node.inputs[2 + j]
        node.outputs[j].replace_all_uses_with(init)
        body.inputs[1 + j].replace_all_uses_with(init)  # the body output among them
        body.erase_output(1 + j)
        body.erase_input(1 + j)
        node.remove_input(2 + j)
        node.erase_output(j)
