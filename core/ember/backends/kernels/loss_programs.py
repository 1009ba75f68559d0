"""Blocked-engine programs of the pointwise losses (``backends/elementwise``).

A pointwise loss chains 6-10 ufuncs; over a 1e6-element array each one is a pass through
memory. Here each loss and each gradient is one :class:`Program` run block by block (the
chain stays in cache, on ember's threads), its sum reduced in the same pass. Kernels are
compiled once per (loss, dtype, constants) and cached. The formulas are those of
``loss_fused.py`` (its docstrings give the errors).

NOTE: CPU only (the engine runs numpy arrays here); ``loss_fused.py`` keeps the plain
ufunc path for CuPy and for arrays under ``ENGINE_MIN_SIZE`` elements.
"""
from __future__ import annotations

import threading

import numpy as np

from ..elementwise import Program, compile_program
from ..elementwise.eager import ENGINE_MIN_SIZE

__all__ = ["blocked", "smooth_l1", "smooth_l1_grad", "bce_logits", "bce_logits_grad",
           "soft_margin", "soft_margin_grad", "bce", "bce_grad"]

_lock = threading.Lock()
_kernels: dict = {}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def blocked(xp, a) -> bool:
    """True when the blocked kernels apply: numpy, float32/float64, a large array."""
    return xp is np and a.dtype in _FLOATS and a.size >= ENGINE_MIN_SIZE


def _kernel(key, build):
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                kernel = _kernels[key] = compile_program(build(), np)
    return kernel


def _finish(prog, loss, reduction: str) -> None:
    """Output loss itself ('none') or its sum over every element."""
    prog.output(loss if reduction == "none" else prog.reduce("sum", loss, "all"))


def _log1p(p, v, dtype):
    """log1p(v) as log(u) * v / (u - 1), u = 1 + v (v where u == 1): Goldberg's
    compensated form (a few ulp, Goldberg 1991, thm. 4), as numpy's log is vectorized and
    its log1p is not (2-3x slower)."""
    u = p.ufunc("add", v, 1.0)
    um1 = p.ufunc("subtract", u, 1.0)
    ratio = p.ufunc("divide", v, p.where(p.ufunc("equal", um1, 0.0), 1.0, um1, dtype=dtype))
    return p.where(p.ufunc("equal", um1, 0.0), v, p.ufunc("multiply", p.ufunc("log", u),
                                                          ratio), dtype=dtype)


def _scaled_output(prog, value, g) -> None:
    prog.output(prog.ufunc("multiply", value, g))


# ---- smooth_l1 / huber: m (a - m / 2) scale / beta, m = min(|d|, beta) ----------------

def smooth_l1(x, y, reduction: str, beta: float, scale: float):
    """(loss or its sum,) of smooth_l1 (scale 1) / huber (scale = beta = delta)."""
    def build():
        p = Program("smooth_l1_loss")
        a = p.ufunc("absolute", p.ufunc("subtract", p.input(x.dtype), p.input(x.dtype)))
        m = p.ufunc("minimum", a, beta)
        half = p.ufunc("multiply", m, 0.5)
        loss = p.ufunc("multiply", p.ufunc("multiply", p.ufunc("subtract", a, half), m),
                       scale / beta)
        _finish(p, loss, reduction)
        return p
    return _kernel(("smooth_l1", x.dtype, reduction, beta, scale), build)(x, y)[0]


def smooth_l1_grad(x, y, g, beta: float, scale: float):
    """clip(x - y, -beta, beta) * scale / beta * g (g broadcasts)."""
    def build():
        p = Program("smooth_l1_backward")
        d = p.ufunc("subtract", p.input(x.dtype), p.input(x.dtype))
        c = p.ufunc("minimum", p.ufunc("maximum", d, -beta), beta)
        _scaled_output(p, p.ufunc("multiply", c, scale / beta), p.input(x.dtype))
        return p
    return _kernel(("smooth_l1_grad", x.dtype, beta, scale), build)(x, y, g)[0]


def _softplus(p, z, dtype) -> tuple:
    """Steps of softplus(z) = max(z, 0) + log1p(exp(-|z|)), which never overflows; returns
    (softplus, exp(-|z|)), the latter kept for the backward's sigmoid."""
    e = p.ufunc("exp", p.ufunc("negative", p.ufunc("absolute", z)))
    return p.ufunc("add", p.ufunc("maximum", z, 0.0), _log1p(p, e, dtype)), e


# ---- binary_cross_entropy_with_logits: (1 - y) x + softplus(-x) -------------------------

def bce_logits(x, y, reduction: str):
    """(loss or its sum, exp(-|x|))."""
    def build():
        p = Program("binary_cross_entropy_with_logits")
        xv, yv = p.input(x.dtype), p.input(x.dtype)
        sp, e = _softplus(p, p.ufunc("negative", xv), x.dtype)
        loss = p.ufunc("add", p.ufunc("multiply", p.ufunc("subtract", 1.0, yv), xv), sp)
        _finish(p, loss, reduction)
        p.output(e)
        return p
    return _kernel(("bce_logits", x.dtype, reduction), build)(x, y)


def bce_logits_grad(x, y, e, g):
    """((1 - y) - sigmoid(-x)) * g, sigmoid(-x) = where(x < 0, 1, e) / (1 + e)."""
    def build():
        p = Program("binary_cross_entropy_with_logits_backward")
        xv, yv, ev, gv = (p.input(x.dtype) for _ in range(4))
        sig = p.ufunc("divide", p.where(p.ufunc("less", xv, 0.0), 1.0, ev, dtype=x.dtype),
                      p.ufunc("add", ev, 1.0))
        _scaled_output(p, p.ufunc("subtract", p.ufunc("subtract", 1.0, yv), sig), gv)
        return p
    return _kernel(("bce_logits_grad", x.dtype), build)(x, y, e, g)[0]


# ---- soft_margin: softplus(z), z = -y x -------------------------------------------------

def soft_margin(x, y, reduction: str):
    """(loss or its sum, exp(-|z|))."""
    def build():
        p = Program("soft_margin_loss")
        z = p.ufunc("negative", p.ufunc("multiply", p.input(x.dtype), p.input(x.dtype)))
        loss, e = _softplus(p, z, x.dtype)
        _finish(p, loss, reduction)
        p.output(e)
        return p
    return _kernel(("soft_margin", x.dtype, reduction), build)(y, x)


def soft_margin_grad(x, y, e, g):
    """-y sigmoid(z) g, sigmoid(z) = where(z >= 0, 1, e) / (1 + e), z = -y x."""
    def build():
        p = Program("soft_margin_backward")
        xv, yv, ev, gv = (p.input(x.dtype) for _ in range(4))
        z = p.ufunc("negative", p.ufunc("multiply", yv, xv))
        sig = p.ufunc("divide", p.where(p.ufunc("greater_equal", z, 0.0), 1.0, ev, dtype=x.dtype),
                      p.ufunc("add", ev, 1.0))
        _scaled_output(p, p.ufunc("negative", p.ufunc("multiply", yv, sig)), gv)
        return p
    return _kernel(("soft_margin_grad", x.dtype), build)(x, y, e, g)[0]


# ---- binary_cross_entropy: -(y (lp - l1p) + l1p), logs clamped at -100 ------------------

def bce(x, y, reduction: str):
    """(loss or its sum,)."""
    def build():
        p = Program("binary_cross_entropy")
        xv, yv = p.input(x.dtype), p.input(x.dtype)
        lp = p.ufunc("maximum", p.ufunc("log", xv), -100.0)
        l1p = p.ufunc("maximum", _log1p(p, p.ufunc("negative", xv), x.dtype), -100.0)
        loss = p.ufunc("negative", p.ufunc("add", p.ufunc(
            "multiply", yv, p.ufunc("subtract", lp, l1p)), l1p))
        _finish(p, loss, reduction)
        return p
    return _kernel(("bce", x.dtype, reduction), build)(x, y)[0]


def bce_grad(x, y, g, tiny):
    """(where(p >= tiny, -y / p, 0) + where(1 - p >= tiny, (1 - y) / (1 - p), 0)) g."""
    def build():
        p = Program("binary_cross_entropy_backward")
        xv, yv, gv = (p.input(x.dtype) for _ in range(3))
        q = p.ufunc("subtract", 1.0, xv)
        t1 = p.where(p.ufunc("greater_equal", xv, tiny),
                     p.ufunc("negative", p.ufunc("divide", yv, xv)), 0.0, dtype=x.dtype)
        t2 = p.where(p.ufunc("greater_equal", q, tiny),
                     p.ufunc("divide", p.ufunc("subtract", 1.0, yv), q), 0.0,
                     dtype=x.dtype)
        _scaled_output(p, p.ufunc("add", t1, t2), gv)
        return p
    return _kernel(("bce_grad", x.dtype, float(tiny)), build)(x, y, g)[0]
