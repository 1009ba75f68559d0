"""Issue 36: the Graph/Node/Value/JitType API uses properties for plain attributes and
zero-argument yes/no queries, methods for what takes arguments, iterates, converts or acts.
The old method spellings keep working with a DeprecationWarning, and no caller in the
repository uses them any more."""
import copy
import pathlib
import pickle
import re
import warnings

import pytest

import ember as E
from ember.jit.ir.graph import Graph, IntType, ListType, TensorType, TupleType
from ember.jit.ir.parser import parse_ir

ROOT = pathlib.Path(__file__).resolve().parents[4]
OLD = re.compile(r"\.(is_constant|has_uses|has_side_effects|attr_names|contains_tensor|"
                 r"is_complete|node)\(\)")

IR = """
graph(%x : Float(2, 3)):
  %1 : int = prim::Constant[value=1]()
  %2 : Float(2, 3) = ember::add(%x, %x, %1)
  %3 : Float(2, 3) = ember::add_(%2, %x, %1)
  %4 : Float(2, 3) = ember::neg(%x)
  return (%3)
"""


def graph_values():
    g = parse_ir(IR)
    const, add, add_, neg = list(g.nodes())
    return g, const, add, add_, neg


def test_yes_no_queries_are_properties_that_work_in_if_not_and_eq():
    g, const, add, add_, neg = graph_values()
    x = g.inputs[0]
    assert const.output().is_constant and not x.is_constant
    if add.output().is_constant:  # the trap of the old method spelling: always true
        pytest.fail("a non-constant value tested as constant")
    assert x.has_uses and not neg.output().has_uses
    assert add_.has_side_effects and not add.has_side_effects
    assert (add.has_side_effects == False) and (add_.has_side_effects == True)  # noqa: E712
    assert [v.is_constant for v in (x, const.output())] == [False, True]
    assert repr(x.is_constant) == "False" and f"{const.output().is_constant}" == "True"
    assert sum(n.output().is_constant for n in (const, add, neg)) == 1
    assert {True: "yes"}[x.has_uses] == "yes"
    assert copy.deepcopy(x.has_uses) is True and pickle.loads(pickle.dumps(x.is_constant)) is False


def test_plain_attributes_are_properties():
    g, const, add, add_, neg = graph_values()
    assert add.output().node is add and g.inputs[0].node is g.param_node
    assert const.attr_names == ["value"] and add.attr_names == []
    t = TensorType(E.float32, E.Device("cpu"), sizes=(2, 3), requires_grad=False)
    assert t.is_complete and not TensorType(E.float32).is_complete
    assert t.contains_tensor and not IntType().contains_tensor
    assert ListType(TensorType()).contains_tensor and TupleType((IntType(), t)).contains_tensor
    assert not TupleType((IntType(),)).contains_tensor


@pytest.mark.parametrize("old, new", [
    (lambda g, c, a: g.inputs[0].node(), lambda g, c, a: g.param_node),
    (lambda g, c, a: c.output().is_constant(), lambda g, c, a: True),
    (lambda g, c, a: a.output().is_constant(), lambda g, c, a: False),
    (lambda g, c, a: a.output().has_uses(), lambda g, c, a: True),
    (lambda g, c, a: a.has_side_effects(), lambda g, c, a: False),
    (lambda g, c, a: c.attr_names(), lambda g, c, a: ["value"]),
    (lambda g, c, a: TensorType().contains_tensor(), lambda g, c, a: True),
    (lambda g, c, a: TensorType().is_complete(), lambda g, c, a: False),
], ids=["node", "is_constant", "is_constant_false", "has_uses", "has_side_effects",
        "attr_names", "contains_tensor", "is_complete"])
def test_old_method_spellings_warn_and_give_the_same_answer(old, new):
    g, const, add, _, _ = graph_values()
    with pytest.warns(DeprecationWarning, match=r"^ember\.jit IR: \w+\.\w+ is a property; "
                                                r"write `\.\w+`, not `\.\w+\(\)`"):
        got = old(g, const, add)
    want = new(g, const, add)
    assert got == want and type(got) is type(want)  # the call gives a plain bool/list/Node


def test_the_warning_points_at_the_caller():
    g, const, _, _, _ = graph_values()
    with pytest.warns(DeprecationWarning) as record:
        const.output().is_constant()
    assert record[0].filename == __file__


def test_new_spellings_do_not_warn():
    g, const, add, add_, _ = graph_values()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert add.output().node is add and const.output().is_constant
        assert add_.has_side_effects and const.attr_names == ["value"]
        g.lint()


def test_a_node_is_not_an_attribute_value_although_it_is_callable():
    g, const, add, _, _ = graph_values()
    with pytest.raises(TypeError, match="cannot hold a Node"):
        add.set_attr("other", const)


def test_methods_stay_methods():
    g, const, add, _, _ = graph_values()
    assert add.input(0) is g.inputs[0] and const.output().to_ivalue() == 1
    assert const.attr("value") == 1 and const.has_attr("value")
    assert len(list(g.nodes())) == 4 == len(list(g.all_nodes()))
    assert TensorType(sizes=(2, None)).concrete_sizes() is None
    assert TensorType(sizes=(2, 3)).concrete_sizes() == (2, 3)
    assert isinstance(g.copy(), Graph)


def test_no_caller_in_the_repository_uses_an_old_spelling():
    found = []
    for top in ("core/ember", "plugins", "examples"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.name == "_compat.py":
                continue
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if OLD.search(re.sub(r"``[^`]*``", "", line)):  # not in ``docs``
                    found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "old IR spellings (see docs/jit-ir.md):\n" + "\n".join(found)


def test_tracing_and_compiling_raise_no_deprecation_warning_of_the_ir():
    m = E.nn.Sequential(E.nn.Linear(3, 4), E.nn.ReLU(), E.nn.Linear(4, 2))
    x = E.randn(5, 3)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="ember.jit IR:", category=DeprecationWarning)
        tm = E.jit.trace(m, (x,))
        tm(x).sum().backward()
        with E.no_grad():
            tm(x)
