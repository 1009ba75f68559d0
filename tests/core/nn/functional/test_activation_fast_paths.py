"""The short forwards the activation composites take when nothing records them (no grad,
no trace): the same values as their differentiable where() forms, and as numpy formulas
in the same dtype, special values included."""
import numpy as np
import pytest

import ember as E
import ember.nn.functional as F

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 0.25, 3.0, -3.0, 6.0, -6.0, 2.9999998, -2.9999998,
           1e-40, -1e-40, 1e-7, 1e30, -1e30, 3e38, -3e38, np.inf, -np.inf, np.nan]


def _x(dtype):
    rng = np.random.default_rng(0)
    x = np.concatenate([SPECIAL, rng.standard_normal(5000) * 4]).astype(dtype)
    return x


CASES = {
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.01),
                   lambda x: np.where(x > 0, x, x * 0.01)),
    "leaky_relu(1)": (lambda x: F.leaky_relu(x, 1.0), lambda x: x),
    "hardtanh": (lambda x: F.hardtanh(x), lambda x: np.where(np.isnan(x), x, np.clip(x, -1, 1))),
    "relu6": (F.relu6, lambda x: np.where(np.isnan(x), x, np.clip(x, 0, 6))),
    # PyTorch's min(max(x + 3, 0), 6) / 6 (x / 6 + 1/2 cancels near -3)
    "hardsigmoid": (F.hardsigmoid, lambda x: np.clip(x + 3, 0, 6) / 6),
    "softshrink": (lambda x: F.softshrink(x, 0.5),
                   lambda x: np.where(np.abs(x) <= 0.5, 0, x - np.sign(x) * 0.5)),
    "hardshrink": (lambda x: F.hardshrink(x, 0.5),
                   lambda x: np.where(np.abs(x) <= 0.5, 0, x)),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_plain_forward_matches_the_differentiable_one(name, dtype):
    fn, ref = CASES[name]
    x = _x(dtype)
    plain = fn(E.tensor(x)).numpy()
    graph = fn(E.tensor(x).requires_grad_()).detach().numpy()
    with np.errstate(all="ignore"):
        want = np.asarray(ref(x)).astype(dtype)  # in the dtype, as the kernels round
    for got in (plain, graph):
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)  # NaN where NaN; 0.0 == -0.0
    # bit for bit but for the sign of a zero at hardtanh's bounds (clamp keeps x's -0.0,
    # as PyTorch; the where() form returns the bound)
    if name not in ("hardtanh", "relu6"):
        assert plain.tobytes() == graph.tobytes()


def test_plain_forward_only_without_autograd():
    x = E.tensor(_x(np.float32)[:8]).requires_grad_()
    y = F.relu6(x)
    assert y.requires_grad
    y.sum().backward()
    # PyTorch's gradient: 0 at the kinks (where() form), 1 strictly inside
    want = np.where((x.detach().numpy() > 0) & (x.detach().numpy() < 6), 1.0, 0.0)
    np.testing.assert_array_equal(x.grad.numpy(), want)
    with E.no_grad():
        assert not F.hardtanh(x).requires_grad
