"""The native im2col algorithm's arrays against a direct float64 loop reference.

The reference walks every output position and kernel offset with plain numpy products
(no strides, no GEMM lowering), for the forward and the three gradients, regular and
transposed. Every parameter is crossed: 1-3 spatial dims, stride, padding, dilation,
groups, transposed with output_padding, odd sizes, and each output_mask.
"""
from __future__ import annotations

import itertools

import ml_dtypes
import numpy as np
import pytest

import ember as E
import ember.backends.im2col as im2col
from ember.backends.convolution import Decline, make_params
from ember.backends.im2col import Im2colConvolution

SCALAR = {np.dtype(np.float64): E.float64, np.dtype(np.float32): E.float32,
          np.dtype(np.float16): E.float16, np.dtype(ml_dtypes.bfloat16): E.bfloat16}


def reference(x, w, b, gy, stride, padding, dilation, groups, transposed, output_padding):
    """(y, gx, gw, gb) in float64 by direct loops; ``gy`` of y's shape (or None)."""
    nd = x.ndim - 2
    kernel = w.shape[2:]
    n = x.shape[0]
    if transposed:   # scatter each input position into the full (uncropped) output
        c_in, c_out = x.shape[1], w.shape[1] * groups
        full = [(i - 1) * s + d * (k - 1) + 1 + o for i, s, d, k, o in
                zip(x.shape[2:], stride, dilation, kernel, output_padding)]
        size = [(i - 1) * s - 2 * p + d * (k - 1) + o + 1 for i, s, p, d, k, o in
                zip(x.shape[2:], stride, padding, dilation, kernel, output_padding)]
        crop = (slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in
                                                  zip(padding, size))
        buf = np.zeros((n, c_out, *full))
        gbuf = None
        if gy is not None:
            gbuf = np.zeros_like(buf)
            gbuf[crop] = gy
        gx, gw = np.zeros(x.shape), np.zeros(w.shape)
        ci, co = c_in // groups, c_out // groups
        for i in np.ndindex(*x.shape[2:]):
            for k in np.ndindex(*kernel):
                pos = tuple(a * s + q * d for a, s, q, d in zip(i, stride, k, dilation))
                for g in range(groups):
                    gin, gout = slice(g * ci, (g + 1) * ci), slice(g * co, (g + 1) * co)
                    wk = w[(gin, slice(None)) + k]                     # (ci, co)
                    buf[(slice(None), gout) + pos] += x[(slice(None), gin) + i] @ wk
                    if gbuf is not None:
                        go = gbuf[(slice(None), gout) + pos]
                        gx[(slice(None), gin) + i] += go @ wk.T
                        gw[(gin, slice(None)) + k] += x[(slice(None), gin) + i].T @ go
        y = buf[crop]
    else:
        c_in, c_out = x.shape[1], w.shape[0]
        xpad = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in padding])
        size = [(s + 2 * p - d * (k - 1) - 1) // q + 1 for s, p, d, k, q in
                zip(x.shape[2:], padding, dilation, kernel, stride)]
        y = np.zeros((n, c_out, *size))
        gxpad, gw = np.zeros(xpad.shape), np.zeros(w.shape)
        ci, co = c_in // groups, c_out // groups
        for o in np.ndindex(*size):
            for k in np.ndindex(*kernel):
                pos = tuple(a * s + q * d for a, s, q, d in zip(o, stride, k, dilation))
                for g in range(groups):
                    gin, gout = slice(g * ci, (g + 1) * ci), slice(g * co, (g + 1) * co)
                    wk = w[(gout, slice(None)) + k]                    # (co, ci)
                    patch = xpad[(slice(None), gin) + pos]
                    y[(slice(None), gout) + o] += patch @ wk.T
                    if gy is not None:
                        go = gy[(slice(None), gout) + o]
                        gxpad[(slice(None), gin) + pos] += go @ wk
                        gw[(gout, slice(None)) + k] += go.T @ patch
        gx = gxpad[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in
                                                       zip(padding, x.shape[2:]))]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * nd)
    gb = None if gy is None else gy.sum(axis=(0,) + tuple(range(2, gy.ndim)))
    return y, gx, gw, gb


def _case(nd, n, c_in, c_out, spatial, kernel, stride, padding, dilation, groups,
          transposed, output_padding=0, dtype=np.float64, seed=0, bias=True):
    rng = np.random.default_rng(seed)

    def tup(v):
        return tuple(v) if isinstance(v, (tuple, list)) else (v,) * nd
    spatial, kernel = tup(spatial), tup(kernel)
    wshape = (c_in, c_out // groups, *kernel) if transposed else \
        (c_out, c_in // groups, *kernel)
    x = rng.standard_normal((n, c_in, *spatial)).astype(dtype)
    w = rng.standard_normal(wshape).astype(dtype)
    b = rng.standard_normal(c_out).astype(dtype) if bias else None
    p = make_params("cpu", SCALAR[np.dtype(dtype)], x, w, b, tup(stride), tup(padding),
                    tup(dilation), transposed, tup(output_padding), groups)
    gy = rng.standard_normal(p.output_shape).astype(dtype)
    return x, w, b, gy, p


def _check(algo, x, w, b, gy, p, rtol=1e-10, atol=1e-10):
    f64 = [None if a is None else a.astype(np.float64) for a in (x, w, b, gy)]
    ry, rgx, rgw, rgb = reference(*f64, p.stride, p.padding, p.dilation, p.groups,
                                  p.transposed, p.output_padding)
    y = algo.forward(x, w, b, p)
    assert y.dtype == x.dtype and y.shape == p.output_shape
    np.testing.assert_allclose(y.astype(np.float64), ry, rtol=rtol, atol=atol)
    for mask in itertools.product((False, True), repeat=3):
        got = algo.backward(gy, x, w, p, mask)
        for want, g, r in zip(mask, got, (rgx, rgw, rgb)):
            if not want:
                assert g is None
                continue
            assert g.dtype == x.dtype and g.shape == r.shape
            np.testing.assert_allclose(g.astype(np.float64), r, rtol=rtol, atol=atol)


ALGO = Im2colConvolution(np, "cpu")
SPATIAL = {1: 7, 2: (5, 6), 3: (4, 3, 5)}
KERNEL = {1: 3, 2: (3, 2), 3: (2, 2, 3)}
GRID = [(nd, s, p, d, g, t) for nd in (1, 2, 3) for s in (1, 2) for p in (0, 1)
        for d in (1, 2) for g in (1, 2) for t in (False, True)]


@pytest.mark.parametrize("nd,stride,padding,dilation,groups,transposed", GRID)
def test_matches_reference(nd, stride, padding, dilation, groups, transposed):
    if nd == 3 and dilation == 2 and not transposed and padding == 0:
        pytest.skip("kernel larger than the input")
    _check(ALGO, *_case(nd, 2, 4, 6, SPATIAL[nd], KERNEL[nd], stride, padding, dilation,
                        groups, transposed))


@pytest.mark.parametrize("nd,stride,dilation,output_padding", [
    (1, 2, 1, 1), (1, 3, 1, 2), (2, (2, 3), 1, (1, 2)), (2, 1, 2, 1), (3, 2, (1, 2, 1), 1)])
def test_transposed_output_padding(nd, stride, dilation, output_padding):
    _check(ALGO, *_case(nd, 2, 4, 2, SPATIAL[nd], KERNEL[nd], stride, 1, dilation, 2, True,
                        output_padding))


@pytest.mark.parametrize("c_in,c_out", [(1, 8), (8, 1), (3, 3)])
@pytest.mark.parametrize("transposed", [False, True])
def test_channel_ratios_take_both_input_grad_paths(c_in, c_out, transposed):
    # NOTE: the stride-1 input gradient is a flipped-kernel convolution when C_out is not
    # much larger than C_in, else col2im; these ratios run both.
    x, w, b, gy, p = _case(2, 3, c_in, c_out, (6, 5), 3, 1, 1, 1, 1, transposed)
    plan = ALGO._plan(p)
    assert (plan.flipped is None) == (2 * plan.c_out > 3 * plan.c)
    _check(ALGO, x, w, b, gy, p)


def test_odd_sizes_per_dim_parameters_and_no_bias():
    _check(ALGO, *_case(2, 3, 6, 9, (11, 7), (4, 3), (3, 2), (2, 0), (1, 2), 3, False,
                        bias=False))
    _check(ALGO, *_case(3, 1, 2, 4, (5, 4, 3), (3, 1, 2), (2, 1, 1), (1, 0, 1), 1, 1, True,
                        bias=False))


def test_depthwise_and_pointwise():
    _check(ALGO, *_case(2, 2, 6, 12, 5, 3, 1, 1, 1, 6, False))      # depthwise x2
    _check(ALGO, *_case(1, 3, 5, 7, 9, 1, 1, 0, 1, 1, False))       # 1x1
    _check(ALGO, *_case(2, 2, 4, 4, 4, 4, 1, 0, 1, 1, False))       # kernel = input


@pytest.mark.parametrize("column_bytes,batch_inner_below", [(1, 8), (2000, 100), (2000, 0)])
def test_chunks_and_layouts(monkeypatch, column_bytes, batch_inner_below):
    # one image a chunk, chunks with a remainder, and both positions of the image axis
    monkeypatch.setattr(im2col, "COLUMN_BYTES", column_bytes)
    monkeypatch.setattr(im2col, "BATCH_INNER_BELOW", batch_inner_below)
    algo = Im2colConvolution(np, "cpu")
    for args in [(2, 5, 3, 4, (4, 5), 3, 1, 1, 1, 1, False),
                 (2, 5, 4, 2, (3, 4), 2, 2, 1, 1, 2, True, 1),
                 (1, 7, 2, 4, 6, 3, 2, 0, 2, 2, False)]:
        x, w, b, gy, p = _case(*args)
        plan = algo._plan(p)
        assert plan.nb == 1 or plan.n % plan.nb or column_bytes == 2000
        _check(algo, x, w, b, gy, p)


def test_float32_stays_float32():
    x, w, b, gy, p = _case(2, 2, 3, 4, 5, 3, 1, 1, 1, 1, False, dtype=np.float32)
    _check(ALGO, x, w, b, gy, p, rtol=1e-4, atol=1e-4)   # dtypes are asserted inside
    x, w, b, gy, p = _case(2, 2, 3, 4, 5, 3, 2, 1, 1, 1, True, 1, dtype=np.float32)
    _check(ALGO, x, w, b, gy, p, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_half_precision_computes_in_float32(dtype):
    # inputs are exactly representable; the float64 reference is then rounded once
    x, w, b, gy, p = _case(2, 2, 3, 4, 5, 3, 1, 1, 1, 1, False, dtype=dtype)
    tol = 1e-2 if dtype is np.float16 else 3e-2
    _check(ALGO, x, w, b, gy, p, rtol=tol, atol=tol)


def test_declines_integral_and_bool():
    for dtype, scalar in ((np.int64, E.int64), (np.bool_, E.bool_)):
        x, w = np.ones((1, 1, 3, 3), dtype), np.ones((1, 1, 2, 2), dtype)
        p = make_params("cpu", scalar, x, w, None, (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
        verdict = ALGO.supports(p)
        assert isinstance(verdict, Decline) and not verdict
        assert "not floating point" in verdict.reason
    x, w = np.ones((1, 1, 3, 3)), np.ones((1, 1, 2, 2))
    p = make_params("cpu", E.float64, x, w, None, (1, 1), (0, 0), (1, 1), False, (0, 0), 1)
    assert ALGO.supports(p) is True


def test_protocol_attributes():
    assert (ALGO.name, ALGO.priority, ALGO.supports_groups, ALGO.device_type) == \
        ("native_im2col", 0, True, "cpu")
