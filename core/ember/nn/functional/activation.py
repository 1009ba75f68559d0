"""Activation functions with PyTorch's signatures (``torch.nn.functional``).

relu, gelu, silu, sigmoid, tanh, softmax, log_softmax, the piecewise activations
leaky_relu, hardtanh, threshold, hardswish, hardsigmoid, softshrink and hardshrink are
native ops: one kernel each (``backends/kernels/activation.py``) and a backward formula in
``derivatives.yaml`` that takes the branch PyTorch's backward takes at the kinks (e.g.
hardswish's gradient is 0 at -3, hardsigmoid's 0 at +-3); elu, selu and celu too, their
gradients from the saved result as PyTorch's elu_backward. relu6 and prelu are
composite ops (``native_functions.yaml``, section ``nn: activations``) built from
``hardtanh`` and ``where``, so autograd differentiates them to any order; prelu runs as
a kernel pair (``backends/kernels/gates.py``), its op chain the create_graph reference. The smooth
activations (softplus, mish, logsigmoid, ...) are in ``activation_smooth``.

``inplace=True`` writes the result into ``input`` through an in-place ember op (``relu_``,
or ``copy_`` of the out-of-place result) and returns ``input``, so autograd's version
counter and leaf checks apply as in PyTorch: an in-place activation on a leaf that
requires grad raises, and a tensor saved for backward before the call raises at backward.

Choices where PyTorch leaves room: ``softmax`` / ``log_softmax`` need ``dim`` (PyTorch's
implicit-dim fallback is deprecated there); leaving it out raises TypeError.
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember._base.grad_mode import is_grad_enabled
from ember.autograd import kernel_pair as _fused
from ember.backends.kernels.gates import prelu_backward, prelu_forward
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite

__all__ = ["relu", "relu_", "leaky_relu", "leaky_relu_", "elu", "elu_", "gelu", "silu",
           "tanh", "sigmoid", "hardtanh", "hardtanh_", "relu6", "softmax", "log_softmax",
           "selu", "selu_", "celu", "celu_", "threshold", "threshold_", "prelu", "hardswish",
           "hardsigmoid", "softshrink", "hardshrink"]


def _check_floating(op: str, x) -> None:
    if not x.is_floating_point():
        raise NotImplementedError(f"{op}: expected a floating input (float16, bfloat16, "
                                  f"float32, float64), got {x.dtype}; convert it first, "
                                  f"e.g. x.float()")


@composite("relu6")
def _relu6(self):
    return E.hardtanh(self, 0, 6)


@composite("prelu")
def _prelu(self, weight):
    _check_floating("prelu", self)
    if weight.dtype is not self.dtype:
        raise DtypeError(f"prelu: expected weight of input's dtype {self.dtype}, got "
                         f"{weight.dtype}; convert it, e.g. weight.to(input.dtype)")
    if weight.ndim > 1:
        raise ShapeError(f"prelu: expected weight to be a scalar or 1-D tensor, got "
                         f"{weight.ndim}-D of shape {tuple(weight.shape)}")
    channels = self.shape[1] if self.ndim >= 2 else 1
    n = weight.numel()
    if n != 1 and n != channels:
        raise ShapeError(f"prelu: expected weight of 1 element or one per channel "
                         f"(input.shape[1] = {channels} for input of shape "
                         f"{tuple(self.shape)}), got {n} elements")
    # NOTE: one Type from here: the wrapper refused another device, the check above
    # another dtype
    return _fused.run("prelu", _prelu_reference, prelu_forward, prelu_backward,
                      (self, weight), ())


def _prelu_reference(self, weight):
    """prelu op by op: the kernel pair's reference for double backward and tracing."""
    n = weight.numel()
    w = weight.reshape(()) if n == 1 else weight.view([n] + [1] * (self.ndim - 2))
    return E.where(self > 0, self, self * w)


def _write(input, op, *args):
    """``op(input, *args)`` written into input (the in-place variants)."""
    # NOTE: composites save their input for backward, which copy_ is about to overwrite;
    # hand them a copy then (PyTorch's in-place kernels save their result instead).
    src = input.clone() if input.requires_grad and is_grad_enabled() else input
    return input.copy_(op(src, *args))


def relu(input, inplace=False):
    """max(input, 0) elementwise; any shape and dtype but bool (ints stay ints).

    Reference: torch.nn.functional.relu.
    """
    return input.relu_() if inplace else E.relu(input)


def relu_(input):
    """relu(input, inplace=True) (torch.nn.functional.relu_)."""
    return input.relu_()


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """input where input > 0, else negative_slope * input; same shape, floating dtypes.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.leaky_relu.
    """
    if inplace:
        return _write(input, E.leaky_relu, negative_slope)
    return E.leaky_relu(input, negative_slope)


def leaky_relu_(input, negative_slope=0.01):
    """leaky_relu(input, negative_slope, inplace=True) (torch.nn.functional.leaky_relu_)."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu(input, alpha=1.0, inplace=False):
    """input where input > 0, else alpha * (exp(input) - 1); same shape, floating dtypes.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.elu (Clevert et al., 2015).
    """
    if inplace:
        return _write(input, E.elu, alpha)
    return E.elu(input, alpha)


def elu_(input, alpha=1.0):
    """elu(input, alpha, inplace=True) (torch.nn.functional.elu_)."""
    return elu(input, alpha, inplace=True)


def gelu(input, approximate="none"):
    """x * Phi(x), or its tanh approximation with approximate='tanh'; floating dtypes.

    Raises ValueError for another approximate string, NotImplementedError for integral
    inputs. Reference: torch.nn.functional.gelu.
    """
    return E.gelu(input, approximate=approximate)


def silu(input, inplace=False):
    """x * sigmoid(x) elementwise; same shape, floating dtypes.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.silu.
    """
    if inplace:
        return input.silu_()
    return E.silu(input)


def tanh(input):
    """Hyperbolic tangent elementwise; integral inputs give the default float dtype.

    Reference: torch.nn.functional.tanh.
    """
    return E.tanh(input)


def sigmoid(input):
    """1 / (1 + exp(-input)) elementwise without overflow; integral inputs give the
    default float dtype. Reference: torch.nn.functional.sigmoid.
    """
    return E.sigmoid(input)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """input clamped to [min_val, max_val]; same shape and dtype (integral inputs too).

    The gradient is 1 strictly inside the interval, else 0. Raises ValueError if
    min_val > max_val. Reference: torch.nn.functional.hardtanh.
    """
    if inplace:
        return _write(input, E.hardtanh, min_val, max_val)
    return E.hardtanh(input, min_val, max_val)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """hardtanh(input, min_val, max_val, inplace=True) (torch.nn.functional.hardtanh_)."""
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    """min(max(input, 0), 6); same shape and dtype. Reference: torch.nn.functional.relu6."""
    if inplace:
        return _write(input, E.relu6)
    return E.relu6(input)


def _need_dim(op: str, dim) -> None:
    if dim is None:
        raise TypeError(f"{op}: dim is required (the dim that sums to one), e.g. "
                        f"{op}(x, dim=-1) for the last dim or dim=1 for (N, C) logits; "
                        f"PyTorch's implicit choice of dim is not supported")


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """exp(x) / exp(x).sum(dim) along ``dim``, computed stably; same shape.

    ``dtype`` casts the input first. ``_stacklevel`` is accepted (and ignored) for
    PyTorch's positional signature. Raises TypeError when dim is None,
    NotImplementedError for integral inputs without a floating dtype.
    Reference: torch.nn.functional.softmax.
    """
    _need_dim("softmax", dim)
    return E.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """log(softmax(input, dim)) without its underflow; same shape, dtype and errors as
    softmax. Reference: torch.nn.functional.log_softmax.
    """
    _need_dim("log_softmax", dim)
    return E.log_softmax(input, dim, dtype)


def selu(input, inplace=False):
    """scale * elu(input, alpha) with PyTorch's constants alpha = 1.6733, scale = 1.0507;
    same shape, floating dtypes.

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.selu (Klambauer et al., 2017).
    """
    if inplace:
        return _write(input, E.selu)
    return E.selu(input)


def selu_(input):
    """selu(input, inplace=True) (torch.nn.functional.selu_)."""
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False):
    """max(0, x) + min(0, alpha * (exp(x / alpha) - 1)); same shape, floating dtypes.

    Raises ValueError for alpha == 0, NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.celu (Barron, 2017).
    """
    if inplace:
        return _write(input, E.celu, alpha)
    return E.celu(input, alpha)


def celu_(input, alpha=1.0):
    """celu(input, alpha, inplace=True) (torch.nn.functional.celu_)."""
    return celu(input, alpha, inplace=True)


def threshold(input, threshold, value, inplace=False):
    """input where input > threshold, else value; same shape and dtype (value is cast to
    it, so integral inputs stay integral; NaN stays NaN).

    Raises NotImplementedError for bool inputs. Reference: torch.nn.functional.threshold.
    """
    if inplace:
        return _write(input, E.threshold, threshold, value)
    return E.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """threshold(input, threshold, value, inplace=True) (torch.nn.functional.threshold_)."""
    return _write(input, E.threshold, threshold, value)


def prelu(input, weight):
    """input where input > 0, else weight * input, with a learned slope per channel.

    input: (N, C, *) or any shape with a 1-element weight; weight: 1 element (0-d or (1,))
    or (C,), C = input.shape[1] (1 for inputs of rank < 2); same floating dtype as input.
    Raises ShapeError for another weight shape, DtypeError for a weight of another dtype,
    NotImplementedError for integral inputs. Reference: torch.nn.functional.prelu (He et
    al., 2015).
    """
    return E.prelu(input, weight)


def hardswish(input, inplace=False):
    """x * relu6(x + 3) / 6; same shape, floating dtypes. Gradient 0 for x <= -3,
    x / 3 + 1/2 for -3 < x < 3, 1 for x >= 3 (PyTorch's).

    Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.hardswish (Howard et al., MobileNetV3, 2019).
    """
    if inplace:
        return _write(input, E.hardswish)
    return E.hardswish(input)


def hardsigmoid(input, inplace=False):
    """relu6(x + 3) / 6; same shape, floating dtypes; gradient 1/6 strictly inside
    (-3, 3), else 0. Raises NotImplementedError for integral or bool inputs.
    Reference: torch.nn.functional.hardsigmoid.
    """
    if inplace:
        return _write(input, E.hardsigmoid)
    return E.hardsigmoid(input)


def softshrink(input, lambd=0.5):
    """x - lambd for x > lambd, x + lambd for x < -lambd, else 0; same shape, floating
    dtypes. Raises ValueError for lambd < 0, NotImplementedError for integral inputs.
    Reference: torch.nn.functional.softshrink.
    """
    return E.softshrink(input, lambd)


def hardshrink(input, lambd=0.5):
    """x where |x| > lambd, else 0; same shape, floating dtypes. Raises
    NotImplementedError for integral inputs. Reference: torch.nn.functional.hardshrink.
    """
    return E.hardshrink(input, lambd)
