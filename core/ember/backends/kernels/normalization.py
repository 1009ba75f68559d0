"""Fused layer_norm and group_norm kernel pairs (``autograd/kernel_pair.py``).

The op-by-op composites in ``nn/functional/normalization.py`` take ~8 ops forward and
~20 backward; these kernels compute the row statistics once, save ``(mean, rstd)`` for
the backward and follow PyTorch's ``native_layer_norm`` / ``native_group_norm`` and their
``*_backward`` kernels (ATen ``layer_norm_kernel.cpp``, ``group_norm_kernel.cpp``).

Both normalize rows of a 2-D view ``(R, D)`` of the input: layer_norm's rows are the
leading dims and D the normalized ones; group_norm's rows are (sample, group) pairs and D
the group's channels times the spatial positions. Per row::

    mean = x @ full(D, 1 / D)               (a matrix-vector product)
    rstd = 1 / sqrt(sum((x - mean)**2) / D + eps)   (two passes: no cancellation)
    y = (x - mean) * rstd * weight + bias

and the backward, with ``xhat = (x - mean) * rstd`` and ``gw = grad * weight``::

    grad_input = rstd * (gw - mean(gw) - xhat * mean(gw * xhat))
    grad_weight = sum over rows of grad * xhat,  grad_bias = sum over rows of grad

float32 stays float32 (sums by BLAS dot products, SIMD lanes of sequential sums);
float16/bfloat16 are computed in float32 and rounded once; float64 in float64. Measured
against a float64 reference on normal rows (``tests/core/backends/kernels/
test_normalization.py`` checks the bounds, with margin): the float32 mean is within 3e-8
std (D = 1000) and 5e-10 std (D = 2**20) of the exact one, the variance within 2 ulps
(D <= 65536) and 27 ulps (D = 2**20); float32 outputs within 4 eps * max(|y|, 1) and
gradients within 3 eps * max|gradient| (D = 8 to 65536); float16/bfloat16 within 0.5 ulp
(one rounding). Rows with a large offset (|mean| / std = 1000) lose what float32 input
loses already: the output is within 2e-4 absolute, as PyTorch's. float32 squares the
centered values, so |x - mean| above ~1e18 overflows the variance (as PyTorch's
float32 accumulation).

Written once against ``xp``; ``vecdot`` (numpy 2) falls back to ``einsum`` elsewhere.
"""
from __future__ import annotations

import math

__all__ = ["layer_norm_forward", "layer_norm_backward", "group_norm_forward",
           "group_norm_backward"]


def _opmath(xp, dtype):
    """The computing dtype: float32 for the 16-bit floats (PyTorch's accumulation type)."""
    return xp.float32 if dtype.itemsize < 4 else dtype


def _rowdot(xp, a, b):
    """sum(a * b, axis=-1) without the product's temporary (a BLAS dot per row)."""
    vecdot = getattr(xp, "vecdot", None)
    if vecdot is not None:
        return vecdot(a, b)
    return xp.einsum("...i,...i->...", a, b)


def _centered(xp, x2, ct):
    """(x2 - mean) in the computing dtype (a fresh array), and the row means."""
    d = x2.shape[1]
    # NOTE: a matrix-vector product with 1/d: ~2x the rounding of numpy's pairwise sum
    # (3e-8 std at D = 1000), 0.4x its time, and 25x faster for short rows (D = 4)
    ones = xp.full(d, 1.0 / max(d, 1), ct)  # an empty group (C or H*W = 0): no elements
    if x2.dtype == ct:
        mean = x2 @ ones
        return x2 - mean[:, None], mean
    c = x2.astype(ct)
    mean = c @ ones
    c -= mean[:, None]
    return c, mean


def _moments(xp, x2, eps):
    """(x2 - mean, mean, rstd) of the rows of x2 (R, D), in the computing dtype."""
    c, mean = _centered(xp, x2, _opmath(xp, x2.dtype))
    d = max(x2.shape[1], 1)
    # rstd = 1 / sqrt(ss / d + eps) = sqrt(d) / sqrt(ss + d * eps): 3 calls, not 4
    var = _rowdot(xp, c, c)
    var += d * eps
    rstd = xp.sqrt(var, out=var)
    xp.divide(math.sqrt(d), rstd, out=rstd)
    return c, mean, rstd


def _contiguous(xp, a, ct):
    """(a in dtype ct, C-contiguous; whether that is a copy the caller may overwrite). An
    expanded gradient from ``sum`` has strides 0."""
    c = xp.ascontiguousarray(a, dtype=ct)
    return c, c is not a and c.base is None  # a copy, not a view of the caller's array


def _column_sum(xp, a):
    """sum(a, axis=0) of (R, D) as ones @ a: one BLAS pass (sum(0) is 60x slower at D=4)."""
    return xp.ones(a.shape[0], a.dtype) @ a


# ---- layer_norm ------------------------------------------------------------------------------

def layer_norm_forward(xp, arrays, args):
    """``(x - mean) * rstd * weight + bias`` over the trailing ``normalized_shape`` dims.

    arrays: input (*, *normalized_shape), weight and bias of normalized_shape or None, all
    of one floating dtype; args: (normalized_shape, eps). Returns (output of the input's
    shape and dtype, (mean, rstd)) with mean, rstd of shape (R,) in the computing dtype.
    Reference: ATen's native_layer_norm (LayerNormKernelImpl).
    """
    x, w, b = arrays
    shape, eps = args
    d = math.prod(shape)
    x2 = x.reshape(-1, d)
    y, mean, rstd = _moments(xp, x2, eps)
    y *= rstd[:, None]
    if w is not None:
        y *= w.reshape(d)
    if b is not None:
        y += b.reshape(d)
    y = y.reshape(x.shape)
    return (y if y.dtype == x.dtype else y.astype(x.dtype)), (mean, rstd)


def layer_norm_backward(xp, grad, arrays, saved, args, needs):
    """grad_input, grad_weight, grad_bias of layer_norm (None where not needed).

    grad: the output's gradient (input's shape, maybe with strides 0); saved: (mean, rstd)
    from :func:`layer_norm_forward`. With ``c = x - mean`` and ``gw = grad * weight``::

        grad_input = gw * rstd - c * rstd**3 * sum(gw * c) / D - rstd * sum(gw) / D
        grad_weight = rstd @ (grad * c),  grad_bias = ones @ grad

    (xhat = c * rstd is never formed: the row scale goes into the coefficients and into
    the matrix-vector product of grad_weight). Reference: ATen's
    native_layer_norm_backward (LayerNormBackwardKernelImpl), with x - mean in place of x
    (no cancellation when |mean| >> std).
    """
    x, w, b = arrays
    mean, rstd = saved
    ct = mean.dtype
    d = math.prod(args[0])
    x2 = x.reshape(-1, d)
    c = x2 - mean[:, None] if x2.dtype == ct else x2.astype(ct) - mean[:, None]
    g, owned = _contiguous(xp, grad.reshape(-1, d), ct)
    gx = gw = gb = None
    if needs[2]:
        gb = _column_sum(xp, g).reshape(b.shape).astype(b.dtype, copy=False)
    # NOTE: each fresh 4 MB array costs page faults; buffers are reused where they free up
    g_w = None if not needs[0] else g if w is None else g * w.reshape(d)
    if needs[1]:
        t = xp.multiply(g, c, out=g if owned else None)
        gw = (rstd @ t).reshape(w.shape).astype(w.dtype, copy=False)
    if needs[0]:
        k1 = _rowdot(xp, g_w, c)
        k1 *= rstd * rstd * rstd * (1.0 / d)
        k2 = g_w @ xp.full(d, 1.0 / d, ct)
        k2 *= rstd
        c *= k1[:, None]
        c += k2[:, None]
        own = w is not None or owned  # g_w is a fresh product, or our copy of grad
        dx = xp.multiply(g_w, rstd[:, None], out=g_w if own else None)
        dx -= c
        dx = dx.reshape(x.shape)
        gx = dx if dx.dtype == x.dtype else dx.astype(x.dtype)
    return gx, gw, gb


# ---- group_norm ------------------------------------------------------------------------------

def _group_view(x, groups):
    """(N, C, HW, and x as (N * groups, C / groups * HW))."""
    n, c = x.shape[:2]
    hw = math.prod(x.shape[2:])
    return n, c, hw, x.reshape(n * groups, c // groups * hw)


def _per_channel(xp, stat, n, c, groups, w):
    """A per-(sample, group) statistic (N * groups,) for each channel of its group, times
    the weight (C,) when given: (N, C)."""
    s = stat.reshape(n, groups, 1)
    if w is None:
        return xp.broadcast_to(s, (n, groups, c // groups)).reshape(n, c)
    return (s * w.reshape(groups, c // groups)).reshape(n, c)


def group_norm_forward(xp, arrays, args):
    """Group normalization of (N, C, *): statistics per (sample, group of C / groups
    channels), then ``* weight + bias`` per channel.

    arrays: input (N, C, *), weight and bias (C,) or None, one floating dtype; args:
    (num_groups, eps). Returns (output of the input's shape and dtype, (mean, rstd)) with
    mean, rstd of shape (N * num_groups,). The affine step folds rstd and weight into one
    per-(sample, channel) scale, as ATen's GroupNormKernelImpl. Reference: ATen's
    native_group_norm.
    """
    x, w, b = arrays
    groups, eps = args
    n, c, hw, x2 = _group_view(x, groups)
    y, mean, rstd = _moments(xp, x2, eps)
    y3 = y.reshape(n, c, hw)  # a view of y
    if w is None:
        y *= rstd[:, None]
    else:
        y3 *= _per_channel(xp, rstd, n, c, groups, w)[:, :, None]
    if b is not None:
        y3 += b[:, None]
    y = y.reshape(x.shape)
    return (y if y.dtype == x.dtype else y.astype(x.dtype)), (mean, rstd)


def group_norm_backward(xp, grad, arrays, saved, args, needs):
    """grad_input, grad_weight, grad_bias of group_norm (None where not needed).

    With per-(sample, channel) sums ``ds = sum(grad * (x - mean))`` and ``db =
    sum(grad)`` over the spatial positions, everything else is per (sample, group)::

        grad_input = grad * rstd * w[c] - (x - mean) * rstd**3 * sum_g(w ds) / D
                     - rstd * sum_g(w db) / D
        grad_weight = sum_n ds * rstd,  grad_bias = sum_n db

    Reference: ATen's native_group_norm_backward (GroupNormBackwardKernelImpl), with x -
    mean in place of x (no cancellation when |mean| >> std).
    """
    x, w, b = arrays
    mean, rstd = saved
    groups = args[0]
    ct = mean.dtype
    n, c, hw, x2 = _group_view(x, groups)
    cen = x2 - mean[:, None] if x2.dtype == ct else x2.astype(ct) - mean[:, None]
    g3, owned = _contiguous(xp, grad.reshape(n, c, hw), ct)
    ds = _rowdot(xp, g3, cen.reshape(n, c, hw))      # (N, C)
    db = g3 @ xp.ones(hw, ct)                        # (N, C)
    gx = gw = gb = None
    if needs[1]:
        gw = _column_sum(xp, ds * _per_channel(xp, rstd, n, c, groups, None)).astype(w.dtype)
    if needs[2]:
        gb = _column_sum(xp, db).astype(b.dtype)
    if needs[0]:
        if w is not None:
            ds, db = ds * w, db * w
        d = max(c // groups * hw, 1)
        k2 = ds.reshape(n * groups, c // groups).sum(-1)
        k2 *= rstd * rstd * rstd * (1.0 / d)
        k3 = db.reshape(n * groups, c // groups).sum(-1)
        k3 *= rstd * (1.0 / d)
        dx = xp.multiply(g3, _per_channel(xp, rstd, n, c, groups, w)[:, :, None],
                         out=g3 if owned else None)
        cen *= k2[:, None]
        cen += k3[:, None]
        dx2 = dx.reshape(cen.shape)
        dx2 -= cen
        gx = dx.reshape(x.shape)
        gx = gx if gx.dtype == x.dtype else gx.astype(x.dtype)
    return gx, gw, gb
