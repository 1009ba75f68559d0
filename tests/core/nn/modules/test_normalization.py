"""BatchNorm1d/2d, LayerNorm, GroupNorm: buffers, running statistics (momentum and the
cumulative average), train/eval behaviour, forward against numpy, gradients, repr."""
import numpy as np
import pytest
from helpers import assert_close, make, to_np

import ember as E
from ember import nn


def np_bn(x, axes, mean, var, w, b, eps=1e-5):
    shape = [1] * x.ndim
    shape[1] = -1
    r = lambda v: np.asarray(v).reshape(shape)  # noqa: E731
    return (x - r(mean)) / np.sqrt(r(var) + eps) * r(w) + r(b)


def test_batchnorm_parameters_and_buffers():
    m = nn.BatchNorm2d(3)
    assert [k for k, _ in m.named_parameters()] == ["weight", "bias"]
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert to_np(m.weight).tolist() == [1] * 3 and to_np(m.bias).tolist() == [0] * 3
    assert to_np(m.running_var).tolist() == [1] * 3
    assert m.num_batches_tracked.dtype is E.int64 and m.num_batches_tracked.shape == ()
    m2 = nn.BatchNorm1d(3, affine=False, track_running_stats=False)
    assert list(m2.state_dict()) == [] and m2.weight is None and m2.running_mean is None
    assert nn.BatchNorm2d(3, bias=False).bias is None


def test_batchnorm2d_training_updates_running_stats():
    m = nn.BatchNorm2d(3, momentum=0.2, dtype=E.float64)
    x, xn = make((4, 3, 2, 5), E.float64)
    out = m(x)
    mean, var = xn.mean((0, 2, 3)), xn.var((0, 2, 3))
    assert_close(out, np_bn(xn, (0, 2, 3), mean, var, 1, 0))
    n = 4 * 2 * 5
    assert_close(m.running_mean, 0.2 * mean)
    assert_close(m.running_var, 0.8 + 0.2 * var * n / (n - 1))  # unbiased
    assert m.num_batches_tracked.item() == 1


def test_batchnorm_eval_uses_running_stats():
    m = nn.BatchNorm1d(3, dtype=E.float64)
    with E.no_grad():
        m.running_mean.copy_(E.tensor([1.0, 2.0, 3.0]))
        m.running_var.copy_(E.tensor([4.0, 1.0, 0.25]))
        m.weight.fill_(2.0)
    m.eval()
    x, xn = make((5, 3), E.float64)
    assert_close(m(x), np_bn(xn, (0,), [1, 2, 3], [4, 1, 0.25], 2, 0))
    assert m.num_batches_tracked.item() == 0
    x3, xn3 = make((5, 3, 4), E.float64)  # (N, C, L)
    assert_close(m(x3), np_bn(xn3, (0, 2), [1, 2, 3], [4, 1, 0.25], 2, 0))


def test_batchnorm_momentum_none_is_cumulative_average():
    m = nn.BatchNorm1d(2, momentum=None, dtype=E.float64)
    batches = [make((6, 2), E.float64, seed=s) for s in range(3)]
    for x, _ in batches:
        m(x)
    means = [xn.mean(0) for _, xn in batches]
    assert_close(m.running_mean, np.mean(means, axis=0))
    assert m.num_batches_tracked.item() == 3


def test_batchnorm_without_running_stats_uses_batch_stats_in_eval():
    m = nn.BatchNorm1d(2, track_running_stats=False, dtype=E.float64).eval()
    x, xn = make((6, 2), E.float64)
    assert_close(m(x), np_bn(xn, (0,), xn.mean(0), xn.var(0), 1, 0))


def test_batchnorm_input_rank_errors():
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.BatchNorm2d(3)(E.ones(2, 3))
    with pytest.raises(ValueError, match="expected 2D or 3D input"):
        nn.BatchNorm1d(3)(E.ones(2, 3, 4, 5))


def test_batchnorm_gradients_and_state_dict_round_trip():
    m = nn.BatchNorm2d(2, dtype=E.float64)
    x, _ = make((3, 2, 2, 2), E.float64)
    (m(x) * E.arange(24, dtype=E.float64).reshape(3, 2, 2, 2)).sum().backward()
    assert m.weight.grad.shape == (2,) and m.bias.grad is not None
    other = nn.BatchNorm2d(2, dtype=E.float64)
    other.load_state_dict(m.state_dict())
    assert other.num_batches_tracked.item() == 1
    assert_close(other.running_mean, to_np(m.running_mean))


def test_layer_norm():
    m = nn.LayerNorm((3, 4), dtype=E.float64)
    assert m.weight.shape == (3, 4) and m.normalized_shape == (3, 4)
    with E.no_grad():
        m.weight.fill_(2.0)
        m.bias.fill_(0.5)
    x, xn = make((2, 3, 4), E.float64)
    mu = xn.mean((1, 2), keepdims=True)
    var = xn.var((1, 2), keepdims=True)
    assert_close(m(x), (xn - mu) / np.sqrt(var + 1e-5) * 2 + 0.5)
    m(x).sum().backward()
    assert m.weight.grad.shape == (3, 4)
    assert nn.LayerNorm(4).normalized_shape == (4,)
    assert nn.LayerNorm(4, elementwise_affine=False).weight is None
    assert nn.LayerNorm(4, bias=False).bias is None


def test_group_norm():
    m = nn.GroupNorm(2, 4, dtype=E.float64)
    assert m.weight.shape == (4,)
    x, xn = make((2, 4, 3), E.float64)
    g = xn.reshape(2, 2, 6)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    assert_close(m(x), ref.reshape(2, 4, 3))
    with pytest.raises(ValueError, match="divisible"):
        nn.GroupNorm(3, 4)


def test_repr():
    assert repr(nn.BatchNorm2d(8)) == ("BatchNorm2d(8, eps=1e-05, momentum=0.1, affine=True, "
                                       "bias=True, track_running_stats=True)")
    assert repr(nn.BatchNorm1d(3, momentum=None, affine=False)) == (
        "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, bias=False, "
        "track_running_stats=True)")
    assert repr(nn.LayerNorm(4)) == \
        "LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.GroupNorm(2, 4)) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"


def test_to_double_converts_running_stats_not_counter():
    m = nn.BatchNorm2d(2).double()
    assert m.running_mean.dtype is E.float64 and m.weight.dtype is E.float64
    assert m.num_batches_tracked.dtype is E.int64


def test_rms_norm_module():
    m = nn.RMSNorm([3, 4], dtype=E.float64)
    assert list(m.state_dict()) == ["weight"] and m.eps is None
    assert to_np(m.weight).tolist() == [[1.0] * 4] * 3
    with E.no_grad():
        m.weight.fill_(2.0)
    x, xn = make((2, 3, 4), E.float64)
    eps = np.finfo(np.float64).eps
    assert_close(m(x), 2 * xn / np.sqrt((xn ** 2).mean((-2, -1), keepdims=True) + eps))
    m2 = nn.RMSNorm(4, eps=1e-3, elementwise_affine=False)
    assert m2.weight is None and list(m2.state_dict()) == []
    assert repr(m) == "RMSNorm((3, 4), eps=None, elementwise_affine=True)"
    assert repr(m2) == "RMSNorm((4,), eps=0.001, elementwise_affine=False)"


def test_local_response_norm_modules():
    x, xn = make((2, 5, 3, 3), E.float64)
    sq = np.pad(xn ** 2, ((0, 0), (1, 1), (0, 0), (0, 0)))
    ref = xn / (2.0 + 0.5 / 3 * (sq[:, :-2] + sq[:, 1:-1] + sq[:, 2:])) ** 0.75
    assert_close(nn.LocalResponseNorm(3, 0.5, 0.75, 2.0)(x), ref)
    # the same maths (see CrossMapLRN2d's docstring for how PyTorch's differs)
    assert_close(nn.CrossMapLRN2d(3, 0.5, 0.75, 2)(x), ref)
    assert repr(nn.LocalResponseNorm(2)) == "LocalResponseNorm(2, alpha=0.0001, beta=0.75, k=1.0)"
    assert repr(nn.CrossMapLRN2d(3)) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
    assert nn.LocalResponseNorm(2)(E.zeros(2, 5, 3)).shape == (2, 5, 3)
    with pytest.raises(ValueError, match="Expected input to be 4D"):
        nn.CrossMapLRN2d(3)(E.zeros(2, 5, 3))
    assert list(nn.CrossMapLRN2d(3).state_dict()) == []
