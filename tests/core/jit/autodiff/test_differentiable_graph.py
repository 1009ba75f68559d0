"""The DifferentiableGraph runtime: forward records one DifferentiableGraphBackward whose
df runs through its own GraphExecutor; first and second order against finite differences."""
import numpy as np
import pytest

import ember as E
from ember.jit.autodiff.differentiation import differentiate
from ember.jit.autodiff.differentiable_graph import (DifferentiableGraphBackward, get_gradient,
                                                     pack_gradient)
from ember.jit.runtime.executor import GraphExecutor
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.graph import Graph
from ember.jit.ir.kinds import prim
from ember.jit.ir.parser import parse_ir
from helpers import POINTWISE_CHAIN, to_np


def wrap(text: str, differentiated: bool = True) -> Graph:
    """A graph with one prim::DifferentiableGraph node running ``text``."""
    sub = parse_ir(text)
    g = Graph()
    ins = [g.add_input(v.debug_name, v.type) for v in sub.inputs]
    node = g.insert_node(g.create(prim.DifferentiableGraph, ins, len(sub.outputs)))
    node.set_attr("Subgraph", sub)
    for o in node.outputs:
        g.register_output(o)
    if differentiated:
        pack_gradient(differentiate(sub), node)
    g.lint()
    return g


def runner(g: Graph):
    return lambda *xs: tuple(run_graph(g, list(xs)))


def leaf(*shape):
    return E.randn(*shape, dtype=E.float64, requires_grad=True)


POINTWISE = POINTWISE_CHAIN

LISTS = """graph(%x : Tensor, %y : Tensor):
  %d0 : int = prim::Constant[value=0]()
  %d1 : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = ember::cat(%l, %d1)
  %e : Tensor = ember::sin(%c)
  %p : Tensor[] = ember::chunk(%e, %two, %d1)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%p)
  %m : Tensor[] = prim::ListConstruct(%a, %y)
  %s : Tensor = ember::stack(%m, %d0)
  %r : Tensor = ember::mul(%s, %a)
  return (%r)"""

MATMUL = """graph(%a : Tensor, %b : Tensor, %bias : Tensor):
  %one : int = prim::Constant[value=1]()
  %m : Tensor = ember::matmul(%a, %b)
  %h : Tensor = ember::add(%m, %bias, %one)
  %s : Tensor = ember::sigmoid(%h)
  return (%s)"""


@pytest.mark.parametrize("text, shapes", [
    (POINTWISE, [(2, 3), (3,)]),
    (LISTS, [(2, 2), (2, 2)]),
    (MATMUL, [(2, 3), (3, 2), (2,)]),
], ids=["pointwise", "lists", "matmul"])
def test_first_and_second_order(text, shapes):
    fn = runner(wrap(text))
    inputs = tuple(leaf(*s) for s in shapes)
    assert E.autograd.gradcheck(fn, inputs)
    assert E.autograd.gradgradcheck(fn, inputs)


def test_outputs_are_hooked_to_one_backward_node():
    g = wrap(POINTWISE)
    v, w = run_graph(g, [leaf(2, 3), leaf(3)])
    assert isinstance(v.grad_fn, DifferentiableGraphBackward) and v.grad_fn is w.grad_fn
    assert (v.output_nr, w.output_nr) == (0, 1)
    node = v.grad_fn
    assert len(node.next_functions) == 2 and node.next_functions[0][0].name() == \
        "AccumulateGrad"


def test_matches_eager_gradients():
    g = wrap(POINTWISE)
    x, y = leaf(2, 3), leaf(3)
    v, w = run_graph(g, [x, y])
    (v.sum() + (w * w).sum()).backward()
    x2, y2 = x.detach().requires_grad_(), y.detach().requires_grad_()
    z = x2 * y2
    ((z.exp().sum(0).tanh() + z).sum() + (z.exp() ** 2).sum()).backward()
    np.testing.assert_allclose(to_np(x.grad), to_np(x2.grad), rtol=1e-10)
    np.testing.assert_allclose(to_np(y.grad), to_np(y2.grad), rtol=1e-10)


def test_no_grad_and_inputs_without_grad_record_nothing():
    g = wrap(POINTWISE)
    x, y = leaf(2, 3), leaf(3)
    with E.no_grad():
        v, w = run_graph(g, [x, y])
    assert v.grad_fn is None and not v.requires_grad
    v, w = run_graph(g, [x.detach(), y.detach()])
    assert v.grad_fn is None and len([v, w]) == 2  # temporaries are dropped


def test_only_some_inputs_require_grad():
    g = wrap(MATMUL)
    a, b, bias = leaf(2, 3), E.randn(3, 2, dtype=E.float64), leaf(2)
    (s,) = run_graph(g, [a, b, bias])
    s.sum().backward()
    ref = (a.detach() @ b + bias.detach()).sigmoid()
    np.testing.assert_allclose(to_np(bias.grad), (to_np(ref) * (1 - to_np(ref))).sum(0))
    assert b.grad is None


def test_an_output_without_gradient_and_an_integral_output():
    g = wrap("""graph(%x : Tensor):
      %d : int = prim::Constant[value=1]()
      %k : bool = prim::Constant[value=False]()
      %e : Tensor = ember::exp(%x)
      %v : Tensor, %i : Tensor = ember::max.dim(%e, %d, %k)
      %s : Tensor = ember::sin(%x)
      return (%v, %i, %s)""")
    x = leaf(2, 3)
    v, i, s = run_graph(g, [x])
    assert not i.requires_grad and i.dtype is E.int64
    (gx,) = E.autograd.grad([v], [x], [E.ones(2, dtype=E.float64)])
    xn = to_np(x)
    ref = np.zeros_like(xn)
    ref[np.arange(2), xn.argmax(1)] = np.exp(xn.max(1))
    np.testing.assert_allclose(to_np(gx), ref, rtol=1e-12)


def test_identity_and_repeated_outputs_get_their_own_aliases():
    g = wrap("""graph(%x : Tensor):
      %e : Tensor = ember::exp(%x)
      return (%e, %e, %x)""")
    x = leaf(3)
    a, b, c = run_graph(g, [x])
    assert a is not b and c is not x and x.grad_fn is None
    (a.sum() + 2 * b.sum() + 3 * c.sum()).backward()
    np.testing.assert_allclose(to_np(x.grad), 3 * np.exp(to_np(x)) + 3, rtol=1e-12)


def test_second_backward_without_retain_graph_raises():
    g = wrap(POINTWISE)
    v, w = run_graph(g, [leaf(2, 3), leaf(3)])
    v.sum().backward()
    with pytest.raises(RuntimeError, match="second time"):
        v.sum().backward()


def test_pack_and_get_gradient_round_trip():
    sub = parse_ir(POINTWISE)
    gr = differentiate(sub)
    g = wrap(POINTWISE, differentiated=False)
    node = next(g.nodes())
    pack_gradient(gr, node)
    back = get_gradient(node)
    assert back.f is gr.f and back.df is gr.df and back.f_real_outputs == 2
    assert back.df_input_vjps == gr.df_input_vjps and back.df_output_vjps == [0, 1]
    assert back.df_input_captured_inputs == gr.df_input_captured_inputs
    assert back.df_input_captured_outputs == gr.df_input_captured_outputs
    text = str(g)
    assert "ReverseSubgraph=prim::DifferentiableGraph_1" in text
    reparsed = parse_ir(text)
    assert get_gradient(next(reparsed.nodes())).df_output_vjps == [0, 1]
    with pytest.raises(ValueError, match="expected a prim::DifferentiableGraph"):
        pack_gradient(gr, gr.f.return_node.inputs[0].node)


def test_an_undifferentiated_group_runs_its_subgraph():
    g = wrap(POINTWISE, differentiated=False)
    x, y = leaf(2, 3), leaf(3)
    v, w = run_graph(g, [x, y])
    np.testing.assert_allclose(to_np(w), np.exp(to_np(x) * to_np(y)))
    with pytest.raises(ValueError, match="no Gradient"):
        get_gradient(next(g.nodes()))


def test_through_the_graph_executor_with_every_node_its_own_group():
    from ember.jit.runtime.executor import debug_set_autodiff_subgraph_inlining
    ex = GraphExecutor(parse_ir(POINTWISE))
    debug_set_autodiff_subgraph_inlining(False)
    try:
        inputs = (leaf(2, 3), leaf(3))
        opt = ex.graph_for(*inputs)
        assert any(n.kind == prim.DifferentiableGraph for n in opt.nodes())
        assert E.autograd.gradcheck(lambda *a: ex(*a), inputs)
        assert E.autograd.gradgradcheck(lambda *a: ex(*a), inputs)
        state = ex.get_debug_state()
        assert any(p["backward_executors"] for p in state["execution_plans"].values())
    finally:
        debug_set_autodiff_subgraph_inlining(True)


LIST_CAPTURES = {
    "einsum saves its tensor list": ("""graph(%x : Tensor, %y : Tensor):
      %eq : str = prim::Constant[value="ij,jk->ik"]()
      %l : Tensor[] = prim::ListConstruct(%x, %y)
      %c : Tensor = ember::einsum(%eq, %l)
      %e : Tensor = ember::sin(%c)
      return (%e)""", [(2, 3), (3, 2)]),
    "a tensor list output": ("""graph(%x : Tensor):
      %d0 : int = prim::Constant[value=0]()
      %two : int = prim::Constant[value=2]()
      %e : Tensor = ember::exp(%x)
      %p : Tensor[] = ember::chunk(%e, %two, %d0)
      return (%p)""", [(4, 2)]),
}


def flat_runner(g):
    def fn(*xs):
        out = []
        for v in run_graph(g, list(xs)):
            out += list(v) if isinstance(v, (list, tuple)) else [v]
        return tuple(out)
    return fn


@pytest.mark.parametrize("name", ["einsum saves its tensor list", "a tensor list output"])
def test_tensor_lists_in_df_first_order(name):
    text, shapes = LIST_CAPTURES[name]
    assert E.autograd.gradcheck(flat_runner(wrap(text)), tuple(leaf(*s) for s in shapes))


@pytest.mark.parametrize("name", list(LIST_CAPTURES))
def test_tensor_lists_in_df_second_order(name):
    text, shapes = LIST_CAPTURES[name]
    assert E.autograd.gradgradcheck(flat_runner(wrap(text)), tuple(leaf(*s) for s in shapes))


def test_a_tensor_list_input_gets_one_edge_per_tensor():
    g = wrap("""graph(%l : Tensor[]):
      %d0 : int = prim::Constant[value=0]()
      %c : Tensor = ember::cat(%l, %d0)
      %e : Tensor = ember::sin(%c)
      return (%e)""")
    x, y = leaf(2, 2), leaf(3, 2)
    (e,) = run_graph(g, [[x, y]])
    assert len(e.grad_fn.next_functions) == 2
    fn = lambda a, b: tuple(run_graph(g, [[a, b]]))  # noqa: E731
    assert E.autograd.gradcheck(fn, (x, y))
    assert E.autograd.gradgradcheck(fn, (x, y))
    (e,) = run_graph(g, [[x, y.detach()]])
    (gx,) = E.autograd.grad([e.sum()], [x])
    np.testing.assert_allclose(to_np(gx), np.cos(to_np(x)), rtol=1e-12)
