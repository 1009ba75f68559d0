"""Composite pointwise ops and moments (``dispatch: composite``), built from other ember
ops so that autograd and tracing see through them: the aliases square, absolute, clip and
``Tensor.where``, float_power (PyTorch's own definition: pow in float64), and nanmean,
std_mean, var_mean. Registered on import by ``ops/composite.py``.
"""
from __future__ import annotations

from . import namespace as E
from ..errors import DtypeError
from ..types import from_numpy_dtype
from .composite import composite


@composite("square")
def square(self):
    return E.pow(self, 2)  # bool ** 2 is int64, as torch.square


@composite("square_")
def square_(self):
    return self.pow_(2)


@composite("absolute")
def absolute(self):
    return E.abs(self)


@composite("absolute_")
def absolute_(self):
    return self.abs_()


@composite("clip")
def clip(self, min=None, max=None):  # noqa: A002 - the op's argument names
    return E.clamp(self, min, max)


@composite("clip_")
def clip_(self, min=None, max=None):  # noqa: A002
    return self.clamp_(min, max)


@composite("where.method")
def where_method(self, condition, other):
    return E.where(condition, self, other)


def _double(x):
    return x.double() if isinstance(x, E.Tensor) else float(x)


@composite("float_power")
def float_power(self, exponent):
    # each operand goes to float64 on its own: promoting them together first could round an
    # int64 tensor through float32
    return E.pow(_double(self), _double(exponent))


@composite("float_power_")
def float_power_(self, exponent):
    if self.dtype is not E.float64:
        raise RuntimeError(f"float_power_(): the base has dtype {self.dtype}, but the result "
                           f"of float_power is float64; use the out-of-place float_power() "
                           f"or convert the base with .double() first")
    return self.pow_(_double(exponent))


@composite("nanmean")
def nanmean(self, dim=None, keepdim=False, dtype=None):
    floating = self.is_floating_point() if dtype is None else dtype.kind == "f" or \
        dtype == E.bfloat16.numpy
    if not floating:
        got = self.dtype if dtype is None else f"dtype={dtype}"
        raise DtypeError(f"nanmean(): expected a floating point input, got {got}; convert "
                         f"with .float() or pass a floating dtype=")
    x = self if dtype is None else self.to(from_numpy_dtype(dtype))
    return E.nansum(x, dim, keepdim) / (x == x).sum(dim, keepdim)  # noqa: PLR0124


@composite("std_mean")
def std_mean(self, dim=None, unbiased=None, keepdim=False, correction=None):
    return (E.std(self, dim, unbiased, keepdim, correction=correction),
            E.mean(self, dim, keepdim))


@composite("var_mean")
def var_mean(self, dim=None, unbiased=None, keepdim=False, correction=None):
    return (E.var(self, dim, unbiased, keepdim, correction=correction),
            E.mean(self, dim, keepdim))
