"""Graph/Block/Node/Value: building, every mutation (linted after each), positions, cloning."""
import pytest

import ember as E
from ember.jit.ir.graph import (BoolType, DeviceType, FloatType, Graph, IntType, JitLintError,
                                ListType, NoneType, ScalarTypeType, StringType, TensorType,
                                TupleType, Use, prim)
from ember.jit.ir.parser import parse_ir

F23 = TensorType(E.float32, sizes=(2, 3))


def chain(n=3):
    """x -> neg -> neg -> ... (n nodes); returns graph, input, nodes."""
    g = Graph()
    x = g.add_input("x", F23)
    nodes, v = [], x
    for _ in range(n):
        node = g.insert_node(g.create("ember::neg", [v]))
        nodes.append(node)
        v = node.output()
    g.register_output(v)
    return g, x, nodes


def test_build_the_module_docstring_example():
    g = Graph()
    x = g.add_input("x", F23)
    w = g.add_input("w", TensorType(E.float32, sizes=(3, 3)))
    alpha = g.insert_constant(1)
    mm = g.insert_node(g.create("ember::mm", [x, w]))
    mm.output().type = x.type
    add = g.insert_node(g.create("ember::add", [mm.output(), x, alpha]))
    add.output().type = x.type
    g.register_output(add.output())
    g.lint()
    assert str(g) == (
        "graph(%x : Float(2, 3),\n"
        "      %w : Float(3, 3)):\n"
        "  %2 : int = prim::Constant[value=1]()\n"
        "  %3 : Float(2, 3) = ember::mm(%x, %w)\n"
        "  %4 : Float(2, 3) = ember::add(%3, %x, %2)\n"
        "  return (%4)\n")
    assert x.uses == (Use(mm, 0), Use(add, 1))
    assert add.output().uses == (Use(g.return_node, 0),)
    assert alpha.is_constant and alpha.to_ivalue() == 1
    assert mm.output().node is mm and add.output().offset == 0
    assert [n.kind for n in g.nodes()] == ["prim::Constant", "ember::mm", "ember::add"]
    assert mm.owning_block is g.block and g.block.owning_node is None
    assert mm.next is add and mm.prev is alpha.node and add.next is g.return_node


def test_insert_constant_infers_types():
    g = Graph()
    cases = [(1, IntType()), (2.5, FloatType()), (True, BoolType()), (None, NoneType()),
             ("mean", StringType()), ([1, 2], ListType(IntType())),
             (E.float64, ScalarTypeType()), (E.Device("cpu"), DeviceType()),
             ((1, 2.0), TupleType((IntType(), FloatType()))),
             ([1.0, 2.0], ListType(FloatType()))]
    for value, t in cases:
        assert g.insert_constant(value).type == t
    tt = g.insert_constant(E.ones(2, 3)).type
    assert tt == TensorType(E.float32, E.Device("cpu"), sizes=(2, 3), requires_grad=False)
    assert g.insert_constant([], type=ListType(IntType())).to_ivalue() == []
    g.lint()
    with pytest.raises(ValueError, match="empty list"):
        g.insert_constant([])
    with pytest.raises(TypeError, match="mixes"):
        g.insert_constant([1, "a"])
    with pytest.raises(ValueError, match="require grad"):
        g.insert_constant(E.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="cannot make a constant"):
        g.insert_constant(object())
    with pytest.raises(ValueError, match="not prim::Constant"):
        g.add_input().to_ivalue()


def test_debug_names_are_unique():
    g = Graph()
    a, b, c = g.add_input("x"), g.add_input("x"), g.add_input("x.1")
    assert [v.debug_name for v in (a, b, c)] == ["x", "x.1", "x.2"]
    d = g.add_input()  # unnamed values are numbered in creation order, named ones included
    assert d.debug_name == "3"
    e = g.add_input("3")  # a taken number gets a fresh number
    assert e.debug_name == "4"
    a.debug_name = "y"
    f = g.add_input("x")  # freed by the rename
    assert f.debug_name == "x"
    g.lint()
    with pytest.raises(ValueError, match="invalid value name"):
        g.add_input("a b")


def test_replace_inputs_and_uses():
    g, x, (n1, n2, n3) = chain()
    y = g.add_input("y")
    n2.replace_input(0, y)
    g.lint()
    assert n2.inputs == (y,) and n1.output().uses == ()
    n2.add_input(x)
    n2.add_input(y)
    n2.replace_input_with(y, x)
    assert n2.inputs == (x, x, x)
    g.lint()
    n2.remove_input(1)
    assert n2.inputs == (x, x) and Use(n2, 1) in x.uses and Use(n2, 2) not in x.uses
    g.lint()
    n2.insert_input(0, y)
    assert n2.inputs == (y, x, x)
    g.lint()
    n2.remove_all_inputs()
    assert n2.inputs == () and not y.has_uses
    n2.add_input(n1.output())
    g.lint()
    n3.output().replace_all_uses_with(n1.output())
    assert g.outputs == (n1.output(),)
    g.lint()
    with pytest.raises(ValueError, match="another graph"):
        n2.add_input(Graph().add_input())


def test_replace_all_uses_after_node():
    g, x, (n1, n2, n3) = chain()
    n3.add_input(x)
    m = g.create("ember::relu", [x])
    m.insert_after(n1)
    x.replace_all_uses_after_node_with(m, m.output())
    assert n1.inputs == (x,) and m.inputs == (x,) and n3.inputs == (n2.output(), m.output())
    g.lint()


def test_outputs_add_erase():
    g, x, (n1, n2, n3) = chain()
    extra = n1.add_output(IntType(), "k")
    first = n1.insert_output(0, name="first")
    assert n1.outputs[0] is first and extra.offset == 2
    g.lint()
    n1.erase_output(0)
    assert extra.offset == 1
    with pytest.raises(RuntimeError, match="used by ember::neg"):
        n1.erase_output(0)
    g.lint()
    with pytest.raises(ValueError, match="has 2 outputs"):
        n1.output()


def test_insert_move_destroy():
    g, x, (n1, n2, n3) = chain()
    c = g.create("ember::relu", [x])
    c.insert_before(n1)
    g.lint()
    with pytest.raises(RuntimeError, match="already in a block"):
        c.insert_after(n3)
    c.move_after(n3)
    assert list(g.nodes())[-1] is c
    g.lint()
    c.move_before(n2)
    assert [n for n in g.nodes()] == [n1, c, n2, n3]
    g.lint()
    with pytest.raises(RuntimeError, match="still used"):
        n2.destroy()
    c.destroy()
    g.lint()
    with pytest.raises(RuntimeError, match="already destroyed"):
        c.destroy()
    n3.output().replace_all_uses_with(n2.output())
    n3.destroy()
    g.lint()
    assert [n.kind for n in g.nodes()] == ["ember::neg"] * 2
    with pytest.raises(ValueError, match="sentinel"):
        g.create("ember::relu", [x]).insert_before(g.param_node)
    with pytest.raises(RuntimeError, match="sentinel"):
        g.return_node.destroy()


def test_prepend_append_and_insert_point_guard():
    g, x, (n1, n2, n3) = chain()
    first = g.block.prepend_node(g.create("ember::relu", [x]))
    with g.insert_point_guard(n2):
        mid = g.insert_node(g.create("ember::relu", [x]))
        assert g.insert_point is n2
    assert g.insert_point is g.return_node
    last = g.insert_node(g.create("ember::relu", [x]))
    assert list(g.nodes()) == [first, n1, mid, n2, n3, last]
    g.lint()
    with pytest.raises(TypeError):
        g.set_insert_point(3)


def test_is_before_after_many_insertions():
    g, x, (n1, n2, n3) = chain()
    inserted = []
    for _ in range(200):  # always right after n1: halves the gap until renumbering
        inserted.append(g.create("ember::relu", [x]).insert_after(n1))
    for _ in range(200):  # always at the front: steps down from the first position
        inserted.append(g.block.prepend_node(g.create("ember::relu", [x])))
    g.lint()
    order = list(g.nodes())
    assert len(order) == 403
    for i in range(0, len(order) - 1, 7):
        assert order[i].is_before(order[i + 1]) and order[i + 1].is_after(order[i])
        assert order[i].is_before(order[-1]) and not order[-1].is_before(order[i])
    assert not n1.is_before(n1)


def test_is_before_across_blocks():
    g = parse_ir("""graph(%c : bool, %x : Tensor):
      %a : Tensor = ember::neg(%x)
      %y : Tensor = prim::If(%c)
        block0():
          %b : Tensor = ember::neg(%a)
          -> (%b)
        block1():
          -> (%x)
      %d : Tensor = ember::relu(%y)
      return (%d)""")
    a, if_, d = g.nodes()
    b = if_.blocks[0].nodes().__next__()
    assert a.is_before(b) and b.is_after(a) and b.is_before(d) and d.is_after(b)
    assert not if_.is_before(b) and not b.is_before(if_)
    # uses inside the block count as after %a's node
    a.output().replace_all_uses_after_node_with(a, g.inputs[1])
    assert b.inputs == (g.inputs[1],)
    g.lint()


def test_nodes_iteration_survives_destroying_current():
    g, x, nodes = chain(5)
    for n in g.nodes(reverse=True):  # reverse DCE-style: users die first
        n.output().replace_all_uses_with(x)
        n.destroy()
    assert list(g.nodes()) == [] and g.outputs == (x,)
    g.lint()
    g, x, nodes = chain(4)
    seen = []
    for n in g.nodes():
        seen.append(n)
        if n is nodes[0]:
            g.create("ember::relu", [x]).insert_after(n)  # visited next
        if n is nodes[1]:
            n.move_before(nodes[0])  # continues from its new place: revisits nodes[0]
            break
    assert len(seen) == 3 and seen[1].kind == "ember::relu"


def test_blocks_if_and_loop_built_by_hand():
    g = Graph()
    x, n_iter = g.add_input("x"), g.add_input("n", IntType())
    cond = g.insert_constant(True)
    loop = g.insert_node(g.create(prim.Loop, [n_iter, cond, x]))
    body = loop.add_block()
    i, xc = body.add_input("i", IntType()), body.add_input("xc")
    with g.insert_point_guard(body):
        y = g.insert_node(g.create("ember::neg", [xc])).output()
        stop = g.insert_constant(False)
    body.register_output(stop)
    body.register_output(y)
    g.register_output(loop.output())
    g.lint()
    assert body.owning_node is loop and i.node is body.param_node
    assert body.outputs == (stop, y) and loop.blocks == (body,)
    assert len(list(g.all_nodes())) == 4
    body.insert_input(0, "first")
    with pytest.raises(JitLintError, match="prim::Loop"):
        g.lint()
    body.erase_input(0)
    body.erase_output(0)
    with pytest.raises(JitLintError, match="prim::Loop"):
        g.lint()
    body.register_output(stop)
    loop.erase_block(0)
    assert len(list(g.all_nodes())) == 2


def test_attributes():
    g = Graph()
    n = g.create("ember::foo", num_outputs=0)
    assert n.set_attr("i", 1).set_attr("l", [1, 2]) is n
    assert n.attr("i") == 1 and n.attr("missing", None) is None and n.has_attr("l")
    assert n.attr_names == ["i", "l"]
    with pytest.raises(KeyError, match="has no attribute 'zz'"):
        n.attr("zz")
    with pytest.raises(TypeError, match="cannot hold"):
        n.set_attr("bad", {1: 2})
    with pytest.raises(ValueError, match="identifiers"):
        n.set_attr("1x", 1)
    n.remove_attr("i")
    assert n.attr_names == ["l"]
    with pytest.raises(TypeError, match="not a Graph"):
        n.g("l")
    with pytest.raises(ValueError, match="qualified symbol"):
        g.create("add")


def test_side_effects():
    g = Graph()
    x = g.add_input()
    mk = lambda kind: g.create(kind, [x])  # noqa: E731
    assert mk("prim::Print").has_side_effects
    assert mk("prim::PythonOp").has_side_effects
    assert not mk("prim::PythonOp").set_attr("has_side_effects", False).has_side_effects
    assert mk("ember::add_").has_side_effects
    assert not mk("ember::add").has_side_effects and not mk("ember::__and__").has_side_effects
    if_ = mk("prim::If")
    if_.add_block().append_node(mk("prim::Print"))
    assert if_.has_side_effects


def test_copy_is_independent_and_prints_the_same():
    g, x, (n1, n2, n3) = chain()
    fg = g.create_with_subgraph(prim.FusionGroup)
    sub = fg.g()
    s_in = sub.add_input("a")
    sub.register_output(sub.insert_node(sub.create("ember::relu", [s_in])).output())
    fg.add_input(x)
    fg.add_output()
    fg.insert_after(n3)
    n1.scope, n1.source_location = "features.0", "model.py:3"
    g.lint()
    c = g.copy()
    c.lint()
    assert str(c) == str(g)
    list(c.nodes())[-1].destroy()
    c.insert_constant(3)
    c.lint()
    g.lint()
    assert str(c) != str(g)
    assert list(c.nodes())[0].scope == "features.0"
    fg2 = [n for n in g.copy().nodes() if n.kind == prim.FusionGroup][0]
    assert fg2.g() is not sub and str(fg2.g()) == str(sub)


def test_create_clone_and_insert_graph():
    callee = parse_ir("""graph(%a : Tensor, %b : Tensor):
      %c : Tensor = ember::mul(%a, %b)
      %1 : Tensor = ember::relu(%c)
      return (%1, %c)""")
    g, x, (n1, n2, n3) = chain()
    vmap = {}
    with g.insert_point_guard(n3):
        outs = g.insert_graph(callee, [x, n2.output()], vmap)
    n3.replace_input(0, outs[0])
    g.lint()
    assert [n.kind for n in g.nodes()] == ["ember::neg"] * 2 + ["ember::mul", "ember::relu",
                                                                "ember::neg"]
    assert vmap[callee.inputs[0]] is x and outs[1].debug_name == "c"
    with pytest.raises(ValueError, match="takes 2 inputs"):
        g.insert_graph(callee, [x])
    clone = g.create_clone(n2, {n1.output(): x})
    assert clone.inputs == (x,) and clone.owning_block is None
    clone.insert_after(n3)
    g.lint()
    assert g.insert_graph(g, [x]) and len(list(g.nodes())) == 12
    g.lint()


def test_dangling_created_node_fails_lint():
    g, x, _ = chain()
    n = g.create("ember::relu", [x])
    with pytest.raises(JitLintError, match="never inserted"):
        g.lint()
    n.destroy()
    g.lint()


def test_index_checks_and_bad_moves():
    g, x, (n1, n2, n3) = chain()
    with pytest.raises(IndexError, match="input index 5 is out of range"):
        n2.insert_input(5, x)
    n2.replace_input(-1, x)  # negative indices count from the end
    assert n2.inputs == (x,) and Use(n2, 0) in x.uses
    g.lint()
    if_ = g.insert_node(g.create(prim.If, [g.insert_constant(True)], 0))
    if_.add_block(), if_.add_block()
    inner = if_.blocks[0].append_node(g.create("ember::relu", [x]))
    with pytest.raises(ValueError, match="its own blocks"):
        if_.move_before(inner)
    inner.move_after(n3)  # out of the block, before the If
    n1.move_before(n1)  # a no-op
    g.lint()
    assert [n.kind for n in g.nodes()][-3:] == ["ember::relu", "prim::Constant", "prim::If"]
