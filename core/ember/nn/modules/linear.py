"""Linear layers: ``Identity``, ``Linear``, ``Bilinear`` (``torch.nn`` linear layers).

Weights use PyTorch's default initialisation: ``kaiming_uniform_(a=sqrt(5))`` for Linear
(which is U(-1/sqrt(in), 1/sqrt(in))) and U(-1/sqrt(fan_in), 1/sqrt(fan_in)) biases.
"""
from __future__ import annotations

import math

from ... import factories as _f
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._sizes import as_int
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


def _positive(cls: str, **sizes) -> tuple:
    """The sizes as Python ints; ValueError unless each is a non-negative integer."""
    out = []
    for name, v in sizes.items():
        n = as_int(v)
        if n is None or n < 0:
            raise ValueError(f"{cls}: expected {name} to be a non-negative int, got {v!r}")
        out.append(n)
    return tuple(out)


class Identity(Module):
    """Return the input unchanged; accepts and ignores any constructor arguments (so it
    can stand in for another layer). Reference: torch.nn.Identity."""

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias``.

    Args:
        in_features, out_features: sizes of the last input and output dim.
        bias: learn an additive bias (default True).
        device, dtype: where and how the parameters are created (defaults: the default
            device, the default float dtype).
    Shapes: input ``(*, in_features)`` -> output ``(*, out_features)``; ``weight`` is
    ``(out_features, in_features)``, ``bias`` ``(out_features,)``.
    Raises ValueError for negative or non-int sizes.
    Reference: torch.nn.Linear.
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device=None,
                 dtype=None):
        super().__init__()
        in_features, out_features = _positive("Linear", in_features=in_features,
                                              out_features=out_features)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(_f.empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_f.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias with PyTorch's defaults."""
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y[..., o] = x1 @ weight[o] @ x2 + bias[o]``.

    Args:
        in1_features, in2_features, out_features: sizes of the last dims of the two
            inputs and the output.
        bias, device, dtype: as for Linear.
    Shapes: inputs ``(*, in1_features)`` and ``(*, in2_features)`` -> ``(*, out_features)``;
    ``weight`` ``(out_features, in1_features, in2_features)``, ``bias`` ``(out_features,)``;
    both initialised U(-1/sqrt(in1_features), 1/sqrt(in1_features)).
    Raises ValueError for negative or non-int sizes.
    Reference: torch.nn.Bilinear.
    """

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, device=None, dtype=None):
        super().__init__()
        in1_features, in2_features, out_features = _positive(
            "Bilinear", in1_features=in1_features, in2_features=in2_features,
            out_features=out_features)
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(_f.empty(out_features, in1_features, in2_features,
                                         device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(_f.empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Re-draw weight and bias with PyTorch's defaults."""
        bound = 1 / math.sqrt(self.weight.shape[1]) if self.weight.shape[1] > 0 else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
