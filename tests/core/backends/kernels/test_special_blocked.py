"""Cache blocking of the special functions' kernels (kernels/special_blocked.py): at and
above ENGINE_MIN_SIZE elements each block runs the same flat kernel, so results equal the
one-call results bit for bit, for every dtype and across block boundaries."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
from ember.backends.elementwise.eager import ENGINE_MIN_SIZE
from ember.backends.kernels.special_blocked import blocked

S = E.special
FNS = [S.i1e, S.i0e, S.bessel_j0, S.bessel_y1, S.modified_bessel_k0, S.ndtr, S.ndtri,
       S.erfcx, S.entr, S.spherical_bessel_j0, S.airy_ai, E.lgamma, E.digamma, E.erfinv,
       E.i0, S.i1, E.sinc, lambda x: E.polygamma(1, x)]


@pytest.mark.parametrize("dtype", [E.float32, E.float64, E.float16], ids=str)
@pytest.mark.parametrize("fn", FNS, ids=lambda f: getattr(f, "__name__", "trigamma"))
def test_blocked_equals_small_calls(fn, dtype):
    n = ENGINE_MIN_SIZE + 1234  # two blocks, the second partial
    x = np.random.default_rng(3).uniform(0.02, 0.98, n)
    x[::97] = np.nan
    big = fn(E.tensor(x).to(dtype)).numpy()
    parts = [fn(E.tensor(x[i:i + 1000]).to(dtype)).numpy() for i in range(0, n, 1000)]
    np.testing.assert_array_equal(big, np.concatenate(parts))


def test_blocked_keeps_shape_and_casts_back():
    fn = blocked(np, lambda v: v * 2.0, np.float64)
    x = np.ones((3, ENGINE_MIN_SIZE), dtype=np.float32)
    got = fn(x)
    assert got.shape == x.shape and got.dtype == np.float32 and (got == 2).all()
    assert (blocked(object(), lambda v: v * 2.0)(x) == 2).all()  # other namespaces: one call


@pytest.mark.parametrize("fn", [S.gammainc, S.gammaincc], ids=["igamma", "igammac"])
def test_blocked_binary_equals_small_calls(fn):
    n = ENGINE_MIN_SIZE + 777
    rng = np.random.default_rng(4)
    a, x = rng.uniform(0.05, 30, n), rng.uniform(0.0, 40, n)
    a[::101] = np.nan
    for dt in (E.float32, E.float64):
        big = fn(E.tensor(a).to(dt), E.tensor(x).to(dt)).numpy()
        parts = [fn(E.tensor(a[i:i + 4096]).to(dt), E.tensor(x[i:i + 4096]).to(dt)).numpy()
                 for i in range(0, n, 4096)]
        np.testing.assert_array_equal(big, np.concatenate(parts))
    # a broadcast operand: one a for every x
    got = fn(E.tensor([2.5]), E.tensor(x.astype(np.float32))).numpy()
    np.testing.assert_array_equal(got, fn(E.tensor(np.full(n, 2.5, np.float32)),
                                          E.tensor(x.astype(np.float32))).numpy())
