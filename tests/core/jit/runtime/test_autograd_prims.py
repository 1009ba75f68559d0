"""ember.jit.runtime.autograd_prims: how AutogradZero / AutogradAnyNonZero / AutogradAdd / GradOf
run (None is an undefined, all-zero gradient)."""
import numpy as np
import pytest

import ember as E
from ember.jit.runtime import autograd_prims as ap
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir


def t(*values):
    return E.tensor(np.array(values, dtype=np.float64))


def test_autograd_zero_is_none():
    g = parse_ir("""graph():
  %z : Tensor = prim::AutogradZero()
  return (%z)""")
    assert run_graph(g, []) == [None]


ANY = parse_ir("""graph(%a : Tensor, %b : Tensor):
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %c : bool = prim::AutogradAnyNonZero(%a, %b)
  %d : bool = prim::AutogradAnyNonZero(%l)
  return (%c, %d)""")


@pytest.mark.parametrize("a, b, expected", [
    (None, None, False), (t(1.0), None, True), (None, t(0.0), True), (t(0.0), t(0.0), True),
])
def test_any_nonzero(a, b, expected):
    # a defined gradient counts even when its values are 0: it is "defined", not "nonzero"
    assert run_graph(ANY, [a, b]) == [expected, expected]


ADD = parse_ir("""graph(%a : Tensor, %b : Tensor):
  %s : Tensor = prim::AutogradAdd(%a, %b)
  return (%s)""")


def test_autograd_add():
    a, b = t(1.0, 2.0), t(10.0, 20.0)
    assert run_graph(ADD, [None, None]) == [None]
    assert run_graph(ADD, [a, None])[0] is a
    assert run_graph(ADD, [None, b])[0] is b
    np.testing.assert_array_equal(run_graph(ADD, [a, b])[0].numpy(), [11.0, 22.0])


def test_autograd_add_is_differentiable():
    a = t(1.0, 2.0).requires_grad_()
    b = t(3.0, 4.0).requires_grad_()
    E.autograd.gradcheck(lambda x, y: ap.autograd_add(x, y), (a, b))


GRAD_OF_INPUTS_ONLY = parse_ir("""graph(%ga : Tensor, %gb : Tensor):
  %x : Tensor, %y : Tensor = prim::GradOf[name="ember::add"](%ga, %gb)
    block0():
      %s : Tensor = prim::AutogradAdd(%ga, %gb)
      %n : Tensor = ember::neg(%s)
      -> (%s, %n)
  return (%x, %y)""")


def test_grad_of_runs_its_block_when_some_input_is_defined():
    x, y = run_graph(GRAD_OF_INPUTS_ONLY, [None, t(2.0)])
    np.testing.assert_array_equal(x.numpy(), [2.0])
    np.testing.assert_array_equal(y.numpy(), [-2.0])


def test_grad_of_skips_its_block_when_all_inputs_are_none():
    # running the block would fail (neg of None): it must not run
    assert run_graph(GRAD_OF_INPUTS_ONLY, [None, None]) == [None, None]


GRAD_OF_OUTER = parse_ir("""graph(%g : Tensor, %w : Tensor):
  %gx : Tensor = prim::GradOf[name="ember::mul"](%g)
    block0():
      %m : Tensor = ember::mul(%g, %w)
      -> (%m)
  return (%gx)""")


def test_grad_of_reads_outer_values_from_the_environment():
    node = next(GRAD_OF_OUTER.nodes())
    g, w = t(2.0, 3.0), t(5.0, 7.0)
    env = dict(zip(GRAD_OF_OUTER.inputs, [g, w]))
    (gx,) = ap.run_grad_of(node, [g], env)
    np.testing.assert_array_equal(gx.numpy(), [10.0, 21.0])
    assert ap.run_grad_of(node, [None], env) == [None]
    with pytest.raises(KeyError, match="%w.*no environment"):
        ap.run_grad_of(node, [g])


def test_grad_of_in_run_graph_reads_outer_values():
    (gx,) = run_graph(GRAD_OF_OUTER, [t(2.0), t(5.0)])
    np.testing.assert_array_equal(gx.numpy(), [10.0])


def test_any_defined_looks_into_lists():
    assert ap.any_defined([None, [None, t(1.0)]])
    assert not ap.any_defined([None, (None, None), []])


def test_docstring_example():
    doc = ap.__doc__
    text = doc[doc.index("    graph("):doc.index("The required passes")]
    g = parse_ir(text)
    g.lint()
    gy, x, y = None, t(1.0, 2.0), t(3.0, 4.0)
    assert run_graph(g, [gy, x, y]) == [None, None]
    node = next(g.nodes())
    env = dict(zip(g.inputs, [t(2.0, 2.0), x, y]))
    a, b = ap.run_grad_of(node, [env[g.inputs[0]]], env)
    np.testing.assert_array_equal(a.numpy(), [6.0, 8.0])
    np.testing.assert_array_equal(b.numpy(), [2.0, 4.0])
