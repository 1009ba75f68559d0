"""Padding layers against numpy.pad, their rank checks and reprs."""
import numpy as np
import pytest
from helpers import assert_close, make

import ember as E
from ember import nn

NP_MODE = {"Reflection": "reflect", "Replication": "edge", "Circular": "wrap"}


def _widths(pad, ndim):
    """np.pad widths for torch-order (left, right, top, bottom, ...) amounts."""
    widths = [(0, 0)] * ndim
    for i in range(len(pad) // 2):
        widths[ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("kind", ["Reflection", "Replication", "Circular"])
@pytest.mark.parametrize("batched", [True, False])
def test_mode_pads_match_numpy(k, kind, batched):
    shape = ((2,) if batched else ()) + (3,) + (4,) * k
    x, xn = make(shape, E.float64)
    pad = (1, 2, 3, 0, 2, 1)[:2 * k]
    m = getattr(nn, f"{kind}Pad{k}d")(pad)
    assert_close(m(x), np.pad(xn, _widths(pad, len(shape)), NP_MODE[kind]))
    # an int pads every side by the same amount
    m = getattr(nn, f"{kind}Pad{k}d")(2)
    assert m.padding == (2,) * (2 * k)
    assert_close(m(x), np.pad(xn, _widths((2,) * (2 * k), len(shape)), NP_MODE[kind]))


@pytest.mark.parametrize("k", [1, 2, 3])
def test_constant_and_zero_pads_match_numpy(k):
    x, xn = make((2, 2, 3, 3, 3)[-(k + 1):], E.float32)
    pad = (2, 0, 1, 1, 0, 3)[:2 * k]
    widths = _widths(pad, x.ndim)
    assert_close(getattr(nn, f"ConstantPad{k}d")(pad, 1.5)(x),
                 np.pad(xn, widths, constant_values=1.5))
    assert_close(getattr(nn, f"ZeroPad{k}d")(pad)(x), np.pad(xn, widths))


def test_negative_padding_crops():
    x, xn = make((1, 2, 5), E.float64)
    assert_close(nn.ZeroPad1d((-1, 2))(x), np.pad(xn[..., 1:], [(0, 0), (0, 0), (0, 2)]))


def test_rank_checks():
    with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
        nn.CircularPad2d(1)(E.zeros(3, 3))
    with pytest.raises(ValueError, match=r"expected 4D or 5D input \(got 6D input\)"):
        nn.CircularPad3d(1)(E.zeros(1, 1, 1, 2, 2, 2))
    with pytest.raises(NotImplementedError, match="padding length 4"):
        nn.ReflectionPad2d(1)(E.zeros(3, 3))
    with pytest.raises(NotImplementedError, match="padding length 2"):
        nn.ReplicationPad1d(1)(E.zeros(3))
    assert nn.ZeroPad2d(1)(E.zeros(3, 3, 3, 3, 3)).shape == (3, 3, 3, 5, 5)


def test_gradients_flow():
    x = make((1, 2, 3), E.float64)[0].requires_grad_()
    nn.ReflectionPad1d((2, 1))(x).sum().backward()
    # reflect (2, 1) on [a, b, c] -> [c, b, a, b, c, b]: a once, b three times, c twice
    np.testing.assert_allclose(x.grad.numpy(), np.broadcast_to([1.0, 3.0, 2.0], (1, 2, 3)))


def test_repr():
    assert repr(nn.ReflectionPad2d((1, 2, 3, 4))) == "ReflectionPad2d((1, 2, 3, 4))"
    assert repr(nn.ZeroPad2d(1)) == "ZeroPad2d((1, 1, 1, 1))"
    assert repr(nn.ConstantPad3d(1, 3.5)) == \
        "ConstantPad3d(padding=(1, 1, 1, 1, 1, 1), value=3.5)"
    assert repr(nn.CircularPad1d(2)) == "CircularPad1d((2, 2))"
    assert nn.ZeroPad1d(2).value == 0.0
