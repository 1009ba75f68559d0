"""Winograd minimal filtering F(m x m, 3 x 3) for 3x3 convolutions with stride 1.

Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks" (CVPR 2016). The output
is cut into m x m tiles; tile t of channel c reads an alpha x alpha input tile d (alpha =
m + 2, neighbouring tiles overlap by 2) and, for a 3x3 filter g,

    Y = A^T [ sum_c (G g G^T) . (B^T d B) ] A        (. is the elementwise product)

so the 9 * m^2 multiplications of a direct tile become alpha^2: 36 instead of 144 for
F(4x4, 3x3), 16 instead of 36 for F(2x2, 3x3). The transforms use the row-major Kronecker
form ``vec(B^T d B) = (B^T kron B^T) vec(d)``, so each is one matrix product over all
tiles, and the sum over channels becomes alpha^2 independent GEMMs
``M[xi] = U[xi] (K, C) @ V[xi] (C, tiles)`` (the batched GEMMs NNPACK runs).

Layout, chosen by measurement (numpy's copies are fast only over long runs, its GEMMs only
on contiguous operands): images go in chunks of ``nb`` whose transformed tiles fit in
about ``CHUNK_BYTES`` (L2/L3 resident); a chunk is copied once into a zero-bordered buffer
of (th m + 2, tw m + 2) pixels, its tiles are a strided view of that buffer gathered into
(alpha, alpha, C, nb, th, tw) by one copy, and each transform is a GEMM on a contiguous
2-D operand. On (32, 64, 56, 56) -> 64 per image chunks measured faster than larger ones
(6.7 ms gather vs 8.9 at nb=4); on (8, 256, 14, 14) -> 256 the whole batch (3.7 ms channel
GEMMs at nb=8 vs 5.9 at nb=1, whose GEMMs have only 16 columns).

Gradients (Lavin & Gray section 4):

* input: the stride-1 input gradient is the convolution of grad_output, padded by 2 - p,
  with the kernel rotated by 180 degrees and its channel axes swapped: the forward again.
* weight: the adjoint of the forward, ``dW = G^T [ sum_t (A gY_t A^T) . (B^T d_t B) ] G``,
  alpha^2 GEMMs ``(K, tiles) @ (tiles, C)`` summed over chunks, then one product with
  ``G^T kron G^T``.

Weight transforms ``U = (G kron G) vec(w)`` are cached per weight: kernels see arrays,
not Tensors, so a weight's version is its content. A hit costs one comparison with a saved
copy (0.09 ms for a 256x256x3x3 weight against several ms for the transform), so
inference reuses U and training, whose weights change every step, recomputes it.

Accuracy: the transforms scale values by up to 8 (F(4x4)'s A^T has entries 8: the
interpolation point 2, cubed), so float32 rounding grows with m (Barabasz et al., "Error
analysis and improving the accuracy of Winograd convolution", 2020), and an output's
error depends on the whole tile it sits in, not only on its receptive field. Measured
against a float64 direct convolution (normal and uniform inputs, C from 1 to 64, padding
0 to 2), the float32 error of every output is at most 2.6e-6 (F(4x4, 3x3)) and 3.5e-7
(F(2x2, 3x3)) times the largest ``(|x| * |w|)`` of its output plane (image, channel),
the direct sum of magnitudes; direct summation gives about 1e-7. The documented bounds,
``ERROR_BOUND``, are 1e-5 and 1.5e-6 (about 4x margin); the weight gradient meets them
per element against its own sum of magnitudes. The tests check these bounds.
float64 computes in float64 (measured 1e-14 relative).
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

import numpy as np

__all__ = ["ERROR_BOUND", "F2x2", "F4x4", "Winograd", "clear_weight_cache"]

CHUNK_BYTES = 2 << 20     # target size of one chunk's transformed tiles (L2/L3 resident)
_WEIGHT_CACHE_BYTES = 256 << 20
ERROR_BOUND = {4: 1e-5, 2: 1.5e-6}
"""float32 error bound per m, relative to the largest (|x| * |w|) of the output plane."""


class Winograd:
    """F(m x m, 3 x 3) with interpolation matrices ``BT`` (alpha, alpha), ``G`` (alpha, 3)
    and ``AT`` (m, alpha) in float64 (Lavin & Gray 2016, section 4.1/4.2).

    Module-level instances ``F2x2`` and ``F4x4`` implement the arithmetic interface of
    ``algorithm.py``: ``forward``, ``grad_input``, ``grad_weight`` on float32/float64
    numpy arrays of one group, 3x3 kernels, stride 1.
    """

    def __init__(self, m: int, BT, G, AT):
        self.m, self.alpha = m, m + 2
        self.BT, self.G, self.AT = (np.asarray(a, dtype=np.float64) for a in (BT, G, AT))
        self._kron = {}
        self._lock = threading.Lock()
        self._weights: OrderedDict = OrderedDict()
        self._weight_bytes = 0
        self._tls = threading.local()

    def __repr__(self) -> str:
        return f"Winograd(F({self.m}x{self.m}, 3x3))"

    # ---- transform matrices, per dtype ----

    def kron(self, dtype):
        """(KB, KG, KA) = (BT kron BT, G kron G, AT kron AT) in ``dtype``: shapes
        (alpha^2, alpha^2), (alpha^2, 9), (m^2, alpha^2)."""
        got = self._kron.get(dtype)
        if got is None:
            got = tuple(np.ascontiguousarray(np.kron(a, a), dtype=dtype)
                        for a in (self.BT, self.G, self.AT))
            self._kron[dtype] = got
        return got

    # ---- the weight transform and its cache ----

    def weight_transform(self, w, rotated: bool = False):
        """U (alpha^2, K, C) for a weight (K, C, 3, 3); ``rotated``: for the weight the
        input gradient uses, rotated 180 degrees with its channel axes swapped, so U is
        (alpha^2, C, K). Cached per weight array and content (see the module docstring)."""
        key = (id(w), rotated, w.dtype)
        with self._lock:
            hit = self._weights.get(key)
            if hit is not None:
                ref, saved, u = hit
                if ref() is w and np.array_equal(saved, w):
                    self._weights.move_to_end(key)
                    return u
        src = w[:, :, ::-1, ::-1].transpose(1, 0, 2, 3) if rotated else w
        k, c = src.shape[:2]
        _, kg, _ = self.kron(w.dtype)
        u = (kg @ src.reshape(k * c, 9).T).reshape(self.alpha ** 2, k, c)
        try:
            ref = weakref.ref(w)
        except TypeError:   # a subclass without weakref support: do not cache
            return u
        with self._lock:
            old = self._weights.pop(key, None)
            if old is not None:
                self._weight_bytes -= old[1].nbytes + old[2].nbytes
            self._weights[key] = (ref, w.copy(), u)
            self._weight_bytes += w.nbytes + u.nbytes
            while self._weight_bytes > _WEIGHT_CACHE_BYTES and len(self._weights) > 1:
                _, (_, saved, old_u) = self._weights.popitem(last=False)
                self._weight_bytes -= saved.nbytes + old_u.nbytes
        return u

    def clear_weight_cache(self) -> None:
        """Drop every cached weight transform."""
        with self._lock:
            self._weights.clear()
            self._weight_bytes = 0

    # ---- workspace ----

    def _buffer(self, key, shape: tuple, dtype, zero: bool = False):
        """A per-thread scratch array, reused across calls (fresh multi-MB arrays cost
        page faults comparable to the copies into them). ``zero``: zeroed when created;
        callers that rely on zeros outside what they write put that region's geometry
        in ``key``."""
        store = self._tls.__dict__.setdefault("buffers", {})
        full_key = (key, shape, np.dtype(dtype).str)
        buf = store.get(full_key)
        if buf is None:
            if len(store) > 32:
                store.clear()
            buf = store[full_key] = (np.zeros if zero else np.empty)(shape, dtype)
        return buf

    def _geometry(self, out_hw, n, channels):
        m = self.m
        th, tw = -(-out_hw[0] // m), -(-out_hw[1] // m)
        per_image = self.alpha ** 2 * channels * th * tw * 8   # 8: D and V, or M and Y
        nb = max(1, min(n, CHUNK_BYTES // max(per_image, 1)))
        return th, tw, nb

    def _input_transform(self, x, n0, nc, nb, padding, th, tw):
        """V (alpha^2, C, nc * th * tw) = (B^T kron B^T) @ the input tiles of images
        ``n0 : n0 + nc``; a per-thread buffer, valid until the next call."""
        m, a = self.m, self.alpha
        c, h, w = x.shape[1:]
        ph, pw = padding
        # NOTE: only the interior is ever written, so the border (and the rows/cols past
        # the last full tile) stay zero from the buffer's creation
        buf = self._buffer(("pad", padding, h, w), (nb, c, th * m + 2, tw * m + 2),
                           x.dtype, zero=True)[:nc]
        buf[:, :, ph:ph + h, pw:pw + w] = x[n0:n0 + nc]
        s = buf.strides
        view = np.lib.stride_tricks.as_strided(
            buf, (a, a, c, nc, th, tw), (s[2], s[3], s[1], s[0], s[2] * m, s[3] * m))
        tiles = self._buffer("tiles", view.shape, x.dtype)
        np.copyto(tiles, view)
        v = self._buffer("V", (a * a, c, nc * th * tw), x.dtype)
        np.matmul(self.kron(x.dtype)[0], tiles.reshape(a * a, -1), out=v.reshape(a * a, -1))
        return v

    # ---- the arithmetic interface ----

    def forward(self, x, w, padding, stride=(1, 1)):
        """(N, C, H, W) x (K, C, 3, 3) -> (N, K, H + 2 ph - 2, W + 2 pw - 2), stride 1."""
        return self._convolve(x, self.weight_transform(w), padding)

    def grad_input(self, gy, w, input_shape, padding, stride=(1, 1)):
        """dL/dx (N, C, H, W): grad_output (N, K, OH, OW) convolved with the rotated,
        channel-swapped kernel, padding 2 - p."""
        u = self.weight_transform(w, rotated=True)
        return self._convolve(gy, u, (2 - padding[0], 2 - padding[1]))

    def _convolve(self, x, u, padding):
        m, a = self.m, self.alpha
        n, c, h, w = x.shape
        k = u.shape[1]
        oh, ow = h + 2 * padding[0] - 2, w + 2 * padding[1] - 2
        th, tw, nb = self._geometry((oh, ow), n, max(c, k))
        ka = self.kron(x.dtype)[2]
        y = np.empty((n, k, oh, ow), x.dtype)
        exact = oh == th * m and ow == tw * m
        for n0 in range(0, n, nb):
            nc = min(nb, n - n0)
            v = self._input_transform(x, n0, nc, nb, padding, th, tw)
            t = nc * th * tw
            mm = self._buffer("M", (a * a, k, t), x.dtype)
            np.matmul(u, v, out=mm)
            yt = self._buffer("Y", (m * m, k, t), x.dtype)
            np.matmul(ka, mm.reshape(a * a, -1), out=yt.reshape(m * m, -1))
            tiles = yt.reshape(m, m, k, nc, th, tw).transpose(3, 2, 4, 0, 5, 1)
            if exact:
                np.copyto(y[n0:n0 + nc].reshape(nc, k, th, m, tw, m), tiles)
            else:
                full = self._buffer("full", (nc, k, th * m, tw * m), x.dtype)
                np.copyto(full.reshape(nc, k, th, m, tw, m), tiles)
                y[n0:n0 + nc] = full[:, :, :oh, :ow]
        return y

    def grad_weight(self, gy, x, weight_shape, padding, stride=(1, 1)):
        """dL/dW (K, C, 3, 3) = G^T [sum over tiles (A gY_t A^T) . (B^T d_t B)] G."""
        m, a = self.m, self.alpha
        n, c = x.shape[:2]
        k, oh, ow = gy.shape[1:]
        th, tw, nb = self._geometry((oh, ow), n, max(c, k))
        _, kg, ka = self.kron(x.dtype)
        du = np.zeros((a * a, k, c), x.dtype)
        part = self._buffer("dU", (a * a, k, c), x.dtype)
        gpad = self._buffer(("gpad", oh, ow), (nb, k, th * m, tw * m), x.dtype, zero=True)
        for n0 in range(0, n, nb):
            nc = min(nb, n - n0)
            v = self._input_transform(x, n0, nc, nb, padding, th, tw)
            t = nc * th * tw
            gpad[:nc, :, :oh, :ow] = gy[n0:n0 + nc]
            gt = self._buffer("gtiles", (m, m, k, nc, th, tw), x.dtype)
            np.copyto(gt, gpad[:nc].reshape(nc, k, th, m, tw, m).transpose(3, 5, 1, 0, 2, 4))
            mg = self._buffer("Mg", (a * a, k, t), x.dtype)
            np.matmul(ka.T, gt.reshape(m * m, -1), out=mg.reshape(a * a, -1))
            np.matmul(mg, v.transpose(0, 2, 1), out=part)
            du += part
        gw = (kg.T @ du.reshape(a * a, -1)).reshape(9, k, c)
        return np.ascontiguousarray(gw.transpose(1, 2, 0)).reshape(weight_shape)


# Lavin & Gray (2016), section 4.1: F(2x2, 3x3) with interpolation points 0, 1, -1.
F2x2 = Winograd(
    2,
    BT=[[1, 0, -1, 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]],
    G=[[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]],
    AT=[[1, 1, 1, 0], [0, 1, -1, -1]],
)

# Lavin & Gray (2016), section 4.2: F(4x4, 3x3) with interpolation points 0, 1, -1, 2, -2.
F4x4 = Winograd(
    4,
    BT=[[4, 0, -5, 0, 1, 0], [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0],
        [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0], [0, 4, 0, -5, 0, 1]],
    G=[[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
       [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]],
    AT=[[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0], [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]],
)


def clear_weight_cache() -> None:
    """Drop the cached weight transforms of both F(2x2) and F(4x4)."""
    F2x2.clear_weight_cache()
    F4x4.clear_weight_cache()
