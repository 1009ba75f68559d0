"""Dead code elimination: remove the nodes whose outputs nobody reads.

Before (``%m`` and ``%k`` are dead, and ``%t`` becomes dead once ``%m`` goes; the
``prim::Print`` stays although it outputs nothing; the ``prim::If``'s second output is
unused, so both branches stop returning it)::

    graph(%x : Tensor, %c : bool):
      %one : int = prim::Constant[value=1]()
      %t : Tensor = ember::exp(%x)
      %m : Tensor = ember::mul(%t, %x)
      %y : Tensor = ember::add(%x, %x, %one)
       = prim::Print(%y)
      %r : Tensor, %k : Tensor = prim::If(%c)
        block0():
          %n : Tensor = ember::neg(%y)
          -> (%y, %n)
        block1():
          -> (%x, %x)
      return (%r)

After ``eliminate_dead_code(g)``::

    graph(%x : Tensor, %c : bool):
      %one : int = prim::Constant[value=1]()
      %y : Tensor = ember::add(%x, %x, %one)
       = prim::Print(%y)
      %r : Tensor = prim::If(%c)
        block0():
          -> (%y)
        block1():
          -> (%x)
      return (%r)

This is what makes the tracer's "DCE trick" work: a composite op is recorded as one node
while its inner ops are recorded too, and since nothing reads the inner ones, DCE removes
them.

What is kept: graph inputs and outputs, nodes with side effects (``Node.has_side_effects``:
``prim::Print``, ``prim::PythonOp``, in-place ops, control flow that contains them).
``prim::If`` outputs nobody reads are pruned from the node and both blocks; ``prim::Loop``
carried values that neither the loop's users nor the live part of its body read are
pruned from the node inputs, the body inputs and outputs, and the node outputs.
Subgraph attributes (``prim::FusionGroup``) are not entered: a subgraph is a separate
graph whose outputs are all used by its node.

Reference: PyTorch's ``EliminateDeadCode`` (``torch/csrc/jit/passes/dead_code_elimination.cpp``).
"""
from __future__ import annotations

from ember.jit.ir.graph import Block, Graph, Node, prim

__all__ = ["eliminate_dead_code", "destroy_if_dead", "destroy_with_constants"]


def eliminate_dead_code(graph: Graph) -> None:
    """Remove, in place, every node of ``graph`` (nested blocks included) that has no
    side effects and whose outputs are unused, and the unused outputs of ``prim::If`` and
    the unused carried values of ``prim::Loop``. Chains die in one call: blocks are walked
    last node first, so a node's users are gone before it is looked at.
    """
    _eliminate_in_block(graph.block)


def _eliminate_in_block(block: Block) -> None:
    for node in block.nodes(reverse=True):  # destroying the node just yielded is safe
        if node.kind == prim.If:
            _prune_if_outputs(node)
        elif node.kind == prim.Loop:
            _prune_loop_carried(node)
        for b in node.blocks:
            _eliminate_in_block(b)
        if not any(o.has_uses for o in node.outputs) and not node.has_side_effects:
            node.destroy()


def _prune_if_outputs(node: Node) -> None:
    for i in reversed(range(len(node.outputs))):
        if not node.outputs[i].has_uses:
            for b in node.blocks:
                b.erase_output(i)
            node.erase_output(i)


def _prune_loop_carried(node: Node) -> None:
    # Carried value j is node input 2+j, body input 1+j, body output 1+j and node output j.
    body = node.blocks[0]
    count = len(node.outputs)
    live = {j for j in range(count) if node.outputs[j].has_uses}
    while True:  # a live carried value makes live the carried values its update reads
        roots = [body.outputs[0]] + [body.outputs[1 + j] for j in live]
        read = _live_values(body, roots)
        grown = live | {j for j in range(count) if body.inputs[1 + j] in read}
        if grown == live:
            break
        live = grown
    dead = [j for j in reversed(range(count)) if j not in live]
    if not dead:
        return
    for j in dead:
        body.erase_output(1 + j)
    _eliminate_in_block(body)  # drops the body nodes that only fed the dead outputs
    for j in dead:
        body.erase_input(1 + j)
        node.remove_input(2 + j)
        node.erase_output(j)


def _live_values(block: Block, roots) -> set:
    """The values that ``roots`` (outputs of ``block``) and the side-effecting nodes of
    ``block`` read, transitively within ``block``. Over-approximates inside nested blocks
    (everything they read counts), which only keeps more alive."""
    live = set(roots)
    for node in block.nodes(reverse=True):
        if node.has_side_effects or any(o in live for o in node.outputs):
            live.update(node.inputs)
            for inner in _nodes_within(node):
                live.update(inner.inputs)
            live.update(v for b in _blocks_within(node) for v in b.outputs)
    return live


def _blocks_within(node: Node):
    for b in node.blocks:
        yield b
        for n in b.nodes():
            yield from _blocks_within(n)


def _nodes_within(node: Node):
    for b in _blocks_within(node):
        yield from b.nodes()


def destroy_if_dead(n) -> None:
    """Destroy node ``n`` if nothing reads it and it has no side effects, then the producers
    of its inputs that die with it (the local form of this pass, for rewriting passes)."""
    if (n.destroyed or n.kind in (prim.Param, prim.Return) or n.has_side_effects
            or any(o.has_uses for o in n.outputs)):
        return
    producers = [v.node for v in n.inputs]
    n.destroy()
    for p in producers:
        destroy_if_dead(p)


def destroy_with_constants(node) -> None:
    """Destroy ``node`` (its outputs must have no uses left), then the ``prim::Constant``
    nodes only it read: what a pass calls after moving ``node`` into a subgraph."""
    inputs = node.inputs
    node.destroy()
    for v in inputs:
        if v.is_constant and not v.has_uses and not v.node.destroyed:
            v.node.destroy()
