"""InstanceNorm1d/2d/3d: PyTorch's parameter and buffer names, running statistics against
numpy float64, train/eval behaviour, unbatched input, the num_features checks, loading
old checkpoints, repr."""
import numpy as np
import pytest
from helpers import assert_close, make, to_np

import ember as E
from ember import nn
from ember.autograd import gradcheck


def np_in(x, eps=1e-5):
    axes = tuple(range(2, x.ndim))
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


def test_defaults_learn_nothing_and_keep_no_stats():
    m = nn.InstanceNorm2d(3)
    assert list(m.state_dict()) == [] and list(m.parameters()) == []
    assert m.weight is None and m.bias is None and m.running_mean is None
    assert m.num_batches_tracked is None


def test_state_dict_keys_are_pytorchs():
    m = nn.InstanceNorm1d(3, affine=True, track_running_stats=True)
    assert list(m.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                    "num_batches_tracked"]
    assert to_np(m.weight).tolist() == [1, 1, 1] and to_np(m.running_var).tolist() == [1] * 3
    assert m.num_batches_tracked.dtype is E.int64
    assert list(nn.InstanceNorm3d(2, affine=True, bias=False).state_dict()) == ["weight"]


@pytest.mark.parametrize("cls,shape", [(nn.InstanceNorm1d, (2, 3, 5)),
                                       (nn.InstanceNorm2d, (2, 3, 2, 4)),
                                       (nn.InstanceNorm3d, (2, 3, 2, 2, 3))])
def test_training_updates_running_stats_eval_uses_them(cls, shape):
    m = cls(3, momentum=0.2, affine=True, track_running_stats=True, dtype=E.float64)
    with E.no_grad():
        m.weight.copy_(E.tensor([1.0, 2.0, 3.0]))
        m.bias.fill_(0.5)
    x, xn = make(shape, E.float64)
    w = np.array([1.0, 2.0, 3.0]).reshape((1, 3) + (1,) * (len(shape) - 2))
    assert_close(m(x), np_in(xn) * w + 0.5)
    axes = tuple(range(2, len(shape)))
    n = int(np.prod(shape[2:]))
    mean, var = xn.mean(axes).mean(0), (xn.var(axes) * n / (n - 1)).mean(0)
    assert_close(m.running_mean, 0.2 * mean)
    assert_close(m.running_var, 0.8 + 0.2 * var)
    assert m.num_batches_tracked.item() == 0  # PyTorch's instance norm never counts
    m.eval()
    y, yn = make(shape, E.float64, seed=5)
    rm, rv = to_np(m.running_mean), to_np(m.running_var)
    r = lambda v: v.reshape((1, 3) + (1,) * (len(shape) - 2))  # noqa: E731
    assert_close(m(y), (yn - r(rm)) / np.sqrt(r(rv) + 1e-5) * w + 0.5)
    np.testing.assert_array_equal(to_np(m.running_mean), rm)


def test_eval_without_tracking_uses_instance_stats_and_momentum_none_freezes():
    m = nn.InstanceNorm1d(3).eval()
    x, xn = make((2, 3, 4), E.float64)
    assert_close(m(x), np_in(xn))
    m2 = nn.InstanceNorm1d(3, momentum=None, track_running_stats=True, dtype=E.float64)
    m2(x)
    assert to_np(m2.running_mean).tolist() == [0, 0, 0]
    assert to_np(m2.running_var).tolist() == [1, 1, 1]


def test_unbatched_input():
    m = nn.InstanceNorm2d(3, track_running_stats=True, dtype=E.float64)
    x, xn = make((3, 2, 4), E.float64)
    out = m(x)
    assert out.shape == (3, 2, 4)
    assert_close(out, np_in(xn[None])[0])
    assert_close(m.running_mean, 0.1 * xn.mean((1, 2)))


def test_num_features_mismatch_warns_without_affine_raises_with():
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(3)(E.randn(2, 4, 5))
    with pytest.raises(ValueError, match=r"expected input's size at dim=1 to match "
                                         r"num_features \(3\), but got: 4"):
        nn.InstanceNorm1d(3, affine=True)(E.randn(2, 4, 5))


def test_errors():
    with pytest.raises(ValueError, match=r"expected 3D \(unbatched\) or 4D input \(got 2D"):
        nn.InstanceNorm2d(3)(E.zeros(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element"):
        nn.InstanceNorm1d(3)(E.zeros(2, 3, 1))


def test_load_state_dict():
    m = nn.InstanceNorm1d(3)
    with pytest.raises(RuntimeError, match=r'Unexpected running stats buffer\(s\) '
                                           r'"running_mean" and "running_var" for '
                                           r'InstanceNorm1d with track_running_stats=False'):
        m.load_state_dict({"running_mean": E.zeros(3), "running_var": E.ones(3)})
    # a checkpoint without the counter loads (PyTorch's rule for unversioned state dicts)
    t = nn.InstanceNorm1d(3, track_running_stats=True)
    t.load_state_dict({"running_mean": E.full((3,), 2.0), "running_var": E.ones(3)})
    assert to_np(t.running_mean).tolist() == [2, 2, 2] and t.num_batches_tracked.item() == 0
    src = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    with E.no_grad():
        src.weight.fill_(3.0)
    dst = nn.InstanceNorm2d(3, affine=True, track_running_stats=True)
    dst.load_state_dict(src.state_dict())
    assert to_np(dst.weight).tolist() == [3, 3, 3]


def test_gradients_through_module():
    m = nn.InstanceNorm1d(2, affine=True, dtype=E.float64)
    x = E.tensor(np.random.default_rng(0).uniform(-2, 2, (2, 2, 3)), requires_grad=True)
    assert gradcheck(lambda x, w, b: nn.functional.instance_norm(x, weight=w, bias=b),
                     (x, m.weight, m.bias))
    m(x).sum().backward()
    assert m.weight.grad.shape == (2,) and x.grad.shape == (2, 2, 3)


def test_repr():
    assert repr(nn.InstanceNorm2d(8)) == ("InstanceNorm2d(8, eps=1e-05, momentum=0.1, "
                                          "affine=False, bias=False, "
                                          "track_running_stats=False)")
    assert repr(nn.InstanceNorm1d(3, affine=True, track_running_stats=True)) == (
        "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, "
        "track_running_stats=True)")
