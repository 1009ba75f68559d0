"""tril, triu, diagonal, diagonal_backward (kernels/matrix.py) and the composites over them
(diag_embed, diag, trace) against numpy."""
import numpy as np
import pytest
from helpers import ALL_DTYPES, assert_close, make

import ember as E
from ember.errors import ShapeError


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(3, 4), (4, 3), (2, 3, 3), (0, 3), (2, 0, 4)])
@pytest.mark.parametrize("k", [0, 1, -1, 5, -5])
def test_tril_triu_match_numpy(dtype, shape, k):
    x, ref = make(shape, dtype)
    assert_close(E.tril(x, k), np.tril(ref, k), dtype)
    assert_close(x.triu(diagonal=k), np.triu(ref, k), dtype)


def test_tril_inplace_out_and_errors():
    x, ref = make((3, 3), E.float32)
    y = x.clone()
    assert y.tril_(-1) is y
    assert_close(y, np.tril(ref, -1))
    out = E.empty(0, dtype=E.float32)
    assert E.triu(x, out=out) is out and out.shape == (3, 3)
    assert_close(out, np.triu(ref))
    for bad in (E.ones(3), E.tensor(1.0)):
        with pytest.raises(RuntimeError, match="at least 2 dimensions, got shape"):
            E.tril(bad)
        with pytest.raises(RuntimeError, match="triu"):
            bad.triu_()
    with pytest.raises(E.DtypeError):  # a float result cannot be stored in an int tensor
        E.tril(E.ones(2, 2), out=E.zeros(2, 2, dtype=E.int32))
    i = E.ones(2, 2, dtype=E.int32)
    with pytest.raises(RuntimeError, match="at least 2"):
        i[0].tril_()
    assert i.tolist() == [[1, 1], [1, 1]]  # nothing written on error


def diag_positions(shape, offset, dim1, dim2):
    """Flat positions of the entries numpy's diagonal(offset, dim1, dim2) reads."""
    pos = np.arange(int(np.prod(shape))).reshape(shape)
    return np.diagonal(pos, offset, dim1, dim2)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape,offset,dim1,dim2", [
    ((3, 4), 0, 0, 1), ((3, 4), 1, 0, 1), ((3, 4), -2, 0, 1), ((3, 4), 7, 0, 1),
    ((2, 3, 4), 1, -1, 0), ((2, 3, 4), -1, 2, 1), ((0, 3), 0, 0, 1)])
def test_diagonal_is_a_writable_view_matching_numpy(dtype, shape, offset, dim1, dim2):
    x, ref = make(shape, dtype)
    d = x.diagonal(offset, dim1, dim2)
    assert_close(d, np.diagonal(ref, offset, dim1, dim2), dtype)
    assert d._base is x
    d.fill_(1)  # writes through to x, as torch's diagonal view does
    expected = ref.copy()
    expected.reshape(-1)[diag_positions(shape, offset, dim1, dim2).ravel()] = 1
    assert_close(x, expected, dtype)


def test_diagonal_errors():
    with pytest.raises(IndexError, match="out of range"):
        E.ones(3).diagonal()
    with pytest.raises(IndexError, match="out of range"):
        E.ones(2, 3).diagonal(0, 0, 2)
    with pytest.raises(RuntimeError, match="cannot be identical 1, -1"):
        E.diagonal(E.ones(2, 3), 0, 1, -1)


@pytest.mark.parametrize("dtype", [E.bool_, E.int64, E.bfloat16, E.float64])
def test_diagonal_backward_places_grad_on_the_diagonal(dtype):
    g, gref = make((2, 1), dtype)  # diagonal -1 of dims (2, 1) of (2, 3, 2): one per batch
    out = E.diagonal_backward(g, [2, 3, 2], -1, 2, -2)
    want = np.zeros((2, 3, 2))
    want.reshape(-1)[diag_positions((2, 3, 2), -1, 2, 1).ravel()] = gref.ravel()
    assert_close(out, want, dtype)
    with pytest.raises(ShapeError, match=r"expected grad_output of shape \[2, 1\]"):
        E.diagonal_backward(E.ones(3), [2, 3, 2], -1, 2, -2)
    with pytest.raises(RuntimeError, match="identical"):
        E.diagonal_backward(E.ones(2), [2, 2], 0, 1, -1)
    with pytest.raises(IndexError, match="out of range"):
        E.diagonal_backward(E.ones(2), [2, 2], 0, 0, 2)


@pytest.mark.parametrize("dtype", [E.bool_, E.int32, E.float16, E.float64])
@pytest.mark.parametrize("offset,dim1,dim2", [(0, -2, -1), (1, 0, 2), (-2, 2, 0)])
def test_diag_embed_inverts_diagonal(dtype, offset, dim1, dim2):
    x, ref = make((2, 3), dtype)
    y = E.diag_embed(x, offset, dim1, dim2)
    n = 3 + abs(offset)
    assert y.ndim == 3 and y.dtype is dtype
    assert sorted(y.shape) == sorted((2, n, n))
    assert_close(y.diagonal(offset, dim1, dim2), ref, dtype)
    assert y.to(E.float64).sum().item() == pytest.approx(ref.sum())
    with pytest.raises(RuntimeError, match="identical"):
        E.diag_embed(x, 0, 0, -3)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("k", [0, 2, -1])
def test_diag_matches_numpy(dtype, k):
    v, vref = make((3,), dtype)
    assert_close(E.diag(v, k), np.diag(vref, k), dtype)
    m, mref = make((3, 4), dtype)
    d = m.diag(k)
    assert_close(d, np.diag(mref, k), dtype)
    assert d._base is None  # a copy, as torch.diag
    with pytest.raises(RuntimeError, match="1-D or 2-D tensors, got 3-D"):
        E.diag(E.ones(2, 2, 2))
    with pytest.raises(RuntimeError, match="got 0-D"):
        E.tensor(1.0).diag()


@pytest.mark.parametrize("dtype,want", [(E.int32, E.int64), (E.uint8, E.int64),
                                        (E.float16, E.float16), (E.float64, E.float64)])
def test_trace_dtypes_and_errors(dtype, want):
    x, ref = make((3, 4), dtype)
    assert_close(E.trace(x), np.trace(ref), want)
    assert_close(E.zeros(0, 3, dtype=dtype).trace(), 0.0, want)
    with pytest.raises(RuntimeError, match=r"expected a matrix \(2-D\), got shape \[3\]"):
        E.trace(E.ones(3, dtype=dtype))
    with pytest.raises(NotImplementedError, match="bool"):
        E.trace(E.ones(2, 2, dtype=E.bool_))


@pytest.mark.parametrize("shape", [(3, 4), (5, 3), (4, 4), (1, 6), (0, 3), (3, 0)])
def test_trace_kernel_pair_gradients(shape):
    # trace runs as one kernel pair (TraceBackward0); diagonal().sum() is its reference
    a = np.random.default_rng(0).uniform(-2, 2, shape)
    x = E.tensor(a, requires_grad=True)
    y = E.trace(x)
    assert type(y.grad_fn).__name__ == "TraceBackward0"
    y.backward(E.tensor(2.5, dtype=E.float64))
    want = np.zeros(shape)
    np.fill_diagonal(want, 2.5)
    assert_close(x.grad, want, E.float64)
    if a.size:
        assert E.autograd.gradcheck(E.trace, (E.tensor(a, requires_grad=True),))
        assert E.autograd.gradgradcheck(E.trace, (E.tensor(a, requires_grad=True),))


@pytest.mark.parametrize("dtype", [E.float16, E.bfloat16, E.float32])
def test_trace_low_floats_and_float32_against_float64(dtype):
    x, ref = make((40, 30), dtype)
    assert_close(E.trace(x), np.trace(ref), dtype)
    x = E.tensor(np.array([[np.inf, 1.0], [2.0, -np.inf]]).astype(dtype.numpy))
    assert np.isnan(E.trace(x).item())
    assert E.trace(E.tensor(np.array([[-0.0, 1.0], [2.0, -0.0]]).astype(dtype.numpy))).item() == 0


def test_trace_without_grad_and_under_a_trace_keeps_its_ops():
    x = E.tensor(np.arange(12.0).reshape(3, 4))
    assert E.trace(x).grad_fn is None and E.trace(x).item() == 15.0
    traced = E.jit.trace(lambda t: E.trace(t) * 2, (x,))
    assert traced(x).item() == 30.0


def test_diagonal_of_a_read_only_array_stays_read_only():
    a = np.arange(9.0).reshape(3, 3)
    a.setflags(write=False)
    d = E.from_numpy(a).diagonal() if hasattr(E, "from_numpy") else None
    if d is not None:
        assert d.tolist() == [0.0, 4.0, 8.0]
        assert not d._data.flags.writeable
