"""pow and clamp through the JIT's backward: their formulas call helpers of
ember.autograd.formulas, whose source ``symbolic_formulas.HELPERS`` lowers to ops; the
compiled gradients equal eager's bit for bit at edge values (zeros, signed zeros, the
clamp bounds), in every dtype mix, under gradcheck and gradgradcheck, and fuse."""
import ast

import numpy as np
import pytest

import ember as E
from ember.autograd import formulas
from ember.jit.autodiff.differentiation import AUTOGRAD_FORMULA, differentiate
from ember.jit.runtime.fuser import using_fuser
from ember.jit.ir.parser import parse_ir
from ember.jit.autodiff.symbolic_formulas import HELPERS
from ember.ops import DERIVATIVES
from helpers import ReferenceFuser, backward_graphs, rand, to_np

# Values with zeros (signed too), negatives and the clamp bounds +-0.5 themselves
EDGE_X = [[0.0, -1.5, 2.0, 0.5], [-0.5, 0.5, 1.0, -2.0], [3.0, -0.0, 0.25, -1.0]]
EDGE_Y = [[0.0, 2.0, -1.0, 0.5], [-0.5, 0.5, 1.0, 3.0], [0.0, -0.0, 0.25, -1.0]]
# case id -> function of (x, y); y is read only by the tensor-exponent and tensor-bound cases
HELPER_CASES = {
    **{f"pow[{e}]": (lambda x, y, e=e: x.pow(e)) for e in (0, 1, 2, 0.5, -1, 3, 0.0, 2.5)},
    "pow[tensor]": lambda x, y: x.pow(y),
    "pow[tensor, broadcast]": lambda x, y: x.pow(y),
    "pow[tensor, integral values]": lambda x, y: x.pow((y * 4).round()),
    "clamp[min]": lambda x, y: x.clamp(min=-0.5),
    "clamp[max]": lambda x, y: x.clamp(max=0.5),
    "clamp[both]": lambda x, y: x.clamp(-0.5, 0.5),
    "clamp[min > max]": lambda x, y: x.clamp(0.5, -0.5),
    "clamp_min": lambda x, y: x.clamp_min(0.5),
    "clamp_max": lambda x, y: x.clamp_max(-0.5),
    "clamp[tensor min]": lambda x, y: x.clamp(min=y),
    "clamp[tensor max]": lambda x, y: x.clamp(max=y),
    "clamp[tensors]": lambda x, y: x.clamp(y - 0.5, y + 0.5),
    "clamp[tensors, min > max]": lambda x, y: x.clamp(y + 0.5, y - 0.5),
    "clamp[tensors, min == max]": lambda x, y: x.clamp(y, y),  # max wins the tie
    "clamp[tensor min, number max]": lambda x, y: x.clamp(y, 0.5),
    "clamp[number min, tensor max]": lambda x, y: x.clamp(-0.5, y),
    "clamp[tensor min, broadcast]": lambda x, y: x.clamp(y, 0.5),
    "clamp_min[tensor]": lambda x, y: x.clamp_min(y),
    "clamp_max[tensor]": lambda x, y: x.clamp_max(y),
}
# the part of EDGE_Y that y is, for the cases that broadcast it (default: all of it)
BROADCAST_Y = {"pow[tensor, broadcast]": np.s_[0], "clamp[tensor min, broadcast]": np.s_[:, :1]}


def assert_identical(got, ref):
    """Same shape, dtype and bits (NaN where NaN): the compiled formula does the eager
    helper's arithmetic in its order."""
    assert got is not None and ref is not None, (got, ref)
    assert tuple(got.shape) == tuple(ref.shape) and got.dtype is ref.dtype, \
        (got.shape, got.dtype, ref.shape, ref.dtype)
    np.testing.assert_array_equal(to_np(got), to_np(ref))


def opaque_ops(traced) -> set:
    """The ops whose backward stayed a prim::AutogradFormula in some backward plan."""
    return {n.attr("op") for bw in backward_graphs(traced) for n in bw.all_nodes()
            if n.kind == AUTOGRAD_FORMULA}


def traced_and_eager_grads(fn, inputs, gout, runs=2):
    """Gradients of ``fn`` w.r.t. the inputs requiring grad, through the traced function
    (``runs`` times: the later runs from cached plans) and in eager mode."""
    wrt = [x for x in inputs if x.requires_grad]
    traced = E.jit.trace(fn, tuple(inputs))
    ref = E.autograd.grad([fn(*inputs)], wrt, [gout], allow_unused=True)
    for _ in range(runs):
        got = E.autograd.grad([traced(*inputs)], wrt, [gout], allow_unused=True)
    return traced, got, ref


@pytest.mark.parametrize("dtype", [E.float64, E.float32], ids=["float64", "float32"])
@pytest.mark.parametrize("case", list(HELPER_CASES))
def test_pow_and_clamp_gradients_equal_eager(every_node_a_subgraph, case, dtype):
    """Scalar and tensor exponents (0 ** e, negative bases: inf and NaN gradients where
    eager has them), clamp bounds numbers or tensors, values exactly at the bounds: the
    backward plan is ops only and its gradients are eager's, bit for bit."""
    fn = HELPER_CASES[case]
    x = E.tensor(np.array(EDGE_X, dtype=dtype.numpy), requires_grad=True)
    y = np.array(EDGE_Y, dtype=dtype.numpy)[BROADCAST_Y.get(case, np.s_[:])]
    y = E.tensor(y, requires_grad=True)
    gout = rand(*fn(x, y).shape, seed=3, dtype=dtype)
    traced, got, ref = traced_and_eager_grads(fn, (x, y), gout)
    # round's own formula (zeros) stays opaque; the pow and clamp formulas compile
    assert opaque_ops(traced) == ({"ember::round"} if "integral" in case else set())
    for g, r in zip(got, ref):
        if r is None:
            assert g is None
        else:
            assert_identical(g, r)


def test_pow_by_zero_has_zero_gradient_not_nan(every_node_a_subgraph):
    # d/dx x^0 is +0 everywhere, 0 ** 0 included (not 0 * 0 ** -1 = nan), whatever the
    # incoming gradient (zeros_like(grad), not grad * 0: no -0, nan or inf * 0), as eager
    x = E.tensor([0.0, -1.0, 2.0, 3.0], dtype=E.float64, requires_grad=True)
    y = E.tensor([0.0, 0.0, 0.0, 0.0], dtype=E.float64, requires_grad=True)
    gout = E.tensor([1.0, -1.0, np.nan, np.inf], dtype=E.float64)
    for fn in (lambda x, y: x.pow(0), lambda x, y: x.pow(y)):
        traced, (gx, _), (ref, _) = traced_and_eager_grads(fn, (x, y), gout)
        assert not opaque_ops(traced)
        assert_identical(gx, ref)
        np.testing.assert_array_equal(to_np(gx), [0.0, 0.0, 0.0, 0.0])
        assert not np.signbit(to_np(gx)).any()


def test_pow_exponent_gradient_at_zero_base(every_node_a_subgraph):
    # d/de 0^e: 0 for e >= 0 (PyTorch's special case), else grad * inf * log(0)
    x = E.tensor([0.0, 0.0, 0.0, 2.0], dtype=E.float64, requires_grad=True)
    e = E.tensor([2.0, 0.0, -1.0, 3.0], dtype=E.float64, requires_grad=True)
    gout = E.ones(4, dtype=E.float64)
    traced, (_, ge), _ = traced_and_eager_grads(lambda x, e: x.pow(e), (x, e), gout)
    assert not opaque_ops(traced)
    np.testing.assert_array_equal(to_np(ge), [0.0, 0.0, -np.inf, 8.0 * np.log(2.0)])


DTYPE_CASES = {  # (function, x dtype, y dtype); only floating inputs require grad
    "int ** float": (lambda x, y: x.pow(y), E.int64, E.float64),
    "bool ** float": (lambda x, y: x.pow(y), E.bool_, E.float64),
    "float ** int": (lambda x, y: x.pow(y), E.float64, E.int64),
    "float32 ** float64": (lambda x, y: x.pow(y), E.float32, E.float64),
    "int.clamp(float tensors)": (lambda x, y: x.clamp(y - 1, y + 1), E.int64, E.float64),
    "int.clamp(min=float tensor)": (lambda x, y: x.clamp(min=y), E.int32, E.float32),
    "float.clamp(int tensors)": (lambda x, y: x.clamp(y, y + 1), E.float64, E.int64),
    "float.clamp(max=bool tensor)": (lambda x, y: x.clamp(max=y), E.float32, E.bool_),
    "float32.clamp(float64 tensor)": (lambda x, y: x.clamp(min=y), E.float32, E.float64),
}


@pytest.mark.parametrize("case", list(DTYPE_CASES))
def test_pow_and_clamp_integral_and_mixed_dtypes(every_node_a_subgraph, case):
    """Integral and bool operands (no gradient of their own) and promoted dtypes: each
    gradient is eager's, in its input's dtype, from ops only."""
    fn, dx, dy = DTYPE_CASES[case]
    x = E.tensor((np.array(EDGE_X) * 2).astype(dx.numpy), requires_grad=dx.is_floating_point)
    y = E.tensor((np.array(EDGE_Y) * 2).astype(dy.numpy), requires_grad=dy.is_floating_point)
    out = fn(x, y)
    traced, got, ref = traced_and_eager_grads(fn, (x, y), rand(*out.shape, dtype=out.dtype))
    assert not opaque_ops(traced)
    for g, r in zip(got, ref):
        assert_identical(g, r)


def test_number_base_keeps_the_opaque_formula(every_node_a_subgraph):
    # 2 ** x: pow_backward_exponent takes the log of tensor(2, dtype=result.dtype), which
    # no pointwise op computes from a number: the formula stays opaque, and correct
    x = E.tensor(np.array(EDGE_X), requires_grad=True)
    traced, (got,), (ref,) = traced_and_eager_grads(lambda x: 2 ** x, (x,), rand(3, 4))
    assert opaque_ops(traced) == {"ember::pow"}
    assert_identical(got, ref)


def test_clamp_without_bounds_keeps_the_opaque_formula():
    # both bounds None (the forward raises): the helper's expansion compares with None,
    # which does not compile, so nothing is made up
    g = parse_ir("""graph(%x : Tensor):
      %none : NoneType = prim::Constant[value=None]()
      %y : Tensor = ember::clamp(%x, %none, %none)
      return (%y)""")
    gr = differentiate(g)
    assert [n.attr("op") for n in gr.df.all_nodes() if n.kind == AUTOGRAD_FORMULA] == \
        ["ember::clamp"]


GRADCHECK_CASES = {  # smooth at the inputs: positive bases, values off the clamp bounds
    **{f"pow[{e}]": (lambda x, y, e=e: x.pow(e)) for e in (0, 1, 2, 0.5, -1, 3)},
    "pow[tensor]": lambda x, y: x.pow(y),
    "clamp[min]": lambda x, y: x.clamp(min=0.9),
    "clamp[max]": lambda x, y: x.clamp(max=1.1),
    "clamp[both]": lambda x, y: x.clamp(0.9, 1.1),
    "clamp[tensors]": lambda x, y: x.clamp(y - 0.6, y + 0.2),
    "clamp_min[tensor]": lambda x, y: x.clamp_min(y),
    "clamp_max[tensor]": lambda x, y: x.clamp_max(y),
}


@pytest.mark.parametrize("case", list(GRADCHECK_CASES))
def test_pow_and_clamp_gradcheck(every_node_a_subgraph, case):
    """Numerical gradients (and second derivatives) through the traced function, whose
    backward plan is ops."""
    fn = GRADCHECK_CASES[case]
    x = rand(3, 4, low=0.5, high=1.5, requires_grad=True)
    y = rand(3, 4, seed=1, low=0.5, high=1.5, requires_grad=True)
    traced = E.jit.trace(fn, (x, y))
    assert E.autograd.gradcheck(traced, (x, y))
    assert E.autograd.gradgradcheck(traced, (x, y))
    assert not opaque_ops(traced)


def test_pow_and_clamp_backward_fuses(monkeypatch):
    """The brief's example: its backward plan keeps only sum's opaque formula, and every
    pointwise op of it is in a FusionGroup (a ReferenceFuser for "cpu")."""
    monkeypatch.setattr("ember.jit.runtime.fuser._plugin_fusers", dict)

    def fn(x, y):
        return (x.clamp(-0.5, 0.5) * x.pow(2) + x.pow(y)).sum()
    x = E.tensor(np.array(EDGE_X, dtype=np.float32), requires_grad=True)
    y = E.tensor(np.array(EDGE_Y, dtype=np.float32), requires_grad=True)
    with using_fuser("cpu", ReferenceFuser()):
        traced, got, ref = traced_and_eager_grads(fn, (x, y), E.tensor(1.0, dtype=E.float32))
    for g, r in zip(got, ref):
        assert_identical(g, r)
    assert opaque_ops(traced) == {"ember::sum"}
    (bw,) = backward_graphs(traced)
    top = [n.kind for n in bw.nodes()]
    assert "prim::FusionGroup" in top and not [k for k in top if k.startswith("ember::")], bw


def test_helpers_are_the_eager_helpers():
    """Each HELPERS entry names a helper of ember.autograd.formulas, whose own source the
    lowering reads (no second copy of its math), and the derivatives.yaml formulas of pow,
    clamp, mm and addmm call exactly them (besides maybe_multiply, which the lowering knows
    itself)."""
    for name in HELPERS:
        assert callable(getattr(formulas, name)), name
    called = {f.expression.split("(")[0] for op in ("pow", "clamp", "mm", "addmm")
              for f in DERIVATIVES[op].formulas}
    assert {c for c in called if c in vars(formulas) and c != "maybe_multiply"} == \
        set(HELPERS)


def test_a_helper_statement_outside_the_subset_keeps_the_formula_opaque(monkeypatch):
    """The lowering reads the helper's source: a statement it cannot write as ops (a loop)
    raises NotSymbolic rather than compiling something else than eager runs."""
    from ember.jit.autodiff import symbolic_formulas as sf
    src = "def pow_backward_self(grad, self, exponent):\n    for _ in (): pass\n" \
          "    return grad\n"
    body = ast.parse(src).body[0].body
    monkeypatch.setattr(sf, "_helper", lambda name: (("grad", "self", "exponent"),
                                                      tuple(body), {}))
    g = parse_ir("graph(%g : Tensor, %x : Tensor, %e : Tensor):\n  return (%g)")
    env = dict(zip(("grad", "self", "exponent"), g.inputs))
    with pytest.raises(sf.NotSymbolic, match="statement"):
        sf.compile_formula("pow_backward_self(grad, self, exponent)", env, g.block)
    assert not list(g.nodes())
