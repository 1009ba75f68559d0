"""Conv1d/2d/3d and ConvTranspose1d/2d: parameter shapes, default init, padding handling
('same', 'valid', padding modes), forward against a direct numpy reference, gradients."""
import math

import numpy as np
import pytest
from helpers import assert_close, make, to_np

import ember as E
from ember import nn


def np_conv(x, w, b, stride, pads, dil, groups):
    """Direct convolution; ``pads`` is a list of (lo, hi) per spatial dim."""
    n = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + list(pads))
    N, C = x.shape[:2]
    O, k = w.shape[0], w.shape[2:]
    cg, og = C // groups, O // groups
    out_sp = [(xp.shape[2 + d] - dil[d] * (k[d] - 1) - 1) // stride[d] + 1 for d in range(n)]
    out = np.zeros((N, O, *out_sp))
    for idx in np.ndindex(*out_sp):
        for kidx in np.ndindex(*k):
            pos = tuple(idx[d] * stride[d] + kidx[d] * dil[d] for d in range(n))
            patch = xp[(slice(None), slice(None)) + pos]
            for g in range(groups):
                o = slice(g * og, (g + 1) * og)
                out[(slice(None), o) + idx] += \
                    patch[:, g * cg:(g + 1) * cg] @ w[(o, slice(None)) + kidx].T
    return out if b is None else out + b.reshape(1, -1, *[1] * n)


def np_conv_transpose(x, w, b, stride, pad, out_pad, dil, groups):
    n = x.ndim - 2
    N, C = x.shape[:2]
    og, k, cg = w.shape[1], w.shape[2:], C // groups
    full = [(x.shape[2 + d] - 1) * stride[d] + dil[d] * (k[d] - 1) + 1 + out_pad[d]
            for d in range(n)]
    out = np.zeros((N, og * groups, *full))
    for idx in np.ndindex(*x.shape[2:]):
        for kidx in np.ndindex(*k):
            pos = tuple(idx[d] * stride[d] + kidx[d] * dil[d] for d in range(n))
            for g in range(groups):
                c = slice(g * cg, (g + 1) * cg)
                out[(slice(None), slice(g * og, (g + 1) * og)) + pos] += \
                    x[(slice(None), c) + idx] @ w[(c, slice(None)) + kidx]
    out = out[(slice(None), slice(None)) + tuple(slice(pad[d], full[d] - pad[d])
                                                 for d in range(n))]
    return out if b is None else out + b.reshape(1, -1, *[1] * n)


def params(m):
    return to_np(m.weight).astype(np.float64), \
        None if m.bias is None else to_np(m.bias).astype(np.float64)


def test_parameter_shapes():
    assert nn.Conv2d(4, 6, 3, groups=2).weight.shape == (6, 2, 3, 3)
    assert nn.Conv1d(3, 5, 4).weight.shape == (5, 3, 4)
    assert nn.Conv3d(2, 4, (1, 2, 3)).weight.shape == (4, 2, 1, 2, 3)
    assert nn.ConvTranspose2d(4, 6, 3, groups=2).weight.shape == (4, 3, 3, 3)
    assert nn.Conv2d(4, 6, 3).bias.shape == (6,)
    assert nn.Conv2d(4, 6, 3, bias=False).bias is None


def test_default_init_bounds():
    E.manual_seed(0)
    m = nn.Conv2d(16, 64, 3)
    bound = 1 / math.sqrt(16 * 9)
    w, b = params(m)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.99 * bound
    assert np.abs(b).max() <= bound


def test_repr():
    assert repr(nn.Conv2d(1, 8, 3, padding=1)) == \
        "Conv2d(1, 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    assert repr(nn.Conv2d(1, 2, (3, 5), stride=2, padding=1, dilation=2, bias=False)) == \
        ("Conv2d(1, 2, kernel_size=(3, 5), stride=(2, 2), padding=(1, 1), dilation=(2, 2), "
         "bias=False)")
    assert repr(nn.Conv1d(2, 2, 3, padding="same", groups=2, padding_mode="reflect")) == \
        "Conv1d(2, 2, kernel_size=(3,), stride=(1,), padding=same, groups=2, " \
        "padding_mode=reflect)"
    assert repr(nn.ConvTranspose2d(2, 4, 3, stride=2, output_padding=1)) == \
        "ConvTranspose2d(2, 4, kernel_size=(3, 3), stride=(2, 2), output_padding=(1, 1))"


def test_constructor_errors():
    with pytest.raises(ValueError, match="divisible by groups"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match="groups must be a positive"):
        nn.Conv2d(3, 3, 3, groups=0)
    with pytest.raises(ValueError, match="padding_mode"):
        nn.Conv2d(3, 3, 3, padding_mode="mirror")
    with pytest.raises(ValueError, match="strided"):
        nn.Conv2d(3, 3, 3, stride=2, padding="same")
    with pytest.raises(ValueError, match="invalid padding string"):
        nn.Conv2d(3, 3, 3, padding="full")
    with pytest.raises(ValueError, match="zeros"):
        nn.ConvTranspose2d(3, 3, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="kernel_size"):
        nn.Conv2d(3, 3, (3, 3, 3))


@pytest.mark.parametrize("kw", [
    dict(),
    dict(stride=2, padding=1),
    dict(padding=(1, 2), dilation=(2, 1)),
    dict(groups=2, bias=False),
])
def test_conv2d_forward_matches_numpy(kw):
    m = nn.Conv2d(4, 6, (3, 2), dtype=E.float64, **kw)
    x, xn = make((2, 4, 7, 6), E.float64)
    w, b = params(m)
    pad = kw.get("padding", 0)
    pad = (pad, pad) if isinstance(pad, int) else pad
    ref = np_conv(xn, w, b, m.stride, [(p, p) for p in pad], m.dilation, m.groups)
    assert_close(m(x), ref)


def test_conv1d_and_conv3d_forward():
    m1 = nn.Conv1d(2, 3, 3, stride=2, padding=1, dtype=E.float64)
    x, xn = make((2, 2, 9), E.float64)
    assert_close(m1(x), np_conv(xn, *params(m1), (2,), [(1, 1)], (1,), 1))
    m3 = nn.Conv3d(2, 2, 2, dtype=E.float64)
    x, xn = make((1, 2, 3, 3, 3), E.float64)
    assert_close(m3(x), np_conv(xn, *params(m3), (1,) * 3, [(0, 0)] * 3, (1,) * 3, 1))


@pytest.mark.parametrize("k,dil", [(3, 1), (4, 1), (2, 3), ((3, 4), (1, 2))])
def test_padding_same_keeps_size(k, dil):
    m = nn.Conv2d(2, 3, k, padding="same", dilation=dil, dtype=E.float64)
    x, xn = make((1, 2, 6, 5), E.float64)
    out = m(x)
    assert out.shape == (1, 3, 6, 5)
    pads = []
    for d in range(2):
        total = m.dilation[d] * (m.kernel_size[d] - 1)
        pads.append((total // 2, total - total // 2))  # the extra element goes right
    assert_close(out, np_conv(xn, *params(m), (1, 1), pads, m.dilation, 1))


def test_padding_valid():
    m = nn.Conv2d(2, 3, 3, padding="valid", dtype=E.float64)
    x, xn = make((1, 2, 5, 5), E.float64)
    assert_close(m(x), np_conv(xn, *params(m), (1, 1), [(0, 0)] * 2, (1, 1), 1))


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"),
                                          ("circular", "wrap")])
def test_padding_modes(mode, np_mode):
    m = nn.Conv2d(2, 2, 3, padding=(1, 2), padding_mode=mode, dtype=E.float64)
    x, xn = make((1, 2, 5, 6), E.float64)
    xp = np.pad(xn, [(0, 0), (0, 0), (1, 1), (2, 2)], mode=np_mode)
    assert_close(m(x), np_conv(xp, *params(m), (1, 1), [(0, 0)] * 2, (1, 1), 1))


@pytest.mark.parametrize("kw", [dict(), dict(stride=2, padding=1, output_padding=1),
                                dict(groups=2, dilation=2)])
def test_conv_transpose2d_matches_numpy(kw):
    m = nn.ConvTranspose2d(4, 6, 3, dtype=E.float64, **kw)
    x, xn = make((2, 4, 4, 3), E.float64)
    ref = np_conv_transpose(xn, *params(m), m.stride, m.padding, m.output_padding,
                            m.dilation, m.groups)
    assert_close(m(x), ref)


def test_conv_transpose1d_and_output_size():
    m = nn.ConvTranspose1d(2, 3, 3, stride=2, padding=1, dtype=E.float64)
    x, xn = make((1, 2, 5), E.float64)
    assert m(x).shape == (1, 3, 9)
    out = m(x, output_size=[10])
    assert out.shape == (1, 3, 10)
    assert_close(out, np_conv_transpose(xn, *params(m), (2,), (1,), (1,), (1,), 1))
    assert m(x, output_size=(1, 3, 10)).shape == (1, 3, 10)
    with pytest.raises(ValueError, match="valid sizes range"):
        m(x, output_size=[12])


def test_gradients_reach_parameters():
    m = nn.Conv2d(2, 3, 3, padding=1, dtype=E.float64)
    x, _ = make((2, 2, 4, 4), E.float64)
    m(x).sum().backward()
    assert m.weight.grad.shape == (3, 2, 3, 3)
    assert_close(m.bias.grad, np.full(3, 2 * 16.0))
    small = nn.Conv2d(1, 2, 2, padding="same", padding_mode="reflect", dtype=E.float64)
    xs, _ = make((1, 1, 3, 3), E.float64)
    assert E.autograd.gradcheck(lambda x, w, b: small._conv_forward(x, w, b),
                                (xs.requires_grad_(), small.weight, small.bias))
