"""The hook-based weight_norm and spectral_norm with their remove_* (PyTorch's older API):
values against numpy float64, parameter names, removal, and errors."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn
from ember.nn.utils import (remove_spectral_norm, remove_weight_norm, spectral_norm,
                            weight_norm)


@pytest.fixture(autouse=True)
def seeded():
    """Fixed initial weights and power-iteration vectors: the results are deterministic."""
    E.manual_seed(0)


def test_weight_norm_splits_and_recomputes():
    m = nn.Linear(4, 3, dtype=E.float64)
    w = m.weight.detach().numpy().copy()
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight_g", "weight_v"]
    assert_close(m.weight_g, np.linalg.norm(w, axis=1, keepdims=True))
    with E.no_grad():
        m.weight_g.mul_(3)
    x = E.randn(2, 4, dtype=E.float64)
    assert_close(m(x), x.numpy() @ (3 * w).T + m.bias.detach().numpy())
    m(x).sum().backward()
    assert m.weight_g.grad is not None and m.weight_v.grad is not None
    remove_weight_norm(m)
    assert sorted(n for n, _ in m.named_parameters()) == ["bias", "weight"]
    assert_close(m.weight, 3 * w)


def test_spectral_norm_hook():
    m = nn.Linear(5, 4, dtype=E.float64)
    w = m.weight.detach().numpy().copy()
    spectral_norm(m, n_power_iterations=30)
    assert sorted(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    m(E.randn(2, 5, dtype=E.float64))          # training: the hook iterates, then divides
    sigma = np.linalg.svd(w, compute_uv=False)[0]
    assert_close(m.weight, w / sigma, rtol=1e-6)
    u = m.weight_u.numpy().copy()
    m.eval()
    m(E.randn(2, 5, dtype=E.float64))
    np.testing.assert_array_equal(m.weight_u.numpy(), u)
    remove_spectral_norm(m)
    assert sorted(m.state_dict()) == ["bias", "weight"]
    assert_close(m.weight, w / sigma, rtol=1e-6)


def test_errors():
    m = nn.Linear(2, 2)
    with pytest.warns(FutureWarning):
        weight_norm(m)
        with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
            weight_norm(m)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found"):
        remove_weight_norm(m, "bias")
    spectral_norm(m, name="bias")
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        spectral_norm(m, name="bias")
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        remove_spectral_norm(m)
    with pytest.raises(ValueError, match="has no parameter named 'kernel'"):
        spectral_norm(nn.Linear(2, 2), name="kernel")
