"""Tensor metadata, conversions, Python protocols and the PyTorch-style repr."""
import numpy as np
import pytest

import ember as E


def test_metadata():
    x = E.zeros(2, 3, dtype=E.float64)
    assert x.shape == (2, 3) and repr(x.shape) == "ember.Size([2, 3])"
    assert x.size() == (2, 3) and x.size(-1) == 3 and x.ndim == x.dim() == 2
    assert x.numel() == 6 and x.element_size() == 8 and x.stride() == (3, 1)
    assert x.dtype is E.float64 and x.device == E.Device("cpu") and x.is_contiguous()
    assert x.is_leaf and not x.requires_grad and x.grad is None and x._version == 0
    with pytest.raises(IndexError, match=r"range of \[-2, 1\], but got 2"):
        x.size(2)
    with pytest.raises(TypeError, match="ember.tensor"):
        E.Tensor([1])


@pytest.mark.parametrize("t, text", [
    (E.tensor([1.0, 2.0, 3.0]), "tensor([1., 2., 3.])"),
    (E.tensor([0.5, 1.25]), "tensor([0.5000, 1.2500])"),
    (E.tensor([1, 2]), "tensor([1, 2])"),
    (E.tensor([1, 2], dtype=E.int32), "tensor([1, 2], dtype=ember.int32)"),
    (E.tensor([True]), "tensor([True])"),
    (E.tensor(3.0, dtype=E.float64), "tensor(3., dtype=ember.float64)"),
    (E.tensor([1e-6, 1.0]), "tensor([1.0000e-06, 1.0000e+00])"),
    (E.zeros(0, 2), "tensor([], size=(0, 2))"),
])
def test_repr_like_pytorch(t, text):
    assert repr(t) == text


def test_repr_shows_requires_grad_and_rows():
    assert repr(E.ones(2).requires_grad_()) == "tensor([1., 1.], requires_grad=True)"
    assert repr(E.zeros(2, 2, dtype=E.int64)) == "tensor([[0, 0],\n        [0, 0]])"


def test_to_converts_dtype_and_returns_self_when_unchanged():
    x = E.tensor([1.7, -2.2])
    assert x.to(E.float32) is x and x.to("cpu") is x
    y = x.to(E.int64)
    assert y.dtype is E.int64 and y.tolist() == [1, -2]
    assert x.to(E.float32, copy=True) is not x
    assert x.double().dtype is E.float64 and x.half().dtype is E.float16
    assert x.bfloat16().dtype is E.bfloat16 and x.long().dtype is E.int64
    assert x.int().dtype is E.int32 and x.bool().tolist() == [True, True]
    assert x.to(E.zeros(1, dtype=E.float64)).dtype is E.float64
    assert x.type(E.float64).dtype is E.float64 and x.type().name == "CPUFloatType"
    if not E.cuda.is_available():   # names ember-cuda: to install, or why it registered nothing
        with pytest.raises(E.NoBackendError, match="no ember backend named 'cuda'.*ember-cuda"):
            x.to("cuda")
    with pytest.raises(TypeError, match="expected an ember dtype"):
        x.to(object())


def test_scalar_conversions():
    assert E.tensor([2.5]).item() == 2.5 and isinstance(E.tensor([2]).item(), int)
    assert float(E.tensor(1.5)) == 1.5 and int(E.tensor([3])) == 3
    assert bool(E.tensor([1])) and not bool(E.tensor(0.0))
    assert [10, 20, 30][E.tensor(1)] == 20
    with pytest.raises(ValueError, match="2 elements cannot be converted"):
        E.tensor([1, 2]).item()
    with pytest.raises(ValueError, match="one-element tensors"):
        bool(E.ones(2))
    with pytest.raises(TypeError, match="only integer tensors"):
        [1][E.tensor(0.0)]
    assert E.tensor([[1, 2], [3, 4]]).tolist() == [[1, 2], [3, 4]]
    assert E.tensor([1.5], dtype=E.bfloat16).tolist() == [1.5]
    with pytest.raises(TypeError, match="len.. of a 0-d tensor"):
        len(E.tensor(1.0))


def test_default_device_must_exist():
    assert E.get_default_device() == E.Device("cpu")
    with pytest.raises(E.NoBackendError, match="no ember backend named 'nope'"):
        E.set_default_device("nope")
    E.set_default_device("cpu")
    assert E.zeros(1).device == E.Device("cpu")


def test_array_priority_lets_tensor_handle_numpy_operands():
    out = np.float32(2.0) * E.ones(2)
    assert isinstance(out, E.Tensor)


def test_transpose_properties_are_views():
    x = E.arange(24.0).view(2, 3, 4)
    assert x.T.shape == (4, 3, 2) and x.mT.shape == (2, 4, 3)
    assert x.mT._base is x._base and E.tensor(1.0).T.shape == ()  # _base is the root
    assert x.T.tolist()[1][2][0] == x.tolist()[0][2][1]
    with pytest.raises(IndexError, match="matrices"):
        E.ones(3).mT


def test_to_accepts_non_blocking_as_torch():
    x = E.ones(2)
    assert x.to("cpu", non_blocking=True) is x
    assert x.to(E.float64, non_blocking=True).dtype == E.float64
