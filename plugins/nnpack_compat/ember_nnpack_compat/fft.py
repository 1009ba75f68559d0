"""FFT convolution with tiles, like NNPACK's ft8x8/ft16x16 (forward and both gradients).

Deep-learning "convolution" is cross-correlation, ``y[n,k,i,j] = sum_{c,a,b}
x_pad[n,c,i+a,j+b] w[k,c,a,b]``. By the correlation theorem the *circular* correlation
of two T_h x T_w arrays is ``IDFT(DFT(x) * conj(DFT(w)))``, and it equals the linear one
at the outputs whose window does not wrap around (Mathieu, Henaff & LeCun, "Fast
Training of Convolutional Networks through FFTs", ICLR 2014; Vasilache et al., "Fast
Convolutional Nets With fbfft", ICLR 2015; NNPACK's ``nnp_fft8x8`` / ``nnp_fft16x16``).

**Tiling (overlap-save).** The padded image is cut into T_h x T_w tiles that overlap by
k - 1 rows/columns; each tile yields ``m = T - k + 1`` valid outputs per dim (tile i
starts at ``i m``), so a tile is at least the kernel. The tiles are a strided view
(``sliding_window_view``) of one zero-padded copy of the image. Per frequency bin f the
sum over input channels is one GEMM, batched over the bins with ``np.matmul``::

    Y[f] (K, N*tiles) = conj(W[f]) (K, C) @ X[f] (C, N*tiles)

then the inverse transform keeps the m_h x m_w valid outputs of each tile. The kernel's
transform is computed once per call.

**Transforms as matrix products.** NNPACK's transforms are hand-vectorised FFTs. numpy's
``rfft2`` spends ~4 us per 16x16 tile here in per-transform overhead (measured: 35 ms for
the 8192 tiles of N=8, C=64, 56x56), while the same real DFT done as two BLAS products,
along W then along H, takes ~2 ms, as NNPACK's own Winograd transforms are matrix
products. So the DFT of the real tiles is taken in two stages of real GEMMs over
``rfft2``'s half spectrum (T_h x (T_w/2 + 1) bins), complex numbers held as (re, im)
pairs of rows; a complex product is the real 2x2 block ``[[a, -b], [b, a]]``, so the
per-bin GEMM above is one real (2K x 2C) @ (2C x P) product. The inverse computes only
the m_h x m_w outputs kept (and the k_h x k_w taps of grad_weight). The DFT matrices are
built in float64 and cached per (tile, size, dtype); ``np.fft.rfft2`` is what the tests
check them against.

**Tile size.** ``tile_shape`` picks (T_h, T_w) per call among 8, 16, 32, 64 (at least the
kernel) and the whole padded extent (one tile, rounded up to a 2-3-5-smooth size, when at
most 64), minimising a cost model (``_cost``). Its main term, the channel GEMM, costs
``8 F K C P`` with F = T_h (T_w/2+1) bins, P = N * tiles: per output
``T_h (T_w/2+1) / (m_h m_w)``, e.g. 3x3: 1.11 (T=8), 0.73 (T=16), 0.60 (T=32); 5x5:
2.5, 1.0, 0.69; 16x16: 144 (T=16, one output per tile) against 1.9 (T=32). Bigger tiles
amortise the k - 1 overlap; but the matrix transforms cost O(T) per point and stage,
and the kernel's spectrum (4 K C F values) grows with T and is read once per call. So
3x3 kernels run on 8- and 16-point tiles (N=8, C=K=64, 56x56: 8x16; N=32: 16x16), small
images in one tile, 11x11 and 16x16 kernels on 32-point tiles.

**Gradients.** ``grad_input`` is the full correlation of the stride-1 output gradient
with the kernel flipped and its channels swapped (the same routine, padding k - 1 - p).
``grad_weight`` reuses the forward's input tiles: output tile t of gy, zero-padded to T,
correlated circularly with input tile t gives that tile's k_h x k_w contribution without
wrap-around, so ``GW[f] (K, C) = conj(GY[f]) (K, P) @ X[f]^T (P, C)`` sums over images
and tiles in one GEMM per bin. A stride s computes the stride-1 result and keeps every
s-th output; the gradients scatter gy into a zero stride-1 gradient first.

**Accuracy.** float32 is computed in float32 throughout (DFT matrices rounded to it),
float64 in float64. A transform spreads each input's rounding over the whole tile, so the
error bound is norm-wise rather than per element: with ``S = max over outputs of the sum
of |x| |w|`` over the window and channels (the direct sum of absolute products),

    |y_fft - y| <= 2 * (T_h + T_w) * eps * S       (eps = 2^-24 for float32, 2^-53 for float64)

A matrix DFT of length T sums T rounded products per stage, so its error grows like
T eps at worst (sqrt(T) eps typically) where an FFT's grows like log2(T) eps. The rule
is a tolerance that holds with a wide margin, not a proof: random data, wide dynamic
ranges and C up to 512 stay below 0.15 of it (the tests check it), while the worst case
adds the factor of any matrix product over 2C channel terms (for grad_weight, N * tiles
terms), as im2col's does. A small output next to large ones in the same tile has a large
*relative* error, unlike im2col's ~k_h k_w C eps per element. For grad_input S is the
largest sum of |gy| |w|, for grad_weight the largest ``sum |gy| |x|`` over images and
positions.

Shapes as in ``algorithm.py``: x (N, C, H, W), w (K, C, kh, kw), any kernel up to 16
(rectangular too; larger ones work but get slow), padding (ph, pw) below the kernel, any
stride; float32 or float64.
"""
from __future__ import annotations

import functools
import math

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

__all__ = ["forward", "grad_input", "grad_weight", "tile_shape"]

TILES = (8, 16, 32, 64)
"""Tile sizes tried: NNPACK's 8 and 16, plus 32 and 64 for kernels past ~9, whose
16-point tiles yield almost nothing."""

WHOLE_IMAGE_MAX = 64
"""The largest padded extent that is also tried as one tile per image."""

# NOTE: cost model units are float operations of a GEMM; a value copied through memory
# (gathering tiles, scattering outputs, reading the kernel's spectrum) costs about as
# much as 40 of them on the development machine (a 2-core AVX-512 EPYC, ~100 GFLOP/s
# sgemm against ~0.4 ns per strided element copied).
_MEMORY_COST = 40


# ---- tile choice ---------------------------------------------------------------------------

def tile_shape(out_hw, kernel, batch: int, in_channels: int, out_channels: int) -> tuple:
    """The tile (T_h, T_w) for a stride-1 correlation with output ``out_hw`` (OH, OW) and
    kernel (kh, kw): the cheapest under ``_cost`` (module docstring). Each T >= kernel.

    Candidates per dim: the ``TILES`` that are at least the kernel and still need more
    than one tile, and the whole padded extent (OH + kh - 1, rounded up to a 2-3-5-smooth
    size) when it is at most ``WHOLE_IMAGE_MAX`` or no other fits. Raises nothing.
    """
    cand = [_candidates(o, k) for o, k in zip(out_hw, kernel)]
    costs = {(th, tw): _cost((th, tw), out_hw, kernel, batch, in_channels, out_channels)
             for th in cand[0] for tw in cand[1]}
    return min(costs, key=costs.get)


def _candidates(out: int, k: int) -> list:
    extent = out + k - 1
    found = [t for t in TILES if t >= k and t - k + 1 < out]
    if extent <= WHOLE_IMAGE_MAX or not found:
        found.append(_smooth_size(extent))
    return found


def _smooth_size(n: int) -> int:
    """The smallest integer >= n with no prime factor above 5."""
    while True:
        r = n
        for p in (2, 3, 5):
            while r % p == 0:
                r //= p
        if r == 1:
            return n
        n += 1


def _cost(tile, out_hw, kernel, n, c, k) -> float:
    """Modelled cost of one forward call with this tile (GEMM flops + memory traffic)."""
    (th, tw), (oh, ow), (kh, kw) = tile, out_hw, kernel
    mh, mw = th - kh + 1, tw - kw + 1
    fw = tw // 2 + 1
    p = n * math.ceil(oh / mh) * math.ceil(ow / mw)
    forward_dft = 4 * fw * tw * th + 8 * fw * th * th            # per tile and channel
    inverse_dft = 8 * fw * mh * th + 4 * fw * mw * mh            # per tile and channel
    gemm = 8 * th * fw * k * c * p
    memory = _MEMORY_COST * (p * (c * th * tw + k * mh * mw) + 8 * th * fw * k * c)
    return gemm + p * (c * forward_dft + k * inverse_dft) + memory


# ---- the transforms ------------------------------------------------------------------------

@functools.lru_cache(maxsize=64)
def _forward_dft(tile: tuple, size: tuple, dtype) -> tuple:
    """Real matrices of the 2-D DFT of a T_h x T_w tile whose nonzero part is the first
    ``size`` = (s_h, s_w) rows and columns, onto rfft2's half spectrum.

    ``along_w`` (2 F_w, s_w): rows (f2, re/im), the real DFT along W;
    ``along_h`` (2 T_h, 2 s_h): rows (f1, re/im), columns (re/im, a), the complex DFT
    along H applied to the (re, im) rows of the first stage.
    """
    (th, tw), (sh, sw) = tile, size
    fw = tw // 2 + 1
    ang = _angles(fw, sw, tw)
    along_w = np.stack([np.cos(ang), -np.sin(ang)], axis=1).reshape(2 * fw, sw)
    ang = _angles(th, sh, th)
    re, im = np.cos(ang), -np.sin(ang)                     # e^{-i theta}
    along_h = np.empty((th, 2, 2, sh))
    along_h[:, 0, 0], along_h[:, 0, 1] = re, -im
    along_h[:, 1, 0], along_h[:, 1, 1] = im, re
    return _frozen(along_w, dtype), _frozen(along_h.reshape(2 * th, 2 * sh), dtype)


@functools.lru_cache(maxsize=64)
def _inverse_dft(tile: tuple, size: tuple, dtype) -> tuple:
    """Real matrices of the inverse of ``_forward_dft`` that give only the first ``size``
    = (o_h, o_w) outputs of each tile.

    ``along_h`` (2 o_h, 2 T_h): rows (re/im, a), columns (f1, re/im);
    ``along_w_t`` (2 F_w, o_w): rows (f2, re/im), the real part of the inverse along W
    over the half spectrum (bins other than 0 and T_w/2 count twice), scaled 1/(T_h T_w).
    """
    (th, tw), (oh, ow) = tile, size
    fw = tw // 2 + 1
    ang = _angles(oh, th, th)
    re, im = np.cos(ang), np.sin(ang)                      # e^{+i theta}
    along_h = np.empty((2, oh, th, 2))
    along_h[0, :, :, 0], along_h[0, :, :, 1] = re, -im
    along_h[1, :, :, 0], along_h[1, :, :, 1] = im, re
    twice = np.full(fw, 2.0)
    twice[0] = 1.0
    if tw % 2 == 0:
        twice[-1] = 1.0
    ang = _angles(fw, ow, tw)
    scale = (twice / (th * tw))[:, None]
    along_w_t = np.stack([np.cos(ang) * scale, -np.sin(ang) * scale], axis=1)
    return (_frozen(along_h.reshape(2 * oh, 2 * th), dtype),
            _frozen(along_w_t.reshape(2 * fw, ow), dtype))


def _angles(rows: int, cols: int, period: int):
    """2 pi (i j mod period) / period for i < rows, j < cols: reduced before scaling, so
    the float64 cos/sin are exact to an ulp whatever i j is."""
    return 2 * np.pi * (np.outer(np.arange(rows), np.arange(cols)) % period) / period


def _frozen(a, dtype):
    a = np.ascontiguousarray(a, dtype=dtype)
    a.flags.writeable = False
    return a


def _spectrum(rows, tile, size, dtype):
    """The DFT of tiles given as ``rows`` (s_h * B, s_w): row (a, b) holds row a of item b
    (zero-padded to the tile). Returns (F, 2 * B): bin (f2, f1), then (re, im), then b."""
    along_w, along_h = _forward_dft(tuple(tile), tuple(size), dtype)
    fw, sh = along_w.shape[0] // 2, size[0]
    z = (along_w @ rows.T).reshape(fw, 2 * sh, -1)          # (f2, re/im, a), b
    return np.matmul(along_h, z).reshape(fw * tile[0], -1)  # (f2, f1, re/im), b


def _inverse(spec, tile, size, dtype):
    """(F, 2, A, B) spectra, bin (f2, f1) first -> (o_h, A, B, o_w) real: the first
    ``size`` = (o_h, o_w) points of each inverse transform."""
    along_h, along_w_t = _inverse_dft(tuple(tile), tuple(size), dtype)
    fw = along_w_t.shape[0] // 2
    a, b = spec.shape[2:]
    u = np.matmul(along_h, spec.reshape(fw, 2 * tile[0], a * b))     # (f2, re/im, oh), A B
    y = u.reshape(2 * fw, -1).T @ along_w_t                           # (oh, A, B), ow
    return y.reshape(size[0], a, b, size[1])


# ---- tiles -----------------------------------------------------------------------------------

def _check(a, b, what: str):
    if a.dtype != b.dtype or a.dtype not in (np.float32, np.float64):
        raise TypeError(f"nnpack_fft.{what}: expected two float32 or two float64 arrays, got "
                        f"{a.dtype} and {b.dtype}; cast both to one of them")
    return a.dtype


def _check_padding(padding, kernel, what: str):
    if any(p < 0 or p >= k for p, k in zip(padding, kernel)):
        raise ValueError(f"nnpack_fft.{what}: expected 0 <= padding < kernel in each dim "
                         f"(NNPACK's limit), got padding {tuple(padding)} for kernel "
                         f"{tuple(kernel)}; use the native algorithm (F.conv2d) instead")


def _tile_rows(x, lo, tile, step, counts):
    """x (N, C, H, W) zero-padded by ``lo`` before (and after as far as the tiles reach;
    x is cropped where they stop), cut into tiles of ``tile`` starting every ``step``:
    the rows (T_h * C * P, T_w) for ``_spectrum``, row (a, c, (n, i, j))."""
    n, c, h, w = x.shape
    ext = [(cnt - 1) * s + t for cnt, s, t in zip(counts, step, tile)]
    buf = np.zeros((n, c, *ext), dtype=x.dtype)
    hh, ww = min(h, ext[0] - lo[0]), min(w, ext[1] - lo[1])
    buf[:, :, lo[0]:lo[0] + hh, lo[1]:lo[1] + ww] = x[:, :, :hh, :ww]
    view = sliding_window_view(buf, tuple(tile), axis=(2, 3))[:, :, ::step[0], ::step[1]]
    # NOTE: keeping the tile's columns innermost makes this copy ~3x cheaper than putting
    # them first; the first DFT stage takes the transpose for free (a BLAS flag).
    return np.ascontiguousarray(view.transpose(4, 1, 0, 2, 3, 5)).reshape(-1, tile[1])


def _layout(out_hw, kernel, n, c, k):
    tile = tile_shape(out_hw, kernel, n, c, k)
    step = tuple(t - kk + 1 for t, kk in zip(tile, kernel))
    counts = tuple(math.ceil(o / s) for o, s in zip(out_hw, step))
    return tile, step, counts


def _correlate(x, w, lo, out_hw, what):
    """Stride-1 cross-correlation (N, C, H, W) x (K, C, kh, kw) -> (N, K, OH, OW) of x
    zero-padded by ``lo`` before (and with zeros after, as far as ``out_hw`` needs)."""
    dtype = _check(x, w, what)
    n, c = x.shape[:2]
    k, kh, kw = w.shape[0], w.shape[2], w.shape[3]
    tile, step, counts = _layout(out_hw, (kh, kw), n, c, k)
    bins = tile[0] * (tile[1] // 2 + 1)
    spec_x = _spectrum(_tile_rows(x, lo, tile, step, counts), tile, tile, dtype)
    spec_w = _spectrum(np.ascontiguousarray(w.transpose(2, 0, 1, 3)).reshape(-1, kw),
                       tile, (kh, kw), dtype).reshape(bins, 2, k, c)
    # multiplying by conj(W) = Wr - i Wi, as a real 2x2 block on (re, im)
    wr, wi = spec_w[:, 0], spec_w[:, 1]
    prod = np.empty((bins, 2, k, 2, c), dtype=dtype)
    prod[:, 0, :, 0], prod[:, 0, :, 1] = wr, wi
    prod[:, 1, :, 0], prod[:, 1, :, 1] = -wi, wr
    spec_y = np.matmul(prod.reshape(bins, 2 * k, 2 * c), spec_x.reshape(bins, 2 * c, -1))
    y = _inverse(spec_y.reshape(bins, 2, k, -1), tile, step, dtype)   # (m_h, K, P, m_w)
    y = y.reshape(step[0], k, n, *counts, step[1]).transpose(2, 1, 3, 0, 4, 5)
    y = y.reshape(n, k, counts[0] * step[0], counts[1] * step[1])
    return y[:, :, :out_hw[0], :out_hw[1]]


def _dilate(gy, stride, size):
    """gy of a strided convolution -> the stride-1 gradient (zeros between samples)."""
    if tuple(stride) == (1, 1):
        return gy
    g = np.zeros((*gy.shape[:2], *size), dtype=gy.dtype)
    g[:, :, ::stride[0], ::stride[1]] = gy
    return g


# ---- the three functions of the interface ----------------------------------------------------

def forward(x, w, padding, stride):
    """Cross-correlation y = conv2d(x, w) by tiled FFT (NNPACK's ft8x8/ft16x16 method).

    x (N, C, H, W), w (K, C, kh, kw), both float32 or both float64; ``padding`` (ph, pw)
    zeros on each side, ``stride`` (sh, sw). Returns a new (N, K, OH, OW) array of the same
    dtype, OH = (H + 2 ph - kh) // sh + 1. Raises TypeError for other or mixed dtypes,
    ValueError for padding not below the kernel.
    Error bound: module docstring.
    """
    (sh, sw), (ph, pw) = stride, padding
    kh, kw = w.shape[2:]
    _check_padding(padding, (kh, kw), "forward")
    oh = (x.shape[2] + 2 * ph - kh) // sh + 1
    ow = (x.shape[3] + 2 * pw - kw) // sw + 1
    # NOTE: the stride-1 result is needed only up to the last row a stride keeps
    y = _correlate(x, w, (ph, pw), ((oh - 1) * sh + 1, (ow - 1) * sw + 1), "forward")
    return np.ascontiguousarray(y[:, :, ::sh, ::sw])


def grad_input(gy, w, input_shape, padding, stride):
    """dL/dx (N, C, H, W) for y = conv2d(x, w): the full correlation of the stride-1
    gradient with the kernel flipped and its channels swapped, cropped by the padding.

    gy (N, K, OH, OW) and w (K, C, kh, kw) of one dtype (float32/float64); ``input_shape``
    (N, C, H, W); padding, stride as in ``forward``. Rows and columns of x that no output
    reads (a stride that does not divide) get zeros. Raises TypeError for other or mixed
    dtypes, ValueError for padding not below the kernel.
    """
    n, c, h, wd = input_shape
    kh, kw = w.shape[2:]
    _check_padding(padding, (kh, kw), "grad_input")
    ph, pw = padding
    oh1, ow1 = [(o - 1) * s + 1 for o, s in zip(gy.shape[2:], stride)]
    g = _dilate(gy, stride, (oh1, ow1))
    flipped = np.ascontiguousarray(w.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1])
    # NOTE: padded row r of x is read by outputs r - kh + 1 .. r, so row i of x (padded
    # row i + ph) is output i of g padded by kh - 1 - ph, up to padded row oh1 + kh - 2.
    rows, cols = min(h, oh1 + kh - 1 - ph), min(wd, ow1 + kw - 1 - pw)
    gx = _correlate(g, flipped, (kh - 1 - ph, kw - 1 - pw), (rows, cols), "grad_input")
    full = np.zeros((n, c, h, wd), dtype=gx.dtype)
    full[:, :, :rows, :cols] = gx
    return full


def grad_weight(gy, x, weight_shape, padding, stride):
    """dL/dw (K, C, kh, kw) for y = conv2d(x, w): x correlated with gy, summed over images.

    gy (N, K, OH, OW) and x (N, C, H, W) of one dtype (float32/float64); ``weight_shape``
    (K, C, kh, kw); padding, stride as in ``forward``. One GEMM per frequency bin sums
    over images and tiles (module docstring). Raises TypeError for other or mixed dtypes,
    ValueError for padding not below the kernel.
    """
    dtype = _check(gy, x, "grad_weight")
    k, c, kh, kw = weight_shape
    _check_padding(padding, (kh, kw), "grad_weight")
    n = x.shape[0]
    out1 = tuple((o - 1) * s + 1 for o, s in zip(gy.shape[2:], stride))
    g = _dilate(gy, stride, out1)
    tile, step, counts = _layout(out1, (kh, kw), n, c, k)
    bins = tile[0] * (tile[1] // 2 + 1)
    spec_x = _spectrum(_tile_rows(x, tuple(padding), tile, step, counts), tile, tile, dtype)
    # gy's tiles do not overlap: tile t holds the m_h x m_w outputs input tile t feeds
    spec_g = _spectrum(_tile_rows(g, (0, 0), step, step, counts), tile, step, dtype)
    m = np.matmul(spec_g.reshape(bins, 2 * k, -1), spec_x.reshape(bins, 2 * c, -1)
                  .swapaxes(1, 2)).reshape(bins, 2, k, 2, c)
    # conj(GY) X^T = (Gr Xr^T + Gi Xi^T) + i (Gr Xi^T - Gi Xr^T)
    spec_w = np.empty((bins, 2, k, c), dtype=dtype)
    np.add(m[:, 0, :, 0], m[:, 1, :, 1], out=spec_w[:, 0])
    np.subtract(m[:, 0, :, 1], m[:, 1, :, 0], out=spec_w[:, 1])
    gw = _inverse(spec_w, tile, (kh, kw), dtype)                  # (kh, K, C, kw)
    return np.ascontiguousarray(gw.transpose(1, 2, 0, 3))
