"""The glu and prelu kernel pairs (kernels/gates.py) against float64 numpy references:
values and first-order gradients for float16, bfloat16, float32 and float64, at a small
size and at a size that takes the row blocks, with special values (+-inf, nan, -0.0, huge,
tiny, subnormal); every weight path of prelu (max, min, select; NaN and 0 weights); the
op-by-op form for create_graph (gradcheck, gradgradcheck) and under tracing."""
import numpy as np
import pytest
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, TOL, to_np

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered")
DTYPES = LOW_FLOAT_DTYPES + FLOAT_DTYPES
SPECIAL = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e30, -1e30, 1e-30, -1e-30, 1e-40, -1e-40,
           3.0, -3.0, 100.0, -100.0]
SHAPES = [(2, 3, 4), (8, 16, 32, 32)]  # 24 elements; 131072 >= ROW_MIN_SIZE


def _inputs(shape, dtype, seed, low=-4.0, high=4.0, special=False):
    """(tensor, its values in float64 after rounding to dtype)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(low, high, shape)
    if special:
        a.reshape(-1)[:len(SPECIAL)] = SPECIAL
    t = E.tensor(a, dtype=dtype)
    return t, to_np(t).astype(np.float64)


def _close(actual, expected, dtype, ulps=None):
    """Values as assert_close, NaNs where the reference has them; float32 within ``ulps``
    of the float64 reference (relative) when given."""
    got = to_np(actual).astype(np.float64)
    assert got.shape == expected.shape
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    rtol, atol = TOL[dtype]
    if dtype is E.float32 and ulps is not None:
        rtol, atol = ulps * 2.0 ** -23, 1e-37  # (an ulp is at most 2^-23 relative)
    with np.errstate(invalid="ignore"):
        ok = np.isnan(expected) | (got == expected) | \
            (np.abs(got - expected) <= atol + rtol * np.abs(expected))
    assert ok.all(), (got[~ok][:5], expected[~ok][:5])


# ---- prelu ---------------------------------------------------------------------------------

def _np_prelu(x, w, ndim):
    wb = w.reshape(()) if w.size == 1 else w.reshape((w.size,) + (1,) * (ndim - 2))
    with np.errstate(invalid="ignore"):
        return np.where(x > 0, x, wb * x)


def _np_prelu_grads(x, w, g):
    wb = w.reshape(()) if w.size == 1 else w.reshape((w.size,) + (1,) * (x.ndim - 2))
    with np.errstate(invalid="ignore"):
        gx = np.where(x > 0, g, g * wb)
        t = np.where(x > 0, 0.0, x * g)
    gw = t.sum() if w.size == 1 else t.reshape(t.shape[0], t.shape[1], -1).sum((0, 2))
    return gx, np.asarray(gw).reshape(w.shape)


WEIGHTS = {  # the kernels' paths: max (0 < w <= 1 or all < 0), min (w >= 1), select
    "max": lambda c: np.linspace(0.05, 1.0, c),
    "negative": lambda c: np.linspace(-2.0, -0.5, c),
    "min": lambda c: np.linspace(1.0, 3.0, c),
    "mixed": lambda c: np.linspace(-1.0, 2.0, c),
    "zero": lambda c: np.linspace(0.0, 0.5, c),
    "nan": lambda c: np.r_[np.nan, np.linspace(0.1, 0.5, c - 1)],
}


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("kind", list(WEIGHTS))
@pytest.mark.parametrize("channels", [True, False], ids=["per_channel", "one"])
def test_prelu_values_and_grads(dtype, shape, kind, channels):
    x, xr = _inputs(shape, dtype, 0, special=True)
    c = shape[1] if channels else 1
    w = E.tensor(WEIGHTS[kind](max(c, 2))[:c], dtype=dtype)
    wr = to_np(w).astype(np.float64)
    x.requires_grad_(True)
    w.requires_grad_(True)
    y = F.prelu(x, w)
    _close(y, _np_prelu(xr, wr, len(shape)), dtype, ulps=0.5)
    g, gr = _inputs(shape, dtype, 1)
    y.backward(g)
    gx, gw = _np_prelu_grads(xr, wr, gr)
    _close(x.grad, gx, dtype, ulps=0.5)
    assert x.grad.dtype is dtype and w.grad.dtype is dtype
    if not np.isnan(gw).any():  # a NaN x makes its channel's sum NaN in both
        rtol = {E.float16: 2e-2, E.bfloat16: 5e-2, E.float32: 1e-4, E.float64: 1e-10}[dtype]
        scale = np.abs(np.where(xr > 0, 0, xr * gr)).reshape(shape[0], c, -1).sum((0, 2)) \
            if channels else np.abs(np.where(xr > 0, 0, xr * gr)).sum()
        fin = np.isfinite(gw)
        got = to_np(w.grad).astype(np.float64)
        assert np.all(np.abs(got - gw)[fin] <= rtol * np.reshape(scale, gw.shape)[fin] + 1e-30)


def test_prelu_sign_of_zero_and_infinities_match_the_select():
    """max(x, w x) returns w x on ties: PyTorch's sign of zero; inf stays inf."""
    x = E.tensor([-0.0, 0.0, np.inf, -np.inf, np.nan] * 20000, dtype=E.float32)
    for wv in (0.25, -0.5, 2.0):
        w = E.tensor([wv], dtype=E.float32)
        ref = _np_prelu(to_np(x), to_np(w), 1)
        got = to_np(F.prelu(x, w))
        assert np.array_equal(np.signbit(got), np.signbit(ref))
        assert np.array_equal(got, ref, equal_nan=True)


def test_prelu_nonfinite_grad_at_positive_x_gives_zero_weight_grad():
    """PyTorch selects 0 where x > 0, so an inf grad there adds nothing to d/dw."""
    x = E.tensor([[1.0, -2.0], [3.0, -1.0]], requires_grad=True)
    w = E.tensor([0.25], requires_grad=True)
    F.prelu(x, w).backward(E.tensor([[np.inf, 1.0], [np.nan, 2.0]]))
    assert w.grad.tolist() == [-4.0]


def test_prelu_gradcheck_gradgradcheck_and_trace():
    x = E.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 3, 4)), requires_grad=True)
    for w in (E.tensor([0.1, 0.3, 0.9], dtype=E.float64, requires_grad=True),
              E.tensor([-0.5, 1.5, 0.2], dtype=E.float64, requires_grad=True)):
        assert gradcheck(F.prelu, (x, w))
        assert gradgradcheck(F.prelu, (x, w))
    traced = E.jit.trace(lambda a, b: F.prelu(a, b), (x.detach(), w.detach()))
    assert "prelu" in str(traced.graph)
    assert np.allclose(to_np(traced(x.detach(), w.detach())), to_np(F.prelu(x, w)))


# ---- glu -----------------------------------------------------------------------------------

def _sigmoid(x):
    return np.exp(-np.logaddexp(0.0, -x))


def _np_glu(x, dim):
    a, b = np.split(x, 2, axis=dim)
    return a * _sigmoid(b)


def _np_glu_grad(x, g, dim):
    """(the gradient, its error scale |g s| for a, |g a s| for b)."""
    a, b = np.split(x, 2, axis=dim)
    s = _sigmoid(b)
    grad = np.concatenate([g * s, g * a * s * (1 - s)], axis=dim)
    return grad, np.concatenate([np.abs(g * s), np.abs(g * a * s)], axis=dim)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(2, 4, 6), (8, 16, 32, 32)], ids=str)
@pytest.mark.parametrize("dim", [-1, 1, 0])
def test_glu_values_and_grads(dtype, shape, dim):
    """float32: values within 4 ulp (measured 3.2 on 2e6 points of [-20, 20]); d/da within
    5 ulp (3.7), d/db within 8 eps |g a s| (5.4: 1 - s cancels as in PyTorch's formula)."""
    x, xr = _inputs(shape, dtype, 0, low=-20.0, high=20.0, special=True)
    x.requires_grad_(True)
    y = F.glu(x, dim)
    with np.errstate(invalid="ignore", over="ignore"):
        expected = _np_glu(xr, dim)
        _close(y, expected, dtype, ulps=4)
        g, gr = _inputs(y.shape, dtype, 1)
        y.backward(g)
        expected_g, scale = _np_glu_grad(xr, gr, dim)
        got = to_np(x.grad).astype(np.float64)
        assert np.array_equal(np.isnan(got), np.isnan(expected_g))
        eps = {E.float16: 2e-3, E.bfloat16: 1.6e-2, E.float32: 2.0 ** -24,
               E.float64: 2.0 ** -50}[dtype]
        fin = np.isfinite(expected_g)
        tiny = 2.0 ** -23 if dtype is E.float16 else 1e-37  # float16's subnormal spacing
        assert (np.abs(got - expected_g)[fin] <= 8 * eps * scale[fin] + tiny).all()
        assert ((got[~fin] == expected_g[~fin]) | np.isnan(expected_g[~fin])).all()
    assert x.grad.dtype is dtype and tuple(x.grad.shape) == shape


def test_glu_gradcheck_gradgradcheck_and_trace():
    x = E.tensor(np.random.default_rng(0).uniform(-3, 3, (2, 4, 6)), requires_grad=True)
    for dim in (0, 1, -1):
        assert gradcheck(lambda t, d=dim: F.glu(t, d), (x,))
        assert gradgradcheck(lambda t, d=dim: F.glu(t, d), (x,))
    traced = E.jit.trace(lambda t: F.glu(t, -1), (x.detach(),))
    assert "glu" in str(traced.graph)
    assert np.allclose(to_np(traced(x.detach())), to_np(F.glu(x, -1)))
