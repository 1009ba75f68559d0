"""``Graph.lint()``: check the IR invariants after a pass, naming the node that breaks one.

Checked, for the top-level block and every nested block:

- the node list is well linked (``prev``/``next`` agree) and every node in it says it is
  in that block, belongs to this graph and was not destroyed;
- topological position numbers strictly increase along the block;
- every input is defined before use, in the same block or an enclosing one (block
  returns included), and is not produced by a destroyed node;
- use lists agree with inputs both ways: ``Use(n, i)`` is in ``v.uses`` exactly once iff
  ``n.inputs[i] is v``, and no use names a node outside the graph;
- outputs know their node and offset; debug names are unique and registered;
- every node created in the graph was inserted (no dangling nodes);
- built-in kinds have their shape: ``prim::Constant`` (no inputs, one output, ``value``),
  ``prim::If`` (two blocks returning as many values as the node outputs), ``prim::Loop``
  (see :class:`~ember.jit.ir.node.Node`), ``prim::FusionGroup`` / ``prim::MetaGroup`` /
  ``prim::DifferentiableGraph`` (a ``Subgraph`` whose inputs match); subgraph attributes
  are linted too.

Reference: PyTorch's ``Graph::lint`` (``torch/csrc/jit/ir/ir.cpp``) and torch.fx's
``Graph.lint``.
"""
from __future__ import annotations

from ember.jit.ir.kinds import prim
from ember.jit.ir.node import _LOWER, _UPPER, Node
from ember.jit.ir.value import Use

__all__ = ["JitLintError", "lint"]


class JitLintError(RuntimeError):
    """An IR invariant is broken; the message names the invariant and the node."""


def lint(graph) -> None:
    """Check ``graph`` (see the module docstring); raises :class:`JitLintError`."""
    _Linter(graph).run()


class _Linter:
    def __init__(self, graph):
        self.graph = graph
        self.placed: set = set()      # nodes found in blocks, sentinels included
        self.defined: set = set()     # values in scope while walking
        self.values: list = []        # every value defined in the graph

    def fail(self, node, msg: str):
        from ember.jit.ir.printer import format_node
        where = f"\n  node: {format_node(node)}" if node is not None else ""
        raise JitLintError(f"lint: {msg}{where}")

    def run(self) -> None:
        self.block(self.graph.block, None)
        dangling = self.graph._all_nodes - self.placed
        if dangling:
            n = next(iter(dangling))
            self.fail(n, f"{n.kind} was created but never inserted; insert it into a block "
                         f"or destroy() it")
        names = self.graph._names
        for v in self.values:
            if names.get(v.debug_name) is not v:
                other = names.get(v.debug_name)
                self.fail(v.node, f"debug name %{v.debug_name} is not unique or not "
                                    f"registered (it maps to "
                                    f"{'nothing' if other is None else other.node.kind})")
            for use in v._uses:
                self.check_use(v, use)
        if len(names) != len(self.values):
            live = set(map(id, self.values))
            stale = [k for k, v in names.items() if id(v) not in live]
            self.fail(None, f"the name table holds names of values not in the graph: {stale}")

    def check_use(self, v, use) -> None:
        user, i = use
        if user not in self.placed:
            self.fail(v.node, f"%{v.debug_name} lists a use by {user.kind} (input {i}), which "
                                f"is not in the graph (destroyed or never inserted)")
        if i >= len(user._inputs) or user._inputs[i] is not v:
            self.fail(user, f"%{v.debug_name} lists use (input {i}) but that input is not it")
        if v._uses.count(use) != 1:
            self.fail(user, f"%{v.debug_name} lists use (input {i}) more than once")

    def define(self, node, values) -> None:
        for i, v in enumerate(values):
            if v._node is not node or v.offset != i:
                self.fail(node, f"output {i} (%{v.debug_name}) says it is output {v.offset} of "
                                f"{v._node.kind}")
            self.defined.add(v)
            self.values.append(v)

    def inputs(self, node) -> None:
        for i, v in enumerate(node._inputs):
            if v._node._destroyed:
                self.fail(node, f"input {i} (%{v.debug_name}) is produced by a destroyed "
                                f"{v._node.kind} node")
            if v not in self.defined:
                self.fail(node, f"input {i} (%{v.debug_name}) is not defined before use; a "
                                f"value must be defined earlier in the same block or in an "
                                f"enclosing block")
            if v._uses.count(Use(node, i)) != 1:
                self.fail(node, f"input {i} (%{v.debug_name}) has no matching entry in its "
                                f"use list")

    def block(self, block, owner) -> None:
        p, r = block.param_node, block.return_node
        if block.owning_node is not owner or block.graph is not self.graph:
            self.fail(owner, "a block's owning_node/graph does not match where it is")
        if p._block is not block or r._block is not block or p._pos != _LOWER or r._pos != _UPPER:
            self.fail(owner, "a block's param/return sentinels are corrupted")
        self.placed.update((p, r))
        self.define(p, p._outputs)
        local = list(p._outputs)
        prev, n = p, p._next
        while n is not r:
            if n is None or n._prev is not prev:
                self.fail(prev, "the node list is broken after this node (prev/next disagree)")
            if n in self.placed:
                self.fail(n, "the node appears twice in the graph (cycle in the node list)")
            if n._destroyed or n._block is not block or n._graph is not self.graph:
                what = ("was destroyed" if n._destroyed else "belongs to another graph"
                        if n._graph is not self.graph else "says it is in another block")
                self.fail(n, f"a node in this block {what}")
            if n._pos is None or n._pos <= prev._pos or n._pos >= _UPPER:
                self.fail(n, f"topological positions are not increasing ({prev._pos} then "
                             f"{n._pos})")
            self.placed.add(n)
            self.inputs(n)
            self.kind_shape(n)
            for b in n._blocks:
                self.block(b, n)
            self.define(n, n._outputs)
            local.extend(n._outputs)
            prev, n = n, n._next
        if r._prev is not prev:
            self.fail(prev, "the node list is broken before the block's return")
        self.inputs(r)
        self.defined.difference_update(local)

    def kind_shape(self, n: Node) -> None:
        k, ni, no, nb = n.kind, len(n._inputs), len(n._outputs), len(n._blocks)
        if k == prim.Constant and (ni or no != 1 or "value" not in n._attrs):
            self.fail(n, "prim::Constant needs no inputs, one output and a 'value' attribute")
        elif k == prim.If:
            if ni < 1 or nb != 2:
                self.fail(n, f"prim::If needs a condition input and 2 blocks, has {ni} "
                             f"inputs and {nb} blocks")
            for b in n._blocks:
                if b.inputs or len(b.outputs) != no:
                    self.fail(n, f"each prim::If block takes no inputs and returns {no} values "
                                 f"(one per node output); got {len(b.inputs)} inputs and "
                                 f"{len(b.outputs)} outputs")
        elif k == prim.Loop:
            carried = ni - 2
            ok = ni >= 2 and nb == 1 and no == carried
            if ok:
                b = n._blocks[0]
                ok = len(b.inputs) == carried + 1 and len(b.outputs) == carried + 1
            if not ok:
                self.fail(n, "prim::Loop needs inputs (max_trip_count, cond, *carried), one "
                             "block with inputs (i, *carried) and outputs (cond, *carried), "
                             "and one output per carried value")
        from ember.jit.ir.graph import Graph
        for name, value in n._attrs.items():
            if isinstance(value, Graph):
                try:
                    lint(value)
                except JitLintError as e:
                    self.fail(n, f"in subgraph attribute {name!r}: {e}")
        if k in (prim.FusionGroup, prim.DifferentiableGraph, prim.MetaGroup):
            sub = n._attrs.get("Subgraph")
            if not isinstance(sub, Graph):
                self.fail(n, f"{k} needs a Graph in attribute 'Subgraph'")
            if len(sub.inputs) != ni or (k != prim.DifferentiableGraph and len(sub.outputs) != no):
                self.fail(n, f"{k}: node inputs/outputs ({ni}/{no}) do not match its "
                             f"Subgraph's ({len(sub.inputs)}/{len(sub.outputs)})")
