"""Issue 35, class 15 (part 1): ``scatter(..., reduce="add"|"multiply")`` (tensor and value
forms, in place), ``Tensor.view(dtype)`` and ``ember.where(condition)``.

References are numpy (``np.add.at``-style loops, ``ndarray.view``, ``np.nonzero``) and
values and messages recorded from torch 2.13 CPU (the tests do not import torch).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
from ember.autograd.gradcheck import gradcheck
from helpers import to_np

SETTINGS = settings(max_examples=60, deadline=None)


def f64(a, requires_grad=False):
    return E.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ==== scatter(..., reduce=) =====================================================================
@st.composite
def scatter_case(draw):
    rows, cols = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    k = draw(st.integers(1, 5))
    dim = draw(st.sampled_from([0, 1, -1, -2]))
    n = rows if dim % 2 == 0 else cols
    shape = (k, cols) if dim % 2 == 0 else (rows, k)
    index = draw(st.lists(st.integers(0, n - 1), min_size=shape[0] * shape[1],
                          max_size=shape[0] * shape[1]))
    return (rows, cols), dim, np.array(index).reshape(shape)


def scatter_ref(a, dim, index, src, ufunc):
    out = a.copy()
    d = dim % 2
    for i, j in np.ndindex(*index.shape):
        at = (index[i, j], j) if d == 0 else (i, index[i, j])
        out[at] = ufunc(out[at], src[i, j])
    return out


@SETTINGS
@given(scatter_case(), st.sampled_from(["add", "multiply"]),
       st.sampled_from([np.float64, np.float32, np.int64, np.int32]))
def test_scatter_reduce_tensor_and_value_forms(case, reduce, dtype):
    shape, dim, index = case
    rng = np.random.default_rng(5)
    a = rng.integers(-3, 4, size=shape).astype(dtype)
    src = rng.integers(-3, 4, size=index.shape).astype(dtype)
    ufunc = np.add if reduce == "add" else np.multiply
    i = E.tensor(index)
    out = E.tensor(a).scatter(dim, i, E.tensor(src), reduce=reduce)
    np.testing.assert_array_equal(to_np(out), scatter_ref(a, dim, index, src, ufunc))
    out = E.scatter(E.tensor(a), dim, i, 2, reduce=reduce)
    np.testing.assert_array_equal(to_np(out), scatter_ref(a, dim, index, np.full(
        index.shape, 2, dtype), ufunc))
    x = E.tensor(a)
    assert x.scatter_(dim, i, E.tensor(src), reduce=reduce) is x
    np.testing.assert_array_equal(to_np(x), scatter_ref(a, dim, index, src, ufunc))


def test_scatter_reduce_recorded_from_torch():
    i = E.tensor([[0, 0], [0, 1]])
    assert E.zeros(3, 2).scatter(0, i, E.ones(2, 2) * 2, reduce="add").tolist() == \
        [[4., 2.], [0., 2.], [0., 0.]]
    assert E.ones(3, 2).scatter(0, i, E.ones(2, 2) * 2, reduce="multiply").tolist() == \
        [[4., 2.], [1., 2.], [1., 1.]]
    # a float value into an int64 self is cast first (2.5 -> 2), as torch
    out = E.zeros(3, 2, dtype=E.int64).scatter(0, i, 2.5, reduce="add")
    assert out.dtype is E.int64 and out.tolist() == [[4, 2], [0, 2], [0, 0]]


@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "prod", ""])
def test_scatter_reduce_other_reduce_raises_as_torch(reduce):
    i = E.tensor([[0, 0], [0, 1]])
    x = E.zeros(3, 2)
    for call in (lambda: x.scatter(0, i, E.ones(2, 2), reduce=reduce),
                 lambda: x.scatter(0, i, 2.0, reduce=reduce),
                 lambda: x.scatter_(0, i, 2.0, reduce=reduce)):
        with pytest.raises(RuntimeError, match="reduce argument must be either add or "
                                               "multiply"):
            call()
    assert x.tolist() == [[0.] * 2] * 3


def test_scatter_reduce_dtype_mismatch_as_torch():
    with pytest.raises(RuntimeError, match="Expected self.dtype to be equal to src.dtype"):
        E.zeros(3, 2, dtype=E.int64).scatter(0, E.tensor([[0, 0]]), E.ones(1, 2),
                                               reduce="add")


def test_scatter_reduce_add_gradient():
    # torch has no derivative here ("derivative for aten::scatter is not implemented");
    # ember's add is scatter_reduce('sum'): the gradient is exact
    x = f64(np.arange(6.).reshape(3, 2), requires_grad=True)
    s = f64(np.ones((2, 2)), requires_grad=True)
    i = E.tensor([[0, 0], [2, 1]])
    assert gradcheck(lambda a, b: a.scatter(0, i, b, reduce="add"), (x, s))
    assert gradcheck(lambda a, b: a.scatter(0, i, b, reduce="multiply"), (x, s))


# ==== view(dtype) ===============================================================================
def _positional_view_dtype() -> bool:
    try:
        E.arange(2.).view(E.int32)
    except TypeError:
        return False
    return True


VIEW_DTYPES = [E.float32, E.float64, E.float16, E.int8, E.uint8, E.int16, E.int32,
               E.int64, E.bool]


@pytest.mark.parametrize("src", [E.float32, E.float64, E.int16, E.int64, E.uint8])
@pytest.mark.parametrize("dst", VIEW_DTYPES)
def test_view_dtype_reads_the_same_bytes(src, dst):
    a = (np.arange(24).reshape(3, 8) % 2).astype(src.numpy)  # 0/1: valid bools too
    x = E.tensor(a)
    y = x.view(dtype=dst)
    ref = a.view(dst.numpy)
    assert y.dtype is dst and tuple(y.shape) == ref.shape
    np.testing.assert_array_equal(to_np(y), ref)
    assert y._base is None  # as torch: not an autograd view...
    x.add_(0)
    assert y._version == x._version == 1  # ...but the version counter is shared


def test_view_dtype_recorded_from_torch():
    assert E.tensor([1.5, -2.]).view(dtype=E.int32).tolist() == [1069547520, -1073741824]
    assert tuple(E.arange(4.).view(dtype=E.int16).shape) == (8,)
    assert tuple(E.arange(6.).view(2, 3)[:, :2].view(dtype=E.int16).shape) == (2, 4)
    y = E.arange(8.).view(4, 2)[::2].view(dtype=E.float64)  # strides divisible by 2
    assert tuple(y.shape) == (2, 1)
    ref = np.arange(8, dtype=np.float32).reshape(4, 2)[::2].view(np.float64)
    np.testing.assert_array_equal(to_np(y), ref)  # torch prints [[7.8125e-03], [2.0480e+03]]
    assert E.tensor(4.).view(dtype=E.int32).item() == 1082130432  # 0-d, same itemsize


def test_view_dtype_is_a_view_of_the_memory():
    x = E.zeros(4)
    x.view(dtype=E.int32)[1] = 1065353216  # the bits of 1.0
    assert x.tolist() == [0., 1., 0., 0.]


@pytest.mark.parametrize("make, dtype, msg", [
    (lambda: E.arange(3.), E.float64, "self.size(-1) must be divisible by 2 to view Float "
                                      "as Double (different element sizes), but got 3"),
    (lambda: E.tensor(4.), E.int16, "self.dim() cannot be 0 to view Float as Short "
                                    "(different element sizes)"),
    (lambda: E.arange(8.).view(2, 4).t(), E.int16, "self.stride(-1) must be 1 to view Float "
                                                   "as Short (different element sizes), but "
                                                   "got 4"),
    (lambda: E.arange(8.).view(2, 4)[:, 1:3], E.float64,
     "self.storage_offset() must be divisible by 2 to view Float as Double"),
    (lambda: E.arange(8.)[1:5], E.float64,
     "self.storage_offset() must be divisible by 2 to view Float as Double"),
    (lambda: E.arange(8.).view(4, 2).t()[:1], E.float64,
     "self.stride(-1) must be 1 to view Float as Double (different element sizes), but "
     "got 2"),
    (lambda: E.arange(12.).view(3, 4)[:, :2].contiguous().as_strided((2, 2), (3, 1)),
     E.float64, "self.stride(0) must be divisible by 2"),
])
def test_view_dtype_errors_as_torch(make, dtype, msg):
    with pytest.raises(RuntimeError) as info:
        make().view(dtype=dtype)
    assert msg in str(info.value)


def test_view_dtype_is_not_differentiable():
    x = f64([1., 2.], requires_grad=True)
    for dtype in (E.int64, E.float64, E.int32):  # torch: requires_grad False for each
        y = x.view(dtype=dtype)
        assert y.grad_fn is None and not y.requires_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        (x.view(dtype=E.float64) * 2).sum().backward()


def test_view_dtype_write_invalidates_saved_tensors():
    x = f64([1., 2.], requires_grad=True)
    b = x * 1
    loss = (b * b).sum()  # saves b
    b.view(dtype=E.int64).zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


@pytest.mark.skipif(not _positional_view_dtype(), reason="x.view(dtype) positional needs the "
                    "overload-dispatch patch of issue 35 J's report (ops/overloads.py)")
def test_view_dtype_positional_form():
    x = E.arange(4.)
    assert x.view(E.int32).tolist() == [0, 1065353216, 1073741824, 1077936128]
    assert tuple(x.view(2, 2).shape) == (2, 2) and tuple(x.view(-1).shape) == (4,)


# ==== where(condition) ==========================================================================
def _one_argument_where() -> bool:
    try:
        E.where(E.tensor([True]))
    except TypeError:
        return False
    return True


@pytest.mark.skipif(not _one_argument_where(), reason="ember.where(cond) needs the "
                    "where.cond entry and overload-dispatch patch of issue 35 J's report")
@SETTINGS
@given(st.lists(st.integers(0, 4), min_size=0, max_size=3), st.integers(0, 2 ** 31))
def test_where_one_argument_is_nonzero_as_tuple(shape, seed):
    a = np.random.default_rng(seed).integers(0, 3, size=shape)
    got = E.where(E.tensor(a))
    assert isinstance(got, tuple)
    ref = np.nonzero(a) if a.ndim else (np.arange(int(a != 0)),)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.dtype is E.int64
        np.testing.assert_array_equal(to_np(g), r)
    # the three-argument form (numbers included) is unchanged
    assert E.where(E.tensor([True, False]), 1., 0.).tolist() == [1., 0.]
