"""logcumsumexp (kernels/log_scan.py) against a float64 reference, over dtypes, with its
gradient checked in tests/core/autograd/op_samples.py."""
import math

import ember as E
import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes


def _reference(x, axis):
    return np.logaddexp.accumulate(np.asarray(x, dtype=np.float64), axis=axis)


@settings(max_examples=30, deadline=None)
@given(shape=array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=9),
       dtype=st.sampled_from(ALL_DTYPES), data=st.data())
def test_logcumsumexp_matches_reference(shape, dtype, data):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    x, ref = make(shape, dtype, low=-20, high=20)
    got = E.logcumsumexp(x, dim)
    want_dtype = dtype if dtype.is_floating_point else E.get_default_dtype()
    assert_close(got, _reference(ref, dim), dtype=want_dtype)


def test_logcumsumexp_stays_finite_far_below_the_max():
    # exp(x - max).cumsum().log() would give -inf for the first entries here
    x = E.tensor([-1000.0, 0.0, -2000.0, 1000.0], dtype=E.float64)
    assert_close(E.logcumsumexp(x, 0), [-1000.0, 0.0, 0.0, 1000.0])
    got = E.logcumsumexp(E.tensor([-math.inf, 1.0, math.nan, 0.0]), 0)
    assert got[0].item() == -math.inf and got[1].item() == 1.0
    assert math.isnan(got[2].item()) and math.isnan(got[3].item())


def test_logcumsumexp_0d_method_out_and_errors():
    assert E.tensor(3.0).logcumsumexp(0).item() == 3.0
    out = E.empty(3, dtype=E.float64)
    E.logcumsumexp(E.tensor([0.0, 0.0, 0.0], dtype=E.float64), 0, out=out)
    assert_close(out, np.log([1.0, 2.0, 3.0]))
    with pytest.raises(IndexError):
        E.logcumsumexp(E.ones(2, 2), 2)


def test_generic_kernel_matches_numpy_kernel(numpy_kernels, generic_kernels):
    a = np.random.default_rng(0).uniform(-30, 30, (4, 17))
    np.testing.assert_array_equal(numpy_kernels["logcumsumexp"](a, 1),
                                  generic_kernels["logcumsumexp"](a, 1))
