"""differentiate(graph) -> Gradient: f and df run through the interpreter, checked against
eager autograd and numpy float64 references."""
import numpy as np
import pytest

import ember as E
from ember.autograd.codegen import backward_function
from ember.jit.autodiff.differentiation import Gradient, differentiate, is_differentiable
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.lower_grad_of import lower_grad_of
from helpers import POINTWISE_CHAIN, to_np


def run_gradient(gr: Gradient, inputs, grad_outputs):
    """Run f, then df on the gradients of the real outputs (None for the temporaries) and
    the captures; returns (the real outputs, {input index: gradient})."""
    outs = run_graph(gr.f, list(inputs))
    vjps = [grad_outputs[i] if i < gr.f_real_outputs else None for i in gr.df_input_vjps]
    df = gr.df.copy()
    lower_grad_of(df)
    df.lint()
    args = list(vjps) + [inputs[i] for i in gr.df_input_captured_inputs] + \
        [outs[i] for i in gr.df_input_captured_outputs]
    grads = run_graph(df, args)
    return outs[:gr.f_real_outputs], dict(zip(gr.df_output_vjps, grads))


def eager_grads(fn, inputs, grad_outputs):
    leaves = [x.detach().requires_grad_() for x in inputs]
    outs = fn(*leaves)
    pairs = [(o, g) for o, g in zip(outs, grad_outputs) if g is not None]
    return E.autograd.grad([o for o, _ in pairs], leaves, [g for _, g in pairs],
                           allow_unused=True)


def check(text, inputs, fn):
    g = parse_ir(text)
    before = str(g)
    gr = differentiate(g)
    assert str(g) == before  # the input graph is left alone
    gr.f.lint()
    gr.df.lint()
    real = [o for o in run_graph(g, list(inputs))]
    gouts = [E.randn(*o.shape, dtype=o.dtype) if o.is_floating_point() else None
             for o in real]
    outs, grads = run_gradient(gr, inputs, gouts)
    for a, b in zip(outs, real):
        np.testing.assert_allclose(to_np(a), to_np(b))
    ref = eager_grads(fn, inputs, gouts)
    for i, r in enumerate(ref):
        got = grads.get(i)
        if r is None:
            assert got is None
            continue
        assert got.shape == r.shape and got.dtype is r.dtype
        np.testing.assert_allclose(to_np(got), to_np(r), rtol=1e-10, atol=1e-12)
    return gr


def f64(*shape):
    return E.randn(*shape, dtype=E.float64)


def test_docstring_example_structure():
    gr = differentiate(parse_ir("""graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %z : Tensor = ember::add(%x, %y, %one)
      %w : Tensor = ember::exp(%z)
      return (%w)"""))
    assert gr.f_real_outputs == 1 and gr.df_input_vjps == [0]
    assert gr.df_input_captured_inputs == [] and gr.df_output_vjps == [0, 1]
    assert gr.df_input_captured_outputs == [1, 2, 0]
    # the broadcast reduction of add needs only the inputs' shapes, computed in f
    assert [n.kind for n in gr.f.nodes()][:2] == ["prim::TensorMeta"] * 2
    assert [n.attr("name") for n in gr.df.nodes() if n.kind == "prim::GradOf"] == \
        ["ember::exp", "ember::add"]
    x, y, g = f64(2, 3), f64(3), f64(2, 3)
    _, grads = run_gradient(gr, [x, y], [g])
    ref = to_np(g) * np.exp(to_np(x) + to_np(y))
    np.testing.assert_allclose(to_np(grads[0]), ref, rtol=1e-12)
    np.testing.assert_allclose(to_np(grads[1]), ref.sum(0), rtol=1e-12)


def test_pointwise_chain_with_reuse_and_two_outputs():
    text = POINTWISE_CHAIN
    gr = check(text, [f64(2, 3), f64(3)],
               lambda x, y: ((x * y).exp().sum(0).tanh() + x * y, (x * y).exp()))
    assert gr.df_input_vjps[2:] and gr.df_input_vjps[2] >= gr.f_real_outputs  # temp vjp


def test_against_numpy_reference():
    gr = differentiate(parse_ir("""graph(%x : Tensor, %y : Tensor):
      %z : Tensor = ember::mul(%x, %y)
      %w : Tensor = ember::sin(%z)
      return (%w)"""))
    x, y, g = f64(2, 3), f64(2, 3), f64(2, 3)
    _, grads = run_gradient(gr, [x, y], [g])
    xn, yn, gn = to_np(x), to_np(y), to_np(g)
    np.testing.assert_allclose(to_np(grads[0]), gn * np.cos(xn * yn) * yn, rtol=1e-12)
    np.testing.assert_allclose(to_np(grads[1]), gn * np.cos(xn * yn) * xn, rtol=1e-12)


@pytest.mark.parametrize("sx, sy", [((2, 3), (3,)), ((2, 1), (1, 4)), ((3,), ())])
def test_broadcasting_grads_are_summed_to_input_shapes(sx, sy):
    text = """graph(%x : Tensor, %y : Tensor):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::add(%x, %y, %one)
      %b : Tensor = ember::mul(%a, %y)
      return (%b)"""
    check(text, [f64(*sx), f64(*sy)], lambda x, y: ((x + y) * y,))


def test_mixed_dtypes_cast_grads_back():
    text = """graph(%x : Tensor, %y : Tensor):
      %b : Tensor = ember::mul(%x, %y)
      %c : Tensor = ember::sigmoid(%b)
      return (%c)"""
    check(text, [E.randn(2, 3, dtype=E.float32), f64(2, 3)],
          lambda x, y: ((x * y).sigmoid(),))


def test_tensor_list_inputs_cat_and_stack():
    text = """graph(%x : Tensor, %y : Tensor):
      %d0 : int = prim::Constant[value=0]()
      %d1 : int = prim::Constant[value=1]()
      %l : Tensor[] = prim::ListConstruct(%x, %y, %x)
      %c : Tensor = ember::cat(%l, %d1)
      %e : Tensor = ember::exp(%c)
      %m : Tensor[] = prim::ListConstruct(%x, %y)
      %s : Tensor = ember::stack(%m, %d0)
      %t : Tensor = ember::tanh(%s)
      return (%e, %t)"""
    check(text, [f64(2, 3), f64(2, 3)],
          lambda x, y: (E.cat([x, y, x], 1).exp(), E.stack([x, y], 0).tanh()))


def test_tensor_list_outputs_chunk_split_and_unused_pieces():
    text = """graph(%x : Tensor):
      %d0 : int = prim::Constant[value=0]()
      %two : int = prim::Constant[value=2]()
      %three : int = prim::Constant[value=3]()
      %e : Tensor = ember::exp(%x)
      %p : Tensor[] = ember::chunk(%e, %three, %d0)
      %a : Tensor, %b : Tensor, %c : Tensor = prim::ListUnpack(%p)
      %q : Tensor[] = ember::split(%x, %two, %d0)
      %u : Tensor, %v : Tensor, %w : Tensor = prim::ListUnpack(%q)
      %r : Tensor = ember::mul(%a, %w)
      return (%r, %u)"""
    check(text, [f64(6, 2)], lambda x: (x.exp().chunk(3, 0)[0] * x.split(2, 0)[2],
                                         x.split(2, 0)[0]))


def test_outputs_without_gradient_are_none_vjps():
    g = parse_ir("""graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
      %b : Tensor = ember::sin(%x)
      return (%a, %b)""")
    gr = differentiate(g)
    x, ga = f64(3), f64(3)
    _, grads = run_gradient(gr, [x], [ga, None])
    np.testing.assert_allclose(to_np(grads[0]), to_np(ga) * np.exp(to_np(x)), rtol=1e-12)
    _, grads = run_gradient(gr, [x], [None, None])
    assert grads[0] is None


def test_inputs_that_need_no_gradient_get_no_df_output():
    gr = differentiate(parse_ir("""graph(%x : Double(3), %y : Double(3, requires_grad=0),
          %i : Long(3)):
      %a : Tensor = ember::mul(%x, %y)
      %b : Tensor = ember::mul(%a, %i)
      return (%b)"""))
    assert gr.df_output_vjps == [0]
    x, y, i = f64(3), f64(3), E.tensor([1, 2, 3])
    _, grads = run_gradient(gr, [x, y, i], [E.ones(3, dtype=E.float64)])
    np.testing.assert_allclose(to_np(grads[0]), to_np(y) * np.array([1, 2, 3]))


def test_integral_intermediate_blocks_the_gradient_as_in_eager():
    text = """graph(%x : Tensor):
      %l : ScalarType = prim::Constant[value=int64]()
      %d : ScalarType = prim::Constant[value=float64]()
      %n : NoneType = prim::Constant[value=None]()
      %i : Tensor = ember::_to_copy(%x, %l, %n)
      %f : Tensor = ember::_to_copy(%i, %d, %n)
      %y : Tensor = ember::mul(%f, %x)
      return (%y)"""
    check(text, [f64(4) * 3], lambda x: (x.to(E.int64).to(E.float64) * x,))


def test_matmul_and_reductions():
    text = """graph(%a : Tensor, %b : Tensor):
      %m : Tensor = ember::matmul(%a, %b)
      %d : int = prim::Constant[value=1]()
      %k : bool = prim::Constant[value=False]()
      %n : NoneType = prim::Constant[value=None]()
      %s : Tensor = ember::softmax(%m, %d, %n)
      %v : Tensor, %i : Tensor = ember::max.dim(%s, %d, %k)
      return (%v, %i)"""
    check(text, [f64(2, 3), f64(3, 4)],
          lambda a, b: tuple(E.softmax(a.matmul(b), 1).max(1)))


def test_is_differentiable():
    g = parse_ir("""graph(%x : Tensor, %c : bool):
      %one : int = prim::Constant[value=1]()
      %a : Tensor = ember::add(%x, %x, %one)
      %b : Tensor = ember::add_(%a, %x, %one)
      %e : Tensor = ember::gt(%a, %x)
      %l : Tensor[] = prim::ListConstruct(%a, %x)
       = prim::Print(%a)
      %r : Tensor = prim::If(%c)
        block0():
          -> (%a)
        block1():
          -> (%x)
      return (%r)""")
    got = {n.kind: is_differentiable(n) for n in g.nodes()}
    assert got == {"prim::Constant": True, "ember::add": True, "ember::add_": False,
                   "ember::gt": False, "prim::ListConstruct": True, "prim::Print": False,
                   "prim::If": False}


def test_a_node_without_derivative_on_a_gradient_path_raises():
    g = parse_ir("""graph(%x : Tensor):
      %a : Tensor = ember::exp(%x)
       = prim::Print(%a)
      %b : Tensor = prim::PythonOp[fn=pyobj("mod.Fn"), cconv="v"](%a)
      return (%b)""")
    with pytest.raises(ValueError, match="not differentiable"):
        differentiate(g)


def test_backward_function_matches_the_eager_formula():
    bf = backward_function("mul")
    assert bf.tensor_args == ("self", "other") and bf.params == ("other", "self")
    x, y, g = f64(3), f64(3), f64(3)
    gx, gy = bf([g], (True, False), y, x)
    assert gy is None
    np.testing.assert_allclose(to_np(gx), to_np(g * y))
    with pytest.raises(ValueError, match="not_differentiable"):
        backward_function("gt")
    with pytest.raises(KeyError):
        backward_function("no_such_op")


# One-input ops skip the shape reduction (their formulas restore the input's shape):
# check that the gradients still have the inputs' shapes and eager's values.
ONE_INPUT = {
    "expand": ("%s : int[] = prim::Constant[value=[2, 3, 4]]()\n"
               "  %y : Tensor = ember::expand(%x, %s)", (3, 1), lambda x: x.expand(2, 3, 4)),
    "squeeze": ("%n : NoneType = prim::Constant[value=None]()\n"
                "  %y : Tensor = ember::squeeze(%x, %n)", (3, 1), lambda x: x.squeeze()),
    "select": ("%d : int = prim::Constant[value=1]()\n"
               "  %y : Tensor = ember::select(%x, %d, %d)", (3, 4), lambda x: x.select(1, 1)),
    "max": ("%y : Tensor = ember::max(%x)", (3, 4), lambda x: x.max()),
    "mean": ("%d : int[] = prim::Constant[value=[1]]()\n"
             "  %k : bool = prim::Constant[value=True]()\n"
             "  %n : NoneType = prim::Constant[value=None]()\n"
             "  %y : Tensor = ember::mean(%x, %d, %k, %n)", (3, 4), lambda x: x.mean(1, True)),
    "logsumexp": ("%d : int[] = prim::Constant[value=[0]]()\n"
                  "  %k : bool = prim::Constant[value=False]()\n"
                  "  %y : Tensor = ember::logsumexp(%x, %d, %k)", (3, 4),
                  lambda x: x.logsumexp(0)),
    "repeat": ("%r : int[] = prim::Constant[value=[2, 1]]()\n"
               "  %y : Tensor = ember::repeat(%x, %r)", (3, 4), lambda x: x.repeat(2, 1)),
    "permute": ("%p : int[] = prim::Constant[value=[1, 0]]()\n"
                "  %y : Tensor = ember::permute(%x, %p)", (3, 4), lambda x: x.permute(1, 0)),
}


@pytest.mark.parametrize("name", list(ONE_INPUT))
def test_one_input_ops(name):
    body, shape, fn = ONE_INPUT[name]
    text = f"""graph(%x : Tensor):
  {body}
  %z : Tensor = ember::sin(%y)
  return (%z)"""
    check(text, [f64(*shape)], lambda x: (fn(x).sin(),))
