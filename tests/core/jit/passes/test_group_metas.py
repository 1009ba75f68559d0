"""group_metas: the metas of a forward graph become one prim::MetaGroup that computes the
same values; graphs it cannot group are left alone."""
import importlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis.extra.numpy import mutually_broadcastable_shapes

import ember as E
import ember.jit
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes import canonicalize
from ember.jit.passes.group_metas import group_metas
from helpers import assert_same, kinds, literal_blocks, rand


def same_meta(a, b) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, list):
        return len(a) == len(b) and all(same_meta(x, y) for x, y in zip(a, b))
    if isinstance(a, E.Tensor):
        return bool((a == b).all())
    return (a.shape, a.dtype, a.device) == (b.shape, b.dtype, b.device)


def check(before: str, after: str, inputs) -> None:
    g = parse_ir(before)
    assert group_metas(g) is None
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(after)))
    want = run_graph(parse_ir(before), list(inputs))
    for _ in range(2):  # a miss, then a hit of the cache
        got = run_graph(g, list(inputs))
        assert len(got) == len(want) and all(same_meta(a, b) for a, b in zip(got, want))


def unchanged(text: str) -> None:
    g = parse_ir(text)
    group_metas(g)
    g.lint()
    assert str(canonicalize(g)) == str(canonicalize(parse_ir(text)))


def test_docstring_example():
    module = importlib.import_module("ember.jit.passes.group_metas")
    before, after = literal_blocks(module.__doc__)
    check(before, after, [rand(3, 4), rand(4, seed=1)])


def test_lists_of_metas_join_and_lists_of_tensors_are_read():
    check("""graph(%a : Float(*, *), %b : Float(*, *)):
      %ab : Tensor[] = prim::ListConstruct(%a, %b)
      %lm : Any = prim::TensorMeta(%ab)
      %am : Any = prim::TensorMeta(%a)
      %bm : Any = prim::TensorMeta(%b)
      %ms : Any[] = prim::ListConstruct(%am, %bm)
      %r : Any = prim::ReduceMeta(%am, %bm)
      return (%lm, %ms, %r, %ab)""", """graph(%a : Float(*, *), %b : Float(*, *)):
      %ab : Tensor[] = prim::ListConstruct(%a, %b)
      %lm : Any, %ms : Any[], %r : Any = prim::MetaGroup_0(%ab, %a, %b)
      return (%lm, %ms, %r, %ab)
    with prim::MetaGroup_0 = graph(%ab : Tensor[], %a : Float(*, *), %b : Float(*, *)):
      %lm : Any = prim::TensorMeta(%ab)
      %am : Any = prim::TensorMeta(%a)
      %bm : Any = prim::TensorMeta(%b)
      %ms : Any[] = prim::ListConstruct(%am, %bm)
      %r : Any = prim::ReduceMeta(%am, %bm)
      return (%lm, %ms, %r)""", [rand(2, 3), rand(1, 3, seed=1)])


def test_one_meta_is_left_alone():
    unchanged("""graph(%a : Float(*, *)):
      %am : Any = prim::TensorMeta(%a)
      return (%am)""")


def test_a_read_made_after_the_first_reader_leaves_the_graph_alone():
    # %r is printed before %y exists: the group could not go before the print
    unchanged("""graph(%x : Float(*, *), %b : Float(*)):
      %xm : Any = prim::TensorMeta(%x)
      %bm : Any = prim::TensorMeta(%b)
      %r : Any = prim::ReduceMeta(%xm, %bm)
       = prim::Print(%r)
      %y : Float(*, *) = ember::neg(%x)
      %ym : Any = prim::TensorMeta(%y)
      return (%r, %ym)""")


def test_nested_blocks_are_not_entered():
    unchanged("""graph(%c : bool, %x : Float(*, *)):
      %o : Any = prim::If(%c)
        block0():
          %xm : Any = prim::TensorMeta(%x)
          %r : Any = prim::ReduceMeta(%xm, %xm)
          -> (%r)
        block1():
          %n : NoneType = prim::Constant[value=None]()
          -> (%n)
      return (%o)""")


def lstm_cell(x, hx, cx, w_ih, w_hh, b):
    gates = x @ w_ih.t() + hx @ w_hh.t() + b
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def lstm_inputs(batch, bias_shape=(8,)):
    shapes = [(batch, 3), (batch, 2), (batch, 2), (8, 3), (8, 2), bias_shape]
    return [rand(*s, seed=i, requires_grad=True) for i, s in enumerate(shapes)]


def meta_group_ops(traced) -> list:
    """The MetaGroupOps of the forwards of traced's differentiable graphs."""
    from ember.jit.autodiff.meta_group import MetaGroupOp
    out = []
    for plan in traced.executor._plans.values():
        for node, op in plan.runtime_ops:
            if node.kind == "prim::DifferentiableGraph":
                for f_plan in op.f_executor._plans.values():
                    out += [o for _, o in f_plan.runtime_ops if isinstance(o, MetaGroupOp)]
    return out


@pytest.mark.parametrize("bias_shape", [(8,), (1, 8)])
def test_traced_lstm_cell_runs_its_metas_once_per_shapes(bias_shape):
    """One MetaGroup in the forward; it runs its subgraph once per batch size, and the
    gradients of every call (a cache hit included) are eager's."""
    traced = ember.jit.trace(lstm_cell, tuple(lstm_inputs(2, bias_shape)))
    for batch in (2, 2, 5, 5, 2):
        inputs = lstm_inputs(batch, bias_shape)
        h, c = traced(*inputs)
        (h.sum() + (c * c).sum()).backward()
        eager = [x.detach().requires_grad_() for x in inputs]
        he, ce = lstm_cell(*eager)
        (he.sum() + (ce * ce).sum()).backward()
        for x, r in zip(inputs, eager):
            assert_same(x.grad, r.grad)
    (op,) = meta_group_ops(traced)
    assert op.misses == 2
    assert kinds(op.subgraph).count("prim::ReduceMeta") > 5


TRACED = {}  # one traced graph for every example: its MetaGroup cache sees them all


def broadcast_fn(a, b, c):
    return (a * b + c).tanh() * a


@given(shapes=mutually_broadcastable_shapes(num_shapes=3, min_dims=2, max_dims=2,
                                            max_side=3))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_cached_metas_reduce_every_broadcast_like_eager(shapes):
    """One traced graph called with many broadcasting shape triples, repeats included:
    each call's gradients (reduced with the cached metas of its shapes) are eager's."""
    inputs = [rand(*s, seed=i, requires_grad=True) for i, s in enumerate(shapes.input_shapes)]
    if "fn" not in TRACED:
        TRACED["fn"] = ember.jit.trace(broadcast_fn, tuple(rand(2, 3, seed=i, requires_grad=True)
                                                           for i in range(3)))
    out = TRACED["fn"](*inputs)
    gout = rand(*out.shape, seed=9)
    ref = E.autograd.grad([broadcast_fn(*inputs)], inputs, [gout])
    out.backward(gout)
    for x, r in zip(inputs, ref):
        assert x.grad.shape == x.shape
        assert_same(x.grad, r)
    assert meta_group_ops(TRACED["fn"])  # the metas ran through the cached group
