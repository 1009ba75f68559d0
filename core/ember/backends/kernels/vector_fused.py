"""Fused kernel pairs of two vector ops, ``linalg.cross`` and ``cosine_similarity``, for
``autograd/kernel_pair.py`` (``forward(xp, arrays, args) -> (out, state)``,
``backward(xp, grad, arrays, state, args, needs) -> grads``), written once over ``xp``.

Their composites took 7-10 ember ops (rolls, norms, clamps) where PyTorch runs one native
kernel; the op-by-op composites stay the reference for higher derivatives.

* cross: (a x b)_i = a_(i+1) b_(i+2) - a_(i+2) b_(i+1) along ``dim`` (size 3), gathered
  with ``take``; its gradients are cross products again: ga = b x g, gb = g x a.
* cosine_similarity: sum((x1 / n1) (x2 / n2)) with n = max(||x||, eps), ATen's order (each
  input divided by its own norm, so |result| <= 1 up to rounding), and ATen's gradient
  (the clamp does not cut it): g1 = g (x2 / (n1 n2) - cos x1 / (n1 ||x1||)), 0 for the
  second term where ||x1|| = 0.

Inputs arrive broadcast to one shape and one dtype (the composites expand them).
float16/bfloat16 compute in float32 and round once; float32 and float64 in their own
dtype: cross is exact up to the one rounding of each product and the difference (within
1 ulp of max |a_j b_k|), cosine within 4 ulp of 1 against a float64 reference.
"""
from __future__ import annotations

import numpy as np

from .reduction import LOW_FLOATS

_NEXT, _AFTER = np.array([1, 2, 0]), np.array([2, 0, 1])


def _compute(xp, a):
    return a.astype(xp.float32) if a.dtype in LOW_FLOATS else a


def _cross(xp, a, b, d):
    # NOTE: a[..., idx] gathers ~4x faster than xp.take(a, idx, axis) on numpy
    head = (slice(None),) * d
    i1, i2 = head + (xp.asarray(_NEXT),), head + (xp.asarray(_AFTER),)
    r = a[i1] * b[i2]
    r -= a[i2] * b[i1]
    return r


def cross_forward(xp, arrays, args):
    a, b = arrays
    (d,) = args
    return _cross(xp, _compute(xp, a), _compute(xp, b), d).astype(a.dtype, copy=False), None


def cross_backward(xp, grad, arrays, state, args, needs):
    a, b = arrays
    (d,) = args
    g = _compute(xp, grad)
    ga = _cross(xp, _compute(xp, b), g, d).astype(a.dtype, copy=False) if needs[0] else None
    gb = _cross(xp, g, _compute(xp, a), d).astype(b.dtype, copy=False) if needs[1] else None
    return ga, gb


def cosine_forward(xp, arrays, args):
    x1, x2 = arrays
    dim, eps = args
    c1, c2 = _compute(xp, x1), _compute(xp, x2)
    n1 = xp.sqrt((c1 * c1).sum(dim, keepdims=True))
    n2 = xp.sqrt((c2 * c2).sum(dim, keepdims=True))
    m1, m2 = xp.maximum(n1, eps), xp.maximum(n2, eps)
    cos = ((c1 / m1) * (c2 / m2)).sum(dim, keepdims=True)
    return xp.squeeze(cos, dim).astype(x1.dtype, copy=False), (n1, n2, m1, m2, cos)


def cosine_backward(xp, grad, arrays, state, args, needs):
    x1, x2 = arrays
    dim, _ = args
    n1, n2, m1, m2, cos = state
    c1, c2 = _compute(xp, x1), _compute(xp, x2)
    g = xp.expand_dims(_compute(xp, grad), dim)
    gm = g / (m1 * m2)
    out = []
    for need, x, y, n, m in ((needs[0], c1, c2, n1, m1), (needs[1], c2, c1, n2, m2)):
        if not need:
            out.append(None)
            continue
        pull = xp.where(n > 0, g * cos / (m * xp.where(n > 0, n, 1)), 0)
        out.append((gm * y - pull * x).astype(x1.dtype, copy=False))
    return tuple(out)
