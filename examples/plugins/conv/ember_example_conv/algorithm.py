"""``TapGemm``: a 2-D convolution as one matrix product per kernel tap (kn2row).

A ``kh x kw`` convolution is the sum of ``kh * kw`` 1x1 convolutions, one per kernel tap
``(i, j)``, each reading the (padded) input shifted by ``(i * dilation, j * dilation)`` and
subsampled by the stride; a 1x1 convolution is a matrix product::

    out[n] = sum_{i,j} weight[:, :, i, j] @ x[n, :, rows_i, cols_j].reshape(C, OH * OW)

    x: (N, C, H, W) padded,  weight: (O, C, kh, kw),  out: (N, O, OH, OW)

No im2col matrix of ``C * kh * kw`` rows is built: the memory beyond the output is one
shifted window at a time. The backward is the same sum run backwards: per tap,
``grad_weight[:, :, i, j] = sum_n grad_out[n] @ window[n].T`` and the window of the
padded ``grad_input`` gets ``weight[:, :, i, j].T @ grad_out[n]``.

It implements ember's convolution-algorithm protocol (``ember/backends/convolution.py``,
``docs/nn.md``): ``supports(params)`` answers True or a ``Decline`` with its reason, which
``ember.backends.convolution.explain`` prints. Limits: the ``cpu`` backend, float32 and
float64 (computed in their own precision), 2-D, not transposed, at most 9 taps (3x3, 1x3,
...; an example, kept to the small kernels where one GEMM per tap is cheap), no empty
input or weight. Groups go through the dispatcher (``supports_groups = False``): it calls
the algorithm once per group. Any stride, padding and dilation.

Reference: Vasudevan, Anderson and Gregg, "Parallel Multi Channel Convolution using
General Matrix Multiplication" (ASAP 2017), the kn2row method.
"""
from __future__ import annotations

import numpy as np

from ember.backends.convolution import ConvParams, Decline, bias_grad

__all__ = ["TapGemm", "MAX_TAPS"]

MAX_TAPS = 9


def _pad(x: np.ndarray, padding: tuple) -> np.ndarray:
    ph, pw = padding
    if ph == 0 and pw == 0:
        return x
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))


def _taps(p: ConvParams):
    """``(i, j, rows, cols)`` per kernel tap: the slices of the padded input it reads."""
    kh, kw = p.kernel_size
    oh, ow = p.output_shape[2:]
    (sh, sw), (dh, dw) = p.stride, p.dilation
    for i in range(kh):
        for j in range(kw):
            yield (i, j, slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                   slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))


class TapGemm:
    """The kn2row convolution of the module docstring, as an ember convolution algorithm.

    ``forward(input, weight, bias, p)``: numpy arrays (N, C, H, W), (O, C, kh, kw) and
    (O,) or None -> (N, O, OH, OW) in the input's dtype. ``backward(grad_output, input,
    weight, p, output_mask)`` -> ``(grad_input, grad_weight, grad_bias)``, None where
    ``output_mask`` is False. Priority 40: above native im2col (0) and the nnpack_compat
    algorithms (20-35), so it runs wherever ``supports`` holds.
    """

    name = "tap_gemm"
    priority = 40
    device_type = "cpu"
    supports_groups = False

    def supports(self, p: ConvParams):
        """True, or a ``Decline`` naming the limit of the module docstring that fails."""
        dtype = getattr(p.dtype, "name", str(p.dtype))
        if dtype not in ("float32", "float64"):
            return Decline(f"dtype {dtype}; tap_gemm computes float32 and float64")
        if p.spatial_dims != 2:
            return Decline(f"{p.spatial_dims}-D convolution; tap_gemm is 2-D only")
        if p.transposed:
            return Decline("transposed convolution")
        kh, kw = p.kernel_size
        if kh * kw > MAX_TAPS:
            return Decline(f"kernel {kh}x{kw} has {kh * kw} taps, more than {MAX_TAPS}")
        if 0 in p.input_shape or 0 in p.weight_shape:
            return Decline("an empty input or weight")
        return True

    def forward(self, input, weight, bias, p: ConvParams):
        """The convolution of one group; see the class docstring."""
        x = _pad(input, p.padding)
        n, o = p.output_shape[:2]
        out = np.zeros((n, o, p.output_shape[2] * p.output_shape[3]), dtype=input.dtype)
        for i, j, rows, cols in _taps(p):
            window = x[:, :, rows, cols].reshape(n, x.shape[1], -1)
            out += weight[:, :, i, j] @ window
        if bias is not None:
            out += bias[:, None]
        return out.reshape(p.output_shape)

    def backward(self, grad_output, input, weight, p: ConvParams, output_mask):
        """The gradients of ``forward`` (without the bias's: ``bias_grad``)."""
        want_input, want_weight, want_bias = output_mask
        x = _pad(input, p.padding)
        n, o = p.output_shape[:2]
        c = x.shape[1]
        g = grad_output.reshape(n, o, -1)
        grad_x = np.zeros(x.shape, dtype=input.dtype) if want_input else None
        grad_w = np.empty(weight.shape, dtype=weight.dtype) if want_weight else None
        for i, j, rows, cols in _taps(p):
            if want_weight:
                window = x[:, :, rows, cols].reshape(n, c, -1)
                grad_w[:, :, i, j] = np.tensordot(g, window, axes=([0, 2], [0, 2]))
            if want_input:
                grad_x[:, :, rows, cols] += (weight[:, :, i, j].T @ g).reshape(
                    n, c, *p.output_shape[2:])
        if want_input:
            (ph, pw), (h, w) = p.padding, p.input_shape[2:]
            grad_x = np.ascontiguousarray(grad_x[:, :, ph:ph + h, pw:pw + w])
        return grad_x, grad_w, bias_grad(np, grad_output) if want_bias else None

    def __repr__(self) -> str:
        return f"TapGemm(priority={self.priority})"
