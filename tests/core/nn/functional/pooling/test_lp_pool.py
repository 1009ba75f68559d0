"""ember.nn.functional power-average pooling (nn/functional/pooling/lp_pool.py) against
numpy float64 window sums: lp_pool1d/2d/3d, p = inf, PyTorch's full-window scaling of
ceil_mode windows, and gradients."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import ember as E
import ember.nn.functional as F
from core.nn.functional.pooling.reference import np_avg_pool, np_lp_pool2d
from ember.autograd import gradcheck, gradgradcheck
from helpers import assert_close, make


@pytest.mark.parametrize("p, k, s", [(2, (2, 2), None), (3.0, (3, 2), (1, 2)), (1, 2, 1)])
def test_lp_pool2d_and_1d(p, k, s):
    x, xn = make((2, 3, 5, 6), E.float64, low=0.1, high=2.0)
    kk = k if isinstance(k, tuple) else (k, k)
    ss = kk if s is None else (s if isinstance(s, tuple) else (s, s))
    assert_close(F.lp_pool2d(x, p, k, s), np_lp_pool2d(xn, p, kk, ss))
    assert_close(F.lp_pool1d(x[0], p, kk[1], ss[1]),
                 np_lp_pool2d(xn[0][:, None], p, (1, kk[1]), (1, ss[1]))[:, 0])


def test_lp_pool_inf_is_max_of_abs():
    x, xn = make((1, 2, 4, 4), E.float64)
    ref = np.abs(xn).reshape(1, 2, 2, 2, 2, 2).max((3, 5))
    assert_close(F.lp_pool2d(x, float("inf"), 2), ref)


def test_lp_pool_gradients():
    x = make((1, 3, 4), E.float64, low=0.5, high=2.0)[0].requires_grad_()
    assert gradcheck(lambda x: F.lp_pool2d(x, 2, 2, 1), (x,))
    assert gradgradcheck(lambda x: F.lp_pool1d(x, 3, 2), (x,))


def np_lp_pool3d(x, p, k, s):
    *lead, d, h, w = x.shape
    out_sz = [(n - kn) // sn + 1 for n, kn, sn in zip((d, h, w), k, s)]
    out = np.empty((*lead, *out_sz))
    for o in itertools.product(*map(range, out_sz)):
        win = x[(...,) + tuple(slice(o[n] * s[n], o[n] * s[n] + k[n]) for n in range(3))]
        out[(...,) + o] = (win ** p).sum((-3, -2, -1)) ** (1 / p)
    return out


@pytest.mark.parametrize("p, k, s", [(2, (2, 2, 2), None), (3.0, (3, 2, 2), (1, 2, 1)),
                                     (1, 2, 1)])
def test_lp_pool3d(p, k, s):
    x, xn = make((2, 2, 4, 5, 6), E.float64, low=0.1, high=2.0)
    kk = k if isinstance(k, tuple) else (k,) * 3
    ss = kk if s is None else (s if isinstance(s, tuple) else (s,) * 3)
    assert_close(F.lp_pool3d(x, p, k, s), np_lp_pool3d(xn, p, kk, ss))
    assert_close(F.lp_pool3d(x[0], p, k, s), np_lp_pool3d(xn[0], p, kk, ss))


def test_lp_pool3d_inf_and_ceil_mode_scale_by_the_full_window():
    x, xn = make((1, 2, 4, 4, 4), E.float64, low=-2.0, high=2.0)
    ref = np.abs(xn).reshape(1, 2, 2, 2, 2, 2, 2, 2).max((3, 5, 7))
    assert_close(F.lp_pool3d(x, float("inf"), 2), ref)
    assert_close(F.lp_pool3d(x, -float("inf"), 2),
                 np.abs(xn).reshape(1, 2, 2, 2, 2, 2, 2, 2).min((3, 5, 7)))
    # PyTorch: avg_pool3d(x^p) (clipped windows) times kd kh kw, to the 1/p
    y, yn = make((1, 1, 3, 4, 5), E.float64, low=0.1, high=2.0)
    avg = np_avg_pool(yn ** 2, (2, 2, 2), (2, 2, 2), (0, 0, 0), True, True)
    assert_close(F.lp_pool3d(y, 2, 2, ceil_mode=True), np.sqrt(avg * 8))


def test_lp_pool3d_gradients():
    x = make((1, 1, 2, 3, 4), E.float64, low=0.5, high=2.0)[0].requires_grad_()
    assert gradcheck(lambda x: F.lp_pool3d(x, 2, (2, 2, 2), 1), (x,))
    assert gradgradcheck(lambda x: F.lp_pool3d(x, 3, (1, 2, 2)), (x,))
