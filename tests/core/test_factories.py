"""Factories: dtype inference, sizes, seeded generators, numpy and DLPack interop."""
import numpy as np
import pytest

import ember as E
from helpers import to_np


@pytest.mark.parametrize("data, dtype", [
    ([1, 2], E.int64), ([1.0, 2], E.float32), ([True, False], E.bool_), (3, E.int64),
    (2.5, E.float32), (np.arange(3, dtype=np.int32), E.int32),
    (np.ones(2, dtype=np.float64), E.float64), ([[1, 2], [3, 4]], E.int64),
])
def test_tensor_infers_dtype_like_pytorch(data, dtype):
    t = E.tensor(data)
    assert t.dtype is dtype
    np.testing.assert_array_equal(to_np(t), np.asarray(data))


def test_tensor_copies_but_from_numpy_and_as_tensor_share():
    a = np.zeros(3)
    t, s, u = E.tensor(a), E.from_numpy(a), E.as_tensor(a)
    a[0] = 7
    assert t.tolist()[0] == 0 and s.tolist()[0] == 7 and u.tolist()[0] == 7


def test_tensor_rejects_bad_data():
    with pytest.raises(TypeError, match="could not infer a dtype"):
        E.tensor(["a"])
    with pytest.raises(ValueError, match="rectangular"):
        E.tensor([[1, 2], [3]])
    with pytest.raises(TypeError, match="does not support dtype"):
        E.from_numpy(np.ones(2, dtype=np.complex64))
    with pytest.raises(TypeError, match="expected np.ndarray"):
        E.from_numpy([1, 2])


@pytest.mark.parametrize("fn, value", [(E.zeros, 0), (E.ones, 1)])
def test_sizes_accept_varargs_and_tuples(fn, value):
    for t in (fn(2, 3), fn((2, 3)), fn([2, 3])):
        assert t.shape == (2, 3) and t.dtype is E.float32
        assert (to_np(t) == value).all()
    assert fn(2, dtype=E.int8).dtype is E.int8
    with pytest.raises(ValueError, match="negative dimension"):
        fn(-1)
    with pytest.raises(TypeError, match="must be int, not float"):
        fn(2.5)


def test_full_empty_eye_linspace_arange():
    assert E.full((2,), 7).dtype is E.int64 and E.full((2,), 0.5).tolist() == [0.5, 0.5]
    assert E.empty(3, 4).shape == (3, 4)
    np.testing.assert_array_equal(to_np(E.eye(3, 2)), np.eye(3, 2))
    np.testing.assert_allclose(to_np(E.linspace(0, 1, 5)), np.linspace(0, 1, 5))
    assert E.arange(5).dtype is E.int64 and E.arange(5).tolist() == [0, 1, 2, 3, 4]
    assert E.arange(0, 1, 0.25).dtype is E.float32 and E.arange(0, 1, 0.25).shape == (4,)
    assert E.arange(5, 0, -2).tolist() == [5, 3, 1]
    with pytest.raises(ValueError, match="step must be nonzero"):
        E.arange(0, 1, 0)
    with pytest.raises(ValueError, match="inconsistent with step sign"):
        E.arange(0, 5, -1)


def test_like_factories_keep_shape_dtype_device():
    x = E.ones(2, 3, dtype=E.float64)
    for t in (E.zeros_like(x), E.ones_like(x), E.empty_like(x), E.full_like(x, 2),
              E.rand_like(x), E.randn_like(x)):
        assert t.shape == (2, 3) and t.dtype is E.float64 and t.device == x.device
    assert E.randint_like(x, 5).dtype is E.float64
    with pytest.raises(TypeError, match="expected a Tensor"):
        E.zeros_like([1, 2])


def test_manual_seed_repeats_and_generators_are_independent():
    E.manual_seed(123)
    a = E.rand(5)
    E.manual_seed(123)
    b = E.rand(5)
    assert a.tolist() == b.tolist()
    g1, g2 = E.Generator().manual_seed(7), E.Generator().manual_seed(7)
    assert E.randn(4, generator=g1).tolist() == E.randn(4, generator=g2).tolist()
    state = g1.get_state()
    x = E.randint(0, 10, (6,), generator=g1)
    g1.set_state(state)
    assert E.randint(0, 10, (6,), generator=g1).tolist() == x.tolist()
    assert x.dtype is E.int64 and 0 <= min(x.tolist()) and max(x.tolist()) < 10
    assert g1.initial_seed() == 7


def test_random_distributions():
    E.manual_seed(0)
    u, n = to_np(E.rand(20000)), to_np(E.randn(20000, dtype=E.float64))
    assert 0 <= u.min() and u.max() < 1 and abs(u.mean() - 0.5) < 0.02
    assert abs(n.mean()) < 0.03 and abs(n.std() - 1) < 0.03
    assert E.rand(2, dtype=E.float16).dtype is E.float16
    with pytest.raises(TypeError, match="expected a floating dtype"):
        E.rand(2, dtype=E.int32)
    with pytest.raises(ValueError, match="expected low < high"):
        E.randint(5, 5, (2,))


def test_dlpack_both_ways():
    t = E.arange(4.0)
    back = np.from_dlpack(t)
    back[0] = 9
    assert t.tolist()[0] == 9
    arr = np.arange(3, dtype=np.int32)
    u = E.from_dlpack(arr)
    arr[1] = 5
    assert u.dtype is E.int32 and u.tolist() == [0, 5, 2]
    with pytest.raises(TypeError, match="does not implement __dlpack__"):
        E.from_dlpack([1, 2])


def test_numpy_and_array_protocol():
    t = E.tensor([1.0, 2.0])
    assert np.shares_memory(t.numpy(), np.asarray(t))
    t.requires_grad_()
    with pytest.raises(RuntimeError, match="detach"):
        t.numpy()
    with pytest.raises(RuntimeError, match="floating point"):
        E.tensor([1]).requires_grad_()


# --- dtype inference of numpy scalars in data (issue 35, class 15) -----------------------

@pytest.mark.parametrize("data, dtype", [  # recorded from torch 2.13
    (np.float64(2.5), "float64"), ([np.float64(2.5)], "float64"),
    ([np.float64(2.5), 1.0], "float64"), ([1.0, np.float64(2.5)], "float64"),
    ([[np.float64(1)]], "float64"), ([np.float64(1), np.float32(2)], "float64"),
    (np.float32(2.5), "float32"), ([np.float32(1), 2.0], "float32"),
    (np.float16(1), "float16"), ([np.float16(1), 2], "float16"),
    (np.int32(3), "int32"), ([np.int32(3)], "int32"), ([np.int32(3), 5], "int64"),
    ([np.uint8(3)], "uint8"), ([np.uint8(3), np.int8(-1)], "int16"),
    (np.bool_(True), "bool"), ([np.bool_(True), np.bool_(False)], "bool"),
    ([True, 1], "int64"), ([True, 2.5], "float32"), ([1.0, 2], "float32"),
    (((1.5,), (2,)), "float32"), ([[1, 2], [3, 4]], "int64"),
    ([np.array([1.0, 2.0])], "float64"), ([np.array([1, 2], dtype=np.int32)], "int32"),
])
def test_numpy_scalars_in_data_keep_their_dtype_as_in_torch(data, dtype):
    assert E.tensor(data).dtype is getattr(E, dtype)


def test_the_default_dtype_applies_to_python_floats_only():
    prev = E.get_default_dtype()
    E.set_default_dtype(E.float64)
    try:
        assert E.tensor([1.0, 2.0]).dtype is E.float64
        assert E.tensor([np.float32(1.0), 2.0]).dtype is E.float64
        assert E.tensor([np.float32(1.0)]).dtype is E.float32
    finally:
        E.set_default_dtype(prev)
