"""When an nnpack algorithm is faster than the next choice: the measured crossovers.

``crossover(name, params)`` is asked only after ``fits(params)`` held. Its rules encode
measurements on the development machine (2-core AMD EPYC, OpenBLAS 0.3.31, numpy 2.x;
``python benchmarks/bench_nnpack_crossover.py`` re-measures them), each with its figures
in a comment. ``using(name)`` lets one algorithm alone accept every call it fits,
ignoring these rules: for tests, benchmarks and ``nnpack_spatial_convolution``.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

from ember.backends.convolution import ConvParams, Decline

__all__ = ["crossover", "forced_algorithm", "using"]

_forced = threading.local()


def forced_algorithm() -> str | None:
    """The name given to the innermost active ``using(...)`` on this thread, or None."""
    return getattr(_forced, "name", None)


@contextmanager
def using(name: str):
    """Within the block (this thread only), only the nnpack algorithm ``name`` accepts,
    wherever it fits, regardless of the crossover; the others decline.

    Raises ValueError for an unknown name, listing the known ones.
    """
    from .algorithm import ALGORITHMS
    names = [a.name for a in ALGORITHMS]
    if name not in names:
        raise ValueError(f"using({name!r}): expected one of {names}")
    previous = forced_algorithm()
    _forced.name = name
    try:
        yield
    finally:
        _forced.name = previous


def crossover(name: str, params: ConvParams):
    """True where ``name`` is expected to beat its alternatives on ``params`` (one
    group's shape is what counts), else a ``Decline`` with the measured reason."""
    p = params.per_group() if params.groups > 1 else params
    n, c, h, w = p.input_shape
    k = p.weight_shape[0]
    oh, ow = p.output_shape[2:]
    rule = _RULES.get(name)
    return True if rule is None else rule(n, c, k, h, w, oh, ow, p)


# Measured with ``python benchmarks/bench_nnpack_crossover.py winograd`` (forward +
# backward, float32, algorithm / im2col): at C = K <= 32 Winograd loses almost everywhere
# (N=16: 1.05-1.9x; N=64, C=K=16: 0.95-1.35x), at C = K = 64 it wins (N=64: 0.62-0.87x for
# F(4x4); N=16: 0.77-0.90x, with 14x14 at 1.0-1.2x). Its transforms are memory passes
# whose cost does not shrink with C, so only wide layers amortise them.
WINOGRAD_MIN_CHANNELS = 64
# F(4x4) computes whole 4x4 tiles: a 14x14 output costs 16x16 (1.31x), where F(2x2)'s
# 2x2 tiles fit exactly; measured on (8, 256, 14x14) -> 256: F(2x2) 40 ms forward +
# backward against F(4x4) 57 ms. F(4x4) is chosen only where its tiles waste at most 10%
# more than F(2x2)'s.
F4X4_MAX_EXTRA_COVER = 1.10


def _cover(m, oh, ow):
    """Computed outputs per useful output with m x m tiles."""
    return (-(-oh // m) * m) * (-(-ow // m) * m) / (oh * ow)


def _winograd_channels(c, k):
    if c < WINOGRAD_MIN_CHANNELS or k < WINOGRAD_MIN_CHANNELS:
        return Decline(f"{c} input / {k} output channels per group, fewer than "
                       f"{WINOGRAD_MIN_CHANNELS}: im2col is faster (measured crossover)")
    return True


def _winograd_f4x4(n, c, k, h, w, oh, ow, p):
    verdict = _winograd_channels(c, k)
    if verdict and _cover(4, oh, ow) > F4X4_MAX_EXTRA_COVER * _cover(2, oh, ow):
        return Decline(f"{oh}x{ow} outputs in 4x4 tiles compute {_cover(4, oh, ow):.2f}x "
                       f"as many; F(2x2) tiles fit better")
    return verdict


def _winograd_f2x2(n, c, k, h, w, oh, ow, p):
    return _winograd_channels(c, k)


# ``bench_nnpack_crossover.py fft`` (N=16): FFT wins once C * kh * kw reaches about 120
# (11x11 with C=1: 0.72-0.85x; 7x7 with C=4: 0.37-0.80x; 5x5 with C=16: 0.56-0.82x) and
# loses below (5x5, C=4: 1.02-1.62x; 7x7, C=1: 1.02-1.32x). Kernels of 3x3 and below are
# as fast on im2col (~1.0x), and a stride computes every stride-1 output first.
FFT_MIN_WORK = 120


def _fft(n, c, k, h, w, oh, ow, p):
    kh, kw = p.kernel_size
    if p.stride != (1, 1):
        return Decline(f"stride {p.stride}: FFT computes every stride-1 output; im2col "
                       f"computes only the strided ones")
    if kh * kw <= 9:
        return Decline(f"kernel {kh}x{kw}: im2col is as fast for 3x3 and smaller")
    if c * kh * kw < FFT_MIN_WORK:
        return Decline(f"C * kh * kw = {c * kh * kw} < {FFT_MIN_WORK}: too little work per "
                       f"output to amortise the transforms (measured crossover)")
    return True


# ``bench_nnpack_crossover.py gemm1x1`` (N=16, C = K from 1 to 256, 4x4 to 28x28): the
# direct GEMM wins or ties everywhere (0.62-1.03x): im2col's column copy is pure overhead
# for a 1x1 kernel. No crossover.
def _gemm1x1(n, c, k, h, w, oh, ow, p):
    return True


_RULES = {
    "nnpack_winograd_f4x4_3x3": _winograd_f4x4,
    "nnpack_winograd_f2x2_3x3": _winograd_f2x2,
    "nnpack_fft": _fft,
    "nnpack_gemm1x1": _gemm1x1,
}
