"""check_inplace: an in-place write to a graph input that requires grad raises a typed
error naming the op, the value and the source line; every other graph is left as is."""
import pytest

import ember as E
from ember.jit.ir.attributes import PyObjectRef
from ember.jit.ir.graph import Graph, TensorType
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.check_inplace import InplaceError, check_inplace


def passes(text: str) -> None:
    g = parse_ir(text)
    before = str(g)
    assert check_inplace(g) is None
    g.lint()
    assert str(g) == before


def raises(text: str, match: str) -> InplaceError:
    g = parse_ir(text)
    with pytest.raises(InplaceError, match=match) as info:
        check_inplace(g)
    assert isinstance(info.value, RuntimeError)
    return info.value


def test_docstring_examples():
    err = raises("""graph(%w : Float(2, 3, requires_grad=1), %x : Float(2, 3)):
      %one : int = prim::Constant[value=1]()
      %s : int[] = prim::Constant[value=[6]]()
      %v : Float(6, requires_grad=1) = ember::view(%w, %s)
      %y : Float(6, requires_grad=1) = ember::add_(%v, %one, %one)
      return (%y)""", r"ember::add_ writes the graph input %w through the view %v")
    assert err.value.debug_name == "w" and err.node.kind == "ember::add_"
    passes("""graph(%w : Float(2, 3, requires_grad=0)):
      %one : int = prim::Constant[value=1]()
      %y : Float(2, 3, requires_grad=0) = ember::add_(%w, %one, %one)
      return (%y)""")


def test_message_names_the_source_location_and_the_way_out():
    err = raises("""graph(%x : Float(3, requires_grad=1)):
      %c : float = prim::Constant[value=2.0]()
      %y : Tensor = ember::mul_(%x, %c)  # loc: model.py:12
      return (%y)""", r"ember::mul_ at model.py:12 writes the graph input %x")
    text = str(err)
    assert "out-of-place mul" in text and "x.clone().mul_(...)" in text
    assert "ember.no_grad()" in text


@pytest.mark.parametrize("rg", ["0", None])
def test_not_known_to_require_grad_passes(rg):
    t = f"Float(3, requires_grad={rg})" if rg else "Float(3)"
    passes(f"""graph(%x : {t}):
      %c : float = prim::Constant[value=2.0]()
      %y : Tensor = ember::mul_(%x, %c)
      return (%y)""")


def test_writing_an_intermediate_passes():
    passes("""graph(%x : Float(3, requires_grad=1)):
      %c : float = prim::Constant[value=2.0]()
      %t : Float(3, requires_grad=1) = ember::mul(%x, %c)
      %y : Float(3, requires_grad=1) = ember::mul_(%t, %c)
      return (%y)""")


def test_through_split_and_a_chain_of_inplace_ops_in_a_nested_block():
    raises("""graph(%x : Float(4, requires_grad=1), %k : bool):
      %two : int = prim::Constant[value=2]()
      %zero : int = prim::Constant[value=0]()
      %r : Tensor = prim::If(%k)
        block0():
          %p : Tensor[] = ember::split(%x, %two, %zero)
          %a : Tensor, %b : Tensor = prim::ListUnpack(%p)
          %c : float = prim::Constant[value=2.0]()
          %a2 : Tensor = ember::mul_(%a, %c)
          %a3 : Tensor = ember::mul_(%a2, %c)
          -> (%a3)
        block1():
          -> (%x)
      return (%r)""", r"ember::mul_ writes the graph input %x through the view %a\b")


def test_loop_carried_value_is_not_a_leaf():
    passes("""graph(%x : Float(3, requires_grad=1), %n : int):
      %k : bool = prim::Constant[value=True]()
      %c : float = prim::Constant[value=2.0]()
      %t : Float(3, requires_grad=1) = ember::mul(%x, %c)
      %r : Tensor = prim::Loop(%n, %k, %t)
        block0(%i : int, %h : Tensor):
          %h2 : Tensor = ember::mul_(%h, %c)
          -> (%k, %h2)
      return (%r)""")


def test_inplace_python_op_is_refused():
    g = Graph()
    x = g.add_input("x", TensorType(E.float32))
    n = g.create("prim::PythonOp", [x])
    n.set_attr("fn", PyObjectRef("ember.relu")).set_attr("cconv", "v")
    n.set_attr("name", "MyRelu").set_attr("inplace", True)
    g.insert_node(n)
    g.register_output(n.output())
    with pytest.raises(InplaceError, match="in-place MyRelu is not supported in the JIT"):
        check_inplace(g)


def test_eager_autograd_refuses_the_same_write():
    # what the pass predicts: the eager op raises on a leaf requiring grad
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        E.ones(3, requires_grad=True).mul_(2.0)
