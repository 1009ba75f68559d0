"""SyncBatchNorm in one process: BatchNorm's behaviour without a process group, and
``convert_sync_batchnorm``. Its synchronised forward and backward against BatchNorm on the
full batch run on 2 ranks in ``tests/core/nn/parallel`` (``check_sync_batchnorm``)."""
from __future__ import annotations

import pytest

import ember as E
from ember import nn


def test_without_a_group_it_is_batchnorm():
    E.manual_seed(0)
    sbn, ref = nn.SyncBatchNorm(3), nn.BatchNorm2d(3)
    x = E.randn(4, 3, 2, 2, requires_grad=True)
    x2 = x.detach().clone().requires_grad_()
    (sbn(x) ** 2).sum().backward()
    (ref(x2) ** 2).sum().backward()
    E.testing.assert_close(x.grad, x2.grad)
    E.testing.assert_close(sbn.running_var, ref.running_var)
    E.testing.assert_close(sbn.weight.grad, ref.weight.grad)
    sbn.eval()
    ref.eval()
    E.testing.assert_close(sbn(x), ref(x2))
    assert sbn(E.randn(5, 3)).shape == (5, 3)            # any rank >= 2


def test_convert_shares_parameters_and_buffers():
    bn = nn.BatchNorm1d(4, affine=True).eval()
    model = nn.Sequential(nn.Linear(3, 4), nn.Sequential(bn, nn.ReLU()))
    out = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    sbn = out[1][0]
    assert out is model and type(sbn) is nn.SyncBatchNorm and not sbn.training
    assert sbn.weight is bn.weight and sbn.bias is bn.bias
    assert sbn.running_mean is bn.running_mean and sbn.num_batches_tracked is \
        bn.num_batches_tracked
    assert type(nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2d(2))) is \
        nn.SyncBatchNorm
    no_bias = nn.SyncBatchNorm.convert_sync_batchnorm(nn.BatchNorm2d(2, bias=False))
    assert no_bias.bias is None and no_bias.weight is not None


def test_bad_input():
    with pytest.raises(ValueError, match="expected at least 2D input"):
        nn.SyncBatchNorm(3)(E.zeros(3))
    with pytest.raises(ValueError, match="number of input channels should be non-zero"):
        nn.SyncBatchNorm(0)(E.zeros(2, 0))
