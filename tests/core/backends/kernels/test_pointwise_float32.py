"""pointwise_float32: the float32 formulas of expm1, log1p, sinh, cosh, tan, asin, atan,
atanh, atan2, logaddexp, logaddexp2 against numpy's float64 functions (~0.5 ulp), at the
bounds the module's docstring states, over a strided walk of every float32 of each range;
special values through the ember ops for float16, bfloat16, float32 and float64."""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from helpers import ulp_error32

import ember
from ember.backends.kernels import pointwise_float32 as F

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

# name -> (float64 reference, range of x, ulp bound stated in the module docstring)
CASES = {
    "expm1": (np.expm1, (-120.0, 100.0), 4.5),
    "log1p": (np.log1p, (-1.0, 3e38), 4.0),
    "sinh": (np.sinh, (-95.0, 95.0), 3.0),
    "cosh": (np.cosh, (-95.0, 95.0), 3.0),
    "tan": (np.tan, (-1e5, 1e5), 3.0),
    "asin": (np.arcsin, (-1.0, 1.0), 3.0),
    "atan": (np.arctan, (-3e38, 3e38), 3.0),
    "atanh": (np.arctanh, (-1.0, 1.0), 4.5),
}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-38, 3e38, -3e38,
                    1.0, -1.0, 0.5, -0.5, 1e-7, -1e-7, 88.5, 89.0, -89.0, 20.0, -20.0])


def _float32_walk(hi: float, step: int) -> np.ndarray:
    """Every ``step``-th float32 in [0, hi], both signs."""
    top = np.array(hi, np.float32).view(np.int32)
    pos = np.arange(0, int(top) + 1, step, dtype=np.int32).view(np.float32)
    return np.concatenate([pos, -pos, [np.float32(hi), np.float32(-hi)]])


@pytest.mark.parametrize("name", sorted(CASES))
def test_formula_within_stated_ulps_of_float64(name):
    ref_fn, (lo, hi), bound = CASES[name]
    x = _float32_walk(max(abs(lo), hi), 4099)
    x = np.concatenate([x[(x >= lo) & (x <= hi)], SPECIAL.astype(np.float32)])
    fn = F.FUNCTIONS[name][0]
    with np.errstate(all="ignore"):
        got = fn(np, x)
        ref = ref_fn(x.astype(np.float64))
    assert got.dtype == np.float32 and got.shape == x.shape
    assert np.array_equal(np.isnan(got), np.isnan(ref.astype(np.float32)))
    err = ulp_error32(got, ref)
    worst = int(np.argmax(err))
    assert err[worst] <= bound, (x[worst], got[worst], ref[worst])
    # -0.0 keeps its sign where the function is odd
    zero = fn(np, np.array([-0.0], np.float32))
    if name != "cosh":
        assert np.signbit(zero[0])


@pytest.mark.parametrize("name", sorted(CASES))
def test_blocks_match_one_call(name):
    fn = F.FUNCTIONS[name][0]
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, 5 * (F.BLOCK + 3)).astype(np.float32).reshape(-1, 5)
    x[0, 0] = np.nan
    with np.errstate(all="ignore"):
        assert np.array_equal(F.blocked(np, fn, x), fn(np, x), equal_nan=True)


_EMBER = {"asin": "asin", "atan": "atan", "atanh": "atanh"}
_DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32,
           "float64": np.float64}


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("size", [7, 40000])
@pytest.mark.parametrize("name", sorted(CASES))
def test_ember_op_against_float64(name, dtype, size):
    ref_fn = CASES[name][0]
    rng = np.random.default_rng(2)
    lo, hi = {"tan": (-1.5, 1.5), "log1p": (-0.99, 10.0)}.get(name, (-0.99, 0.99)) \
        if name in ("tan", "log1p", "asin", "atanh") else (-10.0, 10.0)
    x = np.concatenate([rng.uniform(lo, hi, size), SPECIAL]).astype(_DTYPES[dtype])
    got = getattr(ember, _EMBER.get(name, name))(ember.tensor(x)).numpy()
    assert got.dtype == x.dtype
    with np.errstate(all="ignore"):
        ref = ref_fn(x.astype(np.float64)).astype(x.dtype)  # one rounding of the exact
    tol = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 6e-7, "float64": 1e-15}[dtype]
    g, r = got.astype(np.float64), ref.astype(np.float64)
    assert np.array_equal(np.isnan(g), np.isnan(r))
    fin = np.isfinite(r)
    assert np.array_equal(g[~fin & ~np.isnan(r)], r[~fin & ~np.isnan(r)])
    np.testing.assert_allclose(g[fin], r[fin], rtol=tol, atol=0)


# name -> (float64 reference, ulp bound: of the result for atan2, of max(|a|, |b|, |r|)
# for logaddexp, where the result may cancel to ~0 as in numpy's own formula)
BINARY = {"atan2": (np.arctan2, 3.5), "logaddexp": (np.logaddexp, 3.5),
          "logaddexp2": (np.logaddexp2, 3.5)}


@pytest.mark.parametrize("scale", [2.0, 100.0, 1e20])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_formula_within_stated_ulps(name, scale):
    ref_fn, bound = BINARY[name]
    rng = np.random.default_rng(4)
    a = (rng.standard_normal(200000) * scale).astype(np.float32)
    b = (rng.standard_normal(200000) * scale * rng.uniform(0, 2, 200000)).astype(np.float32)
    grid_a, grid_b = np.meshgrid(SPECIAL.astype(np.float32), SPECIAL.astype(np.float32))
    a, b = np.concatenate([a, grid_a.ravel()]), np.concatenate([b, grid_b.ravel()])
    got = F.BINARY[name][0](np, a, b)
    with np.errstate(all="ignore"):
        ref = ref_fn(a.astype(np.float64), b.astype(np.float64))
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    if name == "atan2":
        err = ulp_error32(got, ref)
        signs = np.signbit(got) == np.signbit(ref)       # atan2(-0.0, x) keeps the sign
        assert signs.all()
    else:
        fin = np.isfinite(ref)
        assert np.array_equal(got[~fin & ~np.isnan(ref)], ref[~fin & ~np.isnan(ref)])
        scale_of = np.maximum(np.maximum(np.abs(a), np.abs(b)), np.abs(ref).astype(np.float32))
        err = np.where(fin, np.abs(got - ref) / np.spacing(scale_of).astype(np.float64), 0)
    assert np.nanmax(err) <= bound


@pytest.mark.parametrize("dtype", sorted(_DTYPES))
@pytest.mark.parametrize("name", sorted(BINARY))
def test_ember_binary_op_dtypes(name, dtype):
    rng = np.random.default_rng(5)
    a = rng.standard_normal(40000).astype(_DTYPES[dtype])
    b = rng.standard_normal(40000).astype(_DTYPES[dtype])
    got = getattr(ember, name)(ember.tensor(a), ember.tensor(b)).numpy()
    assert got.dtype == a.dtype
    ref = BINARY[name][0](a.astype(np.float64), b.astype(np.float64))
    tol = {"float16": 2e-3, "bfloat16": 1.6e-2, "float32": 1e-6, "float64": 1e-15}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), ref, rtol=tol, atol=tol)
