"""isnan, isinf, isfinite, isposinf, isneginf, isclose (kernels/predicates.py) and the
composites allclose and equal, against numpy."""
import math

import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make

import ember as E
from ember.errors import ShapeError

SPECIAL = [math.nan, math.inf, -math.inf, 0.0, -0.0, 1.5, -2.0, 1e30]


def cast(values, dtype):
    """A tensor of ``values`` in ``dtype``; 1e30 overflows float16 to inf, as in torch."""
    with np.errstate(over="ignore"):
        return E.tensor(np.array(values).astype(dtype.numpy))


PREDICATES = {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite,
              "isposinf": np.isposinf, "isneginf": np.isneginf}


@pytest.mark.parametrize("name", PREDICATES)
@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES)
def test_float_predicates_match_numpy(name, dtype):
    x = cast(SPECIAL, dtype)
    want = PREDICATES[name](x.to(E.float64).numpy())
    assert_close(getattr(E, name)(x), want, E.bool_)
    assert_close(getattr(x.reshape(2, 4), name)(), want.reshape(2, 4), E.bool_)


@pytest.mark.parametrize("name", PREDICATES)
@pytest.mark.parametrize("dtype", [E.bool_] + INT_DTYPES)
@pytest.mark.parametrize("shape", [(2, 3), (), (0,)])
def test_integral_inputs_have_no_special_values(name, dtype, shape):
    x, _ = make(shape, dtype)
    got = getattr(E, name)(x)
    assert_close(got, np.full(shape, name == "isfinite"), E.bool_)


@pytest.mark.parametrize("name", ["isposinf", "isneginf"])
def test_posinf_neginf_out(name):
    out = E.empty(0, dtype=E.bool_)
    assert getattr(E, name)(E.tensor(SPECIAL), out=out) is out
    assert_close(out, PREDICATES[name](np.array(SPECIAL)), E.bool_)


def np_isclose_ref(a, b, rtol, atol, equal_nan):
    """PyTorch's closeness in float64: equal, or a finite difference within tolerance."""
    a, b = np.broadcast_arrays(a.astype(np.float64), b.astype(np.float64))
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - b)
        close = (a == b) | (np.isfinite(diff) & (diff <= atol + np.abs(rtol * b)))
    return close | (equal_nan & np.isnan(a) & np.isnan(b))


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES)
@pytest.mark.parametrize("equal_nan", [False, True])
@pytest.mark.parametrize("rtol,atol", [(1e-5, 1e-8), (0.1, 0.0), (0.0, 0.5), (0.0, 0.0)])
def test_isclose_matches_reference(dtype, equal_nan, rtol, atol):
    a = np.array(SPECIAL * 2)
    b = np.array(SPECIAL[::-1] + [v * 1.05 for v in SPECIAL])  # 5% off: rtol 0.1 is close
    x, y = cast(a, dtype), cast(b, dtype)
    want = np_isclose_ref(x.to(E.float64).numpy(), y.to(E.float64).numpy(), rtol, atol,
                          equal_nan)
    assert_close(E.isclose(x, y, rtol, atol, equal_nan), want, E.bool_)
    assert_close(x.isclose(y, rtol=rtol, atol=atol, equal_nan=equal_nan), want, E.bool_)


def test_isclose_broadcasts_and_integers_wrap_like_pytorch():
    x = E.tensor([[1.0], [2.0]])
    assert E.isclose(x, E.tensor([1.0, 2.0, 2.000001])).shape == (2, 3)
    # int8: 100 - (-100) wraps to -56 (|.| = 56), far from atol=1; 1 vs 2 is within atol=1
    a = E.tensor(np.array([1, 1, 100], np.int8))
    b = E.tensor(np.array([2, 3, -100], np.int8))
    assert E.isclose(a, b, atol=1).tolist() == [True, False, False]
    assert E.isclose(E.tensor([True, False]), E.tensor([True, True]), atol=0.5).tolist() == \
        [True, False]
    with pytest.raises(ShapeError, match="broadcast"):
        E.isclose(E.ones(2), E.ones(3))


def test_isclose_errors_leave_nothing_and_name_the_way_out():
    with pytest.raises(E.DtypeError, match="self's dtype float32, got float64.*to()"):
        E.isclose(E.ones(2), E.ones(2, dtype=E.float64))
    with pytest.raises(ValueError, match="rtol must be greater than or equal to zero, but got"):
        E.isclose(E.ones(2), E.ones(2), rtol=-1.0)
    with pytest.raises(ValueError, match="atol"):
        E.allclose(E.ones(2), E.ones(2), atol=-1.0)


def test_allclose_and_equal_return_python_bools():
    x = E.tensor([1.0, math.nan, math.inf])
    assert E.allclose(x, x) is False and E.allclose(x, x, equal_nan=True) is True
    assert x.allclose(x + 1e-6, equal_nan=True) is True
    assert E.allclose(E.ones(2, 3), E.ones(3)) is True  # broadcasts, as torch.allclose
    assert E.equal(E.tensor([1, 2]), E.tensor([1.0, 2.0])) is True  # values after promotion
    assert E.equal(x, x) is False  # NaN != NaN
    assert E.tensor([1, 2]).equal(E.tensor([[1, 2]])) is False  # shapes differ
    assert E.equal(E.zeros(0, 2), E.zeros(0, 2)) is True


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_equal_over_dtypes(dtype):
    x, _ = make((2, 3), dtype)
    y = x.clone()
    assert E.equal(x, y)
    y[0, 0] = 1 - int(x[0, 0].item()) if dtype is E.bool_ else x[0, 0].item() + 1
    assert not E.equal(x, y)
