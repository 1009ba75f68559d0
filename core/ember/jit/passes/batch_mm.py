"""Batch matrix products: several ``mm`` nodes that share an operand become one ``mm``.

Before (two products of the same ``%a``, as two linear layers reading one input give
after DecomposeOps)::

    graph(%a : Float(4, 3), %b1 : Float(3, 2), %b2 : Float(3, 5)):
      %y1 : Float(4, 2) = ember::mm(%a, %b1)
      %y2 : Float(4, 5) = ember::mm(%a, %b2)
      %z : Float(4, 2) = ember::relu(%y1)
      return (%z, %y2)

After ``batch_mm(g)``::

    graph(%a : Float(4, 3), %b1 : Float(3, 2), %b2 : Float(3, 5)):
      %l : Tensor[] = prim::ListConstruct(%b1, %b2)
      %one : int = prim::Constant[value=1]()
      %c : Float(3, 7) = ember::cat(%l, %one)
      %m : Float(4, 7) = ember::mm(%a, %c)
      %s : int[] = prim::Constant[value=[2, 5]]()
      %p : Tensor[] = ember::split.sizes(%m, %s, %one)
      %y1 : Float(4, 2), %y2 : Float(4, 5) = prim::ListUnpack(%p)
      %z : Float(4, 2) = ember::relu(%y1)
      return (%z, %y2)

One wide product replaces k narrow ones (fewer kernel launches, better use of the
matrix unit); the split results are views, so nothing is copied back.

- **Shared left operand** (``mm(A, B1) .. mm(A, Bk)``): the ``Bi`` are concatenated along
  dim 1 and the product is split along dim 1. **Shared right operand**
  (``mm(A1, B) .. mm(Ak, B)``): the ``Ai`` along dim 0, split along dim 0.
- Every non-shared operand must have a known rank-2 shape and the same known dtype and
  device (``cat`` would promote a mixed group, changing the product's dtype); mms that
  differ there are grouped apart. NOTE: the split sizes become constants of the graph, so
  it is then only valid for those sizes (a plan reused for another batch size must not
  run it).
- The products of one group must be independent (no operand computed from another
  product's output). The batched ``mm`` goes after every operand's definition and before
  the first read of any product; where an operand is computed only after such a read (a
  ``t(weight)`` between two linear layers), the pure nodes computing it are moved up
  before that read, as PyTorch does with ``moveBeforeTopologicallyValid``; nodes with side
  effects or blocks are not moved. Groups are formed greedily in block order; at least
  ``MIN_BATCH`` products make a group.
- Only products in the same block are batched (each block on its own, nested ones
  included). A graph with in-place ops is left alone: moving a product past a write to
  its operand would change what it reads (PyTorch bails out the same way).

PyTorch's BatchMMSide waits for 8 products (its loop-unrolling factor, for CUDA launch
overhead); ember batches from 2, as the fuser's backends gain from any batching and the
split views cost nothing. The TreeReduce form (a sum of products becomes one product of
concatenated operands) also runs: ``mm(A1, B1) + mm(A2, B2)`` (an ``ember::add`` tree with
alpha 1 whose inner sums and leaf products have no other reader, all ``Ai`` with the same
known row count, ``Bi`` with the same known column count, one known dtype) becomes
``mm(cat([A1, A2], 1), cat([B1, B2], 0))``; its numbers equal the sum up to rounding.

Reference: PyTorch's ``BatchMM`` (``torch/csrc/jit/passes/batch_mm.cpp``: BatchMMSide and
BatchMMTreeReduce).
"""
from __future__ import annotations

from typing import Optional

from ember.jit.ir.graph import Block, Graph, ListType, Node, TensorType, Value, prim
from ember.jit.ir.kinds import is_inplace_kind
from ember.jit.passes.dead_code_elimination import destroy_if_dead

__all__ = ["batch_mm", "MIN_BATCH"]

# The fewest products worth one batched mm (PyTorch: 8; see the module docstring).
MIN_BATCH = 2


def batch_mm(graph: Graph) -> None:
    """Batch, in place, the ``ember::mm`` nodes that share an operand or are summed (see the
    module docstring for the exact conditions); nested blocks included. Returns None."""
    if any(is_inplace_kind(n.kind) for n in graph.all_nodes()):
        return
    _run(graph.block)


def _run(block: Block) -> None:
    for n in list(block.nodes()):
        for b in n.blocks:
            _run(b)
    for n in list(block.nodes(reverse=True)):
        if not n.destroyed and n.kind == "ember::add":
            _tree_reduce(n)
    groups: dict = {}
    for n in block.nodes():
        if n.kind == "ember::mm":
            for side in (0, 1):
                key = _group_key(n, side)
                if key is not None:
                    groups.setdefault((side, n.input(side)) + key, []).append(n)
    for (side, *_), mms in groups.items():
        live = sorted((m for m in mms if not m.destroyed), key=_Order)  # nodes may have moved
        for group, last_def in _groups(live, block):
            if len(group) >= MIN_BATCH:
                _batch_side(group, side, last_def)


def _group_key(mm: Node, side: int) -> Optional[tuple]:
    """What the other operands of a group must share when input ``side`` is shared: its
    dtype, device and the size along the contracted dim; None if unknown."""
    other = mm.input(1 - side)
    t = other.type
    if not isinstance(t, TensorType) or t.dtype is None or t.rank != 2:
        return None
    if t.concrete_sizes() is None:
        return None
    return (t.dtype, t.device, t.sizes[0] if side == 0 else t.sizes[1])


def _groups(mms: list, block: Block) -> list:
    """Split ``mms`` (block order) into groups with a place for their batched product: after
    every operand is defined and before any output is read. A product that does not fit
    the group being built waits for the next one (greedy, in block order)."""
    groups, todo = [], mms
    while todo:
        first, rest, todo = todo[0], todo[1:], []
        group, last_def, first_use = [first], _last_def(first, block), _first_use(first, block)
        for m in rest:
            d = _later(last_def, _last_def(m, block))
            u = _earlier(first_use, _first_use(m, block))
            if not (d is None or u is None or d.is_before(u)):
                movable = _hoistable(m, u, block, {g.output() for g in group})
                if movable is None:
                    todo.append(m)
                    continue
                for n in movable:  # pure, and needing none of the group's outputs
                    n.move_before(u)
                d = _later(last_def, _last_def(m, block))
            group.append(m)
            last_def, first_use = d, u
        groups.append((group, last_def))
    return groups


def _hoistable(mm: Node, limit: Node, block: Block, outputs: set) -> Optional[list]:
    """The nodes of ``block`` not before ``limit`` that ``mm``'s operands are computed from,
    in block order, when all can move before ``limit``: no side effects, no blocks, none
    reading ``outputs`` (that would make ``mm`` depend on the group). Else None."""
    found: list = []
    stack = [v.node for v in mm.inputs]
    while stack:
        n = _in_block(stack.pop(), block)
        if n is None or n in found or n.is_before(limit):
            continue
        if n.blocks or n.has_side_effects or any(v in outputs for v in n.inputs):
            return None
        found.append(n)
        stack.extend(v.node for v in n.inputs)
    return sorted(found, key=_Order)


def _last_def(mm: Node, block: Block) -> Optional[Node]:
    """The last node of ``block`` defining an input of ``mm`` (None: all come from outside
    or from the block's inputs)."""
    return _latest([_in_block(v.node, block) for v in mm.inputs])


def _first_use(mm: Node, block: Block) -> Optional[Node]:
    """The first node of ``block`` reading ``mm``'s output, or containing a reader."""
    users = [_in_block(u.user, block) for u in mm.output().uses]
    return min(users, key=_Order, default=None)


def _in_block(n: Node, block: Block) -> Optional[Node]:
    """``n`` or the node enclosing it in ``block``; None when it is outside ``block`` or is
    its ``prim::Param`` sentinel."""
    while n.owning_block is not block:
        owner = n.owning_block.owning_node
        if owner is None:
            return None
        n = owner
    return None if n is block.param_node else n


class _Order:
    """Sort key: block order of nodes of one block."""

    def __init__(self, n: Node):
        self.n = n

    def __lt__(self, other: "_Order") -> bool:
        return self.n.is_before(other.n)


def _latest(nodes: list) -> Optional[Node]:
    nodes = [n for n in nodes if n is not None]
    return max(nodes, key=_Order, default=None)


def _later(a: Optional[Node], b: Optional[Node]) -> Optional[Node]:
    return _latest([a, b])


def _earlier(a: Optional[Node], b: Optional[Node]) -> Optional[Node]:
    if a is None or b is None:
        return b if a is None else a
    return a if a.is_before(b) else b


def _batch_side(group: list, side: int, last_def: Optional[Node]) -> None:
    g, first = group[0].graph, group[0]
    # the product goes where the first one was, or right after its last operand
    where = last_def.next if last_def is not None and last_def.is_after(first) else first
    shared = first.input(side)
    others = [m.input(1 - side) for m in group]
    dim = 1 - side  # shared left operand: columns of the right ones, and vice versa
    sizes = [o.type.sizes[dim] for o in others]
    total = sum(sizes)
    with g.insert_point_guard(where):
        items = _list(g, others)
        d = g.insert_constant(dim)
        cat = _emit(g, "ember::cat", [items, d], others[0].type.with_sizes(
            (total, others[0].type.sizes[1]) if dim == 0 else (others[0].type.sizes[0], total)))
        outs = [m.output().type for m in group]
        operands = [shared, cat] if side == 0 else [cat, shared]
        mm = _emit(g, "ember::mm", operands, _product_type(outs, dim, total))
        parts = _emit(g, "ember::split.sizes", [mm, g.insert_constant(sizes), d],
                      ListType(TensorType()))
        unpack = g.insert_node(g.create(prim.ListUnpack, [parts], 0))
    for m, t in zip(group, outs):
        v = unpack.add_output(t)
        name = m.output().debug_name
        m.output().replace_all_uses_with(v)
        m.destroy()
        if not name.isdigit():
            v.debug_name = name


def _product_type(outs: list, dim: int, total: int) -> TensorType:
    """The batched product's type: what the outputs agree on, ``total`` along ``dim``."""
    merged = outs[0] if isinstance(outs[0], TensorType) else TensorType()
    for t in outs[1:]:
        merged = merged.merge(t) if isinstance(t, TensorType) else TensorType()
    sizes = list(merged.sizes) if merged.rank == 2 else [None, None]
    sizes[dim] = total
    return merged.with_sizes(sizes)


# -- TreeReduce ------------------------------------------------------------------------------
def _tree_reduce(root: Node) -> None:
    leaves: list = []
    inner: list = []
    if not _collect(root, leaves, inner, is_root=True) or len(leaves) < MIN_BATCH:
        return
    lhs = [m.input(0) for m in leaves]
    rhs = [m.input(1) for m in leaves]
    if not (_same(lhs, dim=0) and _same(rhs, dim=1)) or any(
            a.type.sizes[1] != b.type.sizes[0] for a, b in zip(lhs, rhs)):
        return
    dtypes = {v.type.dtype for v in lhs + rhs}
    devices = {v.type.device for v in lhs + rhs}
    if len(dtypes) != 1 or len(devices) != 1:
        return
    g = root.graph
    k_total = sum(v.type.sizes[1] for v in lhs)
    rows, cols = lhs[0].type.sizes[0], rhs[0].type.sizes[1]
    with g.insert_point_guard(root):
        one, zero = g.insert_constant(1), g.insert_constant(0)
        a = _emit(g, "ember::cat", [_list(g, lhs), one], lhs[0].type.with_sizes((rows, k_total)))
        b = _emit(g, "ember::cat", [_list(g, rhs), zero], rhs[0].type.with_sizes((k_total, cols)))
        out = _emit(g, "ember::mm", [a, b], root.output().type)
    name = root.output().debug_name
    root.output().replace_all_uses_with(out)
    for n in [root] + inner + leaves:  # users first: each dies once its reader is gone
        destroy_if_dead(n)
    if not name.isdigit():
        out.debug_name = name


def _collect(n: Node, leaves: list, inner: list, is_root: bool = False) -> bool:
    """Gather the mm leaves of the add tree under ``n``; False if it is not such a tree."""
    if n.kind == "ember::mm" and not is_root:
        leaves.append(n)
        return len(n.output().uses) == 1
    if n.kind != "ember::add" or not _is_one(n.input(2)):
        return False
    if not is_root:
        if len(n.output().uses) != 1:
            return False
        inner.append(n)
    block = n.owning_block
    for v in n.inputs[:2]:
        child = v.node
        if child.owning_block is not block or not _collect(child, leaves, inner):
            return False
    return True


def _same(values: list, dim: int) -> bool:
    """Whether every value is a known rank-2 tensor and all share size ``dim``."""
    if any(not isinstance(v.type, TensorType) or v.type.rank != 2
           or v.type.concrete_sizes() is None or v.type.dtype is None for v in values):
        return False
    return len({v.type.sizes[dim] for v in values}) == 1


# -- helpers ----------------------------------------------------------------------------------
def _emit(g: Graph, kind: str, inputs: list, type) -> Value:  # noqa: A002
    n = g.create(kind, inputs)
    n.output().type = type
    return g.insert_node(n).output()


def _list(g: Graph, values: list) -> Value:
    return _emit(g, prim.ListConstruct, values, ListType(TensorType()))


def _is_one(v: Value) -> bool:
    return v.is_constant and type(v.to_ivalue()) in (int, float) and v.to_ivalue() == 1


