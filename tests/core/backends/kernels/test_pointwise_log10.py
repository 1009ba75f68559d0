"""pointwise_log10: float32 log10 as log(x) / ln 10 against numpy's float64 log10 (~0.5 ulp)
at the bound the module's docstring states, over a strided walk of every positive float32
(subnormals included) and every float32 near 1; special values and dtypes through the ember
op (functional and in place)."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import ulp_error32

import ember
from ember.backends.kernels import pointwise_log10 as L

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

BOUND = 5.0  # ulp, as the module docstring states
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1e-45, 3e-45, 1e-40, 1.2e-38,
                    3.4e38, 1.0, 10.0, 0.1, 1e-10, 1e10, 2.0, 0.76183575])
_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
           "float64": np.float64}


def test_formula_within_stated_ulps_of_float64():
    walk = np.arange(1, 0x7F800000, 4099, dtype=np.int32).view(np.float32)
    near_one = np.float32(1) + np.arange(-2 ** 19, 2 ** 19, 7, dtype=np.float32) * 2 ** -23
    x = np.concatenate([walk, near_one.astype(np.float32), SPECIAL.astype(np.float32)])
    with np.errstate(all="ignore"):
        got = L.log10(np, x)
        ref = np.log10(x.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    inf = np.isinf(ref)
    assert np.array_equal(got[inf], ref[inf].astype(np.float32))
    err = ulp_error32(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= BOUND, (x[worst], got[worst], ref[worst])


def test_powers_of_ten_within_one_ulp():
    x = np.array([10.0 ** k for k in range(-10, 11)], np.float32)
    got = L.log10(np, x)
    assert np.all(ulp_error32(got, np.log10(x.astype(np.float64))) <= 1.0)
    assert np.array_equal(got[8:19], np.arange(-2, 9, dtype=np.float32))  # 1e-2 .. 1e8


@pytest.mark.parametrize("inplace", [False, True])
@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("size", [7, 40000])
def test_ember_op_against_float64(dtype, size, inplace):
    rng = np.random.default_rng(2)
    x = np.concatenate([np.exp(rng.uniform(-20, 20, size)), SPECIAL]).astype(_DTYPES[dtype])
    t = ember.tensor(x)
    got = (t.log10_() if inplace else ember.log10(t)).numpy()
    assert got.dtype == x.dtype
    with np.errstate(all="ignore"):
        ref = np.log10(x.astype(np.float64)).astype(x.dtype)  # one rounding of the exact
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 6e-7, "float64": 1e-15}[dtype]
    g, r = got.astype(np.float64), ref.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(r))
    fin = np.isfinite(r)
    assert np.array_equal(g[~fin & ~np.isnan(r)], r[~fin & ~np.isnan(r)])
    np.testing.assert_allclose(g[fin], r[fin], rtol=tol, atol=0)


def test_zero_dim_and_gradient():
    x = ember.tensor(np.float32(100.0), requires_grad=True)
    y = ember.log10(x)
    y.backward()
    assert y.item() == 2.0
    np.testing.assert_allclose(x.grad.item(), 1 / (100 * np.log(10)), rtol=1e-6)
