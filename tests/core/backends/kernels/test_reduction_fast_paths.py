"""Fast paths of issue 30 against float64 / mpmath references: nansum's one-pass sum,
the einsum row sums of sum/mean/norm (CPU-only, reduction.py), logcumsumexp's float64
``M + log(cumsum(exp(x - M)))`` with its exact fallback (log_scan.py), and prod's
backward by ``result / self`` (formulas/_reduction.py)."""
import math

import ember as E
import mpmath
import numpy as np
import pytest
from ember.autograd import gradcheck, gradgradcheck

pytestmark = pytest.mark.filterwarnings("ignore:.*encountered in cast:RuntimeWarning")

FLOATS = [E.float16, E.bfloat16, E.float32, E.float64]
SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 1e-40, 3e38]


def _eps(dtype):
    return float(E.finfo(dtype).eps)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("shape,dim", [((1000,), None), ((40, 1000), 1), ((40, 1000), 0)])
def test_nansum_matches_float64(dtype, shape, dim):
    rng = np.random.default_rng(0)
    x = E.tensor(rng.standard_normal(shape)).to(dtype)
    ref = x.double().numpy()
    for with_nan in (False, True):
        if with_nan:
            x[(0,) * len(shape)] = float("nan")
            ref = x.double().numpy()
        got = E.nansum(x, dim).double().numpy()
        want = np.nansum(ref, axis=dim)
        bound = 2 * _eps(dtype) * np.nansum(np.abs(ref), axis=dim) + 1e-300
        assert (np.abs(got - want) <= np.maximum(bound, np.abs(want) * _eps(dtype))).all()
        assert E.nansum(x, dim).dtype is dtype


def test_nansum_special_values():
    x = E.tensor([[1.0, math.nan, 2.0], [math.inf, -math.inf, 1.0], [math.inf, 1.0, math.nan]])
    assert E.nansum(x, 1).tolist()[0] == 3.0
    got = E.nansum(x, 1).tolist()
    assert math.isnan(got[1]) and got[2] == math.inf
    assert math.isnan(E.nansum(x).item())
    assert E.nansum(E.tensor([-0.0, math.nan])).item() == 0.0
    assert E.nansum(E.tensor([1, 2, 3], dtype=E.int32)).dtype is E.int64


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_row_sums_match_float64(dtype):
    """sum/mean over the last dim of (100, 1000) take einsum; error within the pairwise
    sum's: |err| <= 4 eps sum|x| (measured 0.5 eps)."""
    rng = np.random.default_rng(1)
    x = E.tensor(rng.standard_normal((100, 1000))).to(dtype)
    ref = x.double().numpy()
    bound = 4 * _eps(dtype) * np.abs(ref).sum(-1)
    assert (np.abs(E.sum(x, -1).double().numpy() - ref.sum(-1)) <= bound).all()
    assert (np.abs(E.mean(x, -1).double().numpy() - ref.mean(-1)) <= bound / 1000).all()
    assert E.sum(x, -1, keepdim=True).shape == (100, 1) and E.sum(x, -1).dtype is dtype
    assert E.mean(x, (1,), keepdim=True).shape == (100, 1)
    y = x.clone()
    y[3, 5] = float("nan")
    y[4, 0] = float("inf")
    s = E.sum(y, -1)
    assert math.isnan(s[3].item()) and s[4].item() == math.inf


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_norm_p2_within_2_ulp(dtype):
    """norm / vector_norm p=2 (no abs; einsum row dots on numpy): measured <= 4 ulp over
    rows of 1000 (numpy's pairwise sum of squares 1.2, PyTorch 1.9); the whole-tensor
    norm keeps the pairwise sum (<= 1 ulp)."""
    rng = np.random.default_rng(2)
    x = E.tensor(rng.standard_normal((100, 1000))).to(dtype)
    ref = np.sqrt((x.double().numpy() ** 2).sum(-1))
    spacing = np.spacing(ref.astype(x.numpy().dtype)).astype(np.float64)
    for got in (E.norm(x, dim=-1), E.linalg.vector_norm(x, dim=-1), E.norm(x, 2, [1])):
        assert (np.abs(got.double().numpy() - ref) <= 6 * spacing).all()
    whole = np.sqrt((x.double().numpy() ** 2).sum())
    assert abs(E.norm(x).item() - whole) <= 2 * np.spacing(np.float32(whole))
    assert E.norm(E.tensor([[3.0, math.inf], [math.nan, 1.0]]), dim=-1).tolist()[0] == math.inf
    assert math.isnan(E.norm(E.tensor([[math.nan, 1.0]]), dim=-1).item())
    assert E.norm(E.tensor([-0.0, 1e-40])).item() == pytest.approx(1e-40, rel=1e-3)


def _mp_logcumsumexp(row):
    out, total = [], mpmath.mpf(0)
    for v in row:
        total += mpmath.exp(mpmath.mpf(float(v)))
        out.append(float(mpmath.log(total)) if total else -math.inf)
    return out


@pytest.mark.parametrize("dtype", FLOATS)
def test_logcumsumexp_within_1_ulp_of_mpmath(dtype):
    """Fast path (float64 inside): <= 1 ulp of a float32/16 dtype against mpmath; float64
    within n eps (the float64 cumsum's rounding)."""
    rng = np.random.default_rng(3)
    x = E.tensor(rng.standard_normal((4, 60)) * 20).to(dtype)
    got = E.logcumsumexp(x, 1)
    assert got.dtype is dtype
    want = np.array([_mp_logcumsumexp(r) for r in x.double().numpy()])
    spacing = np.abs(E.tensor(want).to(dtype).double().numpy())
    ulp = _eps(dtype) * np.maximum(spacing, float(E.finfo(dtype).tiny))
    if dtype is E.float64:
        ulp *= x.shape[1]
    assert (np.abs(got.double().numpy() - want) <= ulp).all()


def test_logcumsumexp_exact_path_rows():
    """Rows the fast path cannot trust (a prefix far below the max, NaN, inf) take the
    logaddexp scan; the other rows of the same call keep the fast one."""
    x = E.tensor([[-1000.0, 0.0, 1.0], [0.0, 1.0, 2.0], [math.nan, 0.0, 1.0],
                  [0.0, math.inf, 1.0], [-math.inf, -math.inf, 0.0],
                  [-math.inf, -math.inf, -math.inf], [-0.0, 1e-40, 3e38]], dtype=E.float64)
    got = E.logcumsumexp(x, 1).numpy()
    with np.errstate(invalid="ignore"):
        want = np.logaddexp.accumulate(x.numpy(), axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-15)
    assert E.logcumsumexp(E.zeros(0, 3), 1).shape == (0, 3)


def test_prod_backward_with_and_without_zeros():
    for data in ([[1.5, -2.0, 0.5], [0.7, 1.1, -1.3]], [[1.5, 0.0, 0.5], [0.0, 0.0, 2.0]]):
        x = E.tensor(data, dtype=E.float64, requires_grad=True)
        for f in (lambda t: t.prod(), lambda t: t.prod(1), lambda t: t.prod(0, keepdim=True)):
            assert gradcheck(f, (x,))
            assert gradgradcheck(f, (x,))
    x = E.tensor([2.0, 3.0, 4.0], requires_grad=True)
    x.prod().backward()
    assert x.grad.tolist() == [12.0, 8.0, 6.0]
