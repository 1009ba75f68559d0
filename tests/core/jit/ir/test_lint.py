"""Graph.lint catches each broken invariant (graphs corrupted on purpose)."""
import pytest

from ember.jit.ir.graph import Graph, JitLintError, Use, prim
from ember.jit.ir.parser import parse_ir

TEXT = """graph(%x : Tensor, %c : bool):
  %a : Tensor = ember::neg(%x)
  %b : Tensor = ember::mul(%a, %x)
  %y : Tensor = prim::If(%c)
    block0():
      %t : Tensor = ember::relu(%b)
      -> (%t)
    block1():
      -> (%a)
  return (%y)
"""


@pytest.fixture
def g():
    g = parse_ir(TEXT)
    g.lint()
    return g


def nodes(g):
    a, b, if_ = g.nodes()
    return a, b, if_, next(if_.blocks[0].nodes())


def check(g, *patterns):
    with pytest.raises(JitLintError) as info:
        g.lint()
    for p in patterns:
        assert p in str(info.value), str(info.value)


def test_use_before_definition(g):
    a, b, *_ = nodes(g)
    b.move_before(a)
    check(g, "input 0 (%a) is not defined before use", "node: %b : Tensor = ember::mul(%a, %x)")


def test_value_used_outside_its_block(g):
    *_, t = nodes(g)
    g.register_output(t.output())
    check(g, "(%t) is not defined before use", "prim::Return")


def test_missing_use_entry(g):
    a, b, *_ = nodes(g)
    a.output()._uses.remove(Use(b, 0))
    check(g, "input 0 (%a) has no matching entry in its use list")


def test_bogus_and_duplicate_use_entries(g):
    a, b, *_ = nodes(g)
    a.output()._uses.append(Use(b, 1))
    check(g, "lists use (input 1) but that input is not it")
    a.output()._uses[-1] = Use(b, 0)
    check(g, "has no matching entry")  # Use(b, 0) now appears twice


def test_use_by_node_outside_graph(g):
    a, *_ = nodes(g)
    stray = g.create("ember::relu", [a.output()])
    stray.remove_all_inputs()
    stray.destroy()
    a.output()._uses.append(Use(stray, 0))
    check(g, "which is not in the graph")


def test_input_from_destroyed_node(g):
    a, *_ = nodes(g)
    a._destroyed = True
    check(g, "a node in this block was destroyed")
    a._destroyed = False
    n = g.create("ember::relu", [a.output()])
    n.insert_before(g.return_node)
    dead = g.create("ember::neg", [g.inputs[0]])
    n.replace_input(0, dead.output())
    dead._destroyed = True
    g._all_nodes.discard(dead)
    check(g, "is produced by a destroyed ember::neg node", "= ember::relu(")


def test_node_in_wrong_block_and_broken_links(g):
    a, b, if_, t = nodes(g)
    b._block = if_.blocks[0]
    check(g, "says it is in another block")
    b._block = g.block
    b._prev = if_
    check(g, "the node list is broken after this node")


def test_positions_must_increase(g):
    a, b, *_ = nodes(g)
    b._pos = a._pos
    check(g, "topological positions are not increasing")


def test_duplicate_and_stale_names(g):
    a, b, *_ = nodes(g)
    b.output()._name = "a"
    check(g, "debug name %a is not unique")
    b.output()._name = "b"
    ghost = g.create("ember::relu", [])
    ghost.destroy()
    g._names["ghost"] = ghost.output()
    check(g, "names of values not in the graph: ['ghost']")


def test_output_offsets(g):
    a, *_ = nodes(g)
    a.output().offset = 3
    check(g, "output 0 (%a) says it is output 3 of ember::neg")


def test_builtin_kind_shapes(g):
    *_, if_, _ = nodes(g)
    if_.blocks[1].register_output(g.inputs[0])
    check(g, "each prim::If block takes no inputs and returns 1 values")
    if_.blocks[1].erase_output(1)
    if_.add_block()
    check(g, "prim::If needs a condition input and 2 blocks")
    if_.erase_block(2)
    g.insert_node(g.create(prim.Constant))
    check(g, "prim::Constant needs no inputs, one output and a 'value' attribute")


def test_fusion_group_and_subgraph_lint():
    g = parse_ir("""graph(%x : Tensor):
      %1 : Tensor = prim::FusionGroup_0(%x)
      return (%1)
    with prim::FusionGroup_0 = graph(%a : Tensor):
      %b : Tensor = ember::neg(%a)
      return (%b)""")
    g.lint()
    fg = next(g.nodes())
    sub = fg.g()
    sub.add_input("extra")
    check(g, "prim::FusionGroup: node inputs/outputs (1/1) do not match its Subgraph's (2/1)")
    sub.erase_input(1)
    inner = next(sub.nodes())
    inner._pos = None
    check(g, "in subgraph attribute 'Subgraph'", "topological positions")
    inner._pos = 0
    fg.set_attr("Subgraph", 3)
    check(g, "needs a Graph in attribute 'Subgraph'")


def test_clean_graphs_pass():
    Graph().lint()
    parse_ir(TEXT).copy().lint()
