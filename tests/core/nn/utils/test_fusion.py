"""fuse_conv_bn_eval / fuse_linear_bn_eval: the fused layer equals layer then BatchNorm."""
import numpy as np
import pytest
from helpers import assert_close

import ember as E
from ember import nn
from ember.nn.utils import fuse_conv_bn_eval, fuse_linear_bn_eval


@pytest.fixture(autouse=True)
def seeded():
    """Fixed initial weights and power-iteration vectors: the results are deterministic."""
    E.manual_seed(0)


def trained_bn(bn, rng):
    with E.no_grad():
        bn.running_mean.copy_(E.tensor(rng.standard_normal(bn.num_features)))
        bn.running_var.copy_(E.tensor(rng.uniform(0.5, 2.0, bn.num_features)))
        if bn.weight is not None:
            bn.weight.copy_(E.tensor(rng.standard_normal(bn.num_features)))
            bn.bias.copy_(E.tensor(rng.standard_normal(bn.num_features)))
    return bn.eval()


@pytest.mark.parametrize("make, bias, affine, transpose", [
    (lambda b: nn.Conv2d(3, 4, 3, bias=b, dtype=E.float64), True, True, False),
    (lambda b: nn.Conv2d(3, 4, 3, bias=b, groups=1, dtype=E.float64), False, False, False),
    (lambda b: nn.ConvTranspose2d(3, 4, 3, bias=b, dtype=E.float64), True, True, True),
])
def test_fused_conv_matches(make, bias, affine, transpose):
    rng = np.random.default_rng(0)
    conv = make(bias).eval()
    bn = trained_bn(nn.BatchNorm2d(4, affine=affine, dtype=E.float64), rng)
    x = E.tensor(rng.standard_normal((2, 3, 6, 6)))
    fused = fuse_conv_bn_eval(conv, bn, transpose=transpose)
    assert_close(fused(x), bn(conv(x)).detach().numpy())
    assert isinstance(fused.weight, nn.Parameter) and fused.bias is not None
    assert fused is not conv and (conv.bias is None) == (not bias)


def test_fused_linear_matches():
    rng = np.random.default_rng(1)
    lin = nn.Linear(5, 3, dtype=E.float64).eval()
    bn = trained_bn(nn.BatchNorm1d(3, dtype=E.float64), rng)
    x = E.tensor(rng.standard_normal((4, 5)))
    assert_close(fuse_linear_bn_eval(lin, bn)(x), bn(lin(x)).detach().numpy())


def test_errors():
    with pytest.raises(ValueError, match="Fusion only for eval"):
        fuse_conv_bn_eval(nn.Conv2d(1, 2, 1), nn.BatchNorm2d(2).eval())
    with pytest.raises(ValueError, match="out_features must equal bn.num_features"):
        fuse_linear_bn_eval(nn.Linear(2, 3).eval(), nn.BatchNorm1d(4).eval())
