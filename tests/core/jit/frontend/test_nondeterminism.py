"""``ember.jit.frontend.nondeterminism``: which nodes draw random numbers (PyTorch's
``Node::isNondeterministic``), and how the trace check names them."""
import ember as E
from ember.jit.frontend.nondeterminism import (describe_node, is_nondeterministic,
                                               nondeterministic_nodes)
from ember.jit.ir.parser import parse_ir

IR = """
graph(%x : Float(2, 3), %train : bool):
  %p : float = prim::Constant[value=0.5]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %a : Float(2, 3) = ember::dropout(%x, %p, %t) # scope: features.1; loc: model.py:7
  %b : Float(2, 3) = ember::dropout(%x, %p, %f)
  %c : Float(2, 3) = ember::dropout(%x, %p, %train)
  %d : Float(2, 3) = ember::bernoulli(%x)
  %e : Float(2, 3) = ember::add(%a, %b, %p)
  return (%e, %c, %d)
"""


def test_random_ops_and_train_mode_dropout_are_nondeterministic():
    g = parse_ir(IR)
    found = {n.output().debug_name for n in nondeterministic_nodes(g)}
    # dropout with train=False is the identity; an unknown train flag may draw
    assert found == {"a", "c", "d"}
    assert not any(is_nondeterministic(n) for n in g.nodes() if n.kind.startswith("prim::"))


def test_describe_names_kind_scope_module_class_output_and_line():
    g = parse_ir(IR)
    a = next(iter(g.nodes())).next.next.next
    model = E.nn.Sequential()
    model.add_module("features", E.nn.Sequential(E.nn.Linear(3, 3), E.nn.Dropout()))
    assert describe_node(a, model) == "ember::dropout at features.1 (Dropout) -> %a, " \
                                      "traced at model.py:7"
    assert describe_node(a) == "ember::dropout at features.1 -> %a, traced at model.py:7"
