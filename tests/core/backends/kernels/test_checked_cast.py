"""Python and numpy values into integer tensors never wrap (issue 35, class 1): every
factory that turns host values into an integer tensor checks the range as PyTorch's
``checked_convert`` does, and raises "value ... cannot be converted to type ... without
overflow" instead of wrapping. Expectations recorded from torch 2.13."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.backends.kernels.checked_cast import check_fits

INT_DTYPES = [E.int8, E.uint8, E.int16, E.int32, E.int64]


def fits(v, dtype) -> bool:
    """The reference rule, in exact Python arithmetic: floats in [min, max] and finite;
    ints in [min, max], or in [-max, -1] for unsigned types (two's complement wrap)."""
    info = np.iinfo(dtype.numpy)
    if isinstance(v, float):
        return math.isfinite(v) and info.min <= v <= info.max
    low = -int(info.max) if info.min == 0 else int(info.min)
    return low <= v <= info.max


def makers(v, dtype):
    """Every factory path that turns the host value ``v`` into a tensor of ``dtype``."""
    arr = np.array([v])
    yield "tensor(scalar)", lambda: E.tensor(v, dtype=dtype)
    yield "tensor(list)", lambda: E.tensor([0, v] if isinstance(v, int) else [0.0, v],
                                           dtype=dtype)
    yield "tensor(nested)", lambda: E.tensor([[v], [v]], dtype=dtype)
    if arr.dtype.kind in "iuf":  # Python ints beyond 64 bits make object arrays
        yield "tensor(ndarray)", lambda: E.tensor(arr, dtype=dtype)
        yield "as_tensor(ndarray)", lambda: E.as_tensor(arr, dtype=dtype)
        yield "tensor(numpy scalar)", lambda: E.tensor([arr[0]], dtype=dtype)
    yield "as_tensor(list)", lambda: E.as_tensor([v], dtype=dtype)
    yield "full", lambda: E.full((2,), v, dtype=dtype)
    yield "full_like", lambda: E.full_like(E.zeros(2), v, dtype=dtype)
    yield "new_tensor", lambda: E.zeros(1).new_tensor([v], dtype=dtype)


def check_all(v, dtype):
    for name, make in makers(v, dtype):
        if fits(v, dtype):
            got = make().reshape(-1)[-1].item()
            want = int(v) % 2 ** (8 * dtype.itemsize) if dtype is E.uint8 else int(v)
            assert got == want, (name, v, dtype)
        else:
            with pytest.raises(RuntimeError, match="cannot be converted to type .* without "
                                                   "overflow"):
                make()


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=str)
def test_values_at_and_past_each_bound(dtype):
    info = np.iinfo(dtype.numpy)
    lo, hi = int(info.min), int(info.max)
    for v in (lo, hi, lo - 1, hi + 1, -hi, -hi - 1, 2 ** 63, 2 ** 64, -(2 ** 63) - 1, 0):
        if abs(v) < 2 ** 64 or dtype is E.int64:
            check_all(v, dtype)
    for v in (float(lo), float(hi) if float(hi) <= hi else None, hi + 0.9, lo - 0.9, -0.5,
              -1.0, 0.5, 1e20, -1e20, math.inf, -math.inf, math.nan, -0.0):
        if v is not None:
            check_all(v, dtype)


@settings(max_examples=60, deadline=None)
@given(dtype=st.sampled_from(INT_DTYPES),
       v=st.one_of(st.integers(-(2 ** 64), 2 ** 64),
                   st.floats(allow_nan=True, allow_infinity=True, width=64)))
def test_any_value_raises_or_converts_exactly(dtype, v):
    check_all(v, dtype)


def test_examples_from_the_issue_and_torch():
    with pytest.raises(RuntimeError, match="300 cannot be converted to type int8"):
        E.tensor([300], dtype=E.int8)
    with pytest.raises(RuntimeError, match="int64 without overflow"):
        E.tensor([2 ** 63])  # numpy makes uint64, which used to wrap to -2**63
    with pytest.raises(RuntimeError, match="nan cannot be converted to type int64"):
        E.tensor([math.nan], dtype=E.int64)
    with pytest.raises(RuntimeError, match="linspace.*int8"):
        E.linspace(0, 300, 3, dtype=E.int8)
    with pytest.raises(RuntimeError, match="arange.*128 cannot be converted to type int8"):
        E.arange(0, 129, dtype=E.int8)  # the last value made is checked, not the end
    assert E.arange(0, 128, dtype=E.int8)[-1].item() == 127
    assert E.linspace(0, 1, 3, dtype=E.int8).tolist() == [0, 0, 1]
    assert E.tensor([-1], dtype=E.uint8).item() == 255  # PyTorch's unsigned wrap
    assert E.full((2,), -1, dtype=E.uint8).tolist() == [255, 255]
    assert E.tensor([3.7, -3.7], dtype=E.int8).tolist() == [3, -3]  # truncation is fine
    assert E.tensor([2 ** 63 - 1]).item() == 2 ** 63 - 1
    assert E.tensor([True, 300]).tolist() == [1, 300]


def test_check_fits_leaves_float_and_bool_targets_and_safe_casts_alone():
    check_fits(np.array([1e300]), np.float32, "op")  # floats overflow to inf, as PyTorch
    check_fits(np.array([300]), np.bool_, "op")
    check_fits(np.array([2 ** 62]), np.int64, "op")
    check_fits(np.array([], dtype=np.float64), np.int8, "op")
    with pytest.raises(RuntimeError, match=r"op\(\): value 300 .* \(valid: \[-128, 127\]\)"):
        check_fits(np.array([1, 300, 400]), np.int8, "op")  # names the first offender
