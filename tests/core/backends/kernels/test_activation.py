"""The activation kernels (``backends/kernels/activation.py``) against float64 references
of PyTorch's formulas, rounded once to the dtype, within the ulps their module docstring
states; special values (+-inf, nan, -0.0, huge, tiny, subnormals) for float16, bfloat16,
float32 and float64; the generic (CuPy) path gives the numpy path's values; errors."""
import math

import ml_dtypes
import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float16), BF16, np.dtype(np.float32), np.dtype(np.float64)]
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 3.0, -3.0, 2.9999998, -2.9999998, 6.0, 20.0,
           -20.0, 88.0, -88.0, 1e-7, -1e-7, 1e-30, -1e-30, 1e-40, -1e-40, 1e-310, -1e-310,
           1e30, -1e30, 3e38, -3e38, 1e300, -1e300, math.inf, -math.inf, math.nan]
SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _inputs(dtype) -> np.ndarray:
    rng = np.random.default_rng(0)
    parts = [np.array(SPECIAL), rng.standard_normal(20000) * 4,
             -np.logspace(-45, 2.5, 4000), np.logspace(-45, 2.5, 4000)]
    with np.errstate(over="ignore"):
        return np.concatenate(parts).astype(dtype)


def _softplus64(x, beta=1.0, threshold=20.0):
    z = x * beta
    return np.where(z > threshold, x, np.log1p(np.exp(np.minimum(z, threshold))) / beta)


def _elu64(x, alpha, scale=1.0, input_scale=1.0):
    return np.where(x > 0, x * scale,
                    np.expm1(np.minimum(x, 0) * input_scale) * (alpha * scale))


# op -> (kernel arguments after the input, float64 reference, allowed ulps in float32/64)
REFS = {
    "leaky_relu": ((0.01,), lambda x: np.where(x > 0, x, x * 0.01), 1),
    "leaky_relu(-2)": ((-2.0,), lambda x: np.where(x > 0, x, x * -2.0), 0),
    "hardtanh": ((-1.0, 2.0), lambda x: np.where(np.isnan(x), x, np.clip(x, -1, 2)), 0),
    "threshold": ((0.1, 20.0), lambda x: np.where(x <= 0.1, 20.0, x), 0),
    "hardswish": ((), lambda x: np.where(x <= -3, 0.0, np.where(x < 3, x * (x + 3) / 6, x)),
                  2),
    "hardsigmoid": ((), lambda x: np.where(np.isnan(x), x, np.clip(x + 3, 0, 6) / 6), 1),
    "softshrink": ((0.5,), lambda x: np.where(np.abs(x) <= 0.5, 0.0, x - np.sign(x) * 0.5),
                   0),
    "hardshrink": ((0.5,), lambda x: np.where(np.abs(x) <= 0.5, 0.0, x), 0),
    "elu": ((1.0,), lambda x: _elu64(x, 1.0), 3),
    "elu(0.5)": ((0.5,), lambda x: _elu64(x, 0.5), 3),
    "selu": ((), lambda x: _elu64(x, SELU_ALPHA, SELU_SCALE), 3),
    "celu(2)": ((2.0,), lambda x: _elu64(x, 2.0, 1.0, 0.5), 3),
    "celu(-2)": ((-2.0,), lambda x: _elu64(x, -2.0, 1.0, -0.5), 3),
    "softplus": ((1, 20), lambda x: _softplus64(x), 4),
    "softplus(2, 5)": ((2, 5), lambda x: _softplus64(x, 2.0, 5.0), 4),
    "log_sigmoid": ((), lambda x: np.minimum(x, 0) - np.log1p(np.exp(-np.abs(x))), 4),
    # 5 ulp where exp(x) is normal (x > -87); below, x times float32's subnormal exp(x)
    "mish": ((), lambda x: x * np.tanh(_softplus64(x)), 10),
}


def _ulps(got: np.ndarray, want: np.ndarray, dtype) -> float:
    """max |got - want| in units of the dtype's spacing at want; NaN and inf must match."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    assert np.array_equal(np.isnan(g), np.isnan(w)), "NaN where the reference has none"
    bad = ~same
    if not bad.any():
        return 0.0
    assert np.isfinite(w[bad]).all(), f"{g[bad & ~np.isfinite(w)]} for an infinite reference"
    # subnormal results carry fewer bits (exp's, in PyTorch's float32 kernels too): they
    # need only be within the smallest normal, absolutely
    tiny = float(ml_dtypes.finfo(dtype).smallest_normal)
    err = np.abs(g[bad] - w[bad])
    sub = np.abs(w[bad]) < tiny
    assert (err[sub] < tiny).all(), "a subnormal result off by more than the smallest normal"
    if sub.all():
        return 0.0
    spacing = np.spacing(np.abs(w[bad][~sub]).astype(dtype)).astype(np.float64)
    return float(np.max(err[~sub] / spacing))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", list(REFS))
def test_kernel_within_stated_ulps(numpy_kernels, name, dtype):
    args, ref, ulps = REFS[name]
    x = _inputs(dtype)
    got = numpy_kernels[name.split("(")[0]](x, *args)
    assert got.dtype == dtype and got.shape == x.shape
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(dtype)  # rounded once to the dtype
    # float16/bfloat16 compute in float32 and round once: 1 ulp of their own
    allowed = 1 if dtype.itemsize == 2 else ulps
    assert _ulps(got, want, dtype) <= allowed


@pytest.mark.parametrize("name", list(REFS))
def test_generic_path_gives_the_numpy_values(numpy_kernels, generic_kernels, name):
    args = REFS[name][0]
    x = _inputs(np.float32)
    op = name.split("(")[0]
    a, b = numpy_kernels[op](x, *args), generic_kernels[op](x, *args)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("name", list(REFS))
def test_zero_dim_and_empty(numpy_kernels, name):
    args = REFS[name][0]
    op = name.split("(")[0]
    for x in (np.array(-1.5, np.float32), np.zeros((0, 3), np.float32)):
        got = numpy_kernels[op](x, *args)
        assert np.asarray(got).shape == x.shape and np.asarray(got).dtype == x.dtype


@pytest.mark.parametrize("op", ["leaky_relu", "hardswish", "hardsigmoid", "softshrink",
                                "hardshrink", "elu", "selu", "celu", "softplus",
                                "log_sigmoid", "mish"])
def test_integral_inputs_raise(numpy_kernels, op):
    args = {"leaky_relu": (0.01,), "softshrink": (0.5,), "hardshrink": (0.5,), "elu": (1.0,),
            "celu": (1.0,), "softplus": (1, 20)}.get(op, ())
    with pytest.raises(NotImplementedError, match="floating"):
        numpy_kernels[op](np.arange(3), *args)


def test_argument_errors(numpy_kernels):
    x = np.zeros(3, np.float32)
    with pytest.raises(ValueError, match="min_val"):
        numpy_kernels["hardtanh"](x, 2.0, 1.0)
    with pytest.raises(ValueError, match="alpha cannot be 0"):
        numpy_kernels["celu"](x, 0.0)
    with pytest.raises(ValueError, match="lambd"):
        numpy_kernels["softshrink"](x, -1.0)
    with pytest.raises(RuntimeError, match="bool"):
        numpy_kernels["hardtanh"](np.ones(3, bool), -1, 1)
    with pytest.raises(NotImplementedError, match="bool"):
        numpy_kernels["threshold"](np.ones(3, bool), 0, 1)


def test_integral_hardtanh_and_threshold_stay_integral(numpy_kernels):
    x = np.arange(-3, 4, dtype=np.int32)
    np.testing.assert_array_equal(numpy_kernels["hardtanh"](x, -1.5, 2.5), np.clip(x, -1, 2))
    got = numpy_kernels["threshold"](x, 0.5, 9)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, np.where(x <= 0.5, 9, x))


# the native ops' backward formulas (derivatives.yaml): gradcheck and gradgradcheck in
# float64 away from the kinks, where finite differences straddle them
GRAD = {
    "leaky_relu": lambda t: F.leaky_relu(t, 0.2),
    "hardtanh": lambda t: F.hardtanh(t, -1.0, 2.0),
    "threshold": lambda t: F.threshold(t, 0.1, 5.0),
    "hardswish": F.hardswish, "hardsigmoid": F.hardsigmoid,
    "softshrink": lambda t: F.softshrink(t, 0.5), "hardshrink": lambda t: F.hardshrink(t, 0.5),
    "elu": lambda t: F.elu(t, 0.7), "selu": F.selu, "celu": lambda t: F.celu(t, 2.0),
    "celu(-2)": lambda t: F.celu(t, -2.0),
    "softplus": F.softplus, "softplus(2, 1)": lambda t: F.softplus(t, 2.0, 1.0),
    "logsigmoid": F.logsigmoid, "mish": F.mish,
}
_AWAY = [-30.0, -4.1, -2.7, -1.3, -0.8, -0.3, 0.35, 0.9, 1.4, 2.6, 4.2, 30.0]


@pytest.mark.parametrize("name", list(GRAD))
def test_gradcheck_and_gradgradcheck(name):
    x = E.tensor(_AWAY, dtype=E.float64, requires_grad=True)
    assert gradcheck(GRAD[name], (x,))
    assert gradgradcheck(GRAD[name], (x,))


@pytest.mark.parametrize("name", list(GRAD))
def test_gradients_match_torch(name):
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    tfs = {"leaky_relu": lambda t: TF.leaky_relu(t, 0.2),
           "hardtanh": lambda t: TF.hardtanh(t, -1.0, 2.0),
           "threshold": lambda t: TF.threshold(t, 0.1, 5.0),
           "hardswish": TF.hardswish, "hardsigmoid": TF.hardsigmoid,
           "softshrink": lambda t: TF.softshrink(t, 0.5),
           "hardshrink": lambda t: TF.hardshrink(t, 0.5),
           "elu": lambda t: TF.elu(t, 0.7), "selu": TF.selu, "celu": lambda t: TF.celu(t, 2.0),
           "celu(-2)": lambda t: TF.celu(t, -2.0), "softplus": TF.softplus,
           "softplus(2, 1)": lambda t: TF.softplus(t, 2.0, 1.0), "logsigmoid": TF.logsigmoid,
           "mish": TF.mish}
    xs = np.array(_AWAY + [-3.0, 3.0, 0.0, -1.0, 2.0, 0.5, -0.5, 0.1], np.float32)
    x = E.tensor(xs, requires_grad=True)
    GRAD[name](x).sum().backward()
    tx = torch.tensor(xs, requires_grad=True)
    tfs[name](tx).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=2e-6, atol=1e-7)


def test_threshold_value_out_of_the_dtype_range_raises_as_torch():
    x = E.tensor([1, 5, 200], dtype=E.uint8)
    with pytest.raises(RuntimeError, match="cannot be converted to type uint8"):
        E.nn.functional.threshold(x, 2.5, 1000)
    assert E.nn.functional.threshold(x, 2.5, 7).tolist() == [7, 5, 200]


@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16, E.bfloat16], ids=str)
@pytest.mark.parametrize("beta,threshold", [(1.0, 1e10), (3.0, math.inf)])
def test_softplus_overflowing_exp_gives_inf_not_nan(dtype, beta, threshold):
    # exp(beta x) overflows below the threshold: log1p(inf) / beta = inf, as PyTorch
    x = E.tensor([-1.0, 0.0, 1e4, 3e4], dtype=dtype)  # exp overflows in every dtype
    out = E.nn.functional.softplus(x, beta, threshold).float().numpy()
    assert np.isinf(out[2:]).all() and (out[2:] > 0).all() and np.isfinite(out[:2]).all()
