"""ember.nn.Parameter: identity, autograd as a leaf, in-place updates, data swap, copies;
nn.Buffer and its registration on assignment; UninitializedParameter / UninitializedBuffer
(errors before materialize, to(), materialize, copies)."""
import copy
import pickle

import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember import nn
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


# --- Buffer ---------------------------------------------------------------------------------

def test_buffer_is_a_tensor_registered_on_assignment():
    t = E.arange(3.0)
    b = nn.Buffer(t)
    assert isinstance(b, nn.Buffer) and isinstance(b, E.Tensor) and b.persistent
    assert not isinstance(t, nn.Buffer)
    b.add_(1)  # shares memory with the tensor it was made from
    assert to_np(t).tolist() == [1, 2, 3]
    m = nn.Module()
    m.kept = nn.Buffer(E.ones(2))
    m.scratch = nn.Buffer(E.zeros(2), persistent=False)
    m.plain = E.ones(2)  # a plain tensor stays a plain attribute
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]
    m.scratch = nn.Buffer(E.zeros(2))  # a Buffer assigned again sets the persistence
    assert list(m.state_dict()) == ["kept", "scratch"]
    assert (m.kept + 1).__class__ is E.Tensor and type(m.kept + 1) is E.Tensor


def test_buffer_keeps_requires_grad_and_errors():
    assert nn.Buffer(E.ones(2, requires_grad=True)).requires_grad
    assert nn.Buffer().shape == (0,)
    with pytest.raises(TypeError, match="expected data to be an ember.Tensor"):
        nn.Buffer([1.0])
    with pytest.raises(AttributeError, match="before Module.__init__"):
        class Early(nn.Module):
            def __init__(self):
                self.b = nn.Buffer(E.ones(1))
        Early()
    m = nn.Module()
    m.x = 1
    with pytest.raises(KeyError, match="attribute 'x' already exists"):
        m.x = nn.Buffer(E.ones(1))


# --- UninitializedParameter / UninitializedBuffer -------------------------------------------

def test_uninitialized_parameter_raises_until_materialized():
    p = nn.UninitializedParameter(dtype=E.float64)
    assert isinstance(p, Parameter) and nn.parameter.is_lazy(p)
    assert repr(p) == "<UninitializedParameter>"
    assert p.dtype is E.float64 and str(p.device) == "cpu" and p.requires_grad
    with pytest.raises(RuntimeError, match="Can't access the shape of an uninitialized "
                                           "parameter"):
        p.shape
    for use in (lambda: p + 1, lambda: 2 * p, lambda: p.sum(), lambda: p.numel(),
                lambda: E.matmul(E.ones(2, 2), p), lambda: p.data):
        with pytest.raises(ValueError, match="Attempted to use an uninitialized parameter.*"
                                             "call the module once with an example batch"):
            use()
    p.materialize((2, 3))
    assert type(p) is Parameter and p.shape == (2, 3) and p.dtype is E.float64
    assert p.requires_grad and not nn.parameter.is_lazy(p)
    (p * 2).sum().backward()
    assert to_np(p.grad).tolist() == [[2.0] * 3] * 2


def test_uninitialized_to_and_materialize_arguments():
    p = nn.UninitializedParameter(requires_grad=False)
    q = p.to(E.float64)
    assert type(q) is nn.UninitializedParameter and q.dtype is E.float64 and q is not p
    assert p.double().dtype is E.float64 and p.to(E.float32) is p
    p.materialize((4,), dtype=E.float16)
    assert type(p) is Parameter and p.dtype is E.float16 and not p.requires_grad
    with pytest.raises(RuntimeError, match="only tensors of floating point dtype"):
        nn.UninitializedParameter(dtype=E.int64)


def test_uninitialized_buffer():
    b = nn.UninitializedBuffer(persistent=False)
    assert isinstance(b, nn.Buffer) and not b.persistent and not b.requires_grad
    assert repr(b) == "<UninitializedBuffer>"
    with pytest.raises(ValueError, match="uninitialized buffer"):
        b.sum()
    m = nn.Module()
    m.stats = b
    assert [n for n, _ in m.named_buffers()] == ["stats"] and list(m.state_dict()) == []
    b.materialize((2,))
    assert type(b) is E.Tensor and b.shape == (2,) and m.stats is b


def test_uninitialized_copies():
    p = nn.UninitializedParameter(dtype=E.float64)
    for q in (copy.deepcopy(p), pickle.loads(pickle.dumps(p))):
        assert type(q) is nn.UninitializedParameter and q is not p
        assert q.dtype is E.float64 and q.requires_grad
    b = pickle.loads(pickle.dumps(nn.UninitializedBuffer(persistent=False)))
    assert type(b) is nn.UninitializedBuffer and not b.persistent
