"""Activation kernels (``torch.nn.functional``), one kernel each: the piecewise
leaky_relu, hardtanh, threshold, hardswish, hardsigmoid, softshrink and hardshrink, and the
smooth elu, selu, celu, softplus, log_sigmoid and mish.

Each is a few SIMD passes (``clip``, ``maximum``, a multiply) and a branch-free select
(``blend``) where a mask is unavoidable: numpy's ``where`` branches per element and costs
~10x a pass on the unpredictable masks activations see. float16/bfloat16 compute in
float32 and round once (PyTorch's opmath); the formulas need no wider type, so float32
stays float32. Errors against a float64 evaluation of PyTorch's formula, rounded to the
input's dtype: leaky_relu and hardsigmoid <= 1 ulp (the slope, 1/6, rounded to the dtype,
as in PyTorch), hardswish <= 2 ulp (``x * ((x + 3) / 6)`` rounds twice), the others exact.

The smooth ones avoid numpy's ``expm1`` and ``log1p``, whose float32 loops are scalar
(~15 ns an element, 6x ``exp``): ``expm1(x) = 2 t / (1 - t)`` with ``t = tanh(x / 2)``,
for x <= 0 where ``1 - t`` is in [1, 2] and cannot cancel (<= 3 ulp in float32), and
``log1p(u) = log(1 + u) * u / ((1 + u) - 1)`` (Goldberg, 1991; Hewlett-Packard's HP-15C
manual), exact where ``1 + u`` rounds to 1 (<= 3 ulp). float64 keeps numpy's ``expm1``
and ``log1p``. Measured against float64 references over 3e5 float32 inputs, special
values included (subnormal results: within the smallest normal, absolutely): elu/selu/celu
<= 3 ulp, softplus, log_sigmoid <= 4 ulp, mish <= 5 ulp for x > -87 (below, x times
a subnormal exp(x): <= 10 ulp)
(tests/core/backends/kernels/test_activation.py).

Their derivatives are the formulas of ``derivatives.yaml`` (ember ops, so double backward
records); PyTorch's ``*_backward`` kernels compute the same masks.

Written once against ``xp``: ``blend`` falls back to ``xp.where`` off numpy; the
identities are plain ufuncs, so CuPy computes the same formulas.
Reference: PyTorch's ``aten/src/ATen/native/cpu/Activation.cpp``.
"""
from __future__ import annotations

import math

import ml_dtypes
import numpy as np  # dtype facts only; arrays go through xp

from .pointwise import blend, opmath, scalar_to

# Self-normalizing constants (Klambauer et al., 2017), as in PyTorch's selu.
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946
_FLOATS = frozenset(np.dtype(d) for d in (np.float16, ml_dtypes.bfloat16, np.float32,
                                          np.float64))


def _floating(op: str, a) -> None:
    if a.dtype not in _FLOATS:
        raise NotImplementedError(f"{op}: expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {a.dtype}; convert it first, "
                                  f"e.g. x.float()")


#: below this many elements maximum/minimum bound an array: numpy's clip costs ~10 us of
#: Python wrapper a call; above, clip's one SIMD pass beats their strided loop on a 0-d bound
_CLIP_MIN_SIZE = 4096


def kernels(xp) -> dict:
    def _clip(x, lo, hi):
        """x bounded to [lo, hi] (Python numbers, +-inf for none) into a new array, an
        array even for 0-d x; NaN stays NaN."""
        out = xp.empty_like(x)
        lo, hi = scalar_to(lo, x.dtype), scalar_to(hi, x.dtype)
        if x.size >= _CLIP_MIN_SIZE:
            return xp.clip(x, lo, hi, out=out)
        if hi == math.inf:
            return xp.maximum(x, lo, out=out)
        if lo == -math.inf:
            return xp.minimum(x, hi, out=out)
        return xp.minimum(xp.maximum(x, lo, out=out), hi, out=out)

    def _leaky_relu(a, slope):
        s = scalar_to(slope, a.dtype)
        if 0 < slope <= 1:  # max(x, s x): x where x > 0, s x elsewhere (NaN and -0.0 too)
            return xp.maximum(a, a * s)
        return blend(xp, a > 0, a, a * s)

    _leaky_relu = opmath(xp, _leaky_relu)

    def leaky_relu(a, negative_slope):
        _floating("leaky_relu", a)
        return _leaky_relu(a, negative_slope)

    def hardtanh(a, min_val, max_val):
        if min_val > max_val:
            raise ValueError(f"hardtanh: min_val ({min_val}) cannot be greater than max_val "
                             f"({max_val})")
        if a.dtype.kind == "b":
            raise RuntimeError("hardtanh: bool inputs are not supported; convert them first, "
                               "e.g. x.float()")
        if a.dtype.kind in "iu":  # integral inputs stay integral, as PyTorch's clamp
            return xp.clip(a, scalar_to(int(min_val), a.dtype, "hardtanh"),
                           scalar_to(int(max_val), a.dtype, "hardtanh"))
        # NOTE: in float32 for float16/bfloat16: bounds past their range clip nothing
        return _hardtanh_float(a, min_val, max_val)

    _hardtanh_float = opmath(xp, lambda x, lo, hi: _clip(x, lo, hi))

    def threshold(a, th, value):
        if a.dtype.kind == "b":
            raise NotImplementedError("threshold: bool inputs are not supported; convert "
                                      "them first, e.g. x.float()")
        # x <= th, not x > th: NaN stays NaN; value is cast to x's dtype (ints stay ints)
        mask = a <= th
        # a value out of the dtype's range raises, as PyTorch (never wraps)
        return blend(xp, mask, scalar_to(value, a.dtype, "threshold"), a)

    def _hardswish(x):
        # x * hardsigmoid(x), with x clamped below at -3 so -inf gives -0.0 (PyTorch's
        # formula gives NaN there); hardsigmoid(x) is exactly 1 from x = 3, so the product
        # never overflows (PyTorch's x * 6 does past 5.7e37): 5 passes
        h = _hardsigmoid(x)
        return xp.multiply(xp.maximum(x, x.dtype.type(-3)), h, out=h)

    def hardswish(a):
        _floating("hardswish", a)
        return _hardswish_op(a)

    def _hardsigmoid(x):
        # PyTorch's min(max(x + 3, 0), 6) / 6: 3 passes into one buffer (an array even
        # when x is 0-d, where ufuncs would return scalars); x + 3 is exact near -3, where
        # x / 6 + 1/2 would cancel
        t = _clip(xp.add(x, x.dtype.type(3)), 0, 6)
        return xp.divide(t, x.dtype.type(6), out=t)

    _hardswish_op, _hardsigmoid_op = opmath(xp, _hardswish), opmath(xp, _hardsigmoid)

    def hardsigmoid(a):
        _floating("hardsigmoid", a)
        return _hardsigmoid_op(a)

    def _softshrink(x, lambd):
        # x - clamp(x, -lambd, lambd): 0 in the band, x -+ lambd outside, NaN stays NaN
        b = _clip(x, -lambd, lambd)
        return xp.subtract(x, b, out=b)

    _softshrink_op = opmath(xp, _softshrink)

    def softshrink(a, lambd):
        _floating("softshrink", a)
        if lambd < 0:
            raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
        return _softshrink_op(a, lambd)

    def hardshrink(a, lambd):
        _floating("hardshrink", a)
        # NOTE: no check of lambd: PyTorch's hardshrink with lambd < 0 is the identity;
        # NaN is outside the band, so it stays NaN
        return blend(xp, xp.abs(a) <= scalar_to(lambd, a.dtype), a.dtype.type(0), a)

    # ---- smooth: elu family, softplus, log_sigmoid, mish ------------------------------------
    f32 = np.dtype(np.float32)

    def _expm1_nonpositive(x):
        """expm1 of ``x <= 0`` (NaN passes) into a new array: the tanh identity above in
        float32, numpy's expm1 otherwise."""
        if x.dtype != f32:
            return xp.expm1(x)
        t = xp.multiply(x, x.dtype.type(0.5), out=xp.empty_like(x))
        xp.tanh(t, out=t)
        d = xp.subtract(x.dtype.type(1), t, out=xp.empty_like(t))
        xp.add(t, t, out=t)
        return xp.divide(t, d, out=t)

    def _log1p_unit(u):
        """log1p of ``u`` in [0, inf] (an array the caller owns; overwritten) into a new
        array: Goldberg's identity in float32, numpy's log1p otherwise."""
        if u.dtype != f32:
            return xp.log1p(u, out=u)
        w = xp.add(u, u.dtype.type(1), out=xp.empty_like(u))
        d = xp.subtract(w, u.dtype.type(1), out=xp.empty_like(u))
        tiny = d == 0                    # 1 + u rounded to 1: log1p(u) = u to float32
        xp.log(w, out=w)
        xp.divide(u, d, out=d)           # u / 0 where tiny: dropped by the blend below
        xp.fmin(d, u.dtype.type(2), out=d)  # u = inf: inf / inf is NaN, and log1p(inf) = inf
        xp.multiply(w, d, out=w)
        return blend(xp, tiny, u, w)


    def _elu_kernel(x, alpha, scale, input_scale):
        """PyTorch's elu: ``x * scale`` where x > 0, else ``alpha * scale * expm1(x *
        input_scale)``."""
        xm = _clip(x, -math.inf, 0)
        if input_scale != 1:
            xp.multiply(xm, x.dtype.type(input_scale), out=xm)
        # NOTE: a negative input_scale (celu with alpha < 0) makes expm1's argument >= 0,
        # where the tanh identity cancels: numpy's expm1 then
        r = _expm1_nonpositive(xm) if input_scale > 0 else xp.expm1(xm, out=xm)
        xp.multiply(r, x.dtype.type(alpha * scale), out=r)
        pos = _clip(x, 0, math.inf)
        if scale != 1:
            xp.multiply(pos, x.dtype.type(scale), out=pos)
        # x > 0: pos + 0 (r's argument is 0); x <= 0: 0 + r; NaN: NaN
        return xp.add(pos, r, out=pos)

    _elu_op = opmath(xp, _elu_kernel)

    def elu(a, alpha):
        _floating("elu", a)
        return _elu_op(a, alpha, 1.0, 1.0)

    def selu(a):
        _floating("selu", a)
        return _elu_op(a, SELU_ALPHA, SELU_SCALE, 1.0)

    def celu(a, alpha):
        _floating("celu", a)
        if alpha == 0:
            raise ValueError("celu: alpha cannot be 0 (the negative part is alpha * (exp(x / "
                             "alpha) - 1)); pass a non-zero alpha, e.g. 1.0")
        return _elu_op(a, alpha, 1.0, 1.0 / alpha)

    def _softplus(x, beta, threshold):
        # log1p(exp(z)) / beta with z = beta x, and x where z > threshold (PyTorch's
        # formula); exp sees min(z, threshold), so the dropped branch never overflows
        z = xp.multiply(x, x.dtype.type(beta), out=xp.empty_like(x))
        big = z > threshold
        u = _clip(z, -math.inf, threshold)
        xp.exp(u, out=u)
        r = _log1p_unit(u)
        if beta != 1:
            xp.divide(r, x.dtype.type(beta), out=r)
        return blend(xp, big, x, r)

    _softplus_op = opmath(xp, _softplus)

    def softplus(a, beta, threshold):
        _floating("softplus", a)
        return _softplus_op(a, beta, threshold)

    def _log_sigmoid(x):
        # min(x, 0) - log1p(exp(-|x|)): never overflows (PyTorch's log_sigmoid_forward)
        u = xp.abs(x, out=xp.empty_like(x))
        xp.negative(u, out=u)
        tail = _log1p_unit(xp.exp(u, out=u))
        return xp.subtract(_clip(x, -math.inf, 0), tail, out=tail)

    _log_sigmoid_op = opmath(xp, _log_sigmoid)

    def log_sigmoid(a):
        _floating("logsigmoid", a)
        return _log_sigmoid_op(a)

    def _mish(x):
        t = _softplus(x, 1, 20)
        xp.tanh(t, out=t)
        return xp.multiply(x, t, out=t)

    _mish_op = opmath(xp, _mish)

    def mish(a):
        _floating("mish", a)
        return _mish_op(a)

    return {"elu": elu, "selu": selu, "celu": celu, "softplus": softplus,
            "log_sigmoid": log_sigmoid, "mish": mish,
            "leaky_relu": leaky_relu, "hardtanh": hardtanh, "threshold": threshold,
            "hardswish": hardswish, "hardsigmoid": hardsigmoid, "softshrink": softshrink,
            "hardshrink": hardshrink}
