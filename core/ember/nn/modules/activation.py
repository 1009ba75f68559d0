"""Activation layers: thin modules over ``ember.nn.functional``'s activations.

Each takes any-shaped floating input and returns the same shape (Softmax/LogSoftmax
normalise along ``dim``). ``inplace=True`` overwrites the input, as in PyTorch.
Reference: torch.nn.modules.activation.
"""
from __future__ import annotations

import warnings

from ... import factories as _f
from .. import functional as F
from .. import init
from ..parameter import Parameter
from ._sizes import as_int
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "ELU", "GELU", "SiLU", "Tanh", "Sigmoid", "Hardtanh", "ReLU6",
           "Softmax", "LogSoftmax", "SELU", "CELU", "Threshold", "PReLU", "Hardswish",
           "Hardsigmoid", "Softshrink", "Hardshrink", "Softmax2d"]


def _inplace_str(inplace: bool, lead: str = "") -> str:
    return f"{lead}inplace=True" if inplace else ""


class ReLU(Module):
    """``max(x, 0)``. Reference: torch.nn.ReLU."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class LeakyReLU(Module):
    """``x if x >= 0 else negative_slope * x`` (default slope 0.01).
    Reference: torch.nn.LeakyReLU."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + _inplace_str(self.inplace, ", ")


class ELU(Module):
    """``x if x > 0 else alpha * (exp(x) - 1)``. Reference: torch.nn.ELU (Clevert et al.)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_str(self.inplace, ", ")


class GELU(Module):
    """``x * Phi(x)``; ``approximate='tanh'`` uses the tanh approximation.
    Reference: torch.nn.GELU (Hendrycks & Gimpel, 2016)."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)`` (swish). Reference: torch.nn.SiLU."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class Tanh(Module):
    """``tanh(x)``. Reference: torch.nn.Tanh."""

    def forward(self, input):
        return F.tanh(input)


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``. Reference: torch.nn.Sigmoid."""

    def forward(self, input):
        return F.sigmoid(input)


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)`` (defaults -1, 1).

    ``min_value``/``max_value`` are PyTorch's deprecated spellings (they warn).
    Raises ValueError unless ``max_val > min_val``. Reference: torch.nn.Hardtanh.
    """

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None):
        super().__init__()
        if min_value is not None or max_value is not None:
            warnings.warn("keyword arguments min_value and max_value are deprecated, use "
                          "min_val and max_val instead", DeprecationWarning, stacklevel=2)
            min_val = min_val if min_value is None else min_value
            max_val = max_val if max_value is None else max_value
        if not max_val > min_val:
            raise ValueError(f"Hardtanh: expected max_val > min_val, got min_val={min_val}, "
                             f"max_val={max_val}")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + \
            _inplace_str(self.inplace, ", ")


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``. Reference: torch.nn.ReLU6."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim`` (None picks PyTorch's legacy implicit dim,
    with a warning). Reference: torch.nn.Softmax."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(Module):
    """Softmax over the channels at each location: ``(N, C, H, W)`` or ``(C, H, W)`` ->
    the same shape (softmax along dim -3). Raises ValueError for other ranks.
    Reference: torch.nn.Softmax2d."""

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D (C, H, W) or 4D (N, C, H, "
                             f"W), got {input.ndim}D of shape {tuple(input.shape)}")
        return F.softmax(input, -3)


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim``, computed stably. Reference: torch.nn.LogSoftmax."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class SELU(Module):
    """``scale * elu(x, alpha)`` with alpha = 1.6733, scale = 1.0507: any shape, floating
    dtypes. Reference: torch.nn.SELU (Klambauer et al., 2017)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self) -> str:
        return _inplace_str(self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``: any shape, floating dtypes;
    alpha = 0 raises ValueError at forward. Reference: torch.nn.CELU (Barron, 2017)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_str(self.inplace, ", ")


class Threshold(Module):
    """``x if x > threshold else value``: any shape and dtype but bool (value is cast to
    it). Reference: torch.nn.Threshold."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + \
            _inplace_str(self.inplace, ", ")


class PReLU(Module):
    """``x if x > 0 else a * x`` with a learned slope ``weight`` of shape
    ``(num_parameters,)``, initialised to ``init``: one slope shared by all channels
    (num_parameters=1) or one per channel (``num_parameters = C`` for input ``(N, C, *)``).

    device, dtype: where and how the weight is created (defaults: the default device and
    float dtype). Raises ValueError for num_parameters < 1; at forward, ShapeError when
    num_parameters is neither 1 nor C. Reference: torch.nn.PReLU (He et al., 2015).
    """

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device=None, dtype=None):
        n = as_int(num_parameters)
        if n is None or n < 1:
            raise ValueError(f"PReLU: expected num_parameters to be a positive int, got "
                             f"{num_parameters!r}")
        num_parameters = n
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_f.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Fill the slopes with ``init``."""
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Hardswish(Module):
    """``x * relu6(x + 3) / 6``: any shape, floating dtypes. As in PyTorch its repr does
    not show ``inplace``. Reference: torch.nn.Hardswish (Howard et al., 2019)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(Module):
    """``relu6(x + 3) / 6``: any shape, floating dtypes. As in PyTorch its repr does not
    show ``inplace``. Reference: torch.nn.Hardsigmoid."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class Softshrink(Module):
    """``x - lambd`` above lambd, ``x + lambd`` below -lambd, else 0: any shape, floating
    dtypes; lambd < 0 raises ValueError at forward. Reference: torch.nn.Softshrink."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Module):
    """``x if |x| > lambd else 0``: any shape, floating dtypes.
    Reference: torch.nn.Hardshrink."""

    def __init__(self, lambd: float = 0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)
