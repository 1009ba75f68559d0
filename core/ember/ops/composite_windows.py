"""Signal windows (``dispatch: composite`` factories): hann_window, hamming_window,
blackman_window, bartlett_window, kaiser_window, as torch.*_window.

A window of length N is w[k] for k = 0..N-1 of the symmetric formula over M points
(M = N, or N + 1 with ``periodic=True``, PyTorch's default, then the last point dropped:
the window tiles without repeating its end, which is what an STFT wants). Lengths 0 and 1
give [] and [1]. Values are computed in float64 and rounded once to ``dtype`` (PyTorch
computes in ``dtype`` itself, so float16/float32 results may differ in the last bit).
Formulas: Harris 1978 (hann, hamming, blackman, bartlett); Kaiser & Schafer 1980.
Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

import math

import ember as E

from ..errors import DtypeError
from ..types import from_numpy_dtype
from .composite import composite


def _window(op: str, n: int, periodic: bool, dtype, device, requires_grad, formula):
    """formula(k, m): the symmetric window over m points at float64 positions k."""
    if n < 0:
        raise ValueError(f"{op}(): requires a non-negative window_length, got {n}")
    # the wrapper hands dtype over as the numpy dtype kernels take
    dtype = E.get_default_dtype() if dtype is None else from_numpy_dtype(dtype)
    if not dtype.is_floating_point:
        raise DtypeError(f"{op}(): expects a floating point dtype, got {dtype}; pass e.g. "
                         f"dtype=ember.float32")
    if n <= 1:
        w = E.ones(n, dtype=dtype, device=device)
    else:
        m = n + 1 if periodic else n
        k = E.arange(m, dtype=E.float64, device=device)
        w = formula(k, m).narrow(0, 0, n).to(dtype)
    return w.requires_grad_(True) if requires_grad else w


def _cosines(alpha: float, beta: float, gamma: float = 0.0):
    """alpha - beta cos(2 pi k / (m - 1)) + gamma cos(4 pi k / (m - 1))."""
    def formula(k, m):
        t = k * (2 * math.pi / (m - 1))
        w = alpha - beta * t.cos()
        return w + gamma * (2 * t).cos() if gamma else w
    return formula


@composite("hann_window")
def hann_window(window_length, periodic=True, dtype=None, device=None, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.5, 0.5))


@composite("hamming_window")
def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, dtype=None,
                   device=None, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(alpha, beta))


@composite("blackman_window")
def blackman_window(window_length, periodic=True, dtype=None, device=None,
                    requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosines(0.42, 0.5, 0.08))


@composite("bartlett_window")
def bartlett_window(window_length, periodic=True, dtype=None, device=None,
                    requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda k, m: 1 - (k * (2 / (m - 1)) - 1).abs())


@composite("kaiser_window")
def kaiser_window(window_length, periodic=True, beta=12.0, dtype=None, device=None,
                  requires_grad=False):
    def formula(k, m):
        half = (m - 1) / 2
        r = (1 - ((k - half) / half) ** 2).clamp(min=0)  # rounding may dip below 0 at ends
        return E.i0(beta * r.sqrt()) / E.i0(E.tensor(beta, dtype=E.float64, device=k.device))
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   formula)
