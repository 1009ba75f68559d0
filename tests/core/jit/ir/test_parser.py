"""parse_ir reads back what the printer writes; leniency; errors with line and column."""
import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.jit.ir.graph import Graph, IntType, ListType, TensorType, TupleType, prim
from ember.jit.ir.parser import IRParseError, parse_ir
from ember.jit.passes import canonicalize

ROUND_TRIP = [
    # the brief's example
    """graph(%x : Float(2, 3),
      %w : Float(3, 3)):
  %2 : int = prim::Constant[value=1]()
  %3 : Float(2, 3) = ember::mm(%x, %w)
  %4 : Float(2, 3) = ember::add(%3, %x, %2)
  return (%4)
""",
    # no inputs, no outputs, a node without outputs
    """graph():
  %0 : str = prim::Constant[value="hi \\"there\\"\\n\\u0001é"]()
  = prim::Print(%0)
  return ()
""",
    # multiple outputs, tuples and lists
    """graph(%x : Tensor,
      %x.1 : Long(*, requires_grad=0)):
  %1 : int = prim::Constant[value=-1]()
  %a : Tensor, %b : Long(3) = ember::max(%x, %1)
  %l : Tensor[] = prim::ListConstruct(%a, %x)
  %t : (Tensor, int) = prim::TupleConstruct(%a, %1)
  %u : Tensor, %v : int = prim::TupleUnpack(%t)
  %p : Tensor, %q : Tensor = prim::ListUnpack(%l)
  return (%p, %b, %v)
""",
    # nested If inside Loop, with source info
    """graph(%x : Float(2),
      %n : int,
      %c : bool):
  %y : Float(2) = prim::Loop(%n, %c, %x) # scope: features.0; loc: model.py:12
    block0(%i : int, %acc : Float(2)):
      %r : Float(2) = prim::If(%c) # loc: model.py:13
        block0():
          %s : Float(2) = ember::neg(%acc) # scope: features.0.relu
          -> (%s)
        block1():
          -> (%acc)
      -> (%c, %r)
  return (%y)
""",
    # every attribute kind
    """graph():
  %0 : NoneType = prim::Constant[value=None]()
  %1 : bool = prim::Constant[value=False]()
  %2 : float = prim::Constant[value=-2.5e-08]()
  %3 : float = prim::Constant[value=inf]()
  %4 : float = prim::Constant[value=nan]()
  %5 : ScalarType = prim::Constant[value=bfloat16]()
  %6 : Device = prim::Constant[value=device("cuda:1")]()
  %7 : int[] = prim::Constant[value=[]]()
  %8 : (int) = prim::Constant[value=(1,)]()
  %9 : Tensor = ember::foo[a=[[1, 2], [3]], b=(1.0, "x", None), c=True, d=int64]()
  %10 : Long(2, requires_grad=0, device=cpu) = prim::Constant[value=tensor([1, 2], dtype=int64)]()
  %11 : Bool() = prim::Constant[value=tensor(True, dtype=bool)]()
  %12 : Float(0, 3) = prim::Constant[value=tensor([], dtype=float32, shape=(0, 3))]()
  return (%9)
""",
    # subgraphs, a second graph attribute, and a subgraph inside a subgraph
    """graph(%x : Tensor):
  %1 : Tensor = prim::DifferentiableGraph_0[ReverseSubgraph=prim::DifferentiableGraph_1, \
df_input_vjps=[0], f_real_outputs=1](%x)
  return (%1)
with prim::DifferentiableGraph_0 = graph(%0 : Tensor):
  %1 : Tensor = prim::FusionGroup_2(%0)
  return (%1)
with prim::DifferentiableGraph_1 = graph(%0 : Tensor):
  %1 : Tensor = ember::neg(%0)
  return (%1)
with prim::FusionGroup_2 = graph(%0 : Tensor):
  %1 : Tensor = ember::relu(%0)
  return (%1)
""",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_round_trip(text):
    g = parse_ir(text)
    g.lint()
    assert str(g) == text
    assert str(g.copy()) == text
    assert str(parse_ir(str(g))) == text


def test_parsed_structure():
    g = parse_ir(ROUND_TRIP[3])
    loop = next(g.nodes())
    assert loop.kind == prim.Loop and loop.scope == "features.0"
    assert loop.source_location == "model.py:12"
    if_ = next(loop.blocks[0].nodes())
    assert if_.scope is None and if_.source_location == "model.py:13"
    assert [v.debug_name for v in loop.blocks[0].inputs] == ["i", "acc"]
    g = parse_ir(ROUND_TRIP[5])
    dg = next(g.nodes())
    assert dg.kind == prim.DifferentiableGraph and dg.attr("f_real_outputs") == 1
    assert next(dg.g().nodes()).g().inputs[0].debug_name == "0"
    assert str(dg.g("ReverseSubgraph")).startswith("graph(%0 : Tensor):")


def test_constant_values():
    g = parse_ir(ROUND_TRIP[4])
    values = [n.attr("value") for n in g.nodes() if n.kind == prim.Constant]
    assert values[:3] == [None, False, -2.5e-08] and values[3] == float("inf")
    assert np.isnan(values[4]) and values[5] is E.bfloat16 and values[6] == E.Device("cuda:1")
    assert values[7] == [] and values[8] == (1,)
    assert values[9].dtype is E.int64 and values[9].tolist() == [1, 2]
    assert values[10].shape == () and values[11].shape == (0, 3)
    foo = [n for n in g.nodes() if n.kind == "ember::foo"][0]
    assert foo.attr("a") == [[1, 2], [3]] and foo.attr("b") == (1.0, "x", None)


def test_tensor_constants_round_trip_exactly():
    g = Graph()
    for t in [E.tensor([0.1, -3.25, 1e-30]), E.tensor([[1.5]], dtype=E.float64),
              E.tensor([1.0, 2.0], dtype=E.float16), E.arange(6).reshape(2, 3)]:
        g.insert_constant(t)
    big = g.insert_constant(E.zeros(10, 10))
    assert "<Tensor float32 (10, 10)>" in str(g)
    big.node.destroy()
    g2 = parse_ir(str(g))
    for a, b in zip(g.nodes(), g2.nodes()):
        ta, tb = a.attr("value"), b.attr("value")
        assert ta.dtype is tb.dtype and np.array_equal(ta.numpy(), tb.numpy())


def test_lenient_input():
    text = """
    # a comment line
    graph(%x, %y.1 : int):   # types may be left out
        %a.1 = ember::neg(%x)
        %3   :   Tensor=ember::add( %a.1 ,%x,%y.1 )  # not source info
        return ( %3 )
    """
    g = parse_ir(text)
    g.lint()
    assert str(g) == ("graph(%x : Tensor,\n      %y.1 : int):\n"
                      "  %a.1 : Tensor = ember::neg(%x)\n"
                      "  %3 : Tensor = ember::add(%a.1, %x, %y.1)\n"
                      "  return (%3)\n")


def test_kind_with_label_suffix_but_no_section_is_a_kind():
    g = parse_ir("graph(%x):\n  %y = ember::conv_2(%x)\n  return (%y)")
    assert next(g.nodes()).kind == "ember::conv_2"


@pytest.mark.parametrize("text, line, col, msg", [
    ("graph(%x):\n  %y = ember::neg(%z)\n  return (%y)", 2, 19, "undefined value"),
    ("graph(%x):\n  %x = ember::neg(%x)\n  return (%x)", 2, 3, "value defined twice"),
    ("graph(%x):\n  %y = neg(%x)\n  return (%y)", 2, 8, "expected a node kind"),
    ("graph(%x):\n  %y = ember::neg(%x)\n", 3, 1, "expected a node"),
    ("graph(%x):\n  %y = ember::neg(%x) $\n  return (%y)", 2, 23, "unexpected character"),
    ("graph(%x):\n  %y = ember::neg[v=@](%x)\n  return (%y)", 2, 21, "unexpected character"),
    ("graph(%x):\n  %y = ember::neg[v=foo](%x)\n  return (%y)", 2, 21,
     "expected an attribute value"),
    ("graph(%x):\n  %y = ember::neg[v=<Tensor float32 (9, 9)>](%x)\n  return (%y)", 2, 21,
     "an elided tensor constant"),
    ("graph(%x):\n  %y = ember::f[g=prim::Nope_3](%x)\n  return (%y)", 2, 19,
     "undefined subgraph label"),
    ("graph(%x):\n  return (%x)\nwith prim::FusionGroup_0 = graph():\n  return ()", 3, 6,
     "subgraph defined but never used"),
    ("graph(%x : Float(2, x)):\n  return (%x)", 1, 21, "expected a size"),
    ("graph(%x):\n  return (%x)\n  %y = ember::neg(%x)", 3, 3, "expected the end of the input"),
    ("graph(%x):\n  %y = ember::neg[v=tensor([1], bad=1)](%x)\n  return (%y)", 2, 33,
     "unknown tensor(...) argument"),
])
def test_errors_name_line_and_column(text, line, col, msg):
    with pytest.raises(IRParseError, match=re.escape(f"line {line}, column {col}: {msg}")):
        parse_ir(text)


def test_error_shows_the_line_and_a_caret():
    with pytest.raises(IRParseError) as info:
        parse_ir("graph(%x):\n  %y = ember::neg(%z)\n  return (%y)")
    assert str(info.value).endswith("  %y = ember::neg(%z)\n                    ^")


# -- random straight-line graphs ------------------------------------------------------------

TYPES = [TensorType(), TensorType(E.float32, sizes=(2, 3)), TensorType(E.float64, rank=1),
         TensorType(E.int64, "cpu", sizes=(4,), requires_grad=False), IntType(),
         ListType(IntType()), TupleType((TensorType(), IntType()))]
ATTR_VALUES = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12),
                        st.floats(allow_nan=False), st.text(max_size=8),
                        st.lists(st.integers(-5, 5), max_size=3),
                        st.sampled_from([E.float32, E.int8, E.Device("cpu")]))


@st.composite
def random_graphs(draw):
    g = Graph()
    values = [g.add_input(draw(st.sampled_from(["x", "y", "x.1", None])),
                          draw(st.sampled_from(TYPES)))
              for _ in range(draw(st.integers(0, 3)))]
    for _ in range(draw(st.integers(0, 8))):
        if values and draw(st.booleans()):
            ins = draw(st.lists(st.sampled_from(values), max_size=3))
            n = g.create(draw(st.sampled_from(["ember::add", "ember::mul", "prim::Print",
                                               "ember::max.dim"])), ins, 0)
            for _ in range(draw(st.integers(0, 2))):
                n.add_output(draw(st.sampled_from(TYPES)),
                             draw(st.sampled_from([None, "out", "a.2"])))
            for name in draw(st.lists(st.sampled_from(["k", "dim", "alpha"]), unique=True)):
                n.set_attr(name, draw(ATTR_VALUES))
            values.extend(g.insert_node(n).outputs)
        else:
            values.append(g.insert_constant(draw(ATTR_VALUES.filter(lambda v: v != []))))
    for v in draw(st.lists(st.sampled_from(values), max_size=3)) if values else []:
        g.register_output(v)
    return g


@settings(max_examples=60, deadline=None)
@given(random_graphs())
def test_random_graphs_round_trip(g):
    g.lint()
    text = str(g)
    parsed = parse_ir(text)
    parsed.lint()
    assert str(parsed) == text
    assert str(g.copy()) == text
    assert str(canonicalize(parsed, rename_inputs=True)) == str(
        canonicalize(g, rename_inputs=True))


def test_python_op_callable_attribute_round_trips_by_name():
    from ember.jit.ir.attributes import PyObjectRef
    g = Graph()
    x = g.add_input("x")
    op = g.insert_node(g.create(prim.PythonOp, [x]).set_attr("fn", E.tensor))
    g.register_output(op.output())
    text = str(g)
    assert '= prim::PythonOp[fn=pyobj("ember.factories.tensor")](%x)' in text
    parsed = parse_ir(text)
    ref = next(parsed.nodes()).attr("fn")
    assert ref == PyObjectRef("ember.factories.tensor") and ref.resolve() is E.tensor
    assert str(parsed) == text


def test_repr_of_nodes_and_values():
    g = parse_ir("graph(%x : Float(2)):\n  %y : Float(2) = ember::neg[k=1](%x)\n  return (%y)")
    n = next(g.nodes())
    assert repr(n) == "%y : Float(2) = ember::neg[k=1](%x)"
    assert repr(n.output()) == "%y : Float(2)" and repr(g) == "<Graph: 1 inputs, 1 nodes>"
