"""FractionalMaxPool2d/3d layers: fixed samples as a buffer, stored arguments, PyTorch's
argument errors and repr."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E
from core.nn.functional.pooling.reference import np_fractional
from ember import nn


@pytest.mark.parametrize("nd", [2, 3])
def test_fixed_samples_and_indices(nd):
    rng = np.random.default_rng(0)
    shape = (2, 3, 7, 8) if nd == 2 else (2, 3, 5, 7, 8)
    x, u = rng.standard_normal(shape), rng.random((2, 3, nd))
    cls = nn.FractionalMaxPool2d if nd == 2 else nn.FractionalMaxPool3d
    m = cls(2, output_size=3, return_indices=True, _random_samples=E.tensor(u))
    v, i = m(E.tensor(x))
    rv, ri = np_fractional(x, (2,) * nd, (3,) * nd, u)
    assert_close(v, rv)
    np.testing.assert_array_equal(i.numpy(), ri)
    assert "_random_samples" in dict(m.named_buffers())
    assert m.kernel_size == (2,) * nd and m.output_size == (3,) * nd
    assert m.output_ratio is None


def test_ratio_drawn_samples_and_repr():
    m = nn.FractionalMaxPool2d(2, output_ratio=0.5)
    assert m.output_ratio == (0.5, 0.5) and m.output_size is None
    assert tuple(m(E.randn(2, 3, 8, 10)).shape) == (2, 3, 4, 5)
    assert tuple(nn.FractionalMaxPool3d(2, output_ratio=0.5)(E.randn(3, 6, 8, 10)).shape) == \
        (3, 3, 4, 5)
    assert repr(m) == "FractionalMaxPool2d()"
    assert repr(nn.FractionalMaxPool3d(2, output_size=2)) == "FractionalMaxPool3d()"


@pytest.mark.parametrize("make_layer, match", [
    (lambda: nn.FractionalMaxPool2d(2), "either an output size, or a pooling ratio"),
    (lambda: nn.FractionalMaxPool3d(2, 2, 0.5), "only one of output_size and output_ratio"),
    (lambda: nn.FractionalMaxPool2d(2, output_ratio=1.5), "between 0 and 1"),
    (lambda: nn.FractionalMaxPool3d(0, output_size=2), "kernel_size must be greater than 0"),
])
def test_argument_errors(make_layer, match):
    with pytest.raises(ValueError, match=match):
        make_layer()
