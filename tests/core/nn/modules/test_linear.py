"""Identity, Linear, Bilinear: shapes, default init, forward against numpy, gradients."""
import math

import numpy as np
import pytest
from helpers import assert_close, make, to_np

import ember as E
from ember import nn


def test_identity():
    x = E.ones(2, 3)
    m = nn.Identity(54, unused="x")
    assert m(x) is x and repr(m) == "Identity()"


def test_linear_shapes_and_repr():
    m = nn.Linear(4, 3)
    assert m.weight.shape == (3, 4) and m.bias.shape == (3,)
    assert [k for k, _ in m.named_parameters()] == ["weight", "bias"]
    assert repr(m) == "Linear(in_features=4, out_features=3, bias=True)"
    nb = nn.Linear(4, 3, bias=False)
    assert nb.bias is None and list(nb.state_dict()) == ["weight"]
    assert repr(nb) == "Linear(in_features=4, out_features=3, bias=False)"
    d = nn.Linear(2, 2, dtype=E.float64, device="cpu")
    assert d.weight.dtype is E.float64 and d.bias.dtype is E.float64
    with pytest.raises(ValueError, match="in_features"):
        nn.Linear(-1, 2)


def test_linear_default_init_bounds():
    E.manual_seed(0)
    m = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    w, b = to_np(m.weight), to_np(m.bias)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.01 * bound
    assert np.abs(b).max() <= bound and np.abs(b).max() > 0.9 * bound


@pytest.mark.parametrize("dtype", [E.float32, E.float64])
def test_linear_forward_matches_numpy(dtype):
    m = nn.Linear(5, 3, dtype=dtype)
    x, xn = make((2, 4, 5), dtype)
    ref = xn @ to_np(m.weight).astype(np.float64).T + to_np(m.bias)
    assert_close(m(x), ref, dtype=dtype)


def test_linear_gradients_reach_parameters():
    m = nn.Linear(3, 2, dtype=E.float64)
    x, xn = make((4, 3), E.float64)
    m(x).sum().backward()
    assert_close(m.weight.grad, np.tile(xn.sum(0), (2, 1)))
    assert_close(m.bias.grad, np.full(2, 4.0))
    assert E.autograd.gradcheck(lambda x, w, b: nn.functional.linear(x, w, b),
                                (x.requires_grad_(), m.weight, m.bias))


def test_bilinear():
    m = nn.Bilinear(2, 3, 4, dtype=E.float64)
    assert m.weight.shape == (4, 2, 3) and m.bias.shape == (4,)
    bound = 1 / math.sqrt(2)
    assert np.abs(to_np(m.weight)).max() <= bound
    x1, n1 = make((5, 2), E.float64, seed=1)
    x2, n2 = make((5, 3), E.float64, seed=2)
    ref = np.einsum("bi,oij,bj->bo", n1, to_np(m.weight), n2) + to_np(m.bias)
    assert_close(m(x1, x2), ref)
    m(x1, x2).sum().backward()
    assert m.weight.grad.shape == (4, 2, 3) and m.bias.grad is not None
    assert repr(m) == "Bilinear(in1_features=2, in2_features=3, out_features=4, bias=True)"
    assert nn.Bilinear(1, 1, 1, bias=False).bias is None


def test_reset_parameters_redraws():
    m = nn.Linear(3, 3)
    before = to_np(m.weight).copy()
    m.reset_parameters()
    assert not np.array_equal(before, to_np(m.weight))


def test_small_mlp_trains_with_manual_sgd():
    E.manual_seed(0)
    rng = np.random.default_rng(0)
    xn = rng.normal(size=(64, 2))
    x, y = E.tensor(xn, dtype=E.float32), E.tensor((xn[:, 0] * xn[:, 1] > 0).astype(np.int64))
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 2))
    loss_fn = nn.CrossEntropyLoss()
    first = None
    for _ in range(150):
        loss = loss_fn(model(x), y)
        first = first if first is not None else loss.item()
        model.zero_grad()
        loss.backward()
        with E.no_grad():
            for p in model.parameters():
                p.sub_(p.grad * 0.5)
    assert loss.item() < 0.5 * first
