"""special_erfc32: branch-free float32 erfc and ndtr against scipy's float64 functions
(< 1e-15 relative) at the bounds the module's docstring states, over a strided walk of
every float32 of each range; special values and every float dtype through the ember ops."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import ulp_error32
import scipy.special as sp

import ember
from ember.backends.kernels import special_erfc32 as K
from ember.backends.kernels.pointwise_float32 import BLOCK

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# name -> (kernel, float64 reference, range, ulp bound stated in the module docstring)
CASES = {"erfc": (K.erfc, sp.erfc, (-4.0, 10.05), 7.0),
         "ndtr": (K.ndtr, sp.ndtr, (-20.0, 20.0), 7.0)}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, -1e-38, 3e38,
                    -3e38, 0.46875, -0.46875, 1.0, -1.0, 4.0, -4.0, 10.0, 10.06, 11.0, 27.0,
                    -13.0, 9.0, 16.0, -16.0])
_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
           "float64": np.float64}


def _walk(lo: float, hi: float, step: int) -> np.ndarray:
    """Every ``step``-th float32 of [lo, hi], both signs, plus the ends."""
    top = np.array(max(abs(lo), hi), np.float32).view(np.int32)
    pos = np.arange(0, int(top) + 1, step, dtype=np.int32).view(np.float32)
    x = np.concatenate([pos, -pos, np.array([lo, hi], np.float32)])
    return x[(x >= lo) & (x <= hi)]


@pytest.mark.parametrize("name", sorted(CASES))
def test_within_stated_ulps_of_float64(name):
    fn, ref_fn, (lo, hi), bound = CASES[name]
    x = np.concatenate([_walk(lo, hi, 257), SPECIAL.astype(np.float32)])
    got = fn(np, x)
    ref = ref_fn(x.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    err = ulp_error32(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (x[worst], got[worst], ref[worst])


def test_special_values():
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 3e38, -3e38], np.float32)
    np.testing.assert_array_equal(K.erfc(np, x), [0, 2, np.nan, 1, 1, 0, 2])
    np.testing.assert_array_equal(K.ndtr(np, x), [1, 0, np.nan, 0.5, 0.5, 1, 0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_blocks_match_one_call(name):
    fn = CASES[name][0]
    x = np.random.default_rng(1).uniform(-6, 6, 5 * (BLOCK + 3)).astype(np.float32)
    x = x.reshape(-1, 5)
    x[0, 0] = np.nan
    assert np.array_equal(fn(np, x), K._erfc(np, x) if name == "erfc" else K._ndtr(np, x),
                          equal_nan=True)


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("size", [7, 40000])
@pytest.mark.parametrize("op", ["erfc", "special.erfc", "special.ndtr"])
def test_ember_op_against_float64(op, dtype, size):
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(-6, 6, size), SPECIAL]).astype(_DTYPES[dtype])
    fn = {"erfc": ember.erfc, "special.erfc": ember.special.erfc,
          "special.ndtr": ember.special.ndtr}[op]
    got = fn(ember.tensor(x)).numpy()
    assert got.dtype == x.dtype
    ref_fn = sp.ndtr if op == "special.ndtr" else sp.erfc
    ref = ref_fn(x.astype(np.float64)).astype(x.dtype)  # one rounding of the exact
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1e-6, "float64": 5e-14}[dtype]
    g, r = got.astype(np.float64), ref.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(r))
    fin = ~np.isnan(r)
    tiny = np.finfo(np.float32).tiny if dtype != "float64" else 1e-300
    np.testing.assert_allclose(g[fin], r[fin], rtol=tol, atol=tiny)
