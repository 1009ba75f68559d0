"""index_add and index_fill (kernels/index_update.py) against numpy float64 references;
their gradients run through op_samples (gradcheck and gradgradcheck).

Errors and the casts of alpha and value were checked by hand against PyTorch 2.x.
"""
import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make, to_np

import ember as E


def _index_add(ref, dim, index, source, alpha):
    out = np.array(ref, dtype=np.float64)
    view = np.moveaxis(out, dim, 0)
    src = np.moveaxis(np.asarray(source, dtype=np.float64), dim, 0)
    for j, i in enumerate(index):
        view[i] += alpha * src[j]
    return out


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("dim", [0, -1])
def test_index_add_accumulates_repeats(dtype, dim):
    x, ref = make((3, 4), dtype, low=0, high=3)
    n = 3
    shape = (n, 4) if dim == 0 else (3, n)
    s, sref = make(shape, dtype, low=0, high=3, seed=1)
    index = [2, 0, 2]
    alpha = 1 if dtype is E.bool_ else 2
    got = E.index_add(x, dim, E.tensor(index), s, alpha=alpha)
    want = _index_add(ref, dim % 2, index, sref, alpha)
    if dtype is E.bool_:  # bool adds as logical or
        want = want != 0
    elif dtype is E.uint8:
        want = want % 256
    assert_close(got, want, dtype)
    y = x.clone()
    assert y.index_add_(dim, E.tensor(index, dtype=E.int32), s, alpha=alpha) is y
    assert_close(y, want, dtype)


def test_index_add_alpha_casts_to_the_dtype():
    x = E.zeros(3, dtype=E.int64)
    assert_close(x.index_add(0, E.tensor([1]), E.tensor([5]), alpha=0.5), [0, 0, 0])
    u = E.zeros(3, dtype=E.uint8)
    assert_close(u.index_add(0, E.tensor([1]), E.tensor([1], dtype=E.uint8), alpha=-1),
                 [0, 255, 0])
    assert_close(E.tensor(1.0).index_add(0, E.tensor([0]), E.tensor(2.0)), 3.0)


@pytest.mark.parametrize("args,err,match", [
    ((0, E.tensor([2]), E.ones(1, 3)), IndexError, "out of bounds"),
    ((0, E.tensor([-1]), E.ones(1, 3)), IndexError, "out of bounds"),
    ((0, E.tensor([0]), E.ones(1, 2)), ValueError, r"source of shape"),
    ((0, E.tensor([0, 1]), E.ones(1, 3)), ValueError, "len"),
    ((0, E.tensor([0.0]), E.ones(1, 3)), TypeError, "int64 or int32"),
    ((0, E.tensor([[0]]), E.ones(1, 3)), IndexError, "vector"),
    ((1, E.tensor([0]), E.ones(2, 1, dtype=E.float64)), TypeError, "same dtype"),
    ((2, E.tensor([0]), E.ones(2, 1)), IndexError, "out of range"),
], ids=["high", "negative", "shape", "count", "index_dtype", "index_2d", "source_dtype", "dim"])
def test_index_add_errors_leave_self_unchanged(args, err, match):
    x = E.zeros(2, 3)
    with pytest.raises(err, match=match):
        x.index_add(*args)
    with pytest.raises(err, match=match):
        x.index_add_(*args)
    assert_close(x, np.zeros((2, 3)))


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_index_fill(dtype):
    x, ref = make((3, 4), dtype)
    want = ref.copy()
    want[:, [0, 3]] = 1
    assert_close(E.index_fill(x, 1, E.tensor([0, -1]), 1), want, dtype)
    y = x.clone()
    assert y.index_fill_(-1, E.tensor(0, dtype=E.int32), 1) is y
    want = ref.copy()
    want[:, 0] = 1
    assert_close(y, want, dtype)


def test_index_fill_values_and_errors():
    x = E.zeros(2, 3, dtype=E.int64)
    assert_close(x.index_fill(1, E.tensor([1]), 2.7), [[0, 2, 0], [0, 2, 0]])  # truncates
    assert_close(E.ones(2).index_fill(0, E.tensor([1]), E.tensor(5.0)), [1.0, 5.0])
    assert_close(E.tensor(1.0).index_fill(0, E.tensor([0]), 3), 3.0)
    u = E.tensor([1, 2], dtype=E.uint8)
    assert_close(u.index_fill(0, E.tensor([0]), -1), [255, 2])
    with pytest.raises(RuntimeError, match="cannot be converted"):
        u.index_fill_(0, E.tensor([0]), 300)
    assert_close(u, [1, 2])
    with pytest.raises(IndexError, match="out of bounds"):
        x.index_fill(1, E.tensor([3]), 1)
    with pytest.raises(IndexError, match="vector"):
        x.index_fill(1, E.tensor([[0]]), 1)
    with pytest.raises(TypeError, match="int64 or int32"):
        x.index_fill(1, E.tensor([0.0]), 1)
    assert to_np(x).sum() == 0
