"""Smooth activations and gates with PyTorch's signatures (``torch.nn.functional``):
softplus, mish, logsigmoid, softsign, tanhshrink, glu and softmin.

Each is a composite op (``native_functions.yaml``, section ``nn: activations``) built from
ember ops, so autograd differentiates it to any order. Where a textbook formula would
overflow (``exp`` of a large input) each branch of a ``where`` sees its input clamped to
the range where that branch is taken: the dropped branch then stays finite, and its zero
gradient does not turn into ``0 * inf = nan``.

Choices where PyTorch leaves room: ``softmin`` needs ``dim``, as ``softmax`` here.
"""
from __future__ import annotations

import ember as E
from ember.errors import ShapeError
from ember.ops.composite import composite

from .activation import _check_floating, _need_dim, _write

__all__ = ["softplus", "mish", "logsigmoid", "softsign", "tanhshrink", "glu", "softmin"]

_HALF = (E.float16, E.bfloat16)


def _log1p_exp(z):
    """log(1 + exp(z)) for any z, accurate at both ends, gradient sigmoid(z) (1/2 at 0)."""
    # NOTE: the clamps are no-ops where each branch is taken; at z == 0 the second
    # branch's clamp passes the gradient (clamp's does at its edge), giving exactly 1/2.
    pos = z > 0
    return E.where(pos, z + E.log1p(E.exp(-E.clamp_min(z, 0))),
                   E.log1p(E.exp(E.clamp_max(z, 0))))


@composite("softplus")
def _softplus(self, beta, threshold):
    _check_floating("softplus", self)
    if self.dtype in _HALF:  # as PyTorch: float16's exp overflows from z = 11.1
        return _softplus(self.float(), beta, threshold).to(self.dtype)
    z = self * beta
    # PyTorch's formula (log1p(exp(z)) up to threshold, then the identity), with exp's
    # input clamped so the branch where() drops cannot overflow
    return E.where(z > threshold, self, E.log1p(E.exp(E.clamp_max(z, threshold))) / beta)


@composite("mish")
def _mish(self):
    _check_floating("mish", self)
    if self.dtype in _HALF:  # computed in float32, as PyTorch does
        return _mish(self.float()).to(self.dtype)
    return self * E.tanh(_softplus(self, 1, 20))


@composite("log_sigmoid")
def _log_sigmoid(self):
    _check_floating("logsigmoid", self)
    return -_log1p_exp(-self)


def _no_bool(op: str, x) -> None:
    if x.dtype is E.bool_:
        raise NotImplementedError(f"{op}: bool inputs are not supported; convert them first, "
                                  f"e.g. x.float()")


@composite("softsign")
def _softsign(self):
    _no_bool("softsign", self)
    return self / (self.abs() + 1)


@composite("tanhshrink")
def _tanhshrink(self):
    _no_bool("tanhshrink", self)
    return self - E.tanh(self)


@composite("glu")
def _glu(self, dim):
    if self.ndim == 0:
        raise ShapeError("glu: expected an input with at least one dim to halve, got a 0-d "
                         "tensor")
    _check_floating("glu", self)
    size = self.shape[dim]
    if size % 2:
        raise ShapeError(f"glu: halving dimension must be even, but dimension {dim} is size "
                         f"{size} (input shape {tuple(self.shape)})")
    a, b = E.chunk(self, 2, dim)
    return a * E.sigmoid(b)


@composite("softmin")
def _softmin(self, dim, dtype):
    if dtype is not None:
        self = self.to(dtype)
    elif not self.is_floating_point():
        raise NotImplementedError(f"softmin: expected a floating input, got {self.dtype}; "
                                  f"pass dtype=ember.float32 or convert it first")
    return E.softmax(-self, dim)


def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + exp(beta * x)) / beta, and x itself where beta * x > threshold; same shape,
    floating dtypes. Exact for large negative inputs; gradients finite everywhere.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.softplus.
    """
    return E.softplus(input, beta, threshold)


def mish(input, inplace=False):
    """x * tanh(softplus(x)); same shape, floating dtypes.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.mish (Misra, 2019).
    """
    if inplace:
        return _write(input, E.mish)
    return E.mish(input)


def logsigmoid(input):
    """log(sigmoid(x)) computed without overflow or underflow (logsigmoid(50) = -1.9e-22,
    logsigmoid(-1000) = -1000); same shape, floating dtypes.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.logsigmoid.
    """
    return E.log_sigmoid(input)


def softsign(input):
    """x / (1 + |x|); same shape; integral inputs give the default float dtype.

    Raises NotImplementedError for bool. Reference: torch.nn.functional.softsign.
    """
    return E.softsign(input)


def tanhshrink(input):
    """x - tanh(x); same shape; integral inputs give the default float dtype.

    Raises NotImplementedError for bool. Reference: torch.nn.functional.tanhshrink.
    """
    return E.tanhshrink(input)


def glu(input, dim=-1):
    """a * sigmoid(b), a and b the two halves of input along dim: (*, 2n, *) -> (*, n, *);
    floating dtypes.

    Raises ShapeError for a 0-d input or an odd size along dim, IndexError for a dim out
    of range, NotImplementedError for integral inputs.
    Reference: torch.nn.functional.glu (Dauphin et al., 2017).
    """
    return E.glu(input, dim)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input, dim): exp(-x) / exp(-x).sum(dim) along dim, computed stably; same
    shape. ``dtype`` casts the input first; ``_stacklevel`` is accepted for PyTorch's
    positional signature. Raises TypeError when dim is None, NotImplementedError for
    integral inputs without a floating dtype. Reference: torch.nn.functional.softmin.
    """
    _need_dim("softmin", dim)
    return E.softmin(input, dim, dtype)
