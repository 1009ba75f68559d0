"""ember.nn.Parameter: identity, autograd as a leaf, in-place updates, data swap, copies."""
import copy
import pickle

import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember.nn import Parameter


def test_is_a_tensor_and_a_parameter():
    p = Parameter(E.ones(2, 3))
    assert isinstance(p, Parameter) and isinstance(p, E.Tensor)
    assert type(p) is Parameter
    assert not isinstance(E.ones(2), Parameter)
    assert p.requires_grad and p.is_leaf and p.grad_fn is None
    assert p.shape == (2, 3) and p.dtype is E.float32


def test_repr():
    assert repr(Parameter(E.ones(2))) == "Parameter containing:\n" + repr(
        E.ones(2, requires_grad=True))
    assert repr(Parameter(E.ones(2))).startswith("Parameter containing:\ntensor(")


def test_shares_memory_with_data():
    t = E.zeros(3)
    p = Parameter(t)
    with E.no_grad():
        p.add_(1)
    assert to_np(t).tolist() == [1, 1, 1]


def test_defaults_and_errors():
    p = Parameter()
    assert p.shape == (0,) and p.requires_grad
    q = Parameter(E.tensor([1, 2]), requires_grad=False)
    assert q.dtype is E.int64 and not q.requires_grad
    with pytest.raises(RuntimeError, match="floating point"):
        Parameter(E.tensor([1, 2]))
    with pytest.raises(TypeError, match="ember.Tensor"):
        Parameter(np.ones(3))


def test_ops_return_plain_tensors_and_grad_accumulates():
    p = Parameter(E.tensor([1.0, 2.0, 3.0]))
    y = p * 2
    assert type(y) is E.Tensor
    (p * p).sum().backward()
    (p * 3).sum().backward()
    assert_close(p.grad, np.array([5.0, 7.0, 9.0]), dtype=E.float32)
    assert p.grad.requires_grad is False


def test_optimizer_style_update_in_place():
    p = Parameter(E.tensor([1.0, 2.0]))
    (p ** 2).sum().backward()
    v = p._version
    with E.no_grad():
        p.sub_(p.grad * 0.5)
    assert p._version == v + 1
    assert p.is_leaf and p.requires_grad and type(p) is Parameter
    assert_close(p, np.array([0.0, 0.0]))
    # the updated parameter still feeds autograd
    p.grad = None
    (p + 1).sum().backward()
    assert_close(p.grad, np.array([1.0, 1.0]))


def test_version_check_after_in_place_update():
    p = Parameter(E.tensor([1.0, 2.0]))
    y = (p * p).sum()  # mul saves p
    with E.no_grad():
        p.mul_(2)
    with pytest.raises(RuntimeError):
        y.backward()


def test_data_setter_keeps_the_object():
    p = Parameter(E.ones(2, 2))
    p.data = E.zeros(3, dtype=E.float64)
    assert type(p) is Parameter and p.requires_grad and p.is_leaf
    assert p.shape == (3,) and p.dtype is E.float64
    (p * 2).sum().backward()
    assert_close(p.grad, np.full(3, 2.0))
    assert type(p.data) is E.Tensor and not p.data.requires_grad
    with pytest.raises(RuntimeError, match="floating"):
        p.data = E.tensor([1, 2])


def test_deepcopy_and_pickle():
    p = Parameter(E.tensor([1.0, 2.0]))
    q = copy.deepcopy(p)
    assert type(q) is Parameter and q.requires_grad and q is not p
    with E.no_grad():
        q.add_(1)
    assert to_np(p).tolist() == [1.0, 2.0]
    r = pickle.loads(pickle.dumps(Parameter(E.ones(2), requires_grad=False)))
    assert type(r) is Parameter and not r.requires_grad
    assert to_np(r).tolist() == [1.0, 1.0]
