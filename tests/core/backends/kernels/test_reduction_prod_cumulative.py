"""prod (its float64-lane full product), cumsum and cumprod (kernels/reduction.py) and the
backward formulas of prod and cumprod (autograd/formulas/_reduction.py) against float64
references: dtypes, dtype=, special values, zeros in the gradients."""
import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, INT_DTYPES, assert_close, make, to_np

import ember as E
from ember.autograd import gradcheck, gradgradcheck
from ember.backends.kernels import reduction_blocked

FLOATS = [E.float16, E.bfloat16, E.float32, E.float64]
SPECIAL = [0.0, -0.0, math.inf, -math.inf, math.nan, 3.0e38, 1.0e-38, 1.0e-45, -1.5, 2.0]


def ulps(got, ref, dtype) -> float:
    """The largest |got - ref| in units of the last place of the float ``dtype`` at ref."""
    got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
    eps = {E.float32: 2.0 ** -23, E.float64: 2.0 ** -52}[dtype]
    return float(np.max(np.abs(got - ref) / (np.abs(ref) * eps)))


# ---- prod ---------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [reduction_blocked.PROD_MIN, 40001, 1_000_000])
@pytest.mark.parametrize("spread", ["near1", "lognormal"])
def test_prod_of_a_big_float32_array_against_float64(n, spread):
    rng = np.random.default_rng(n)
    if spread == "near1":  # the case the lanes' start at 0.75 is for
        x = rng.uniform(0.9999, 1.0001, n).astype(np.float32)
    else:
        x = np.exp(rng.normal(0.0, 1e-2, n)).astype(np.float32)
    ref = np.prod(x.astype(np.float64))
    got = E.prod(E.tensor(x))
    assert got.dtype is E.float32 and got.shape == ()
    # measured <= 1e3 ulp (the chain: up to 6e3 at 1e6 near 1, PyTorch 3e4)
    assert ulps(got.item(), ref, E.float32) <= 2e3
    assert E.prod(E.tensor(x).reshape(1, -1), keepdim=False).item() == got.item()


@pytest.mark.parametrize("value", SPECIAL)
def test_prod_lanes_keep_the_special_values_of_the_chain(value):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.99, 1.01, 50000).astype(np.float32)
    x[12345] = value
    want = np.multiply.reduce(x.astype(np.float64)).astype(np.float32)
    got = E.prod(E.tensor(x)).item()
    if math.isnan(want):
        assert math.isnan(got)
    else:  # a subnormal product keeps a few bits only (the chain's loses them too)
        assert got == pytest.approx(float(want), rel=1e-4, abs=3e-45)
        assert math.copysign(1.0, got) == math.copysign(1.0, float(want))
    x[777] = 0.0  # zero times inf is NaN in any order
    got = E.prod(E.tensor(x)).item()
    assert math.isnan(got) if math.isinf(value) or math.isnan(value) else got == 0.0


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("value", SPECIAL)
def test_prod_special_values_per_dtype(dtype, value):
    arr = np.array([[1.5, value, -2.0], [value, 0.5, 4.0]])
    with np.errstate(all="ignore"):
        x = E.tensor(arr.astype(dtype.numpy))
        # special values (overflow included) as in the accumulation type: float32 for
        # float16/bfloat16/float32, float64 for float64
        acc = to_np(x).astype(np.float64 if dtype is E.float64 else np.float32)
        assert_close(x.prod(), np.prod(acc), dtype)
        assert_close(x.prod(1, keepdim=True), np.prod(acc, 1, keepdims=True), dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_prod_dtypes_and_the_dtype_argument(dtype):
    x, ref = make((3, 4), dtype, low=-2, high=2)
    want = E.int64 if dtype is E.bool_ or dtype in INT_DTYPES else dtype
    assert_close(x.prod(), np.prod(ref), want)
    assert_close(x.prod(1), np.prod(ref, 1), want)
    assert_close(E.prod(x, 0, dtype=E.float64), np.prod(ref, 0), E.float64)
    if dtype is not E.bool_:
        # dtype= equal to an integral input's keeps it (int32 stays int32, as PyTorch)
        assert E.prod(x, dtype=dtype).dtype is dtype
        assert E.prod(x, 1, dtype=dtype).dtype is dtype
    big = E.ones(reduction_blocked.PROD_MIN + 5, dtype=dtype) if dtype is not E.bool_ else None
    if big is not None:  # the lane path's keepdim and non-float32 inputs
        assert_close(big.reshape(1, -1).prod(), 1.0, want)


def test_prod_keepdim_of_the_lane_path():
    x = E.ones(2, reduction_blocked.PROD_MIN)
    r = E.prod(x, dtype=E.float32)
    assert r.shape == () and r.item() == 1.0


@pytest.mark.parametrize("case,arr", [
    ("one_zero", [[1.5, 0.0, -0.7, 2.0], [0.3, 1.2, 1.1, 0.8]]),
    ("two_zeros", [[0.0, 1.5, 0.0, 2.0], [0.0, 0.0, 0.0, 0.8]]),
    ("no_zero", [[1.5, 0.2, -0.7, 2.0], [0.3, 1.2, 1.1, 0.8]])])
@pytest.mark.parametrize("dim", [None, 0, 1])
def test_prod_gradients_with_zeros(case, arr, dim):
    a = np.array(arr)
    x = E.tensor(a, requires_grad=True)
    (x.prod() if dim is None else x.prod(dim)).sum().backward()
    # the product of the others along dim, in float64
    want = np.empty_like(a)
    for idx in np.ndindex(a.shape):
        if dim is None:
            others = np.delete(a.ravel(), np.ravel_multi_index(idx, a.shape))
        else:
            line = np.take(a, idx[1 - dim], axis=1 - dim)
            others = np.delete(line, idx[dim])
        want[idx] = np.prod(others)
    assert_close(x.grad, want, E.float64)
    f = (lambda t: t.prod()) if dim is None else (lambda t: t.prod(dim))
    assert gradcheck(f, (E.tensor(a, requires_grad=True),))
    assert gradgradcheck(f, (E.tensor(a, requires_grad=True),))


# ---- cumsum / cumprod ---------------------------------------------------------------------

@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cumulative_matches_float64(op, dtype, dim):
    x, ref = make((6, 50), dtype, low=0.5, high=1.5)
    got = getattr(E, op)(x, dim)
    assert got.dtype is dtype
    assert_close(got, getattr(np, op)(ref, axis=dim), dtype,
                 rtol={E.float16: 3e-2, E.bfloat16: 6e-2, E.float32: 5e-6,
                       E.float64: 1e-13}[dtype])


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_cumulative_special_values(op, dtype):
    arr = np.array([SPECIAL, SPECIAL[::-1]])
    with np.errstate(all="ignore"):
        x = E.tensor(arr.astype(dtype.numpy))
        # NaN, inf (overflow included), -0.0 as in the accumulation type: float32 for
        # float16/bfloat16/float32, float64 for float64
        acc = to_np(x).astype(np.float64 if dtype is E.float64 else np.float32)
        want = getattr(np, op)(acc, axis=1).astype(np.float64)
    got = getattr(E, op)(x, 1)
    assert_close(got, want, dtype)
    assert np.array_equal(np.signbit(to_np(got)), np.signbit(want.astype(dtype.numpy)))


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_cumulative_dtypes_and_the_dtype_argument(op, dtype):
    x, ref = make((3, 4), dtype, low=-2, high=2)
    want = E.int64 if dtype is E.bool_ or dtype in INT_DTYPES else dtype
    f = getattr(E, op)
    assert_close(f(x, 1), getattr(np, op)(ref, axis=1), want)
    assert_close(f(x, 0, dtype=E.float64), getattr(np, op)(ref, axis=0), E.float64)
    if dtype is not E.bool_:
        assert f(x, 1, dtype=dtype).dtype is dtype  # int32 stays int32, as PyTorch
    s = E.tensor(np.array(3, dtype.numpy))
    assert_close(f(s, 0), np.array(to_np(s), np.float64), want)


def test_cumsum_of_int64_does_not_copy_its_input_twice():
    x = E.arange(10)
    y = x.cumsum(0)
    assert y.tolist() == np.cumsum(np.arange(10)).tolist()
    assert y._data is not x._data


def _cumprod_grad_reference(a, g, dim):
    """sum_{j >= i} g_j * prod_{l <= j, l != i} x_l along dim, in float64."""
    a, g = np.moveaxis(a, dim, -1), np.moveaxis(g, dim, -1)
    n = a.shape[-1]
    out = np.zeros_like(a)
    for i in range(n):
        for j in range(i, n):
            others = np.delete(a[..., :j + 1], i, axis=-1)
            out[..., i] += g[..., j] * np.prod(others, axis=-1)
    return np.moveaxis(out, -1, dim)


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_cumprod_backward_with_zeros_is_exact(dim):
    rng = np.random.default_rng(3)
    a = rng.uniform(-2, 2, (3, 6, 4))
    a[0, 2, 1] = a[1, 0, 3] = a[1, 4, 3] = a[2, 5, 0] = a[2, 1, 2] = a[0, 3, 1] = 0.0
    g = rng.normal(size=a.shape)
    x = E.tensor(a, requires_grad=True)
    E.cumprod(x, dim).backward(E.tensor(g))
    assert_close(x.grad, _cumprod_grad_reference(a, g, dim), E.float64)
    # create_graph takes the polynomial form: same values, and differentiable again
    x = E.tensor(a, requires_grad=True)
    (gx,) = E.autograd.grad(E.cumprod(x, dim), x, E.tensor(g), create_graph=True)
    assert_close(gx.detach(), _cumprod_grad_reference(a, g, dim), E.float64)


@pytest.mark.parametrize("arr", [[[1.5, 0.0, -0.7, 2.0], [0.0, 1.2, 0.0, 0.8]],
                                 [[0.0, 0.0, 1.5, 2.0], [0.5, 1.2, -1.0, 0.0]]])
def test_cumprod_gradcheck_with_zeros(arr):
    x = E.tensor(np.array(arr), requires_grad=True)
    assert gradcheck(lambda t: t.cumprod(-1), (x,))
    assert gradgradcheck(lambda t: t.cumprod(-1), (x,))


# ---- the blocked scans (big float32/float64, last dim a multiple of SCAN_BLOCK) ---------------

@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("shape,dim", [((1000, 1000), -1), ((1000, 1000), 0), ((40, 1024), -1),
                                       ((reduction_blocked.SCAN_MIN,), 0), ((4, 8, 1200), -1),
                                       ((4, 8, 1200), 1), ((16, 64, 48), 1)])
def test_blocked_cumsum_matches_float64(dtype, shape, dim):
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, shape).astype(dtype.numpy)
    ref = np.cumsum(a.astype(np.float64), dim)
    got = E.cumsum(E.tensor(a), dim)
    assert got.dtype is dtype and got.shape == shape
    # (SCAN_BLOCK + n / SCAN_BLOCK + 1) roundings of at most the running sum of |x|
    n = shape[dim]
    bound = (reduction_blocked.SCAN_BLOCK + n // reduction_blocked.SCAN_BLOCK + 1) * (
        2.0 ** -24 if dtype is E.float32 else 2.0 ** -53)
    scale = np.cumsum(np.abs(a.astype(np.float64)), dim)
    assert np.all(np.abs(to_np(got) - ref) <= bound * scale + 1e-300)


@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_blocked_cumsum_non_finite_values_as_the_chain(value):
    a = np.random.default_rng(8).uniform(0, 1, (64, 1024)).astype(np.float32)
    a[5, 100] = value
    a[9, 3] = -math.inf
    a[9, 700] = math.inf  # inf - inf: NaN from there on
    got = to_np(E.cumsum(E.tensor(a), 1))
    with np.errstate(invalid="ignore"):
        want = np.cumsum(a, 1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-5, atol=1e-4)


def test_blocked_cumsum_other_layouts_and_the_backward():
    rng = np.random.default_rng(9)
    a = rng.uniform(-1, 1, (1024, 64))
    x = E.tensor(a)
    assert_close(E.cumsum(x.t(), -1), np.cumsum(a.T, -1), E.float64)  # a strided view
    assert_close(E.cumsum(x, 0), np.cumsum(a, 0), E.float64)  # not the last dim: the chain
    odd = rng.uniform(-1, 1, (300, 333))  # 333 is no multiple of SCAN_BLOCK: the chain
    assert_close(E.cumsum(E.tensor(odd), 1), np.cumsum(odd, 1), E.float64)
    x = E.tensor(a, requires_grad=True)
    g = rng.normal(size=a.shape)
    E.cumsum(x, 1).backward(E.tensor(g))
    assert_close(x.grad, np.cumsum(g[:, ::-1], 1)[:, ::-1], E.float64)


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [E.float32, E.float64])
@pytest.mark.parametrize("transposed", [False, True])
def test_blocked_scans_keep_special_values_and_zero_signs(op, dtype, transposed):
    rng = np.random.default_rng(10)
    a = rng.uniform(0.5, 1.5, (64, 1024)).astype(dtype.numpy)
    a[0, :20] = -0.0  # a run of -0.0 across a block boundary: the sum stays -0.0
    a[1, 5], a[1, 900] = 0.0, math.inf  # 0 * inf: NaN from 900 on for cumprod
    a[2, 300] = math.nan
    a[3, 17], a[3, 40] = -math.inf, -0.0
    a[4, ::2] *= -1.0
    if transposed:  # the same scans along dim 0 of a (1024, 64) array
        a = np.ascontiguousarray(a.T)
    d = 0 if transposed else 1
    with np.errstate(all="ignore"):
        want = getattr(np, op)(a, d)
    got = to_np(getattr(E, op)(E.tensor(a), d))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
    real = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[real]), np.signbit(want[real]))
    finite = np.isfinite(want)
    rtol = 1e-5 if dtype is E.float32 else 1e-12
    scale = np.abs(want[finite]).max()
    np.testing.assert_allclose(got[finite], want[finite], rtol=rtol, atol=rtol * scale)


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_blocked_cumprod_matches_float64(dtype):
    rng = np.random.default_rng(11)
    a = rng.uniform(0.999, 1.001, (200, 1000)).astype(dtype.numpy)
    ref = np.cumprod(a.astype(np.float64), 1)
    got = to_np(E.cumprod(E.tensor(a), 1))
    eps = 2.0 ** -24 if dtype is E.float32 else 2.0 ** -53
    assert np.max(np.abs(got / ref - 1)) <= 1000 * eps  # n - 1 roundings
