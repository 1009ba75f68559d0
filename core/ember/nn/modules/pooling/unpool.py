"""``MaxUnpool1d/2d/3d``: the partial inverse of max pooling, values put back at the
positions max pooling's indices give, zeros elsewhere. Reference: torch.nn.MaxUnpool1d/2d/3d.
"""
from __future__ import annotations

from ... import functional as F
from ..module import Module

__all__ = ["MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"]


def _ntuple(v, n: int) -> tuple:
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxUnpoolNd(Module):
    _fn, _n = None, 0

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _ntuple(kernel_size, self._n)
        self.stride = _ntuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _ntuple(padding, self._n)

    def forward(self, input, indices, output_size=None):
        return getattr(F, self._fn)(input, indices, self.kernel_size, self.stride,
                                    self.padding, output_size)

    def extra_repr(self) -> str:
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


_DOC = """Zeros of ``{out}`` holding each value of ``{shape}`` input (or without ``N``) at
    the flat position its ``indices`` (from ``MaxPool{n}d(return_indices=True)``) give.

    Args:
        kernel_size, stride (default kernel_size), padding: the pooling's, an int or {n}
            ints (stored as {n}-tuples, as PyTorch does).
    forward(input, indices, output_size=None): ``output_size`` (the pooled input's size)
    undoes a floor rounding; the default is (in - 1) * stride - 2 * padding + kernel_size.
    Raises what ``F.{fn}`` raises. Reference: torch.nn.{name}.
    """


class MaxUnpool1d(_MaxUnpoolNd):
    __doc__ = _DOC.format(out="(N, C, L_out)", shape="(N, C, L_in)", n=1, fn="max_unpool1d",
                          name="MaxUnpool1d")
    _fn, _n = "max_unpool1d", 1


class MaxUnpool2d(_MaxUnpoolNd):
    __doc__ = _DOC.format(out="(N, C, H_out, W_out)", shape="(N, C, H_in, W_in)", n=2,
                          fn="max_unpool2d", name="MaxUnpool2d")
    _fn, _n = "max_unpool2d", 2


class MaxUnpool3d(_MaxUnpoolNd):
    __doc__ = _DOC.format(out="(N, C, D_out, H_out, W_out)", shape="(N, C, D_in, H_in, W_in)",
                          n=3, fn="max_unpool3d", name="MaxUnpool3d")
    _fn, _n = "max_unpool3d", 3
