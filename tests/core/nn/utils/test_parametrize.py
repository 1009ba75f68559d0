"""register_parametrization / remove_parametrizations / cached: the property, chaining,
right_inverse, several originals, state dicts, optimizers, class swapping and errors."""
import copy

import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn
from ember.nn.utils import parametrize as P


@pytest.fixture(autouse=True)
def seeded():
    """Fixed initial weights and power-iteration vectors: the results are deterministic."""
    E.manual_seed(0)


class Symmetric(nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(-1, -2)


class Double(nn.Module):
    def forward(self, X):
        return 2 * X

    def right_inverse(self, Y):
        return Y / 2


class Sum(nn.Module):
    """Two originals: right_inverse splits the value into halves."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, Y):
        return Y / 2, Y / 2


class Counting(nn.Module):
    calls = 0

    def forward(self, X):
        Counting.calls += 1
        return X


def linear(n=3):
    return nn.Linear(n, n, dtype=E.float64)


def test_property_gradient_and_parameters():
    m = linear()
    w0 = m.weight
    P.register_parametrization(m, "weight", Symmetric())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert P.type_before_parametrizations(m) is nn.Linear
    assert m.parametrizations.weight.original is w0  # optimizers keep working
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    W = m.weight.detach().numpy()
    assert_close(m.weight, np.triu(w0.detach().numpy()) + np.triu(w0.detach().numpy(), 1).T)
    assert np.array_equal(W, W.T)
    x = E.randn(2, 3, dtype=E.float64)
    m(x).sum().backward()
    g = np.tile(x.numpy().sum(0), (3, 1))  # d sum(x W^T) / dW
    assert_close(w0.grad, np.triu(g) + np.tril(g, -1).T)


def test_other_instances_are_untouched():
    a, b = linear(), linear()
    P.register_parametrization(a, "weight", Symmetric())
    assert type(b) is nn.Linear and "weight" in b._parameters


def test_chained_parametrizations_and_right_inverse():
    m = linear()
    P.register_parametrization(m, "weight", Double())
    P.register_parametrization(m, "weight", Double())
    assert len(m.parametrizations.weight) == 2
    target = E.ones(3, 3, dtype=E.float64)
    m.weight = target                        # runs the right_inverses, last first
    assert_close(m.parametrizations.weight.original, np.full((3, 3), 0.25))
    assert_close(m.weight, np.ones((3, 3)))


def test_several_originals():
    m = linear()
    w = m.weight.detach().numpy().copy()
    P.register_parametrization(m, "weight", Sum())
    pl = m.parametrizations.weight
    assert not pl.is_tensor and pl.ntensors == 2
    assert_close(pl.original0, w / 2)
    assert isinstance(pl.original1, nn.Parameter)
    assert_close(m.weight, w)
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    with pytest.raises(ValueError, match="sequence of tensors"):
        P.remove_parametrizations(m, "weight", leave_parametrized=False)
    P.remove_parametrizations(m, "weight")
    assert_close(m.weight, w) and isinstance(m.weight, nn.Parameter)


def test_remove_leaves_or_restores():
    m = linear()
    w0 = m.weight
    raw = w0.detach().numpy().copy()
    P.register_parametrization(m, "weight", Double())
    assert_close(m.parametrizations.weight.original, raw / 2)  # right_inverse at registration
    P.remove_parametrizations(m, "weight", leave_parametrized=True)
    assert type(m) is nn.Linear and not hasattr(m, "parametrizations")
    assert m.weight is w0 and m.weight is m._parameters["weight"]
    assert_close(m.weight, raw)
    P.register_parametrization(m, "weight", Double())
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert_close(m.weight, raw / 2)


def test_buffers_can_be_parametrized():
    bn = nn.BatchNorm1d(3)
    P.register_parametrization(bn, "running_var", Double())
    assert "parametrizations.running_var.original" in bn.state_dict()
    assert P.is_parametrized(bn, "running_var") and not P.is_parametrized(bn, "weight")


def test_cached_computes_once_per_context():
    m = linear()
    P.register_parametrization(m, "weight", Counting())
    Counting.calls = 0
    m.weight, m.weight
    assert Counting.calls == 2
    with P.cached():
        with P.cached():
            first = m.weight
        assert m.weight is first
    assert Counting.calls == 3
    m.weight
    assert Counting.calls == 4


def test_state_dict_round_trip_and_deepcopy():
    a, b = linear(), linear()
    for m in (a, b):
        P.register_parametrization(m, "weight", Symmetric())
    b.load_state_dict(a.state_dict())
    assert_close(b.weight, a.weight.detach().numpy())
    c = copy.deepcopy(a)
    assert_close(c.weight, a.weight.detach().numpy())
    assert c.parametrizations.weight.original is not a.parametrizations.weight.original


def test_optimizer_steps_the_original():
    m = linear()
    P.register_parametrization(m, "weight", Symmetric())
    opt = E.optim.SGD(m.parameters(), lr=0.1)
    m(E.randn(4, 3, dtype=E.float64)).pow(2).sum().backward()
    before = m.parametrizations.weight.original.detach().numpy().copy()
    opt.step()
    assert not np.array_equal(before, m.parametrizations.weight.original.detach().numpy())
    W = m.weight.detach().numpy()
    assert np.array_equal(W, W.T)


def test_errors():
    m = linear()
    with pytest.raises(ValueError, match="does not have a parameter, a buffer"):
        P.register_parametrization(m, "kernel", Symmetric())

    class Shrink(nn.Module):
        def forward(self, X):
            return X[:2]

    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Shrink())
    assert type(m) is nn.Linear and "weight" in m._parameters   # nothing half-done
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (2, 3)
    with pytest.raises(ValueError, match="does not have a parametrization on bias"):
        P.remove_parametrizations(m, "bias")

    n = linear()
    P.register_parametrization(n, "weight", Symmetric())
    with pytest.raises(RuntimeError, match="does not implement right_inverse"):
        n.weight = E.zeros(3, 3, dtype=E.float64)

    class ToFloat32(nn.Module):
        def forward(self, X):
            return X.float()

    with pytest.raises(ValueError, match="may not change the dtype"):
        P.register_parametrization(linear(), "weight", ToFloat32())
