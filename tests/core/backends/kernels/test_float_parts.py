"""frexp (kernels/float_parts.py) against numpy.frexp in float64, over floating dtypes;
its gradient is checked in tests/core/autograd/op_samples.py."""
import math

import ember as E
import numpy as np
import pytest
from ember.errors import DtypeError
from helpers import FLOAT_DTYPES, LOW_FLOAT_DTYPES, assert_close, make, to_np


@pytest.mark.parametrize("dtype", FLOAT_DTYPES + LOW_FLOAT_DTYPES, ids=lambda d: d.name)
def test_frexp_matches_numpy(dtype):
    x, ref = make((3, 5), dtype, low=-1e3, high=1e3)
    mantissa, exponent = E.frexp(x)
    m, e = np.frexp(to_np(x).astype(np.float64))
    assert mantissa.dtype is dtype and exponent.dtype is E.int32
    assert_close(mantissa, m)
    np.testing.assert_array_equal(exponent.numpy(), e)
    assert_close(mantissa.to(E.float64) * 2.0 ** exponent.to(E.float64), ref, dtype=E.float64,
                 rtol=1e-2 if dtype in LOW_FLOAT_DTYPES else None)


def test_frexp_special_values_and_method():
    r = E.tensor([8.0, 0.0, -5.0, math.inf, math.nan]).frexp()
    assert type(r).__name__ == "frexp"
    assert r.exponent.tolist() == [4, 0, 3, 0, 0]
    assert r.mantissa[:4].tolist() == [0.5, 0.0, -0.625, math.inf]
    assert math.isnan(r.mantissa[4].item())


@pytest.mark.parametrize("dtype", [E.int64, E.int8, E.bool_], ids=lambda d: d.name)
def test_frexp_refuses_integral_and_bool(dtype):
    with pytest.raises(DtypeError, match="floating point"):
        E.frexp(E.ones(2, dtype=dtype))
