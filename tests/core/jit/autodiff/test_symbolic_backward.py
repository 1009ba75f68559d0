"""differentiate() with symbolic formulas (ember.jit.autodiff.symbolic_formulas): the gradients of
every fusible op, of the matrix ops, of mixed dtypes and of a traced LSTM cell match eager
autograd, numerical gradcheck and gradgradcheck (pow and clamp at their edge values:
test_symbolic_helpers.py); backward plans keep opaque formulas only where a formula does
not compile, and reductions only where shapes need them."""

import pytest

import ember as E
import ember.jit
import ember.nn.functional as F
from ember.jit.autodiff.differentiation import AUTOGRAD_FORMULA, GRAD_SUM_TO_SIZE, differentiate
from ember.jit.runtime.fuser import FUSIBLE_KINDS
from ember.jit.runtime.interpreter import run_graph
from ember.jit.ir.parser import parse_ir
from ember.jit.passes.lower_grad_of import lower_grad_of
from ember.ops import DERIVATIVES
from helpers import assert_same, backward_graphs, kinds, rand


# ---- 2. differentiate() on every fusible op --------------------------------------------------
POS = (0.5, 2.0)  # a domain for logs, roots and denominators
UNIT = (-0.9, 0.9)
# case id -> (op kind, function of float64 inputs, number of inputs, input domain). Masks
# and conditions come from comparisons inside the function (not differentiable).
OP_CASES = {
    "abs": ("ember::abs", lambda a: a.abs(), 1, None),
    "acos": ("ember::acos", lambda a: a.acos(), 1, UNIT),
    "asin": ("ember::asin", lambda a: a.asin(), 1, UNIT),
    "atan": ("ember::atan", lambda a: a.atan(), 1, None),
    "ceil": ("ember::ceil", lambda a: a.ceil(), 1, None),
    "cos": ("ember::cos", lambda a: a.cos(), 1, None),
    "cosh": ("ember::cosh", lambda a: a.cosh(), 1, None),
    "erf": ("ember::erf", lambda a: a.erf(), 1, None),
    "exp": ("ember::exp", lambda a: a.exp(), 1, None),
    "exp2": ("ember::exp2", lambda a: a.exp2(), 1, None),
    "expm1": ("ember::expm1", lambda a: a.expm1(), 1, None),
    "floor": ("ember::floor", lambda a: a.floor(), 1, None),
    "gelu": ("ember::gelu", lambda a: F.gelu(a), 1, None),
    "log": ("ember::log", lambda a: a.log(), 1, POS),
    "log10": ("ember::log10", lambda a: a.log10(), 1, POS),
    "log1p": ("ember::log1p", lambda a: a.log1p(), 1, POS),
    "log2": ("ember::log2", lambda a: a.log2(), 1, POS),
    "nan_to_num": ("ember::nan_to_num", lambda a: a.nan_to_num(), 1, None),
    "neg": ("ember::neg", lambda a: -a, 1, None),
    "reciprocal": ("ember::reciprocal", lambda a: a.reciprocal(), 1, POS),
    "relu": ("ember::relu", lambda a: F.relu(a), 1, None),
    "round": ("ember::round", lambda a: a.round(), 1, None),
    "rsqrt": ("ember::rsqrt", lambda a: a.rsqrt(), 1, POS),
    "sigmoid": ("ember::sigmoid", lambda a: a.sigmoid(), 1, None),
    "sign": ("ember::sign", lambda a: a.sign(), 1, None),
    "silu": ("ember::silu", lambda a: F.silu(a), 1, None),
    "sin": ("ember::sin", lambda a: a.sin(), 1, None),
    "sinh": ("ember::sinh", lambda a: a.sinh(), 1, None),
    "sqrt": ("ember::sqrt", lambda a: a.sqrt(), 1, POS),
    "tan": ("ember::tan", lambda a: a.tan(), 1, UNIT),
    "tanh": ("ember::tanh", lambda a: a.tanh(), 1, None),
    "trunc": ("ember::trunc", lambda a: a.trunc(), 1, None),
    "pow": ("ember::pow", lambda a: a ** 2.5, 1, POS),  # tensor ** number, as traced
    "clamp_min": ("ember::clamp_min", lambda a: a.clamp_min(0.1), 1, None),
    "clamp_max": ("ember::clamp_max", lambda a: a.clamp_max(0.1), 1, None),
    "clamp": ("ember::clamp", lambda a: a.clamp(-0.5, 0.5), 1, None),
    "leaky_relu": ("ember::leaky_relu", lambda a: F.leaky_relu(a, 0.1), 1, None),
    "hardtanh": ("ember::hardtanh", lambda a: F.hardtanh(a, -0.5, 0.5), 1, None),
    "threshold": ("ember::threshold", lambda a: F.threshold(a, 0.1, 20.0), 1, None),
    "hardswish": ("ember::hardswish", lambda a: F.hardswish(a * 4.0), 1, None),
    "hardsigmoid": ("ember::hardsigmoid", lambda a: F.hardsigmoid(a * 4.0), 1, None),
    "softshrink": ("ember::softshrink", lambda a: F.softshrink(a, 0.5), 1, None),
    "hardshrink": ("ember::hardshrink", lambda a: F.hardshrink(a, 0.5), 1, None),
    "elu": ("ember::elu", lambda a: F.elu(a, 1.5), 1, None),
    "selu": ("ember::selu", lambda a: F.selu(a), 1, None),
    "celu": ("ember::celu", lambda a: F.celu(a, 0.7), 1, None),
    "softplus": ("ember::softplus", lambda a: F.softplus(a, 2.0), 1, None),
    "log_sigmoid": ("ember::log_sigmoid", lambda a: F.logsigmoid(a), 1, None),
    "mish": ("ember::mish", lambda a: F.mish(a), 1, None),
    "chunk": ("ember::chunk", lambda a: a.chunk(2, 1), 1, None),
    "split": ("ember::split", lambda a: a.split(1, 1), 1, None),
    "split.sizes": ("ember::split.sizes", lambda a: a.split([1, 3], 1), 1, None),
    "add": ("ember::add", lambda a, b: a + b, 2, None),
    "add[alpha]": ("ember::add", lambda a, b: a.add(b, alpha=2), 2, None),
    "sub[alpha]": ("ember::sub", lambda a, b: a.sub(b, alpha=0.5), 2, None),
    "mul": ("ember::mul", lambda a, b: a * b, 2, None),
    "div": ("ember::div", lambda a, b: a / b, 2, POS),
    "div[floor]": ("ember::div", lambda a, b: a.div(b, rounding_mode="floor"), 2, POS),
    "true_divide": ("ember::true_divide", lambda a, b: E.true_divide(a, b), 2, POS),
    "floor_divide": ("ember::floor_divide", lambda a, b: a.floor_divide(b), 2, POS),
    "fmod": ("ember::fmod", lambda a, b: a.fmod(b), 2, POS),
    "remainder": ("ember::remainder", lambda a, b: a.remainder(b), 2, POS),
    "pow[tensor]": ("ember::pow", lambda a, b: a.pow(b), 2, POS),
    "atan2": ("ember::atan2", lambda a, b: E.atan2(a, b), 2, None),
    "maximum": ("ember::maximum", lambda a, b: E.maximum(a, b), 2, None),
    "minimum": ("ember::minimum", lambda a, b: E.minimum(a, b), 2, None),
    "max.other": ("ember::max.other", lambda a, b: a.max(b), 2, None),
    "min.other": ("ember::min.other", lambda a, b: a.min(b), 2, None),
    "clamp_min[tensor]": ("ember::clamp_min", lambda a, b: a.clamp_min(b), 2, None),
    "clamp_max[tensor]": ("ember::clamp_max", lambda a, b: a.clamp_max(b), 2, None),
    "masked_fill": ("ember::masked_fill", lambda a, m: a.masked_fill(m > 0, 1.5), 2, None),
    "lerp.Scalar": ("ember::lerp.Scalar", lambda a, b: a.lerp(b, 0.3), 2, None),
    "lerp.Tensor": ("ember::lerp.Tensor", lambda a, b, w: a.lerp(b, w), 3, None),
    "where": ("ember::where", lambda c, a, b: E.where(c > 0, a, b), 3, None),
    "clamp[tensor]": ("ember::clamp", lambda a, lo, hi: a.clamp(lo - 1, hi + 1), 3, None),
    "asinh": ("ember::asinh", lambda a: a.asinh(), 1, None),
    "acosh": ("ember::acosh", lambda a: a.acosh(), 1, (1.5, 3.0)),
    "atanh": ("ember::atanh", lambda a: a.atanh(), 1, UNIT),
    "erfc": ("ember::erfc", lambda a: a.erfc(), 1, None),
    "frac": ("ember::frac", lambda a: a.frac(), 1, None),
    "logit": ("ember::logit", lambda a: a.logit(), 1, (0.1, 0.9)),
    "xlogy": ("ember::xlogy", lambda a, b: E.xlogy(a, b), 2, POS),
    "logaddexp": ("ember::logaddexp", lambda a, b: E.logaddexp(a, b), 2, None),
    "logaddexp2": ("ember::logaddexp2", lambda a, b: E.logaddexp2(a, b), 2, None),
    "copysign": ("ember::copysign", lambda a, b: E.copysign(a, b), 2, None),
    "fmax": ("ember::fmax", lambda a, b: E.fmax(a, b), 2, None),
    "fmin": ("ember::fmin", lambda a, b: E.fmin(a, b), 2, None),
    "addcmul": ("ember::addcmul", lambda a, b, c: E.addcmul(a, b, c, value=0.5), 3, None),
    "addcdiv": ("ember::addcdiv", lambda a, b, c: E.addcdiv(a, b, c, value=-2), 3, POS),
}
# Ops whose backward must compile to ember:: ops (pow's and clamp's through the HELPERS
# expansions of pow_backward_self, clamp_backward, ...)
EXPECTED_SYMBOLIC = {"add", "sub[alpha]", "mul", "div", "neg", "exp", "log", "sin", "cos",
                     "tanh", "sigmoid", "relu", "sqrt", "rsqrt", "reciprocal", "clamp_min",
                     "clamp_max", "clamp_min[tensor]", "clamp_max[tensor]", "masked_fill",
                     "lerp.Scalar", "lerp.Tensor", "where", "pow", "pow[tensor]", "clamp",
                     "clamp[tensor]"}
SHAPES = {"same": ((3, 4), (3, 4), (3, 4)),
          "row_col": ((3, 4), (4,), (3, 1)),   # the first input has the output's shape
          "col_row": ((3, 1), (4,), (3, 4))}   # the first two inputs are broadcast


def differentiable_fusible_kinds() -> set:
    out = set()
    for kind in FUSIBLE_KINDS:
        d = DERIVATIVES.get(kind.split("::", 1)[1])
        if d is not None and not d.not_differentiable:
            out.add(kind)
    return out


def traced_gradient(case, shapes=SHAPES["same"]):
    """(Gradient of the traced one-op graph, function, float64 inputs requiring grad)."""
    kind, fn, arity, domain = OP_CASES[case]
    low, high = domain or (-2.0, 2.0)
    inputs = [rand(*s, seed=i, low=low, high=high, requires_grad=True)
              for i, s in enumerate(shapes[:arity])]
    traced = ember.jit.trace(fn, tuple(inputs))
    assert kind in kinds(traced.graph), traced.graph
    return differentiate(traced.graph), fn, inputs


def run_gradient(gr, inputs, grad_outputs):
    """f, then df (GradOf lowered) on the vjps and captures: {input index: gradient}."""
    outs = run_graph(gr.f, list(inputs))
    vjps = [grad_outputs[i] if i < gr.f_real_outputs else None for i in gr.df_input_vjps]
    df = gr.df.copy()
    lower_grad_of(df)
    df.lint()
    args = vjps + [inputs[i] for i in gr.df_input_captured_inputs] + \
        [outs[i] for i in gr.df_input_captured_outputs]
    return outs[:gr.f_real_outputs], dict(zip(gr.df_output_vjps, run_graph(df, args)))


def is_symbolic(gr) -> bool:
    return AUTOGRAD_FORMULA not in kinds(gr.df)


def test_every_differentiable_fusible_op_has_a_case():
    assert differentiable_fusible_kinds() == {k for k, *_ in OP_CASES.values()}


PARAMS = [(c, s) for c in OP_CASES for s in SHAPES if OP_CASES[c][2] > 1 or s == "same"]


@pytest.mark.parametrize("case, shapes", PARAMS, ids=[f"{c}-{s}" for c, s in PARAMS])
def test_op_gradients_match_eager(case, shapes):
    """f and df of the traced op (symbolic or not) give eager autograd's gradients."""
    gr, fn, inputs = traced_gradient(case, SHAPES[shapes])
    gr.f.lint()
    gr.df.lint()
    with E.no_grad():
        real = fn(*inputs)
    real = real if isinstance(real, (tuple, list)) else (real,)
    gouts = [rand(*o.shape, seed=10 + k) for k, o in enumerate(real)]
    outs, grads = run_gradient(gr, [x.detach() for x in inputs], gouts)
    for a, b in zip(outs, real):
        assert_same(a, b)
    leaves = [x.detach().requires_grad_() for x in inputs]
    eager = fn(*leaves)
    eager = eager if isinstance(eager, (tuple, list)) else (eager,)
    ref = E.autograd.grad(list(eager), leaves, gouts, allow_unused=True)
    for i, r in enumerate(ref):
        if r is None:  # a mask or condition input: no gradient either way
            assert grads.get(i) is None
        else:
            assert_same(grads[i], r)
    if is_symbolic(gr) and shapes != "same":
        assert GRAD_SUM_TO_SIZE in kinds(gr.df)  # broadcast gradients are reduced


def test_which_ops_compile_symbolically():
    """Which ops' backward is plain ember:: ops (no prim::AutogradFormula left in df)."""
    symbolic, fallback = [], []
    for case in OP_CASES:
        (symbolic if is_symbolic(traced_gradient(case)[0]) else fallback).append(case)
    print(f"\nsymbolic ({len(symbolic)}): {', '.join(symbolic)}"
          f"\nfallback ({len(fallback)}): {', '.join(fallback)}")
    assert EXPECTED_SYMBOLIC <= set(symbolic), EXPECTED_SYMBOLIC - set(symbolic)


@pytest.mark.parametrize("case", ["pow", "pow[tensor]", "clamp", "clamp[tensor]"])
def test_helper_formulas_compile_symbolically(case):
    # derivatives.yaml writes these with helpers (pow_backward_self, clamp_backward, ...),
    # which symbolic_formulas.HELPERS writes out as pointwise formulas
    assert is_symbolic(traced_gradient(case)[0])


def test_fallback_block_is_removed_whole():
    # div with rounding_mode="floor": the symbolic attempt left no GradOf behind
    gr, _, _ = traced_gradient("div[floor]", SHAPES["row_col"])
    grad_ofs = [n for n in gr.df.all_nodes() if n.kind == "prim::GradOf"]
    assert len(grad_ofs) == 1
    assert [n.kind for n in grad_ofs[0].blocks[0].nodes()] == [AUTOGRAD_FORMULA]


def test_non_constant_scalars_fall_back_next_to_symbolic_ops():
    # %w is a graph input: lerp.Scalar's and sub's formulas read it, so they stay opaque,
    # while mul (whose two inputs are the same value) compiles
    g = parse_ir("""graph(%a : Tensor, %b : Tensor, %w : float):
      %y : Tensor = ember::lerp.Scalar(%a, %b, %w)
      %z : Tensor = ember::mul(%y, %y)
      %s : Tensor = ember::sub(%z, %a, %w)
      return (%s)""")
    gr = differentiate(g)
    opaque = {n.attr("op") for n in gr.df.all_nodes() if n.kind == AUTOGRAD_FORMULA}
    assert opaque == {"ember::lerp.Scalar", "ember::sub"}
    a, b, gout = rand(3, 4), rand(4, seed=1), rand(3, 4, seed=2)
    _, grads = run_gradient(gr, [a, b, 0.3], [gout])
    la, lb = a.requires_grad_(), b.requires_grad_()
    y = la.lerp(lb, 0.3)
    ref = E.autograd.grad([(y * y).sub(la, alpha=0.3)], [la, lb], [gout])
    assert_same(grads[0], ref[0])
    assert_same(grads[1], ref[1])


# ---- 3. dtype promotion through the GraphExecutor -------------------------------------------
@pytest.mark.parametrize("shape_b", [(3, 4), (4,)])
def test_mixed_dtype_gradients_keep_the_input_dtypes(every_node_a_subgraph, shape_b):
    """float32 * float64: each gradient has its input's dtype (and shape), as in eager."""
    a = rand(3, 4, dtype=E.float32, requires_grad=True)
    b = rand(*shape_b, seed=1, requires_grad=True)
    traced = ember.jit.trace(lambda a, b: a * b, (a, b))
    ga, gb = E.autograd.grad([a * b], [a, b], [E.ones(3, 4, dtype=E.float64)])
    for step in range(2):  # the second time every plan, the backward's included, is cached
        a.grad = b.grad = None
        before = ember.jit.counters()
        out = traced(a, b)
        assert out.dtype is E.float64
        out.backward(E.ones(3, 4, dtype=E.float64))
        assert a.grad.dtype is E.float32 and b.grad.dtype is E.float64
        assert_same(a.grad, ga, rtol=1e-6, atol=1e-6)
        assert_same(b.grad, gb)
        if step:
            assert ember.jit.counters()["plan_cache_misses"] == before["plan_cache_misses"]
    # the backward ran symbolically: GradSumToSize casts a's gradient back to float32
    (plan,) = [p for s, p in traced.get_debug_state()["execution_plans"].items()
               if "grad on" in s]
    (bw,) = [p["graph"] for e in plan["backward_executors"]
             for p in e["execution_plans"].values()]
    assert AUTOGRAD_FORMULA not in kinds(bw) and "ember::mul" in kinds(bw)


def traced_broadcast_op(case):
    """The traced op with every input broadcast (its only input for a unary op)."""
    _, fn, arity, domain = OP_CASES[case]
    low, high = domain or (-2.0, 2.0)
    shapes = SHAPES["col_row" if arity > 1 else "same"][:arity]
    inputs = tuple(rand(*s, seed=i, low=low, high=high, requires_grad=True)
                   for i, s in enumerate(shapes))
    return ember.jit.trace(fn, inputs), inputs


@pytest.mark.parametrize("case", sorted(EXPECTED_SYMBOLIC))
def test_symbolic_op_gradcheck_and_gradgradcheck(every_node_a_subgraph, case):
    """First and second derivatives through the GraphExecutor, whose backward plans run
    the compiled formulas (and the reductions to the broadcast inputs' shapes)."""
    traced, inputs = traced_broadcast_op(case)
    assert E.autograd.gradcheck(traced, inputs)
    assert E.autograd.gradgradcheck(traced, inputs)


@pytest.mark.parametrize("case", sorted(EXPECTED_SYMBOLIC))
def test_symbolic_op_backward_plan_has_no_autograd_formula(every_node_a_subgraph, case):
    """What differentiate() compiles survives the executor's passes (canonicalize_ops
    rewrites clamp_min/clamp_max to clamp(x, lo, None), whose formula, the clamp_backward
    helper, compiles with its None bound decided at compile time)."""
    traced, inputs = traced_broadcast_op(case)
    traced(*inputs).sum().backward()
    (bw,) = backward_graphs(traced)
    assert AUTOGRAD_FORMULA not in kinds(bw), bw


def test_a_plan_without_reduction_is_not_reused_for_broadcasting(every_node_a_subgraph):
    # (3, 4) * (3, 4) and (3, 4) * (1, 4) have one ArgumentSpec; the ReduceMeta (None or
    # not) is a backward input, so the backward plan that dropped the reduction is not used
    traced = ember.jit.trace(lambda a, b: a * b, (rand(3, 4), rand(3, 4, seed=1)))
    for sa, sb in [((3, 4), (3, 4)), ((3, 4), (1, 4)), ((3, 1), (1, 4)), ((3, 4), (3, 4))]:
        a, b = rand(*sa, requires_grad=True), rand(*sb, seed=1, requires_grad=True)
        gout = rand(3, 4, seed=2)
        traced(a, b).backward(gout)
        ga, gb = E.autograd.grad([a * b], [a, b], [gout])
        assert_same(a.grad, ga)
        assert_same(b.grad, gb)


# ---- 4. matrix products ---------------------------------------------------------------------
MATRIX_CASES = {
    "mm": (lambda a, b: a.mm(b), (3, 4), (4, 2)),
    "matmul": (lambda a, b: a @ b, (3, 4), (4, 2)),          # of two matrices: mm's formulas
    "matmul[batched]": (lambda a, b: a @ b, (2, 3, 4), (4, 2)),  # its own (opaque) formula
    "bmm": (lambda a, b: a.bmm(b), (2, 3, 4), (2, 4, 2)),
    "t": (lambda a, b: a.t().mm(b), (3, 4), (3, 2)),
    "transpose": (lambda a, b: a.transpose(1, 2).bmm(b), (2, 3, 4), (2, 3, 2)),
}


@pytest.mark.parametrize("case", list(MATRIX_CASES))
def test_matrix_op_gradients(every_node_a_subgraph, case):
    """Eager's gradients, gradcheck and gradgradcheck through the GraphExecutor; the
    backward plan is ops (no opaque formula, no reduction) but for a batched matmul."""
    fn, sa, sb = MATRIX_CASES[case]
    a, b = rand(*sa, requires_grad=True), rand(*sb, seed=1, requires_grad=True)
    traced = ember.jit.trace(fn, (a, b))
    gout = rand(*fn(a, b).shape, seed=2)
    ref = E.autograd.grad([fn(a, b)], [a, b], [gout])
    assert_same(traced(a, b), fn(a, b))
    traced(a, b).backward(gout)
    assert_same(a.grad, ref[0])
    assert_same(b.grad, ref[1])
    (bw,) = backward_graphs(traced)
    opaque = {n.attr("op") for n in bw.all_nodes() if n.kind == AUTOGRAD_FORMULA}
    assert opaque == ({"ember::matmul"} if case == "matmul[batched]" else set()), bw
    assert GRAD_SUM_TO_SIZE not in kinds(bw) or case == "matmul[batched]", bw
    assert E.autograd.gradcheck(traced, (a, b))
    assert E.autograd.gradgradcheck(traced, (a, b))


@pytest.mark.parametrize("op", ["mm", "matmul"])
def test_mixed_dtype_matrix_product_casts_each_gradient_back(every_node_a_subgraph, op):
    """float32 x float64 promotes: the gradients go through GradSumToSize, which casts the
    first back to float32 (as eager autograd does)."""
    fn = (lambda a, b: a.mm(b)) if op == "mm" else (lambda a, b: a @ b)
    a = rand(3, 4, dtype=E.float32, requires_grad=True)
    b = rand(4, 2, seed=1, requires_grad=True)
    traced = ember.jit.trace(fn, (a, b))
    gout = rand(3, 2, seed=2)
    ga, gb = E.autograd.grad([fn(a, b)], [a, b], [gout])
    traced(a, b).backward(gout)
    assert a.grad.dtype is E.float32 and b.grad.dtype is E.float64
    assert_same(a.grad, ga, rtol=1e-6, atol=1e-6)
    assert_same(b.grad, gb, rtol=1e-6, atol=1e-6)
    (bw,) = backward_graphs(traced)
    assert AUTOGRAD_FORMULA not in kinds(bw) and GRAD_SUM_TO_SIZE in kinds(bw), bw


def test_chunk_with_an_unused_piece_keeps_its_formula(every_node_a_subgraph):
    """Only when every piece has a gradient is chunk's backward a plain cat; otherwise the
    formula fills the missing piece with zeros."""
    def fn(x):
        a, b, c = x.chunk(3, 1)
        return a.sigmoid() * c
    x = rand(2, 6, requires_grad=True)
    traced = ember.jit.trace(fn, (x,))
    gout = rand(2, 2, seed=1)
    (ref,) = E.autograd.grad([fn(x)], [x], [gout])
    traced(x).backward(gout)
    assert_same(x.grad, ref)
    (bw,) = backward_graphs(traced)
    opaque = {n.attr("op") for n in bw.all_nodes() if n.kind == AUTOGRAD_FORMULA}
    assert opaque == {"ember::chunk"} and "ember::cat" not in kinds(bw), bw


# ---- 5. a traced LSTM cell through the GraphExecutor ----------------------------------------
def lstm_cell(x, hx, cx, w_ih, w_hh, b):
    gates = x.mm(w_ih.t()) + hx.mm(w_hh.t()) + b
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def lstm_cell_matmul(x, hx, cx, w_ih, w_hh, b):
    gates = x @ w_ih.t() + hx @ w_hh.t() + b
    i, f, g, o = gates.chunk(4, 1)
    cy = f.sigmoid() * cx + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


H = 2


def lstm_inputs(bias_shape):
    shapes = [(2, 3), (2, H), (2, H), (4 * H, 3), (4 * H, H), bias_shape]
    return [rand(*s, seed=i, requires_grad=True) for i, s in enumerate(shapes)]


@pytest.mark.parametrize("cell", [lstm_cell, lstm_cell_matmul], ids=["mm", "matmul"])
@pytest.mark.parametrize("bias_shape", [(4 * H,), (1, 4 * H), ()])
def test_lstm_cell_gradients_match_eager(bias_shape, cell):
    """Three forward+backward runs (the later ones from cached plans) give eager's values;
    the backward plan is ops only: chunk's gradient a cat, the products' mm and t."""
    inputs = lstm_inputs(bias_shape)
    traced = ember.jit.trace(cell, tuple(inputs))
    eager_out = cell(*inputs)
    ref = E.autograd.grad([eager_out[0].sum(), (eager_out[1] ** 2).sum()], inputs)
    for _ in range(3):
        for x in inputs:
            x.grad = None
        h, c = traced(*inputs)
        assert_same(h, eager_out[0])
        assert_same(c, eager_out[1])
        (h.sum() + (c * c).sum()).backward()
        for x, r in zip(inputs, ref):
            assert_same(x.grad, r)
    (bw,) = backward_graphs(traced)
    ks = kinds(bw)
    assert "prim::If" not in ks
    assert AUTOGRAD_FORMULA not in ks and "ember::cat" in ks and ks.count("ember::mm") == 4
    # equal shapes and dtypes: every reduction is folded but the broadcast bias's
    assert ks.count(GRAD_SUM_TO_SIZE) == 1


@pytest.mark.parametrize("bias_shape", [(4 * H,), (1, 4 * H), ()])
def test_lstm_cell_gradcheck_and_gradgradcheck(bias_shape):
    inputs = tuple(lstm_inputs(bias_shape))
    traced = ember.jit.trace(lstm_cell, inputs)
    assert E.autograd.gradcheck(traced, inputs)
    assert E.autograd.gradgradcheck(traced, inputs)
