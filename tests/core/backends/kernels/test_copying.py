"""Copying kernels (kernels/copying.py) against numpy float64: cat, stack, flip, roll,
repeat, clone, type_as, and the in-place fill_, zero_, copy_. Results own their memory;
failing in-place ops leave the tensor unchanged."""
import numpy as np
import pytest
from helpers import ALL_DTYPES, FLOAT_DTYPES, INT_DTYPES, assert_close, make, to_np
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E

SOME_DTYPES = [E.bool_, E.uint8, E.int32, E.int64, E.bfloat16, E.float16] + FLOAT_DTYPES


def assert_fresh(r, *inputs):
    """``r`` is a new tensor: no memory or version counter shared with the inputs."""
    assert r._base is None
    for x in inputs:
        if r.numel() and x.numel():
            assert not np.shares_memory(r.numpy(), x.numpy())


# --- cat / stack -----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shapes,dim", [([(2, 3), (4, 3)], 0), ([(2, 3), (2, 1), (2, 0)], 1),
                                        ([(2, 3, 4)] * 3, -1), ([(5,)], 0), ([(0, 2), (1, 2)], 0)])
def test_cat(dtype, shapes, dim):
    pairs = [make(s, dtype, seed=i) for i, s in enumerate(shapes)]
    expected = np.concatenate([r for _, r in pairs], axis=dim)
    r = E.cat([t for t, _ in pairs], dim)
    assert_close(r, expected, dtype)
    assert_close(E.cat(tuple(t for t, _ in pairs), dim=dim), expected, dtype)
    assert_fresh(r, *(t for t, _ in pairs))


@pytest.mark.parametrize("a,b,expected", [
    (E.int32, E.bool_, E.int32), (E.int32, E.float16, E.float16), (E.uint8, E.int8, E.int16),
    (E.bfloat16, E.float16, E.float32)])
def test_cat_and_stack_promote(a, b, expected):
    x, rx = make((2,), a)
    y, ry = make((2,), b, seed=1)
    assert_close(E.cat([x, y]), np.concatenate([rx, ry]), expected)
    assert_close(E.stack([x, y]), np.stack([rx, ry]), expected)


def test_cat_legacy_empty_and_out():
    x, ref = make((2, 3), E.float32)
    assert_close(E.cat([x, E.zeros(0), x]), np.concatenate([ref, ref]))
    out = E.zeros(1)
    assert E.cat([x, x], 1, out=out) is out
    assert_close(out, np.concatenate([ref, ref], 1))
    out = E.zeros(2, 2, 3, dtype=E.float64)
    E.stack([x, x], out=out)
    assert_close(out, np.stack([ref, ref]))


def test_cat_errors():
    with pytest.raises(E.ShapeError, match=r"must match except in dimension 0. Expected size 3 "
                                           r"but got size 4 for tensor number 1"):
        E.cat([E.zeros(2, 3), E.zeros(2, 4)])
    with pytest.raises(E.ShapeError, match="same number of dimensions"):
        E.cat([E.zeros(2, 3), E.zeros(3)])
    with pytest.raises(E.ShapeError, match=r"zero-dimensional tensor \(at position 1\)"):
        E.cat([E.zeros(1), E.tensor(2.0)])
    with pytest.raises(ValueError, match="non-empty list"):
        E.cat([])
    with pytest.raises(IndexError, match="out of range"):
        E.cat([E.zeros(2, 3)], dim=2)
    with pytest.raises(TypeError, match="tuple or list of Tensors"):
        E.cat(E.zeros(2))


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,n,dim", [((2, 3), 2, 0), ((2, 3), 3, 2), ((2, 3), 1, -1),
                                         ((), 4, 0), ((0, 2), 2, 1)])
def test_stack(dtype, shape, n, dim):
    pairs = [make(shape, dtype, seed=i) for i in range(n)]
    r = E.stack([t for t, _ in pairs], dim)
    assert_close(r, np.stack([r_ for _, r_ in pairs], axis=dim), dtype)
    assert_fresh(r, *(t for t, _ in pairs))


def test_stack_errors():
    with pytest.raises(E.ShapeError, match=r"equal size, but got \[2, 3\] at entry 0 and "
                                           r"\[2, 4\] at entry 1"):
        E.stack([E.zeros(2, 3), E.zeros(2, 4)])
    with pytest.raises(IndexError, match="out of range"):
        E.stack([E.zeros(2, 3)], 3)
    with pytest.raises(ValueError, match="non-empty list"):
        E.stack([])


# --- flip / roll / repeat / clone --------------------------------------------------------------

@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,dims", [((5,), (0,)), ((2, 3, 4), (0, 2)), ((2, 3), (-1,)),
                                        ((2, 3), ()), ((), (0,))])
def test_flip(dtype, shape, dims):
    x, ref = make(shape, dtype)
    expected = np.flip(ref, dims) if ref.ndim else ref
    r = x.flip(dims)
    assert_close(r, expected, dtype)
    assert_close(E.flip(x, dims), expected, dtype)
    assert_fresh(r, x)
    with pytest.raises(ValueError, match="multiple times"):
        E.zeros(2, 3).flip(0, 0)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,shifts,dims", [((5,), 2, 0), ((3, 4), 1, ()), ((3, 4), -5, ()),
                                               ((3, 4), (1, -2), (0, 1)), ((2, 3, 4), 7, -1),
                                               ((), 3, ())])
def test_roll(dtype, shape, shifts, dims):
    x, ref = make(shape, dtype)
    expected = np.roll(ref, shifts, axis=dims if dims != () else None)
    r = x.roll(shifts, dims)
    assert_close(r, expected, dtype)
    assert_close(E.roll(x, shifts, dims=dims), expected, dtype)
    if dims == ():
        assert_close(E.roll(x, shifts), expected, dtype)
    assert_fresh(r, x)


def test_roll_errors():
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        E.zeros(6).roll((1, 2), (0,))
    with pytest.raises(IndexError, match="out of range"):
        E.zeros(6).roll(1, 2)


@pytest.mark.parametrize("dtype", SOME_DTYPES)
@pytest.mark.parametrize("shape,repeats", [((2, 3), (2, 1)), ((2, 3), (4, 1, 2)), ((), (3,)),
                                           ((3,), (0, 2)), ((2, 3), (1, 1))])
def test_repeat(dtype, shape, repeats):
    x, ref = make(shape, dtype)
    r = x.repeat(repeats)
    assert_close(r, np.tile(ref, repeats), dtype)
    assert_close(x.repeat(*repeats), np.tile(ref, repeats), dtype)
    assert_fresh(r, x)


def test_repeat_errors():
    with pytest.raises(RuntimeError, match="can not be smaller than number of dimensions"):
        E.zeros(2, 3).repeat(2)
    with pytest.raises(RuntimeError, match="non-negative"):
        E.zeros(2, 3).repeat(2, -1)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_clone(dtype):
    x, ref = make((3, 4), dtype)
    c = x.clone()
    assert_close(c, ref, dtype)
    assert_fresh(c, x)
    assert c._version == 0 and c.is_contiguous()
    ct = E.clone(x.t())  # keeps the transposed layout, like preserve_format
    assert_close(ct, ref.T, dtype)
    assert ct.stride() == x.t().stride()
    assert_close(x[:, ::2].clone(), ref[:, ::2], dtype)
    c.fill_(1)
    assert_close(x, ref, dtype)


def test_type_as():
    x, ref = make((2, 3), E.float32)
    assert_close(x.type_as(E.zeros(1, dtype=E.int32)), ref.astype(np.int32), E.int32)
    assert x.type_as(E.zeros(1)) is x


# --- in place: fill_ / zero_ / copy_ ----------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("value", [0, 1, -1, 2.7, -2.7, True, 100])
def test_fill_(dtype, value):
    x, _ = make((2, 3), dtype)
    if dtype is E.uint8 and isinstance(value, float) and value < 0:
        with pytest.raises(RuntimeError, match="without overflow"):
            x.fill_(value)
        return
    if dtype is E.bool_:
        expected = bool(value)
    elif dtype.is_floating_point:
        expected = float(value)
    else:
        expected = int(value) % 256 if dtype is E.uint8 else int(value)
    v0 = x._version
    assert x.fill_(value) is x
    assert x._version == v0 + 1
    assert_close(x, np.full((2, 3), expected, dtype=np.float64), dtype, rtol=1e-2)
    assert_close(E.fill_(E.zeros(2), value), np.full(2, float(value)), E.float32)


@pytest.mark.parametrize("dtype,value", [(E.uint8, 256), (E.uint8, -256), (E.uint8, 255.5),
                                         (E.int8, 200), (E.int32, float("nan")),
                                         (E.int32, 2 ** 40), (E.int64, 2 ** 63),
                                         (E.int64, float("inf")), (E.float16, 1e6),
                                         (E.float32, 1e39), (E.bfloat16, 1e39),
                                         (E.float64, 2 ** 2000)])
def test_fill_overflow_leaves_tensor_unchanged(dtype, value):
    x, ref = make((3,), dtype)
    with pytest.raises(RuntimeError, match="cannot be converted to type .* without overflow"):
        x.fill_(value)
    assert_close(x, ref, dtype)
    assert x._version == 0


def test_fill_edge_values():
    assert E.zeros(2, dtype=E.uint8).fill_(-255).tolist() == [1, 1]
    assert E.zeros(2, dtype=E.int64).fill_(-2 ** 63).tolist() == [-2 ** 63] * 2
    assert E.zeros(1).fill_(float("inf")).item() == float("inf")
    assert np.isnan(E.zeros(1, dtype=E.float16).fill_(float("nan")).item())
    assert E.zeros(2).fill_(E.tensor(3)).tolist() == [3.0, 3.0]  # a one-element tensor


def test_zero_():
    x, _ = make((2, 3), E.int32)
    v = x[0]
    assert x.zero_() is x and E.zero_(v) is v
    assert x.tolist() == [[0] * 3] * 2
    assert x._version == 2


@pytest.mark.parametrize("dst", SOME_DTYPES)
@pytest.mark.parametrize("src", [E.bool_, E.int64, E.float16, E.float64])
@pytest.mark.parametrize("src_shape", [(2, 3), (3,), (1, 3), (), (1, 1, 3)])
def test_copy_(dst, src, src_shape):
    x, _ = make((2, 3), dst)
    s, _ = make(src_shape, src, low=0, seed=1)  # non-negative: float -> uint8 is defined
    assert x.copy_(s) is x
    assert x._version == 1
    src_np = s.numpy()
    src_np = src_np.reshape(src_np.shape[-2:]) if src_np.ndim > 2 else src_np
    expected = np.broadcast_to(src_np, (2, 3)).astype(dst.numpy)  # numpy casts like torch
    assert_close(x, to_np(E.tensor(expected)), dst)


def test_copy_casts_like_torch():
    x = E.zeros(3, dtype=E.int32)
    x.copy_(E.tensor([1.5, -2.5, 3.9]))
    assert x.tolist() == [1, -2, 3]  # truncation toward zero
    b = E.zeros(3, dtype=E.bool_)
    b.copy_(E.tensor([0.0, 0.5, -2.0]))
    assert b.tolist() == [False, True, True]


def test_copy_errors_leave_self_unchanged():
    x, ref = make((3,), E.int32)
    with pytest.raises(E.ShapeError, match=r"\[2, 3\] cannot be expanded to the destination "
                                           r"shape \[3\]"):
        x.copy_(E.ones(2, 3))
    with pytest.raises(E.ShapeError, match=r"\[2\] cannot be expanded"):
        x.copy_(E.ones(2))
    with pytest.raises(TypeError, match="must be Tensor"):
        x.copy_(3)
    assert_close(x, ref, E.int32)
    assert x._version == 0


def test_copy_overlapping_views():
    x = E.arange(6.0)
    x[1:].copy_(x[:-1])
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0, 4.0]


def test_in_place_writes_through_views():
    x = E.zeros(3, 4)
    x.t()[1].fill_(2.0)
    x[2].copy_(E.arange(4.0))
    assert to_np(x).tolist() == [[0, 2, 0, 0], [0, 2, 0, 0], [0, 1, 2, 3]]
    assert x._version == 2


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=4), st.integers(0, 3),
       st.sampled_from(INT_DTYPES + FLOAT_DTYPES))
def test_cat_fuzz(shape, extra, dtype):
    dim = len(shape) - 1
    a, ra = make(tuple(shape), dtype)
    other = list(shape)
    other[dim] = extra
    b, rb = make(tuple(other), dtype, seed=1)
    assert_close(E.cat([a, b], -1), np.concatenate([ra, rb], axis=dim), dtype)


def test_cat_checks_the_dim_before_the_operands(numpy_kernels):
    # the fast path range-checks dim against the first tensor, as the general path did
    with pytest.raises(IndexError, match=r"^cat\(\): dimension out of range \(expected to be "
                                         r"in range of \[-1, 0\], but got 1\)$"):
        numpy_kernels["cat"]([np.zeros(2), np.zeros(())], 1)
    a, b = np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2)
    np.testing.assert_array_equal(numpy_kernels["cat"]([a, b], -1), np.concatenate([a, b], 1))
