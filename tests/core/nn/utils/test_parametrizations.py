"""parametrizations.weight_norm and spectral_norm: values against numpy float64
(SVD for sigma), gradients by gradcheck, state-dict keys as PyTorch's, power iteration
only in training mode, and errors."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn
from ember.autograd import gradcheck
from ember.nn.utils.parametrizations import norm_except_dim, spectral_norm, weight_norm


@pytest.fixture(autouse=True)
def seeded():
    """Fixed initial weights and power-iteration vectors: the results are deterministic."""
    E.manual_seed(0)


@pytest.mark.parametrize("dim", [0, 1, None])
def test_weight_norm_values_and_keys(dim):
    m = nn.Conv2d(2, 3, 3, dtype=E.float64)
    w = m.weight.detach().numpy().copy()
    weight_norm(m, dim=dim)
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    axes = tuple(range(4)) if dim is None else tuple(d for d in range(4) if d != dim)
    ref_g = np.sqrt((w ** 2).sum(axis=axes, keepdims=dim is not None))
    assert_close(g, ref_g)
    assert_close(v, w)
    assert_close(m.weight, w)
    assert sorted(m.state_dict()) == ["bias", "parametrizations.weight.original0",
                                      "parametrizations.weight.original1"]
    # doubling g doubles the weight; the direction is v's
    with E.no_grad():
        g.mul_(2)
    assert_close(m.weight, 2 * w)


def test_weight_norm_gradcheck():
    m = weight_norm(nn.Linear(3, 2, dtype=E.float64))
    g, v = m.parametrizations.weight.original0, m.parametrizations.weight.original1
    f = lambda g, v: m.parametrizations.weight[0](g, v)
    assert gradcheck(f, (g.detach().requires_grad_(), v.detach().requires_grad_()))


def test_norm_except_dim():
    v = np.arange(24.0).reshape(2, 3, 4)
    assert_close(norm_except_dim(E.tensor(v), 2, 1), np.sqrt((v ** 2).sum((0, 2), keepdims=True)))
    assert_close(norm_except_dim(E.tensor(v), 2, -1), np.sqrt((v ** 2).sum()))


@pytest.mark.parametrize("make, dim", [(lambda: nn.Linear(5, 4, dtype=E.float64), 0),
                                       (lambda: nn.Conv2d(3, 4, 3, dtype=E.float64), 0),
                                       (lambda: nn.ConvTranspose2d(3, 4, 3, dtype=E.float64), 1)])
def test_spectral_norm_divides_by_the_largest_singular_value(make, dim):
    m = make()
    w = m.weight.detach().numpy().copy()
    spectral_norm(m, n_power_iterations=50)
    matrix = np.moveaxis(w, dim, 0).reshape(w.shape[dim], -1)
    sigma = np.linalg.svd(matrix, compute_uv=False)[0]
    assert_close(m.weight, w / sigma, rtol=1e-6)
    assert sorted(m.state_dict())[-3:] == ["parametrizations.weight.0._u",
                                           "parametrizations.weight.0._v",
                                           "parametrizations.weight.original"]


def test_spectral_norm_power_iteration_runs_only_in_training():
    m = spectral_norm(nn.Linear(4, 3, dtype=E.float64))
    sn = m.parametrizations.weight[0]
    u = sn._u.numpy().copy()
    m.eval()
    m.weight
    np.testing.assert_array_equal(sn._u.numpy(), u)
    m.train()
    m.weight
    w = m.parametrizations.weight.original.detach().numpy()
    v_ref = w.T @ (w @ sn._v.numpy())  # unchanged direction: converged after 15 warm-up steps
    assert np.linalg.norm(sn._u.numpy()) == pytest.approx(1.0)
    assert abs(np.dot(v_ref / np.linalg.norm(v_ref), sn._v.numpy())) == pytest.approx(1.0,
                                                                                     abs=1e-4)


def test_spectral_norm_gradcheck_in_eval():
    m = spectral_norm(nn.Linear(3, 2, dtype=E.float64)).eval()
    sn = m.parametrizations.weight[0]
    w = m.parametrizations.weight.original.detach().requires_grad_()
    assert gradcheck(sn, (w,))


def test_spectral_norm_one_dim_weight_is_normalized():
    bn = nn.BatchNorm1d(4, dtype=E.float64)
    with E.no_grad():
        bn.weight.copy_(E.tensor([3.0, 4.0, 0.0, 0.0], dtype=E.float64))
    spectral_norm(bn)
    assert_close(bn.weight, [0.6, 0.8, 0.0, 0.0])


def test_spectral_norm_errors():
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'kernel'"):
        spectral_norm(nn.Linear(2, 2), name="kernel")
    with pytest.raises(ValueError, match="n_power_iterations to be positive"):
        spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        spectral_norm(nn.Linear(2, 2), dim=2)
