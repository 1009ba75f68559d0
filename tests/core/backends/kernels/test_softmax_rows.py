"""log_softmax's row blocks (kernels/softmax.py ``_log_softmax_rows``, kernels/row_blocks.py)
against float64 references and against the whole-array path, at sizes that take the
blocks, for float16, bfloat16, float32 and float64, with special values (+-inf, nan, -0.0,
huge, tiny, subnormal, a row of all -inf)."""
import numpy as np
import pytest
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, TOL, to_np

import ember as E
from ember.backends.kernels import row_blocks
from ember.backends.kernels.softmax import kernels

pytestmark = pytest.mark.filterwarnings("ignore:overflow encountered in cast")
DTYPES = LOW_FLOAT_DTYPES + FLOAT_DTYPES
SPECIAL = [np.inf, -np.inf, np.nan, -0.0, 0.0, 1e30, -1e30, 1e-30, 1e-40, 80.0, -80.0]
SHAPES = [(300, 400), (2, 150, 300), (15, 5000)]  # >= ROW_MIN_SIZE: the row blocks


def _inputs(shape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-30, 30, shape)
    rows = a.reshape(-1, shape[-1])
    for i, v in enumerate(SPECIAL):        # one special value in each of the first rows
        rows[i, i] = v
    rows[len(SPECIAL)] = -np.inf           # a row of all -inf: nan, as PyTorch
    rows[len(SPECIAL) + 1, ::2] = -np.inf  # half -inf: those give -inf
    t = E.tensor(a, dtype=dtype)
    return t, to_np(t).astype(np.float64)


def _np_log_softmax(x):
    with np.errstate(invalid="ignore", over="ignore"):
        m = x.max(-1, keepdims=True)
        s = x - m
        return s - np.log(np.exp(s).sum(-1, keepdims=True))


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_log_softmax_rows_against_float64(dtype, shape):
    """float32 within 2 ulp of exp(x - max)'s rounding: |error| <= 2 eps (|x - max| + 1)
    (the subtraction rounds; the log of the sum adds < 1 ulp of it)."""
    x, ref = _inputs(shape, dtype)
    assert x.numel() >= row_blocks.ROW_MIN_SIZE
    got = to_np(E.log_softmax(x, -1)).astype(np.float64)
    expected = _np_log_softmax(ref)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    fin = np.isfinite(expected)
    assert (got[~fin & ~np.isnan(expected)] == expected[~fin & ~np.isnan(expected)]).all()
    eps = {E.float16: 2.0 ** -11, E.bfloat16: 2.0 ** -8, E.float32: 2.0 ** -24,
           E.float64: 2.0 ** -53}[dtype]
    scale = np.abs(expected) + 1  # float32: measured 1.9 (1.1 ulp) on 1e6 points
    with np.errstate(invalid="ignore"):
        assert (np.abs(got - expected)[fin] <= 4 * eps * scale[fin]).all()
    p = to_np(E.softmax(x, -1)).astype(np.float64)
    with np.errstate(invalid="ignore"):
        assert np.allclose(p[fin], np.exp(expected[fin]), rtol=TOL[dtype][0] * 10,
                           atol=TOL[dtype][1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_rows_give_the_bits_of_the_whole_array_path(dtype, monkeypatch):
    k = kernels(np)
    x = np.random.default_rng(1).uniform(-50, 50, (257, 300)).astype(dtype)
    x[3, 7], x[5] = np.nan, -np.inf
    blocked = k["log_softmax"](x, 1, None)
    monkeypatch.setattr(row_blocks, "ROW_MIN_SIZE", 1 << 60)
    whole = k["log_softmax"](x, 1, None)
    assert blocked.dtype == whole.dtype == x.dtype
    assert np.array_equal(blocked, whole, equal_nan=True)


def test_rows_run_on_several_threads():
    x = E.tensor(np.random.default_rng(2).uniform(-5, 5, (512, 256)).astype(np.float32))
    one = E.log_softmax(x, 1).numpy()
    with E.parallel.num_threads(2):
        two = E.log_softmax(x, 1).numpy()
    assert np.array_equal(one, two)
