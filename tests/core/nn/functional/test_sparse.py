"""F.embedding against numpy float64 references: values, gradients (padding_idx,
scale_grad_by_freq), gradcheck and gradgradcheck, max_norm's in-place renorm, errors."""
from __future__ import annotations

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from ember.autograd import gradcheck, gradgradcheck
from ember.errors import DtypeError, ShapeError
from helpers import FLOAT_DTYPES, assert_close, make, to_np

IDX = np.array([[0, 2, 5], [2, 2, 1]])


def _grad_ref(idx, g, n, padding_idx=None, scale_grad_by_freq=False):
    """dL/dweight for out = weight[idx] and dL/dout = g."""
    flat, g = idx.reshape(-1), g.reshape(idx.size, -1)
    if scale_grad_by_freq:
        g = g / np.bincount(flat, minlength=n)[flat][:, None]
    out = np.zeros((n, g.shape[1]))
    np.add.at(out, flat, g)
    if padding_idx is not None:
        out[padding_idx] = 0
    return out


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
@pytest.mark.parametrize("idx", [IDX, np.array([3, 0]), np.array(4), np.zeros((2, 0), int)])
@pytest.mark.parametrize("idx_dtype", [E.int64, E.int32])
def test_values(dtype, idx, idx_dtype):
    w, wn = make((6, 3), dtype)
    out = F.embedding(E.tensor(idx, dtype=idx_dtype), w)
    assert out.shape == idx.shape + (3,)
    assert_close(out, wn[idx])


@pytest.mark.parametrize("padding_idx, scale", [(None, False), (2, False), (-1, False),
                                                (None, True), (2, True)])
def test_gradient(padding_idx, scale):
    w, wn = make((6, 3), E.float64)
    w.requires_grad_()
    g, gn = make(IDX.shape + (3,), E.float64, seed=1)
    out = F.embedding(E.tensor(IDX), w, padding_idx=padding_idx, scale_grad_by_freq=scale)
    assert_close(out, wn[IDX])  # the options change gradients only
    out.backward(g)
    pad = None if padding_idx is None else padding_idx % 6
    assert_close(w.grad, _grad_ref(IDX, gn, 6, pad, scale))


def test_gradcheck_and_gradgradcheck():
    w = make((4, 3), E.float64)[0].requires_grad_()
    fn = lambda w: F.embedding(E.tensor([[0, 1], [3, 0]]), w)
    assert gradcheck(fn, (w,))
    assert gradgradcheck(fn, (w,))


def test_gradcheck_with_padding_idx():
    # the padding row gets no gradient, so finite differences agree only where it is a
    # constant: feed it in as one
    rest = make((3, 3), E.float64)[0].requires_grad_()
    pad_row = make((1, 3), E.float64, seed=1)[0]
    idx = E.tensor([[0, 1], [3, 1]])
    fn = lambda rest: F.embedding(idx, E.cat([rest[:1], pad_row, rest[1:]]), padding_idx=1)
    assert gradcheck(fn, (rest,))
    assert gradgradcheck(fn, (rest,))


@pytest.mark.parametrize("padding_idx", [None, 0])
def test_gradgradcheck_with_scale_grad_by_freq(padding_idx):
    # the scaled gradient is not the derivative of the values (finite differences cannot
    # see it; test_gradient checks it against numpy), but it must be differentiable again
    w = make((4, 3), E.float64)[0].requires_grad_()
    fn = lambda w: F.embedding(E.tensor([0, 1, 3, 0, 1, 1]), w, padding_idx=padding_idx,
                               scale_grad_by_freq=True)
    assert gradgradcheck(fn, (w,))


def test_op_takes_weight_first():
    w, wn = make((6, 3), E.float64)
    assert_close(E.embedding(w, E.tensor(IDX)), wn[IDX])


def _renorm_ref(wn, idx, max_norm, p):
    out = wn.copy()
    for i in np.unique(idx):
        norm = np.sum(np.abs(wn[i]) ** p) ** (1 / p)
        if norm > max_norm:
            out[i] = wn[i] * max_norm / (norm + 1e-7)
    return out


@pytest.mark.parametrize("max_norm, norm_type", [(1.0, 2.0), (2.5, 1.0), (100.0, 2.0)])
def test_max_norm_renormalizes_referenced_rows_in_place(max_norm, norm_type):
    w, wn = make((6, 3), E.float64)
    w.requires_grad_()
    out = F.embedding(E.tensor(IDX), w, max_norm=max_norm, norm_type=norm_type)
    expected = _renorm_ref(wn, IDX, max_norm, norm_type)  # rows 3 and 4 are untouched
    assert_close(w.detach(), expected)
    assert_close(out, expected[IDX])
    assert w.grad_fn is None  # the renorm is not recorded
    out.sum().backward()
    assert_close(w.grad, _grad_ref(IDX, np.ones(IDX.shape + (3,)), 6))


def test_float_indices_raise():
    with pytest.raises(DtypeError, match=r"indices of dtype int64 or int32, got .*float32.*"
                                         r"\.long\(\)"):
        F.embedding(E.tensor([0.0, 1.0]), E.zeros(4, 2))


@pytest.mark.parametrize("bad", [4, -1])
def test_out_of_range_indices_raise(bad):
    with pytest.raises(IndexError, match=rf"index {bad} is out of range.*\[0, 4\)"):
        F.embedding(E.tensor([0, bad]), E.zeros(4, 2))
    with pytest.raises(IndexError, match=rf"index {bad} is out of range"):
        F.embedding(E.tensor([0, bad]), E.zeros(4, 2), max_norm=1.0)


@pytest.mark.parametrize("padding_idx", [4, -5])
def test_padding_idx_out_of_range_raises(padding_idx):
    with pytest.raises(ValueError, match=r"padding_idx must be within num_embeddings"):
        F.embedding(E.tensor([0]), E.zeros(4, 2), padding_idx=padding_idx)


def test_other_errors():
    with pytest.raises(ShapeError, match=r"\(num_embeddings, embedding_dim\), got \(4,\)"):
        F.embedding(E.tensor([0]), E.zeros(4))
    with pytest.raises(NotImplementedError, match=r"sparse=True"):
        F.embedding(E.tensor([0]), E.zeros(4, 2), sparse=True)
    with pytest.raises(ValueError, match=r"max_norm must be positive"):
        F.embedding(E.tensor([0]), E.zeros(4, 2), max_norm=0.0)


def test_padding_row_values_are_looked_up():
    # padding_idx blocks the gradient only; the row's values are returned as they are
    w = E.ones(3, 2, requires_grad=True)
    out = F.embedding(E.tensor([1, 1]), w, padding_idx=1)
    np.testing.assert_array_equal(to_np(out), np.ones((2, 2)))


def test_one_hot():
    labels = E.tensor([[0, 2], [1, 0]])
    out = F.one_hot(labels)
    assert out.dtype is E.int64 and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), (labels.numpy()[..., None] == np.arange(3)))
    assert F.one_hot(E.tensor([1]), num_classes=4).tolist() == [[0, 1, 0, 0]]
    assert F.one_hot(E.zeros(0, dtype=E.int64), 3).shape == (0, 3)


@pytest.mark.parametrize("call, error, match", [
    (lambda: F.one_hot(E.tensor([0, 3]), 3), IndexError, "smaller than num_classes=3"),
    (lambda: F.one_hot(E.tensor([-1, 0]), 3), IndexError, "non-negative"),
    (lambda: F.one_hot(E.tensor([0.0]), 3), TypeError, "int64"),
    (lambda: F.one_hot(E.zeros(0, dtype=E.int64)), ValueError, "cannot infer"),
])
def test_one_hot_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
