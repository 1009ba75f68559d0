"""MaxUnpool1d/2d/3d layers: they undo MaxPool's indices, store their arguments as
tuples (as PyTorch) and print them."""
import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from ember import nn


@pytest.mark.parametrize("nd, shape", [(1, (2, 3, 8)), (2, (2, 3, 4, 6)), (3, (1, 2, 4, 4, 6))])
def test_unpool_undoes_pool(nd, shape):
    pool = getattr(nn, f"MaxPool{nd}d")(2, return_indices=True)
    unpool = getattr(nn, f"MaxUnpool{nd}d")(2)
    x, xn = make(shape, E.float64)
    v, i = pool(x)
    u = unpool(v, i)
    assert tuple(u.shape) == shape
    exp = np.zeros(xn.size)
    planes = int(np.prod(shape[:2]))
    flat = (i.numpy().reshape(planes, -1) + np.arange(planes)[:, None] * xn[0, 0].size).ravel()
    exp[flat] = xn.ravel()[flat]
    assert_close(u, exp.reshape(shape))
    assert_close(unpool(v, i, output_size=shape), exp.reshape(shape))


def test_unpool_output_size_and_repr():
    x, _ = make((1, 1, 5, 5), E.float64)
    v, i = nn.MaxPool2d(2, return_indices=True)(x)
    assert tuple(nn.MaxUnpool2d(2)(v, i, output_size=(5, 5)).shape) == (1, 1, 5, 5)
    m = nn.MaxUnpool2d(2)
    assert (m.kernel_size, m.stride, m.padding) == ((2, 2), (2, 2), (0, 0))
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.MaxUnpool2d(2)) == \
        "MaxUnpool2d(kernel_size=(2, 2), stride=(2, 2), padding=(0, 0))"
    assert repr(nn.MaxUnpool3d(2, 1, 1)) == \
        "MaxUnpool3d(kernel_size=(2, 2, 2), stride=(1, 1, 1), padding=(1, 1, 1))"
