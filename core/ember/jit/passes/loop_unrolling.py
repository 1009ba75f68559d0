"""Loop unrolling: repeat the body of small counted ``prim::Loop`` nodes.

Before (a loop of 3 trips that adds ``%x`` to a carried value)::

    graph(%x : Float(2)):
      %three : int = prim::Constant[value=3]()
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %r : Float(2) = prim::Loop(%three, %true, %x)
        block0(%i : int, %h : Float(2)):
          %h2 : Float(2) = ember::add(%h, %x, %one)
          -> (%true, %h2)
      return (%r)

After ``unroll_loops(g)`` (a constant trip count of at most ``MAX_FULL_UNROLL``: the loop
is gone)::

    graph(%x : Float(2)):
      %three : int = prim::Constant[value=3]()
      %true : bool = prim::Constant[value=True]()
      %one : int = prim::Constant[value=1]()
      %a : Float(2) = ember::add(%x, %x, %one)
      %b : Float(2) = ember::add(%a, %x, %one)
      %r : Float(2) = ember::add(%b, %x, %one)
      return (%r)

Which loops: *for loops* only, whose start condition and the body's continue condition are
both the constant True (a while loop's trip count depends on its data), with a body of at
most ``MAX_BODY_SIZE`` nodes (nested blocks counted, constants not). Inner loops are
unrolled first, so the size seen is the unrolled one.

- A constant trip count ``n <= MAX_FULL_UNROLL`` (``n <= 0``: no trip) is unrolled
  completely: ``n`` copies of the body in a row, the iteration counter replaced by the
  constants ``0 .. n-1``.
- Any other trip count ``n`` (a larger constant, or a value only known at run time) gets a
  main loop of ``n // UNROLL_FACTOR`` trips whose body is ``UNROLL_FACTOR`` copies of the
  original, then an epilogue loop (the original) for the ``n % UNROLL_FACTOR`` trips left;
  a constant ``n`` that the factor divides needs no epilogue. For a dynamic ``n`` the two
  counts come from one ``prim::UnrollTripCounts[factor=8](%n) -> (int, int)`` node
  (``max(n, 0) // factor`` and ``max(n, 0) % factor``). When the body reads the iteration
  counter it becomes a carried ``int`` (starting at 0, ``prim::IntAdd(%c, 1)`` a trip)
  shared by both loops, as PyTorch does.

The copies inside a loop are cleaned of what they left unused (the cloned ``True`` of
each continue condition), so an outer loop sees the real size. Both prim kinds this pass
introduces are registered with the interpreter (``run_graph``) at import.

Reference: PyTorch's ``UnrollLoops`` (``torch/csrc/jit/passes/loop_unrolling.cpp``;
kUnrollFactor 8, kMaxBodySize 32; PyTorch unrolls constant counts below 64 completely,
ember below ``MAX_FULL_UNROLL`` to keep graphs small).
"""
from __future__ import annotations

from typing import Optional

from ember.jit.runtime.interpreter import register_prim
from ember.jit.ir.graph import Block, Graph, IntType, Node, Value, prim

__all__ = ["unroll_loops", "UNROLL_FACTOR", "MAX_FULL_UNROLL", "MAX_BODY_SIZE",
           "INT_ADD", "UNROLL_TRIP_COUNTS"]

UNROLL_FACTOR = 8  # body copies per trip of a partly unrolled loop
MAX_FULL_UNROLL = 8  # the largest constant trip count unrolled completely
MAX_BODY_SIZE = 32  # larger bodies are left alone (nodes, nested ones counted)

INT_ADD = "prim::IntAdd"  # (int a, int b) -> int: a + b
UNROLL_TRIP_COUNTS = "prim::UnrollTripCounts"  # [factor](int n) -> (int, int)


@register_prim(INT_ADD)
def _run_int_add(node, args):
    return [args[0] + args[1]]


@register_prim(UNROLL_TRIP_COUNTS)
def _run_trip_counts(node, args):
    return list(divmod(max(args[0], 0), node.attr("factor")))


def unroll_loops(graph: Graph) -> None:
    """Unroll, in place, the for loops of ``graph`` (nested blocks included) as the module
    docstring describes; other loops are left alone. Returns None."""
    _run(graph.block)


def _run(block: Block) -> None:
    for n in list(block.nodes()):
        if n.destroyed:
            continue
        for b in n.blocks:
            _run(b)
        if not _is_for_loop(n) or _body_size(n.blocks[0], MAX_BODY_SIZE + 1) > MAX_BODY_SIZE:
            continue
        count = _const_int(n.input(0))
        if count is not None and count <= MAX_FULL_UNROLL:
            _unroll_fully(n, count)
        else:
            _unroll_partly(n, count)


def _is_for_loop(n: Node) -> bool:
    return (n.kind == prim.Loop and _is_true(n.input(1))
            and _is_true(n.blocks[0].outputs[0]))


def _body_size(block: Block, limit: int) -> int:
    """The number of non-constant nodes in ``block`` and its nested blocks, counting stops
    at ``limit``."""
    size = 0
    for n in block.nodes():
        if n.kind != prim.Constant:
            size += 1
        for b in n.blocks:
            size += _body_size(b, limit - size)
        if size >= limit:
            return limit
    return size


def _unroll_fully(loop: Node, count: int) -> None:
    g, body = loop.graph, loop.blocks[0]
    counter = body.inputs[0]
    carried = list(loop.inputs[2:])
    clones: list = []
    with g.insert_point_guard(loop):
        for i in range(max(count, 0)):
            env = dict(zip(body.inputs[1:], carried))
            if counter.has_uses:
                env[counter] = g.insert_constant(i)
            clones += _insert_copy(g, body, env)
            carried = [env.get(v, v) for v in body.outputs[1:]]
    for out, v in zip(loop.outputs, carried):
        out.replace_all_uses_with(v)
    loop.destroy()
    _drop_dead(clones)


def _unroll_partly(loop: Node, count: Optional[int]) -> None:
    g, body = loop.graph, loop.blocks[0]
    if body.inputs[0].has_uses:
        _carry_counter(loop)
    with g.insert_point_guard(loop):
        if count is not None:
            main, rest = divmod(max(count, 0), UNROLL_FACTOR)
            main_v, rest_v = g.insert_constant(main), (g.insert_constant(rest) if rest else None)
        else:
            counts = g.create(UNROLL_TRIP_COUNTS, [loop.input(0)], 2)
            counts.set_attr("factor", UNROLL_FACTOR)
            for o in counts.outputs:
                o.type = IntType()
            main_v, rest_v = g.insert_node(counts).outputs
    if rest_v is not None:
        # the epilogue is the original loop, run on what the unrolled one leaves
        epilogue = g.create_clone(loop, lambda v: v).insert_after(loop)
        for i, out in enumerate(loop.outputs):
            out.replace_all_uses_with(epilogue.output(i))
            epilogue.replace_input(i + 2, out)
        epilogue.replace_input(0, rest_v)
    loop.replace_input(0, main_v)
    _repeat_body(loop, UNROLL_FACTOR)


def _carry_counter(loop: Node) -> None:
    """Make the iteration counter a carried int (0, then +1 a trip), so the unrolled loop
    and its epilogue share it (PyTorch's replaceLoopCounter)."""
    g, body = loop.graph, loop.blocks[0]
    with g.insert_point_guard(loop):
        loop.insert_input(2, g.insert_constant(0))
        one = g.insert_constant(1)  # outside the body: the copies share it
    count = body.insert_input(1, None, IntType())
    body.inputs[0].replace_all_uses_with(count)
    with g.insert_point_guard(body):
        step = g.create(INT_ADD, [count, one])
        step.output().type = IntType()
        g.insert_node(step)
    body.return_node.insert_input(1, step.output())
    loop.insert_output(0, IntType())


def _repeat_body(loop: Node, times: int) -> None:
    """Replace the loop's body by ``times`` copies of it in a row."""
    g, body = loop.graph, loop.blocks[0]
    dest = loop.add_block()
    for v in body.inputs:
        dest.add_input(None, v.type)
    io = list(dest.inputs)
    clones: list = []
    env: dict = {}
    with g.insert_point_guard(dest):
        for _ in range(times):
            env = dict(zip(body.inputs, io))
            clones += _insert_copy(g, body, env)
            io = [dest.inputs[0]] + [env.get(v, v) for v in body.outputs[1:]]
    for v in [env.get(body.outputs[0], body.outputs[0])] + io[1:]:
        dest.register_output(v)
    loop.erase_block(0)
    _drop_dead(clones)


def _insert_copy(g: Graph, body: Block, env: dict) -> list:
    """Insert a copy of ``body``'s nodes at the insert point, reading ``env`` for the
    body's values (others are read as they are); ``env`` gets the copies' values."""
    clones = []
    for n in body.nodes():
        c = g.insert_node(g.create_clone(n, lambda v: env.get(v, v)))
        env.update(zip(n.outputs, c.outputs))
        clones.append(c)
    return clones


def _drop_dead(clones: list) -> None:
    """Destroy the copies nothing reads (last first, so chains go at once)."""
    for c in reversed(clones):
        if (not c.destroyed and not c.has_side_effects
                and not any(o.has_uses for o in c.outputs)):
            c.destroy()


def _const_int(v: Value) -> Optional[int]:
    c = v.to_ivalue() if v.is_constant else None
    return c if type(c) is int else None


def _is_true(v: Value) -> bool:
    return v.is_constant and v.to_ivalue() is True
