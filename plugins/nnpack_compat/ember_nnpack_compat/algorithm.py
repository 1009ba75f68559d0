"""The convolution-algorithm objects the plugin registers, one per NNPACK algorithm.

Each implements ember's protocol (``ember/backends/convolution.py``): ``supports(params)``
answers from three layers, in order, each a ``Decline`` with its reason when it says no:

1. ``ember_nnpack_compat.using(name)``, which lets one algorithm alone accept, ignoring
   the switch and the crossover; else ``ember.backends.nnpack.enabled``;
2. ``fits(params)``: NNPACK's limits as PyTorch applied them (``nnpack_limits``) plus the
   algorithm's own (3x3 and stride 1 for Winograd, ...): can it compute this at all;
3. ``selection.crossover(name, params)``: is it faster than the next choice here.

The arithmetic lives in ``winograd.py``, ``fft.py`` and ``gemm1x1.py`` as functions on
numpy arrays of one group (groups go through the dispatcher's ``_convolution_nogroup``):

    forward(x, w, padding, stride)                        (N,C,H,W),(K,C,kh,kw) -> (N,K,OH,OW)
    grad_input(gy, w, input_shape, padding, stride)       -> (N,C,H,W)
    grad_weight(gy, x, weight_shape, padding, stride)     -> (K,C,kh,kw)

This module adds the bias and its gradient. Dtypes: float32 and float64, computed in
their own precision.
"""
from __future__ import annotations

import numpy as np

import ember.backends.nnpack as _switch
from ember.backends.convolution import ConvParams, Decline, bias_grad

from . import fft, gemm1x1, selection, winograd

__all__ = ["ALGORITHMS", "NnpackAlgorithm", "nnpack_limits"]

MAX_KERNEL = 16   # NNPACK's largest kernel (its ft16x16 transform)
_MAX_VERDICTS = 4096   # cached supports() answers per algorithm (one per distinct call)


def nnpack_limits(params: ConvParams):
    """True where PyTorch's ``use_nnpack`` would have held, else a ``Decline`` saying which
    condition failed: CPU, float32/float64 (PyTorch: float32 only; the numpy port runs
    float64 as well), 4-D NCHW input, not transposed, not dilated, kernel at most 16,
    padding smaller than the kernel in both dims, nothing empty. PyTorch's ``batch >= 16``
    rule is replaced by the measured crossovers of ``selection.py``."""
    dtype = getattr(params.dtype, "name", str(params.dtype))
    if params.device_type != "cpu":
        return Decline(f"runs on cpu, not '{params.device_type}'")
    if dtype not in ("float32", "float64"):
        return Decline(f"dtype {dtype} (NNPACK computes float32; this port float64 too)")
    if params.spatial_dims != 2:
        return Decline(f"{params.spatial_dims}-D convolution (NNPACK is 2-D only)")
    if params.transposed:
        return Decline("transposed convolution")
    if params.dilation != (1, 1):
        return Decline(f"dilation {params.dilation} (NNPACK has none)")
    kh, kw = params.kernel_size
    if kh > MAX_KERNEL or kw > MAX_KERNEL:
        return Decline(f"kernel {kh}x{kw} larger than NNPACK's {MAX_KERNEL}x{MAX_KERNEL}")
    if params.padding[0] >= kh or params.padding[1] >= kw:
        return Decline(f"padding {params.padding} not smaller than the kernel {kh}x{kw}")
    if 0 in params.input_shape or 0 in params.weight_shape:
        return Decline("an empty input or weight (native im2col's case)")
    return True


class NnpackAlgorithm:
    """One NNPACK algorithm as an ember convolution algorithm (base class).

    Subclasses set ``name``, ``priority``, ``module`` (the arithmetic) and ``_fits``.
    ``dynamic = True`` tells the dispatcher that the verdict depends on more than the
    ``ConvParams`` (verdicts per params are cached here): ``selection_state()`` says what,
    ``ember.backends.nnpack.enabled`` and the innermost ``using(...)``.
    """

    name = "nnpack"
    priority = 10
    device_type = "cpu"
    supports_groups = False
    dynamic = True
    module = None

    @staticmethod
    def selection_state() -> tuple:
        """What ``supports`` reads besides the params: ``(forced algorithm name or None,
        ember.backends.nnpack.enabled)``; one function for every nnpack algorithm."""
        return selection.forced_algorithm(), _switch.enabled

    def __init__(self):
        self._verdicts: dict = {}

    def __repr__(self) -> str:
        return f"<ember_nnpack_compat algorithm {self.name}>"

    def _fits(self, params: ConvParams):
        return True

    def fits(self, params: ConvParams):
        """Can this algorithm compute ``params`` (NNPACK's limits and its own)? True or a
        ``Decline``; ignores speed."""
        verdict = nnpack_limits(params)
        return self._fits(params) if verdict else verdict

    def supports(self, params: ConvParams):
        """The dispatcher's question: enabled, fits, and faster than the alternatives."""
        forced = selection.forced_algorithm()
        if forced is not None:    # an explicit request outranks the global switch
            if forced != self.name:
                return Decline(f"ember_nnpack_compat.using({forced!r}) is active")
            return self.fits(params)
        if not _switch.enabled:
            return Decline("ember.backends.nnpack.enabled is False")
        verdict = self._verdicts.get(params)
        if verdict is None:
            verdict = self.fits(params)
            if verdict:
                verdict = selection.crossover(self.name, params)
            if len(self._verdicts) > _MAX_VERDICTS:
                self._verdicts.clear()
            self._verdicts[params] = verdict
        return verdict

    def forward(self, input, weight, bias, params: ConvParams):
        """(N, C, H, W) x (K, C, kh, kw) [+ (K,)] -> (N, K, OH, OW)."""
        y = self.module.forward(input, weight, params.padding, params.stride)
        if bias is not None:
            y += bias.reshape(1, -1, 1, 1)
        return y

    def backward(self, grad_output, input, weight, params: ConvParams, output_mask):
        """(grad_input, grad_weight, grad_bias), None where ``output_mask`` is False."""
        need_input, need_weight, need_bias = output_mask
        gi = gw = gb = None
        if need_input:
            gi = self.module.grad_input(grad_output, weight, params.input_shape,
                                        params.padding, params.stride)
        if need_weight:
            gw = self.module.grad_weight(grad_output, input, params.weight_shape,
                                         params.padding, params.stride)
        if need_bias:
            gb = bias_grad(np, grad_output)
        return gi, gw, gb


class WinogradAlgorithm(NnpackAlgorithm):
    """Winograd F(m x m, 3 x 3) (Lavin & Gray 2016) for 3x3 kernels with stride 1; the
    arithmetic and its error bound are in ``winograd.py``."""

    def __init__(self, module: winograd.Winograd, priority: int):
        super().__init__()
        self.module, self.priority = module, priority
        self.name = f"nnpack_winograd_f{module.m}x{module.m}_3x3"

    def _fits(self, params):
        if params.kernel_size != (3, 3):
            kh, kw = params.kernel_size
            return Decline(f"kernel {kh}x{kw}, not 3x3")
        if params.stride != (1, 1):
            return Decline(f"stride {params.stride}, not 1")
        return True


def WinogradF4x4() -> WinogradAlgorithm:
    """F(4x4, 3x3): 6x6 input tiles, 36 multiplications per 16 outputs instead of 144."""
    return WinogradAlgorithm(winograd.F4x4, priority=30)


def WinogradF2x2() -> WinogradAlgorithm:
    """F(2x2, 3x3): 4x4 input tiles, 16 multiplications per 4 outputs instead of 36, with
    nearly the accuracy of direct summation."""
    return WinogradAlgorithm(winograd.F2x2, priority=25)


class FFTConvolution(NnpackAlgorithm):
    """FFT convolution (NNPACK's ft8x8/ft16x16) for kernels from 2x2 up to 16x16."""

    name = "nnpack_fft"
    priority = 20
    module = fft

    def _fits(self, params):
        if params.kernel_size == (1, 1):
            return Decline("1x1 kernel (nnpack_gemm1x1's case)")
        return True


class Gemm1x1(NnpackAlgorithm):
    """A 1x1 convolution as a single GEMM over channels (any stride; padding is 0 by
    NNPACK's padding < kernel rule)."""

    name = "nnpack_gemm1x1"
    priority = 35
    module = gemm1x1

    def _fits(self, params):
        if params.kernel_size != (1, 1):
            return Decline(f"kernel {params.kernel_size[0]}x{params.kernel_size[1]}, not 1x1")
        return True


ALGORITHMS = (Gemm1x1(), WinogradF4x4(), WinogradF2x2(), FFTConvolution())
"""The instances the plugin registers (also what ``api.py`` picks from)."""

