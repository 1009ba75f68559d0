"""Issue 35, class 15 (part 1): the tensor API torch users call that ember lacked:
``Tensor.unfold`` and ``ember.as_strided`` / ``Tensor.as_strided`` (here, with tracing,
ONNX and CUDA checks of all five), ``scatter(..., reduce=)``, ``Tensor.view(dtype)`` and
``ember.where(condition)`` (test_api_class15_dtype_scatter.py).

References are numpy float64 (``sliding_window_view``, ``as_strided``, ``np.add.at``,
``ndarray.view``) and values, shapes and messages recorded from torch 2.13 CPU (the tests
do not import torch).
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ember as E
import ember.jit
import ember.onnx
from ember.autograd.gradcheck import gradcheck, gradgradcheck
from helpers import to_np

SETTINGS = settings(max_examples=60, deadline=None)


def f64(a, requires_grad=False):
    return E.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


# ==== unfold ====================================================================================
@st.composite
def unfold_case(draw):
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    dim = draw(st.integers(-len(shape), len(shape) - 1))
    size = draw(st.integers(0, shape[dim]))
    step = draw(st.integers(1, 4))
    return shape, dim, size, step


def unfold_ref(a, dim, size, step):
    d = dim % a.ndim
    w = np.lib.stride_tricks.sliding_window_view(a, size, axis=d)
    return w[(slice(None),) * d + (slice(None, None, step),)]


@SETTINGS
@given(unfold_case())
def test_unfold_values_shape_and_view(case):
    shape, dim, size, step = case
    a = np.random.default_rng(0).standard_normal(shape)
    x = f64(a)
    y = x.unfold(dim, size, step)
    ref = unfold_ref(a, dim, size, step)
    assert tuple(y.shape) == ref.shape
    np.testing.assert_array_equal(to_np(y), ref)
    assert y._base is x  # a view: shares memory and the version counter
    if y.numel():
        x.add_(1)
        np.testing.assert_array_equal(to_np(y), ref + 1)


@SETTINGS
@given(unfold_case())
def test_unfold_gradient_sums_overlapping_windows(case):
    shape, dim, size, step = case
    rng = np.random.default_rng(1)
    a = rng.standard_normal(shape)
    x = f64(a, requires_grad=True)
    y = x.unfold(dim, size, step)
    w = rng.standard_normal(tuple(y.shape))
    (y * f64(w)).sum().backward()
    # reference: scatter each window's weight back onto the positions it read
    ref = np.zeros(shape)
    idx = np.arange(a.size).reshape(shape)
    np.add.at(ref.reshape(-1), unfold_ref(idx, dim, size, step).reshape(-1), w.reshape(-1))
    np.testing.assert_allclose(to_np(x.grad), ref, rtol=1e-12, atol=1e-12)


def test_unfold_gradcheck_and_double_backward():
    x = f64(np.random.default_rng(2).standard_normal((3, 7)), requires_grad=True)
    assert gradcheck(lambda t: t.unfold(1, 3, 2), (x,))
    assert gradgradcheck(lambda t: t.unfold(1, 3, 2) ** 2, (x,))
    assert gradcheck(lambda t: t.unfold(0, 2, 1), (x,))


def test_unfold_0d_and_empty():
    y = E.tensor(5.).unfold(0, 1, 1)  # torch: tensor([5.])
    assert tuple(y.shape) == (1,) and y.tolist() == [5.0]
    assert tuple(E.tensor(5.).unfold(-1, 0, 1).shape) == (0,)
    assert tuple(E.arange(3.).unfold(0, 0, 1).shape) == (4, 0)  # torch: size=(4, 0)


@pytest.mark.parametrize("args, exc, msg", [
    ((0, 4, 1), RuntimeError, "maximum size for tensor at dimension 0 is 3 but size is 4"),
    ((0, 4, 0), RuntimeError, "maximum size for tensor at dimension 0 is 3 but size is 4"),
    ((0, 2, 0), RuntimeError, "step is 0 but must be > 0"),
    ((0, 2, -1), RuntimeError, "step is -1 but must be > 0"),
    ((0, -1, 1), RuntimeError, "size is -1 but must be >= 0"),
    ((1, 2, 1), IndexError, "expected to be in range of [-1, 0], but got 1"),
])
def test_unfold_errors_as_torch(args, exc, msg):
    with pytest.raises(exc) as info:
        E.arange(3.).unfold(*args)
    assert msg in str(info.value)


def test_unfold_0d_size_2_error():
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 0 is 1 "
                                           "but size is 2"):
        E.tensor(5.).unfold(0, 2, 1)


# ==== as_strided ================================================================================
@st.composite
def strided_case(draw):
    n = draw(st.integers(1, 24))
    ndim = draw(st.integers(0, 3))
    size = tuple(draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    stride = tuple(draw(st.lists(st.integers(0, 5), min_size=ndim, max_size=ndim)))
    offset = draw(st.integers(0, n))
    start = draw(st.integers(0, n - 1))  # as_strided of the view x[start:]
    return n, size, stride, offset, start


def _extent(size, stride, offset):
    if 0 in size:
        return 0
    return offset + sum((s - 1) * t for s, t in zip(size, stride)) + 1


@SETTINGS
@given(strided_case())
def test_as_strided_reads_the_storage_of_a_view(case):
    n, size, stride, offset, start = case
    base = f64(np.arange(n) * 1.5)
    x = base[start:]
    need = _extent(size, stride, offset)
    if need > n:
        with pytest.raises(RuntimeError) as info:
            x.as_strided(size, stride, offset)
        assert (f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{offset}, and itemsize 8 requiring a storage size of {need * 8} are out of "
                f"bounds for storage of size {n * 8}") in str(info.value)
        return
    y = E.as_strided(x, size, stride, offset)
    ref = np.lib.stride_tricks.as_strided(np.arange(n)[offset:] * 1.5 if need else
                                          np.arange(n) * 1.5, size, [8 * t for t in stride])
    assert tuple(y.shape) == tuple(size)
    np.testing.assert_array_equal(to_np(y), ref)
    assert y._base is base
    assert y.stride() == tuple(stride) or y.numel() == 0


@SETTINGS
@given(strided_case())
def test_as_strided_gradient_is_a_scatter_add_over_the_storage(case):
    n, size, stride, offset, start = case
    if _extent(size, stride, offset) > n:
        return
    base = f64(np.arange(n), requires_grad=True)
    x = base[start:]
    y = x.as_strided(size, stride, offset)
    w = np.random.default_rng(3).standard_normal(size)
    (y * f64(w)).sum().backward()
    ref = np.zeros(n)
    if y.numel():
        pos = np.lib.stride_tricks.as_strided(np.arange(n)[offset:], size,
                                              [8 * t for t in stride])
        np.add.at(ref, pos.reshape(-1), w.reshape(-1))
    ref[:start] = 0  # storage that x does not cover gets no gradient (torch)
    np.testing.assert_allclose(to_np(base.grad), ref, rtol=1e-12, atol=1e-12)


def test_as_strided_default_offset_is_the_inputs():
    x = E.arange(6.)
    assert x[1:].as_strided((2,), (1,)).tolist() == [1.0, 2.0]  # torch: tensor([1., 2.])
    assert x[1:].as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]


def test_as_strided_gradients_recorded_from_torch():
    x = f64(np.arange(6.), requires_grad=True)
    (x.as_strided((3, 3), (1, 1)) * f64(np.arange(9.).reshape(3, 3))).sum().backward()
    assert x.grad.tolist() == [0., 4., 12., 12., 8., 0.]
    x = f64(np.arange(10.), requires_grad=True)
    y = x.view(2, 5).t().as_strided((2, 2), (1, 2), 1)
    assert y.tolist() == [[1., 3.], [2., 4.]]
    (y * f64([[1., 2.], [3., 4.]])).sum().backward()
    assert x.grad.tolist() == [0., 1., 3., 2., 4., 0., 0., 0., 0., 0.]
    x = f64(np.arange(5.), requires_grad=True)  # output outside x[1:]: no gradient
    (x[1:].as_strided((3,), (1,), 0) * f64([1., 2., 3.])).sum().backward()
    assert x.grad.tolist() == [0., 2., 3., 0., 0.]
    x = f64([1., 2.], requires_grad=True)  # an expanded input reads each element 3 times
    (x.expand(3, 2).as_strided((2, 2), (0, 1)) * f64([[1., 2.], [3., 4.]])).sum().backward()
    assert x.grad.tolist() == [4., 6.]


def test_as_strided_gradcheck_and_double_backward():
    x = f64(np.random.default_rng(4).standard_normal(8), requires_grad=True)
    assert gradcheck(lambda t: t.as_strided((3, 3), (2, 1), 1), (x,))
    assert gradgradcheck(lambda t: t.as_strided((3, 3), (2, 1), 1) ** 2, (x,))


@pytest.mark.parametrize("args, msg", [
    (((3, 3), (1, 1), 4), "setStorage: sizes [3, 3], strides [1, 1], storage offset 4, and "
                          "itemsize 4 requiring a storage size of 36 are out of bounds for "
                          "storage of size 24"),
    (((1,), (1,), 6), "requiring a storage size of 28 are out of bounds for storage of size 24"),
    (((2,), (-1,), 3), "as_strided: Negative strides are not supported at the moment, got "
                       "strides: [-1]"),
    (((2,), (1,), -1), "invalid storage offset -1"),
    (((2, 3), (1,)), "mismatch in length of strides and shape"),
    (((-1,), (1,)), "sizes must be >= 0"),
])
def test_as_strided_errors_as_torch(args, msg):
    with pytest.raises(RuntimeError) as info:
        E.arange(6.).as_strided(*args)
    assert msg in str(info.value)


def test_as_strided_storage_is_the_base_tensors_memory_recorded_from_torch():
    # from_numpy of a numpy slice: the storage is the tensor's own 6 elements (torch)
    t = E.from_numpy(np.arange(10.)[2:8])
    assert t.as_strided((2,), (1,), 0).tolist() == [2.0, 3.0]
    with pytest.raises(RuntimeError, match="requiring a storage size of 56 are out of "
                                           "bounds for storage of size 48"):
        t.as_strided((7,), (1,), 0)
    # an empty view at the end still knows where its storage starts
    assert E.arange(6.)[6:].as_strided((2,), (1,), 0).tolist() == [0.0, 1.0]
    # the offset argument counts from where Tensor.storage_offset() counts
    x = E.arange(12.).view(3, 4)[1:, 2:]
    assert x.storage_offset() == 6
    assert x.as_strided((2,), (1,), x.storage_offset()).tolist() == [6.0, 7.0]


def test_as_strided_empty_result_ignores_the_offset():
    assert tuple(E.as_strided(E.arange(6.), (0,), (1,), 100).shape) == (0,)  # torch: []


def test_as_strided_writes_reach_the_base():
    x = E.zeros(6)
    x.as_strided((2, 2), (3, 1), 1).fill_(7.)
    assert x.tolist() == [0., 7., 7., 0., 7., 7.]


# ==== tracing ===================================================================================
def test_traces_replay_unfold_and_as_strided_with_gradients():
    def fn(x):
        return (x.unfold(0, 3, 2) ** 2).sum(-1) + x.as_strided((2,), (2,), 1).sum()

    x0 = f64(np.arange(7.), requires_grad=True)
    traced = ember.jit.trace(fn, (x0,))
    for seed in (0, 1):
        a = np.random.default_rng(seed).standard_normal(7)
        xe, xt = f64(a, requires_grad=True), f64(a, requires_grad=True)
        ye, yt = fn(xe), traced(xt)
        np.testing.assert_allclose(to_np(yt), to_np(ye), rtol=1e-12)
        ye.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(to_np(xt.grad), to_np(xe.grad), rtol=1e-12)


def test_traces_replay_scatter_reduce_and_view_dtype():
    def fn(x, i):
        return x.scatter(0, i, 2.0, reduce="multiply").view(dtype=E.int32)

    traced = ember.jit.trace(fn, (E.ones(3), E.tensor([0, 0])))
    args = (E.ones(3) * 3, E.tensor([1, 1]))
    assert traced(*args).tolist() == fn(*args).tolist()


@pytest.mark.parametrize("name, fn", [
    ("unfold", lambda x: x.unfold(0, 2, 1)),
    ("as_strided", lambda x: x.as_strided((2, 2), (1, 1))),
    ("view.dtype", lambda x: x.view(dtype=E.int32)),
    ("scatter.reduce", lambda x: x.scatter(0, E.tensor([0, 0]), E.ones(2), reduce="add")),
    ("scatter.value_reduce", lambda x: x.scatter(0, E.tensor([0, 0]), 2.0, reduce="multiply")),
])
def test_onnx_export_names_the_op_it_cannot_export(name, fn):
    pytest.importorskip("onnx")
    with pytest.raises(ember.onnx.UnsupportedOperatorError,
                       match=f"no symbolic for ember::{name} at opset 17; register one"):
        ember.onnx.export(fn, (E.arange(5.),), None)


@pytest.mark.cuda
def test_strided_views_and_reduce_scatter_on_cuda():
    a = np.arange(12.)
    x = E.tensor(a, device="cuda", requires_grad=True)
    y = x[1:].unfold(0, 3, 2)
    np.testing.assert_array_equal(to_np(y), unfold_ref(a[1:], 0, 3, 2))
    z = x.as_strided((3, 3), (2, 1), 1)
    np.testing.assert_array_equal(
        to_np(z), np.lib.stride_tricks.as_strided(a[1:], (3, 3), (16, 8)))
    (y.sum() + z.sum()).backward()
    ref = np.zeros(12)
    np.add.at(ref, 1 + unfold_ref(np.arange(11), 0, 3, 2).ravel(), 1.0)
    np.add.at(ref, np.lib.stride_tricks.as_strided(np.arange(12)[1:], (3, 3), (16, 8)).ravel(),
              1.0)
    np.testing.assert_array_equal(to_np(x.grad), ref)
    v = E.tensor(np.arange(4, dtype=np.float32), device="cuda").view(dtype=E.int32)
    np.testing.assert_array_equal(to_np(v), np.arange(4, dtype=np.float32).view(np.int32))
    s = E.zeros(3, device="cuda").scatter(0, E.tensor([0, 0, 2], device="cuda"), 2.0,
                                          reduce="add")
    assert s.tolist() == [4.0, 0.0, 2.0]
