"""Tensor.new_empty / new_zeros / new_ones / new_full / new_tensor (tensor_factories.py):
self's dtype and device by default, the size spellings, and PyTorch's errors."""
import numpy as np
import pytest

import ember as E


@pytest.mark.parametrize("dtype", [E.float64, E.float16, E.int32, E.bool_])
def test_defaults_come_from_self(dtype):
    x = E.zeros(2, dtype=dtype)
    for t, value in ((x.new_zeros(2, 3), 0), (x.new_ones((2, 3)), 1),
                     (x.new_full((2, 3), 1), 1), (x.new_empty([2, 3]), None)):
        assert t.dtype is dtype and t.shape == (2, 3) and t.device == x.device
        assert not t.requires_grad and t.is_leaf
        if value is not None:
            assert np.all(t.numpy() == value)
    assert x.new_tensor([1, 0]).dtype is dtype


def test_overrides_and_requires_grad():
    x = E.zeros(2, dtype=E.int64)
    z = x.new_zeros(3, dtype=E.float32, device="cpu", requires_grad=True)
    assert z.dtype is E.float32 and z.requires_grad and z.is_leaf
    assert x.new_full((2,), 1.5).tolist() == [1, 1]  # cast to self's int64, as in PyTorch
    assert x.new_full((2,), 1.5, dtype=E.float64).tolist() == [1.5, 1.5]
    assert E.zeros(1).new_tensor([1, 2]).dtype is E.float32  # self's dtype, not int64
    assert x.new_empty(0).shape == (0,) and x.new_zeros(()).shape == ()
    with pytest.raises(RuntimeError, match="floating point"):
        x.new_ones(2, requires_grad=True)


def test_new_tensor_copies_and_detaches():
    src = E.tensor([1.0, 2.0], requires_grad=True)
    y = E.zeros(1, dtype=E.float64).new_tensor(src)
    assert y.dtype is E.float64 and not y.requires_grad and y.grad_fn is None
    y[0] = 5.0
    assert src.tolist() == [1.0, 2.0]
    a = np.arange(3.0)
    assert E.zeros(1).new_tensor(a, dtype=E.int16).tolist() == [0, 1, 2]
    a[0] = 9  # a copy, not a view
    assert E.zeros(1).new_tensor(a).tolist()[0] == 9


def test_errors():
    x = E.zeros(2)
    with pytest.raises(ValueError, match="negative dimension"):
        x.new_zeros(-1)
    with pytest.raises(TypeError, match="size"):
        x.new_ones(2.5)
    with pytest.raises(TypeError, match="fill_value must be a number"):
        x.new_full((2,), "a")
    with pytest.raises(TypeError, match="could not infer a dtype|numeric"):
        x.new_tensor(["a"])


@pytest.mark.cuda
def test_follow_self_onto_its_cuda_device():
    n = E.cuda.device_count()
    x = E.zeros(2, device=f"cuda:{n - 1}")
    for t in (x.new_zeros(2), x.new_ones(2), x.new_full((2,), 3.0), x.new_empty(2),
              x.new_tensor([1.0, 2.0])):
        assert t.device == x.device and t.dtype is E.float32
    assert x.new_zeros(2, device="cpu").device.type == "cpu"
