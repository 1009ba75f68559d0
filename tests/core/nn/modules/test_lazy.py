"""Lazy modules: each Lazy* layer before and after its first forward (parameter shapes,
the class it becomes, repr, state_dict keys), loading a state_dict into a lazy module,
errors before initialization, dtype conversion and optimizers around the dry run."""
import copy
import math
import pickle

import numpy as np
import pytest
from helpers import assert_close, to_np

import ember as E
from ember import nn
from ember.nn.parameter import is_lazy

CONVS = [  # lazy class, its plain class, args, input, weight shape, repr after
    (nn.LazyConv1d, nn.Conv1d, (6, 3), (2, 4, 7), (6, 4, 3),
     "Conv1d(4, 6, kernel_size=(3,), stride=(1,))"),
    (nn.LazyConv2d, nn.Conv2d, (6, 3), (2, 4, 5, 5), (6, 4, 3, 3),
     "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1))"),
    (nn.LazyConv3d, nn.Conv3d, (6, 2, 1, 0, 1, 2), (1, 4, 3, 3, 3), (6, 2, 2, 2, 2),
     "Conv3d(4, 6, kernel_size=(2, 2, 2), stride=(1, 1, 1), groups=2)"),
    (nn.LazyConvTranspose1d, nn.ConvTranspose1d, (6, 3), (2, 4, 7), (4, 6, 3),
     "ConvTranspose1d(4, 6, kernel_size=(3,), stride=(1,))"),
    (nn.LazyConvTranspose2d, nn.ConvTranspose2d, (6, 3, 2, 0, 0, 2), (2, 4, 5, 5),
     (4, 3, 3, 3), "ConvTranspose2d(4, 6, kernel_size=(3, 3), stride=(2, 2), groups=2)"),
    (nn.LazyConvTranspose3d, nn.ConvTranspose3d, (6, 2), (1, 4, 3, 3, 3), (4, 6, 2, 2, 2),
     "ConvTranspose3d(4, 6, kernel_size=(2, 2, 2), stride=(1, 1, 1))"),
]

NORMS = [  # lazy class, plain class, input, feature count
    (nn.LazyBatchNorm1d, nn.BatchNorm1d, (4, 3), 3),
    (nn.LazyBatchNorm1d, nn.BatchNorm1d, (4, 3, 5), 3),
    (nn.LazyBatchNorm2d, nn.BatchNorm2d, (4, 3, 2, 2), 3),
    (nn.LazyBatchNorm3d, nn.BatchNorm3d, (2, 3, 2, 2, 2), 3),
    (nn.LazyInstanceNorm1d, nn.InstanceNorm1d, (4, 3, 5), 3),
    (nn.LazyInstanceNorm1d, nn.InstanceNorm1d, (3, 5), 3),  # unbatched: C is dim 0
    (nn.LazyInstanceNorm2d, nn.InstanceNorm2d, (2, 3, 2, 2), 3),
    (nn.LazyInstanceNorm3d, nn.InstanceNorm3d, (3, 2, 2, 2), 3),
]

NORM_KEYS = ["weight", "bias", "running_mean", "running_var", "num_batches_tracked"]


def test_lazy_linear_materializes_and_becomes_linear():
    m = nn.LazyLinear(4)
    assert repr(m) == "LazyLinear(in_features=0, out_features=4, bias=True)"
    assert type(m.weight) is nn.UninitializedParameter and m.has_uninitialized_params()
    assert list(m.state_dict()) == ["weight", "bias"]
    assert all(is_lazy(v) for v in m.state_dict().values())
    x = E.randn(2, 3)
    y = m(x)
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=3, out_features=4, bias=True)"
    assert type(m.weight) is nn.Parameter and m.weight.shape == (4, 3)
    assert m.bias.shape == (4,) and m.in_features == 3
    assert not m._forward_pre_hooks and not hasattr(m, "_initialize_hook")
    bound = 1 / math.sqrt(3)  # Linear's initialisation ran
    assert np.abs(to_np(m.weight)).max() <= bound and np.abs(to_np(m.bias)).max() <= bound
    assert_close(y, to_np(x) @ to_np(m.weight).T + to_np(m.bias), E.float32)
    assert nn.LazyLinear(2, bias=False)(x).shape == (2, 2)


@pytest.mark.parametrize("lazy,plain,args,shape,wshape,after", CONVS,
                         ids=[c[0].__name__ for c in CONVS])
def test_lazy_convs(lazy, plain, args, shape, wshape, after):
    m = lazy(*args)
    assert repr(m).startswith(lazy.__name__ + "(0, 6, kernel_size=")
    assert m.in_channels == 0 and is_lazy(m.weight) and is_lazy(m.bias)
    x = E.randn(*shape)
    y = m(x)
    assert type(m) is plain and repr(m) == after
    assert m.weight.shape == wshape and m.bias.shape == (6,) and m.in_channels == 4
    ref = plain(4, *args)
    ref.load_state_dict(m.state_dict())
    assert_close(y, to_np(ref(x)), E.float32)


def test_lazy_conv_unbatched_input_and_errors():
    m = nn.LazyConv2d(2, 3)
    assert m(E.randn(5, 4, 4)).shape == (2, 2, 2) and m.in_channels == 5
    with pytest.raises(RuntimeError, match=r"Expected 3D \(unbatched\) or 4D \(batched\) "
                                           r"input to LazyConv2d, but got input of size: "
                                           r"\[4, 4\]"):
        nn.LazyConv2d(2, 3)(E.randn(4, 4))
    with pytest.raises(ValueError, match=r"in_channels \(4\) must be divisible by groups"):
        nn.LazyConv1d(3, 1, groups=3)(E.randn(1, 4, 5))
    with pytest.raises(ValueError, match=r"out_channels \(4\) must be divisible by groups"):
        nn.LazyConv1d(4, 1, groups=3)


@pytest.mark.parametrize("lazy,plain,shape,c", NORMS,
                         ids=[f"{n[0].__name__}-{len(n[2])}d" for n in NORMS])
def test_lazy_norms(lazy, plain, shape, c):
    m = lazy()
    assert repr(m).startswith(lazy.__name__ + "(0, eps=1e-05, momentum=0.1, affine=True")
    assert list(m.state_dict()) == NORM_KEYS
    assert is_lazy(m.running_mean) and m.num_batches_tracked.item() == 0
    x = E.randn(*shape)
    y = m(x)
    assert type(m) is plain and m.num_features == c
    assert repr(m) == (f"{plain.__name__}(3, eps=1e-05, momentum=0.1, affine=True, "
                       f"bias=True, track_running_stats=True)")
    assert list(m.state_dict()) == NORM_KEYS
    assert m.weight.shape == (c,) and type(m.running_var) is E.Tensor
    ref = plain(c, affine=True, track_running_stats=True)
    assert_close(y, to_np(ref(x)), E.float32)
    assert_close(m.running_mean, to_np(ref.running_mean), E.float32)  # updated once


def test_lazy_norms_without_parameters_infer_num_features():
    m = nn.LazyInstanceNorm1d(affine=False, track_running_stats=False)
    assert list(m.state_dict()) == [] and not m.has_uninitialized_params()
    m(E.randn(2, 3, 4))
    assert type(m) is nn.InstanceNorm1d and m.num_features == 3
    b = nn.LazyBatchNorm2d(affine=False, bias=False)
    assert list(b.state_dict()) == ["running_mean", "running_var", "num_batches_tracked"]
    b(E.randn(2, 3, 2, 2))
    assert b.running_mean.shape == (3,) and b.weight is None
    with pytest.raises(ValueError, match="expected 4D input"):
        nn.LazyBatchNorm2d()(E.randn(2, 3))


def test_use_before_forward_raises():
    m = nn.LazyLinear(4)
    with pytest.raises(ValueError, match="uninitialized parameter.*call the module once"):
        nn.functional.linear(E.randn(2, 3), m.weight, m.bias)
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        m.weight.shape


def test_load_state_dict_materializes():
    src = nn.Sequential(nn.Linear(3, 4), nn.Conv1d(2, 5, 3), nn.BatchNorm1d(5))
    src[2].running_mean.fill_(0.5)
    dst = nn.Sequential(nn.LazyLinear(4), nn.LazyConv1d(5, 3), nn.LazyBatchNorm1d())
    dst.load_state_dict(src.state_dict())
    assert dst[0].weight.shape == (4, 3) and type(dst[0].weight) is nn.Parameter
    assert type(dst[0]) is nn.LazyLinear  # the class changes on the first call
    for k, v in src.state_dict().items():
        np.testing.assert_array_equal(to_np(dst.state_dict()[k]), to_np(v))
    dst[0](E.randn(2, 3))
    dst[1](E.randn(2, 2, 6))
    dst[2](E.randn(2, 5))
    assert [type(m) for m in dst] == [nn.Linear, nn.Conv1d, nn.BatchNorm1d]
    assert (dst[0].in_features, dst[1].in_channels, dst[2].num_features) == (3, 2, 5)
    np.testing.assert_array_equal(to_np(dst[0].weight), to_np(src[0].weight))


def test_load_lazy_state_dict_into_lazy_module():
    m = nn.LazyLinear(4)
    result = m.load_state_dict(nn.LazyLinear(4).state_dict())
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert m.has_uninitialized_params()
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        nn.LazyLinear(4).load_state_dict({"weight": nn.UninitializedParameter()})
    with pytest.raises(RuntimeError, match="Can't access the shape"):
        nn.Linear(3, 4).load_state_dict(nn.LazyLinear(4).state_dict())


def test_to_before_dry_run_sets_dtype():
    m = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d()).double()
    assert m[0].weight.dtype is E.float64 and m[1].running_mean.dtype is E.float64
    m(E.randn(2, 5, dtype=E.float64))
    assert m[0].weight.dtype is E.float64 and m[1].running_var.dtype is E.float64
    assert m[1].num_batches_tracked.dtype is E.int64


def test_optimizer_after_dry_run_and_before():
    x = E.randn(4, 3)
    m = nn.Sequential(nn.LazyLinear(5), nn.ReLU(), nn.LazyLinear(1))
    m(x)  # the dry run, then the optimizer (PyTorch's advice)
    opt = E.optim.SGD(m.parameters(), lr=0.1)
    w0 = to_np(m[2].weight).copy()
    m(x).sum().backward()
    opt.step()
    assert not np.array_equal(to_np(m[2].weight), w0)
    # built before the dry run, it holds the same objects, materialized in place
    m2 = nn.LazyLinear(2)
    opt2 = E.optim.SGD(m2.parameters(), lr=0.1)
    m2(x).sum().backward()
    w0 = to_np(m2.weight).copy()
    opt2.step()
    assert opt2.param_groups[0]["params"][0] is m2.weight
    assert_close(m2.weight, w0 - 0.1 * to_np(m2.weight.grad), E.float32)


def test_copies_stay_lazy():
    m = nn.LazyLinear(2)
    for c in (copy.deepcopy(m), pickle.loads(pickle.dumps(m))):
        assert type(c) is nn.LazyLinear and is_lazy(c.weight) and c.weight is not m.weight
        c(E.randn(1, 3))
        assert type(c) is nn.Linear and c.weight.shape == (2, 3)
    assert is_lazy(m.weight)


def test_not_fully_initialized_raises():
    class Half(nn.LazyModuleMixin, nn.Linear):
        def initialize_parameters(self, input):
            pass

        def reset_parameters(self):
            pass

    m = Half(0, 0)
    m.weight = nn.UninitializedParameter()
    with pytest.raises(RuntimeError, match="module Half has not been fully initialized"):
        m(E.randn(2, 3))
