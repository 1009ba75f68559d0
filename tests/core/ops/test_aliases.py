"""The alias table (ops/aliases.py): every alias is its target's callable (so the same op:
values, dtypes, errors, autograd node), the in-place forms write and bump the version,
the in-place function forms (``ember.exp_(x)``) are the methods, and install refuses a
name that is taken."""
import numpy as np
import pytest

import ember as E
from ember.ops import aliases


def _forms(spec):
    return spec.split()


@pytest.mark.parametrize("alias", sorted(aliases.ALIASES))
def test_alias_is_its_target(alias):
    target, spec = aliases.ALIASES[alias]
    forms = _forms(spec)
    if "f" in forms:
        assert getattr(E, alias) is getattr(E, target)
    if "m" in forms:
        assert getattr(E.Tensor, alias) is getattr(E.Tensor, target)
    if "m_" in forms:
        assert getattr(E.Tensor, alias + "_") is getattr(E.Tensor, target + "_")
    if "f_" in forms:
        assert getattr(E, alias + "_") is getattr(E.Tensor, target + "_")


@pytest.mark.parametrize("name", aliases.INPLACE_FUNCTIONS)
def test_inplace_function_is_the_method(name):
    assert getattr(E, name) is getattr(E.Tensor, name)


def test_values_match_numpy_float64():
    a = np.array([-0.9, -0.2, 0.4, 0.8])
    x = E.tensor(a)
    for alias, ref in [("arccos", np.arccos), ("arcsin", np.arcsin), ("arctan", np.arctan),
                       ("arcsinh", np.arcsinh), ("arctanh", np.arctanh),
                       ("negative", np.negative), ("fix", np.trunc)]:
        np.testing.assert_allclose(getattr(E, alias)(x).numpy(), ref(a), rtol=1e-12)
        np.testing.assert_allclose(getattr(x, alias)().numpy(), ref(a), rtol=1e-12)
    np.testing.assert_allclose(E.arccosh(x + 2).numpy(), np.arccosh(a + 2), rtol=1e-12)
    np.testing.assert_allclose(E.arctan2(x, x + 2).numpy(), np.arctan2(a, a + 2), rtol=1e-12)
    assert E.greater(x, 0).tolist() == [False, False, True, True]
    assert x.less_equal(0.4).tolist() == [True, True, True, False]
    assert E.not_equal(x, x).tolist() == [False] * 4
    assert E.divide(E.tensor([7, -7]), 2, rounding_mode="floor").tolist() == [3, -4]
    assert E.subtract(x, x, alpha=2).tolist() == pytest.approx((-a).tolist())
    assert E.multiply(E.tensor([2]), 3).tolist() == [6]
    assert E.concat([x, x]).shape == (8,)
    assert x.reshape(2, 2).ndimension() == 2 and x.nelement() == 4


def test_same_gradient_node_as_the_target():
    x = E.tensor([0.1, 0.5], dtype=E.float64, requires_grad=True)
    y = E.arcsin(x)
    assert y.grad_fn.name() == E.asin(x).grad_fn.name()
    (g,) = E.autograd.grad(y.sum(), (x,))
    np.testing.assert_allclose(g.numpy(), 1 / np.sqrt(1 - np.array([0.1, 0.5]) ** 2))


def test_inplace_forms_write_and_bump_the_version():
    x = E.tensor([0.5, -0.5])
    v = x._version
    assert x.arccos_() is x and x._version == v + 1
    np.testing.assert_allclose(x.numpy(), np.arccos([0.5, -0.5]), rtol=1e-6)
    y = E.tensor([1.5, -2.5])
    assert E.fix_(y) is y and y.tolist() == [1, -2]
    z = E.tensor([3.0])
    assert E.exp_(z) is z and z.item() == pytest.approx(np.exp(3.0), rel=1e-6)
    w = E.tensor([1.0, 2.0])
    assert w.greater_(1.5).tolist() == [0, 1] and w.dtype is E.float32


def test_inplace_function_records_autograd():
    x = E.tensor([0.3, 0.7], dtype=E.float64, requires_grad=True)
    y = x * 1
    E.sigmoid_(y)
    (g,) = E.autograd.grad(y.sum(), (x,))
    s = 1 / (1 + np.exp(-np.array([0.3, 0.7])))
    np.testing.assert_allclose(g.numpy(), s * (1 - s))
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        E.relu_(x)


def test_errors_are_the_targets():
    with pytest.raises(RuntimeError, match="bool"):
        E.subtract(E.tensor([True]), E.tensor([False]))
    with pytest.raises(TypeError):
        E.arccos(2.0)


def test_install_refuses_a_taken_name(monkeypatch):
    monkeypatch.setattr(aliases, "ALIASES", {"acos": ("asin", "f")})
    monkeypatch.setattr(aliases, "INPLACE_FUNCTIONS", ())
    with pytest.raises(RuntimeError, match="ember.acos is already defined"):
        aliases.install({"acos": E.acos, "asin": E.asin}, E.Tensor)
    monkeypatch.setattr(aliases, "ALIASES", {"nothing_like_it": ("no_such_op", "f")})
    with pytest.raises(RuntimeError, match="does not exist"):
        aliases.install({}, E.Tensor)
    monkeypatch.setattr(aliases, "ALIASES", {"x": ("acos", "g")})
    with pytest.raises(ValueError, match="unknown form"):
        aliases.install({"acos": E.acos}, E.Tensor)
