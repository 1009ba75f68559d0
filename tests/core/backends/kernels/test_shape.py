"""View ops (kernels/shape.py and their composites) against numpy float64: view, reshape,
permute, transpose, t, expand, squeeze, unsqueeze, flatten, unflatten, narrow, select,
split, chunk, unbind, movedim, contiguous. Views must share memory and version counter
with their base; copies must not."""
import itertools
import re

import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, assert_close, make, to_np

import ember as E

SOME_DTYPES = [E.bool_, E.uint8, E.int32, E.int64, E.bfloat16, E.float16] + FLOAT_DTYPES


def assert_view(v, base):
    """``v`` shares memory and version counter with ``base``: writing one shows in both."""
    assert v._base is (base._base if base._base is not None else base)
    if v.numel() == 0:
        return
    assert np.shares_memory(v.numpy(), base.numpy())
    before = base._version
    v.fill_(0)
    zeroed = base.numpy().copy()
    v.fill_(1)  # some entry of base goes from 0 to 1
    assert (base.numpy() != zeroed).any()
    assert base._version == before + 2 == v._version


def assert_copy(c, base):
    assert c._base is None
    if c.numel():
        assert not np.shares_memory(c.numpy(), base.numpy())
    before = base._version
    c.fill_(0)
    assert base._version == before


# --- view / reshape -----------------------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,size", [((6,), (2, 3)), ((2, 3), (-1,)), ((2, 3, 4), (4, -1)),
                                        ((), (1, 1)), ((1,), ()), ((0, 3), (3, 0, 1))])
def test_view_and_reshape(dtype, shape, size):
    x, ref = make(shape, dtype)
    expected = ref.reshape(size)
    assert_close(x.view(size), expected, dtype)
    assert_close(x.view(*size) if size else x.view(()), expected, dtype)
    assert_close(E.reshape(x, size), expected, dtype)
    assert_view(x.view(size), x)
    assert_view(x.reshape(size), x)


def layouts():
    """Non-contiguous tensors: permutations and slices of a (2, 3, 4) block."""
    base = E.arange(48.0).view(2, 3, 8)[:, :, :4]
    for perm in itertools.permutations(range(3)):
        yield base.permute(perm)
    yield E.arange(24.0).view(2, 3, 4)[:, ::2]
    yield E.arange(24.0).view(2, 3, 4).expand(2, 2, 3, 4)


@pytest.mark.parametrize("x", list(layouts()), ids=str)
@pytest.mark.parametrize("size", [(24,), (6, 4), (2, 12), (4, 6), (2, 3, 2, 2), (1, 24, 1)])
def test_view_follows_the_stride_rule(x, size):
    # view succeeds exactly when numpy can reshape without a copy, and is then a view
    ref = x.numpy()
    if ref.size != np.prod(size):
        size = (ref.size,)
    try:
        expected = ref.reshape(size, copy=False)
    except ValueError:
        with pytest.raises(RuntimeError, match="not compatible with input tensor's size"):
            x.view(size)
        r = x.reshape(size)  # a copy, not a view
        assert r._base is None and not np.shares_memory(r.numpy(), ref)
        np.testing.assert_array_equal(r.numpy(), ref.reshape(size))
        return
    v = x.view(size)
    np.testing.assert_array_equal(v.numpy(), expected)
    assert np.shares_memory(v.numpy(), ref) and v._base is not None


def test_reshape_copy_is_not_a_view():
    x = E.arange(6.0).view(2, 3)
    r = x.t().reshape(6)
    assert_close(r, np.arange(6.0).reshape(2, 3).T.reshape(6))
    assert_copy(r, x)


@pytest.mark.parametrize("op", ["view", "reshape"])
def test_view_errors(op):
    x = E.arange(6.0)
    f = getattr(x, op)
    with pytest.raises(RuntimeError, match=r"shape '\[4\]' is invalid for input of size 6"):
        f(4)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        f(-1, -1)
    with pytest.raises(RuntimeError, match="invalid shape dimension -2"):
        f(-2, 3)
    with pytest.raises(RuntimeError, match="invalid for input of size 0"):
        E.zeros(0).view(-1, 0) if op == "view" else E.zeros(0).reshape(-1, 0)


def test_view_as_reshape_as():
    x, ref = make((2, 6), E.float32)
    other = E.zeros(3, 4)
    assert_close(x.view_as(other), ref.reshape(3, 4))
    assert_close(x.t().reshape_as(other), ref.T.reshape(3, 4))
    assert_view(x.view_as(other), x)


# --- permute / transpose / t / movedim ------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("dims", [(0, 1, 2), (2, 0, 1), (-1, -3, 1), (1, 2, 0)])
def test_permute(dtype, dims):
    x, ref = make((2, 3, 4), dtype)
    assert_close(x.permute(dims), ref.transpose(dims), dtype)
    assert_close(E.permute(x, dims), ref.transpose(dims), dtype)
    assert_close(x.permute(*dims), ref.transpose(dims), dtype)
    assert_view(x.permute(dims), x)


def test_permute_errors():
    x = E.zeros(2, 3)
    with pytest.raises(RuntimeError, match="number of dims don't match"):
        x.permute(0)
    with pytest.raises(ValueError, match="multiple times"):
        x.permute(0, 0)
    with pytest.raises(IndexError, match="out of range"):
        x.permute(0, 2)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,d0,d1", [((2, 3), 0, 1), ((2, 3, 4), -1, 0), ((2, 3, 4), 1, 1),
                                          ((), 0, -1), ((5,), 0, 0)])
def test_transpose(dtype, shape, d0, d1):
    x, ref = make(shape, dtype)
    expected = np.swapaxes(ref, d0, d1) if ref.ndim else ref
    for r in (x.transpose(d0, d1), E.transpose(x, d0, d1), E.swapaxes(x, d0, d1),
              x.swapdims(d0, d1)):
        assert_close(r, expected, dtype)
    assert_view(x.transpose(d0, d1), x)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_t(shape):
    x, ref = make(shape, E.float64)
    assert_close(x.t(), ref.T)
    assert_close(E.t(x), ref.T)
    assert_view(x.t(), x)
    with pytest.raises(RuntimeError, match="expects a tensor with <= 2 dimensions, but self is 3D"):
        E.zeros(2, 3, 4).t()


@pytest.mark.parametrize("src,dst", [(0, 2), (-1, 0), ((0, 1), (2, 0)), ((2,), (1,)),
                                     ((0, 1, 2), (2, 1, 0))])
def test_movedim(src, dst):
    x, ref = make((2, 3, 4), E.float32)
    assert_close(x.movedim(src, dst), np.moveaxis(ref, src, dst))
    assert_close(E.moveaxis(x, src, dst), np.moveaxis(ref, src, dst))
    assert_view(E.movedim(x, src, dst), x)


def test_movedim_errors():
    x = E.zeros(2, 3, 4)
    with pytest.raises(RuntimeError, match="same number of dims"):
        x.movedim((0, 1), (0,))
    with pytest.raises(RuntimeError, match="repeated dim in `source`"):
        x.movedim((0, 0), (1, 2))
    with pytest.raises(RuntimeError, match="repeated dim in `destination`"):
        x.movedim((0, 1), (2, -1))
    with pytest.raises(IndexError, match="out of range"):
        x.movedim(3, 0)


# --- expand / squeeze / unsqueeze ----------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,size,expected", [
    ((1, 3), (4, 3), (4, 3)), ((1, 3), (-1, 3), (1, 3)), ((3,), (2, 3), (2, 3)),
    ((2, 1), (5, 2, -1), (5, 2, 1)), ((), (2, 2), (2, 2)), ((1, 1), (0, 4), (0, 4))])
def test_expand(dtype, shape, size, expected):
    x, ref = make(shape, dtype)
    r = x.expand(size)
    assert_close(r, np.broadcast_to(ref, expected), dtype)
    assert_close(x.expand(*size), np.broadcast_to(ref, expected), dtype)
    assert_close(x.expand_as(E.zeros(expected)), np.broadcast_to(ref, expected), dtype)
    assert r._base is x and (r.numel() == 0 or np.shares_memory(r.numpy(), x.numpy()))


def test_expand_is_read_only_and_errors():
    x = E.zeros(1, 3)
    e = x.expand(2, 3)
    for write in (lambda: e.fill_(1), lambda: e.copy_(E.ones(2, 3)), lambda: e.zero_()):
        with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
            write()
    with pytest.raises(RuntimeError, match="read-only"):
        e[0].fill_(1)
    assert x.sum().item() == 0 and x._version == 0
    with pytest.raises(RuntimeError, match=r"expanded size of the tensor \(4\) must match the "
                                           r"existing size \(3\) at non-singleton dimension 1"):
        x.expand(2, 4)
    with pytest.raises(RuntimeError, match="number of sizes provided"):
        E.zeros(2, 3).expand(3)
    with pytest.raises(RuntimeError, match="leading, non-existing dimension 0"):
        x.expand(-1, 2, 3)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,dim", [((1, 3, 1), None), ((1, 3, 1), 0), ((1, 3, 1), -1),
                                       ((1, 3, 1), 1), ((1, 3, 1), (0, 2)), ((), None),
                                       ((), 0), ((2, 1, 0), None)])
def test_squeeze(dtype, shape, dim):
    x, ref = make(shape, dtype)
    if dim is None:
        expected = np.squeeze(ref)
    else:
        dims = (dim,) if isinstance(dim, int) else dim
        expected = np.squeeze(ref, axis=tuple(d for d in dims if ref.ndim and ref.shape[d] == 1))
    assert_close(x.squeeze(dim) if dim is not None else x.squeeze(), expected, dtype)
    assert_close(E.squeeze(x, dim), expected, dtype)
    assert_view(x.squeeze(dim), x)


@pytest.mark.parametrize("shape,dim", [((3,), 0), ((3,), 1), ((3,), -1), ((2, 3), -3), ((), 0)])
def test_unsqueeze(shape, dim):
    x, ref = make(shape, E.float32)
    assert_close(x.unsqueeze(dim), np.expand_dims(ref, dim))
    assert_view(E.unsqueeze(x, dim), x)
    with pytest.raises(IndexError, match="out of range"):
        x.unsqueeze(len(shape) + 2)


# --- flatten / unflatten / narrow / select -------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,start,end,expected", [
    ((2, 3, 4), 0, -1, (24,)), ((2, 3, 4), 1, 2, (2, 12)), ((2, 3, 4), 0, 1, (6, 4)),
    ((2, 3, 4), 1, 1, (2, 3, 4)), ((), 0, -1, (1,)), ((2, 0, 3), 0, 1, (0, 3))])
def test_flatten(dtype, shape, start, end, expected):
    x, ref = make(shape, dtype)
    assert_close(x.flatten(start, end), ref.reshape(expected), dtype)
    assert_close(E.flatten(x, start_dim=start, end_dim=end), ref.reshape(expected), dtype)
    assert_view(x.flatten(start, end), x)


def test_flatten_copies_when_it_must():
    x = E.arange(6.0).view(2, 3)
    f = x.t().flatten()
    assert_close(f, np.arange(6.0).reshape(2, 3).T.reshape(-1))
    assert_copy(f, x)
    with pytest.raises(RuntimeError, match="start_dim .* cannot come after end_dim"):
        E.zeros(2, 3).flatten(1, 0)


@pytest.mark.parametrize("shape,dim,sizes,expected", [
    ((2, 12), 1, (3, 4), (2, 3, 4)), ((2, 12), -1, (-1, 6), (2, 2, 6)),
    ((6,), 0, (1, 6, 1), (1, 6, 1)), ((0, 3), 0, (2, -1), (2, 0, 3)),
    ((0, 3), 0, (0, -1), None), ((2, 6), 1, (4, -1), None)])
def test_unflatten(shape, dim, sizes, expected):
    x, ref = make(shape, E.int64)
    if expected is None:
        with pytest.raises(RuntimeError, match="don't multiply up"):
            x.unflatten(dim, sizes)
        return
    assert_close(x.unflatten(dim, sizes), ref.reshape(expected), E.int64)
    assert_view(E.unflatten(x, dim, sizes), x)


def test_unflatten_errors():
    with pytest.raises(RuntimeError,
                       match=r"sizes \[2, 2\] don't multiply up to the size of dim 1 \(3\)"):
        E.zeros(2, 3).unflatten(1, (2, 2))
    with pytest.raises(RuntimeError, match="must be non-empty"):
        E.zeros(2, 3).unflatten(1, ())
    with pytest.raises(RuntimeError, match="0-dim"):
        E.tensor(1.0).unflatten(0, (1,))


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("dim,start,length", [(0, 1, 2), (1, -3, 3), (1, 4, 0), (-1, 0, 4)])
def test_narrow(dtype, dim, start, length):
    x, ref = make((3, 4), dtype)
    s = start % 4 if start < 0 else start
    expected = np.take(ref, range(s, s + length), axis=dim)
    assert_close(x.narrow(dim, start, length), expected, dtype)
    assert_view(E.narrow(x, dim, start, length), x)


def test_narrow_errors():
    x = E.zeros(6)
    with pytest.raises(RuntimeError,
                       match=r"start \(5\) \+ length \(2\) exceeds dimension size \(6\)"):
        x.narrow(0, 5, 2)
    with pytest.raises(IndexError, match=r"start out of range \(expected to be in range of "
                                         r"\[-6, 6\], but got 7\)"):
        x.narrow(0, 7, 0)
    with pytest.raises(RuntimeError, match="length must be non-negative"):
        x.narrow(0, 2, -1)
    with pytest.raises(RuntimeError, match="0-dim"):
        E.tensor(1.0).narrow(0, 0, 1)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,dim,index", [((3, 4), 0, 1), ((3, 4), 1, -1), ((5,), 0, 4),
                                             ((2, 3, 4), -2, 0)])
def test_select(dtype, shape, dim, index):
    x, ref = make(shape, dtype)
    r = x.select(dim, index)
    assert_close(r, np.take(ref, index, axis=dim), dtype)
    assert r.shape == np.take(ref, index, axis=dim).shape  # 0-d for a 1-d input
    assert_view(E.select(x, dim, index), x)


def test_select_errors():
    with pytest.raises(IndexError,
                       match=r"index 3 out of range for tensor of size \[3, 4\] at dimension 0"):
        E.zeros(3, 4).select(0, 3)
    with pytest.raises(IndexError, match=r"index -5 out of range .* at dimension 1"):
        E.zeros(3, 4).select(1, -5)
    with pytest.raises(IndexError, match="0-dim"):
        E.tensor(1.0).select(0, 0)


# --- split / chunk / unbind ---------------------------------------------------------------

def check_pieces(pieces, expected, x):
    assert isinstance(pieces, tuple) and len(pieces) == len(expected)
    for p, e in zip(pieces, expected):
        assert_close(p, e, x.dtype)
        assert p._base is x
        if p.numel():
            assert np.shares_memory(p.numpy(), x.numpy())


@pytest.mark.parametrize("dtype", [E.bool_, E.int32, E.float32, E.float64])
@pytest.mark.parametrize("n,size,dim", [(7, 3, 0), (6, 2, 1), (6, 10, -1), (4, 1, 0)])
def test_split(dtype, n, size, dim):
    shape = (n, 2) if dim == 0 else (2, n)
    x, ref = make(shape, dtype)
    expected = np.split(ref, list(range(size, n, size)), axis=dim)
    check_pieces(x.split(size, dim), expected, x)
    check_pieces(E.split(x, size, dim=dim), expected, x)


@pytest.mark.parametrize("sizes", [(1, 2, 3), (6,), (0, 6), (3, 0, 3)])
def test_split_sizes(sizes):
    x, ref = make((2, 6), E.float32)
    expected = np.split(ref, np.cumsum(sizes)[:-1], axis=1)
    check_pieces(x.split(list(sizes), 1), expected, x)
    check_pieces(E.split(x, sizes, 1), expected, x)


def test_split_errors():
    x = E.zeros(6)
    with pytest.raises(RuntimeError, match="split_size must be positive"):
        x.split(0)
    with pytest.raises(RuntimeError, match="split_size must be positive"):
        x.split(-1)
    with pytest.raises(RuntimeError, match=r"sum exactly to 6 .* split_sizes=\[1, 2\]"):
        x.split([1, 2])
    with pytest.raises(RuntimeError, match="non-negative"):
        x.split([7, -1])
    assert len(E.zeros(0).split(0)) == 1


@pytest.mark.parametrize("n,chunks", [(6, 4), (6, 3), (5, 2), (2, 5), (0, 3), (1, 1)])
def test_chunk(n, chunks):
    x, ref = make((n, 2), E.int64)
    if n == 0:
        expected = [ref] * chunks
    else:
        step = -(-n // chunks)
        expected = np.split(ref, list(range(step, n, step)))
    check_pieces(x.chunk(chunks), expected, x)
    check_pieces(E.chunk(x, chunks, 0), expected, x)


def test_chunk_errors():
    with pytest.raises(RuntimeError, match="greater than 0, got: 0"):
        E.zeros(3).chunk(0)
    with pytest.raises(RuntimeError, match="at least a 1-dimensional"):
        E.tensor(1.0).chunk(2)


@pytest.mark.parametrize("shape,dim", [((3, 4), 0), ((3, 4), 1), ((2, 3, 4), -1), ((0, 2), 0)])
def test_unbind(shape, dim):
    x, ref = make(shape, E.float64)
    expected = [np.take(ref, i, axis=dim) for i in range(ref.shape[dim])]
    check_pieces(x.unbind(dim), expected, x)
    check_pieces(E.unbind(x, dim), expected, x)
    with pytest.raises(IndexError, match="no dimensions"):
        E.tensor(1.0).unbind()


def test_iter_and_len():
    x, ref = make((3, 2), E.int32)
    rows = list(x)
    assert len(x) == 3 and len(rows) == 3
    for r, e in zip(rows, ref):
        assert_close(r, e, E.int32)
    rows[1].fill_(7)  # rows are views
    assert to_np(x)[1].tolist() == [7, 7]
    assert [v.item() for v in E.tensor([1.5, 2.5])] == [1.5, 2.5]
    assert list(E.zeros(0, 3)) == [] and len(E.zeros(0, 3)) == 0
    with pytest.raises(TypeError, match="0-d"):
        iter(E.tensor(1.0))
    with pytest.raises(TypeError, match="0-d"):
        len(E.tensor(1.0))


# --- contiguous -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_contiguous(dtype):
    x, ref = make((3, 4), dtype)
    c = x.contiguous()
    assert_close(c, ref, dtype)
    t = x.t()
    tc = t.contiguous()
    assert not t.is_contiguous() and tc.is_contiguous()
    assert_close(tc, ref.T, dtype)
    assert_copy(tc, x)
    assert_view(c, x)
    e = E.zeros(1, 3).expand(2, 3).contiguous()
    e.fill_(1)  # a contiguous copy of an expanded tensor is writable
    assert e.sum().item() == 6


# --- kernel fast paths: a contiguous reshape, and expand on numpy without broadcast_to ----

@pytest.mark.parametrize("op", ["view", "reshape"])
def test_contiguous_fast_path_agrees_with_infer_size(numpy_kernels, op):
    from ember.backends.kernels.shape import infer_size
    kernel = numpy_kernels[op]
    for numel in (0, 1, 6, 12):
        a = np.arange(numel, dtype=np.float32)
        # every size from -3 to 4: numpy reads any negative size as -1, PyTorch does not
        for k in range(4):
            for size in itertools.product(range(-3, 5), repeat=k):
                try:
                    expected = infer_size(size, numel, op)
                except RuntimeError as e:
                    with pytest.raises(RuntimeError, match=f"^{re.escape(str(e))}$"):
                        kernel(a, size)
                    continue
                r = kernel(a, size)
                assert r.shape == expected
                assert r.size == 0 or np.shares_memory(r, a)


def test_view_of_non_contiguous_input_still_follows_the_stride_rule(numpy_kernels):
    a = np.arange(12.0).reshape(3, 4).T  # (4, 3), not C-contiguous
    r = numpy_kernels["view"](a, (2, 2, 3))  # splits the first dim: allowed
    assert np.shares_memory(r, a)
    np.testing.assert_array_equal(r, a.reshape(2, 2, 3))
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        numpy_kernels["view"](a, (12,))
    r = numpy_kernels["reshape"](a, (12,))
    assert r.base is None  # a fresh copy, not marked as a view


EXPAND_INPUTS = [np.arange(6.0).reshape(2, 3), np.arange(6.0).reshape(2, 3).T,
                 np.arange(3.0).reshape(3, 1), np.float32(2).__array__(),
                 np.arange(10.0)[2:5], np.arange(10.0)[::2],  # strided: broadcast_to's turn
                 np.zeros((0, 1)), np.ones((1, 1), E.bfloat16.numpy),
                 np.array([[True], [False]]), np.arange(24).reshape(2, 3, 4)[:, 1:2, :]]


@pytest.mark.parametrize("a", EXPAND_INPUTS, ids=lambda a: f"{a.dtype}{a.shape}{a.strides}")
def test_numpy_expand_is_broadcast_to(numpy_kernels, generic_kernels, a):
    for lead in ((), (2,), (0,), (3, 1)):
        for tail in itertools.product(*[(n, -1) if n != 1 else (1, 4, -1, 0) for n in a.shape]):
            size = lead + tail
            r, want = numpy_kernels["expand"](a, size), generic_kernels["expand"](a, size)
            assert (r.shape, r.strides, r.dtype) == (want.shape, want.strides, want.dtype)
            assert not r.flags.writeable and r.base is not None
            assert r.__array_interface__["data"] == want.__array_interface__["data"]
            np.testing.assert_array_equal(r, want)
