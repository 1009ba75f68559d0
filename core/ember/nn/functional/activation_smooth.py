"""Smooth activations and gates with PyTorch's signatures (``torch.nn.functional``):
softplus, mish, logsigmoid, softsign, tanhshrink, glu and softmin.

softplus, mish and log_sigmoid are native ops: one kernel each
(``backends/kernels/activation.py``) and PyTorch's backward formulas in
``derivatives.yaml``. softsign, tanhshrink, glu and softmin are composite ops
(``native_functions.yaml``, section ``nn: activations``) built from ember ops, so autograd
differentiates them to any order; glu runs as a kernel pair (``backends/kernels/gates.py``),
its op chain the create_graph reference.

Choices where PyTorch leaves room: ``softmin`` needs ``dim``, as ``softmax`` here.
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.autograd import kernel_pair as _fused
from ember.backends.kernels.gates import glu_backward, glu_forward
from ember.errors import ShapeError
from ember.ops.composite import composite

from .activation import _check_floating, _need_dim, _write

__all__ = ["softplus", "mish", "logsigmoid", "softsign", "tanhshrink", "glu", "softmin"]


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
    return _fused.run("glu", _glu_reference, glu_forward, glu_backward, (self,), (dim,))


def _glu_reference(self, dim):
    """glu op by op: the kernel pair's reference for double backward and tracing."""
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
