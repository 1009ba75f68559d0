"""ember.nn.functional max unpooling (nn/functional/pooling/unpool.py): values placed at
max pooling's own indices (unpool(pool(x)) round trips in 1-D, 2-D and 3-D), PyTorch's
default and explicit output sizes, gradcheck and gradgradcheck, and the errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import assert_close, make, to_np

POOL = {1: (F.max_pool1d, F.max_unpool1d), 2: (F.max_pool2d, F.max_unpool2d),
        3: (F.max_pool3d, F.max_unpool3d)}


def np_unpool(values, indices, size):
    """Zeros of (.., *size) with each value at its flat position in its plane."""
    lead = values.shape[:values.ndim - len(size)]
    out = np.zeros((int(np.prod(lead)), int(np.prod(size))))
    for p, (v, i) in enumerate(zip(values.reshape(len(out), -1), indices.reshape(len(out), -1))):
        out[p, i] = v
    return out.reshape(lead + tuple(size))


@pytest.mark.parametrize("nd, shape, k, s, p", [
    (1, (2, 3, 9), 3, 2, 1), (1, (3, 8), 2, None, 0),
    (2, (2, 3, 7, 6), 2, None, 0), (2, (3, 7, 6), 3, 2, 1),
    (3, (2, 2, 5, 4, 6), 2, None, 0), (3, (2, 5, 4, 6), (3, 2, 2), (2, 1, 2), (1, 0, 1)),
])
def test_unpool_of_pool_round_trips(nd, shape, k, s, p):
    pool, unpool = POOL[nd]
    x, ref = make(shape, E.float64)
    v, i = pool(x, k, s, p, return_indices=True)
    u = unpool(v, i, k, s, p, output_size=shape[-nd:])
    assert tuple(u.shape) == shape and u.dtype is E.float64
    assert_close(u, np_unpool(to_np(v), to_np(i), shape[-nd:]))
    # every kept cell holds its input value
    kept = to_np(u) != 0
    np.testing.assert_array_equal(to_np(u)[kept], ref[kept])
    # output_size may also name N and C (batched input)
    if len(shape) == nd + 2:
        assert_close(unpool(v, i, k, s, p, output_size=shape), to_np(u))


def test_default_output_size_is_pytorchs():
    x, _ = make((1, 2, 4, 6), E.float64)
    v, i = F.max_pool2d(x, 2, return_indices=True)
    assert tuple(F.max_unpool2d(v, i, 2).shape) == (1, 2, 4, 6)
    v, i = F.max_pool2d(x, 3, 1, 1, return_indices=True)                  # (4 - 1) 1 - 2 + 3
    assert tuple(F.max_unpool2d(v, i, 3, 1, 1).shape) == (1, 2, 4, 6)
    v, i = F.max_pool3d(x[None], (1, 2, 2), return_indices=True)
    assert tuple(F.max_unpool3d(v, i, (1, 2, 2)).shape) == (1, 1, 2, 4, 6)


def test_unpool_of_adaptive_max_pool():
    x, ref = make((2, 3, 5, 7), E.float64)
    v, i = F.adaptive_max_pool2d(x, (2, 3), return_indices=True)
    u = F.max_unpool2d(v, i, (3, 3), (2, 2), output_size=(5, 7))
    assert_close(u, np_unpool(to_np(v), to_np(i), (5, 7)))


@pytest.mark.parametrize("nd", [1, 2, 3])
def test_unpool_gradcheck_and_gradgradcheck(nd):
    _, unpool = POOL[nd]
    shape = (1, 2) + (2,) * nd if nd < 3 else (1, 1, 1, 2, 2)
    v = E.tensor(np.arange(1.0, 1.0 + np.prod(shape)).reshape(shape), requires_grad=True)
    out = tuple(2 * n for n in shape[2:])
    rng = np.random.default_rng(0)    # distinct positions per plane: no write collisions
    planes, m = shape[0] * shape[1], int(np.prod(shape[2:]))
    i = E.tensor(np.stack([rng.permutation(int(np.prod(out)))[:m] for _ in range(planes)])
                 .reshape(shape))
    assert gradcheck(lambda t: unpool(t, i, 2, output_size=out), (v,))
    assert gradgradcheck(lambda t: unpool(t, i, 2, output_size=out), (v,))


def _pooled():
    return F.max_pool2d(make((2, 3, 4, 6), E.float32)[0], 2, return_indices=True)


@pytest.mark.parametrize("call, err, match", [
    (lambda v, i: F.max_unpool2d(v, i, 2, output_size=(8, 6)), ValueError,
     "dim 0 must be between 2 and 6"),
    (lambda v, i: F.max_unpool2d(v, i, 2, output_size=(1, 4, 6)), ValueError,
     "2 or 4 elements"),
    (lambda v, i: F.max_unpool2d(v, i.int(), 2), DtypeError, "int64 indices"),
    (lambda v, i: F.max_unpool2d(v, i[..., :1], 2), ShapeError, "indices of the input's shape"),
    (lambda v, i: F.max_unpool2d(v, i + 100, 2), IndexError, "invalid max index: 1.. .output"),
    (lambda v, i: F.max_unpool2d(v, i - 100, 2), IndexError, "invalid max index: -"),
    (lambda v, i: F.max_unpool2d(v[0, 0], i[0, 0], 2), ShapeError, "3-D .unbatched. or 4-D"),
    (lambda v, i: F.max_unpool1d(v, i, 2), ShapeError, "2-D .unbatched. or 3-D"),
    (lambda v, i: F.max_unpool2d(v.long(), i, 2), NotImplementedError, "floating"),
    (lambda v, i: F.max_unpool2d(v, i, 2, stride=0), ShapeError, "stride must be positive"),
])
def test_unpool_errors(call, err, match):
    with pytest.raises(err, match=match):
        call(*_pooled())
