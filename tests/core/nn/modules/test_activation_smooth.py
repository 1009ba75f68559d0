"""Smooth activation and gating layers: forward against numpy references, options, repr."""
import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from ember import nn


@pytest.mark.parametrize("module,ref", [
    (nn.Softplus(), lambda x: np.logaddexp(0, x)),
    (nn.Softplus(beta=2.0, threshold=1.0),
     lambda x: np.where(2 * x > 1, x, np.logaddexp(0, 2 * x) / 2)),
    (nn.Mish(), lambda x: x * np.tanh(np.logaddexp(0, x))),
    (nn.LogSigmoid(), lambda x: -np.logaddexp(0, -x)),
    (nn.Softsign(), lambda x: x / (1 + np.abs(x))),
    (nn.Tanhshrink(), lambda x: x - np.tanh(x)),
    (nn.GLU(), lambda x: x[:, :2] / (1 + np.exp(-x[:, 2:]))),
    (nn.GLU(dim=0), lambda x: x[:1] / (1 + np.exp(-x[1:]))),
    (nn.Softmin(dim=1), lambda x: np.exp(-x) / np.exp(-x).sum(1, keepdims=True)),
], ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "")
def test_forward(module, ref):
    x, xn = make((2, 4), E.float64, low=-6, high=6)
    assert_close(module(x), ref(xn))


def test_mish_inplace_and_softmin_needs_dim():
    x = E.tensor([-1.0, 2.0])
    assert nn.Mish(inplace=True)(x) is x
    assert_close(x, np.array([-1.0, 2.0]) * np.tanh(np.logaddexp(0, [-1.0, 2.0])), rtol=1e-6)
    with pytest.raises(TypeError, match="dim is required"):
        nn.Softmin()(E.zeros(2, 3))


def test_repr():
    got = [repr(m) for m in (nn.Softplus(), nn.Softplus(2.0, 5.0), nn.Mish(),
                             nn.Mish(inplace=True), nn.LogSigmoid(), nn.Softsign(),
                             nn.Tanhshrink(), nn.GLU(), nn.GLU(1), nn.Softmin(1), nn.Softmin())]
    assert got == ["Softplus(beta=1.0, threshold=20.0)", "Softplus(beta=2.0, threshold=5.0)",
                   "Mish()", "Mish(inplace=True)", "LogSigmoid()", "Softsign()",
                   "Tanhshrink()", "GLU(dim=-1)", "GLU(dim=1)", "Softmin(dim=1)",
                   "Softmin(dim=None)"]
