"""``ember.nn.init``: fill parameters in place with PyTorch's initialisation schemes.

Every initialiser works on any-shaped floating tensor (those needing a fan on tensors of at
least 2 dims, ``(out, in, *kernel)`` as Linear and Conv weights are laid out), writes under
``no_grad`` through ``copy_`` / ``fill_`` (so the version counter bumps and saved-tensor
checks see the change), takes an optional ``generator`` (an ``ember.Generator``; the
default generator of the tensor's device otherwise) and returns the tensor.

Random streams differ from PyTorch's (see ``ember.random``); distributions match.
Reference: torch.nn.init.
"""
from __future__ import annotations

import math
import warnings

from .. import factories as _f
from ..ops.namespace import where
from ..autograd import no_grad
from ..tensor import Tensor
from ..types import float32 as _FLOAT32

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_", "kaiming_uniform_",
           "kaiming_normal_", "orthogonal_", "sparse_",
           # deprecated spellings without the trailing underscore (they warn)
           "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]

_LINEAR_FNS = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
               "conv_transpose3d", "sigmoid")


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The recommended gain for ``nonlinearity``: 1 for linear/conv/sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu (``param`` = negative slope,
    default 0.01), 3/4 for selu.

    Raises ValueError for an unknown nonlinearity or a non-numeric ``param``.
    Reference: torch.nn.init.calculate_gain.
    """
    if nonlinearity in _LINEAR_FNS:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number; pass an int or float")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}; expected one of "
                     f"{', '.join(_LINEAR_FNS)}, tanh, relu, leaky_relu, selu")


def _check(tensor, fn: str) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"init.{fn}: expected an ember.Tensor, got {type(tensor).__name__}")


def _rand(tensor: Tensor, generator, normal: bool) -> Tensor:
    draw = _f.randn if normal else _f.rand
    return draw(*tensor.shape, generator=generator, dtype=tensor.dtype, device=tensor.device)


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight laid out ``(out, in, *kernel)``.

    Raises ValueError for tensors of fewer than 2 dims."""
    if tensor.ndim < 2:
        raise ValueError(f"Fan in and fan out can not be computed for tensor with fewer than 2 "
                         f"dimensions (got shape {list(tensor.shape)}); use uniform_/normal_ "
                         f"with explicit bounds for biases")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: Tensor, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with samples from U(a, b). Reference: torch.nn.init.uniform_."""
    _check(tensor, "uniform_")
    with no_grad():
        r = _rand(tensor, generator, normal=False)
        return tensor.copy_(r.mul_(b - a).add_(a))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` with samples from N(mean, std^2). Reference: torch.nn.init.normal_."""
    _check(tensor, "normal_")
    with no_grad():
        r = _rand(tensor, generator, normal=True)
        return tensor.copy_(r.mul_(std).add_(mean))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator=None) -> Tensor:
    """Fill ``tensor`` with N(mean, std^2) samples conditioned on lying in [a, b]
    (rejection sampling: out-of-range values are redrawn).

    Raises ValueError if [a, b] is empty. Reference: torch.nn.init.trunc_normal_.
    """
    _check(tensor, "trunc_normal_")
    if not a < b:
        raise ValueError(f"trunc_normal_: expected a < b, got a={a}, b={b}")
    with no_grad():
        out = _rand(tensor, generator, normal=True).mul_(std).add_(mean)
        bad = (out < a) | (out > b)
        # NOTE: redraw only while some value is out of range; with [a, b] at least a few
        # std wide this ends after a handful of rounds.
        for _ in range(1000):
            if not bool(bad.any()):
                break
            fresh = _rand(tensor, generator, normal=True).mul_(std).add_(mean)
            out = where(bad, fresh, out)
            bad = (out < a) | (out > b)
        else:
            # [a, b] far in a tail: clamping beats an endless loop
            out = out.clamp(a, b)
        return tensor.copy_(out)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill ``tensor`` with ``val``. Reference: torch.nn.init.constant_."""
    _check(tensor, "constant_")
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with 1. Reference: torch.nn.init.ones_."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill ``tensor`` with 0. Reference: torch.nn.init.zeros_."""
    _check(tensor, "zeros_")
    with no_grad():
        return tensor.zero_()


def eye_(tensor: Tensor) -> Tensor:
    """Fill the 2-D ``tensor`` with the identity (ones on the diagonal).

    Raises ValueError for other ranks. Reference: torch.nn.init.eye_."""
    _check(tensor, "eye_")
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported, got shape "
                         f"{list(tensor.shape)}")
    with no_grad():
        n, m = tensor.shape
        return tensor.copy_(_f.eye(n, m, dtype=tensor.dtype, device=tensor.device))


def dirac_(tensor: Tensor, groups: int = 1) -> Tensor:
    """Fill a 3-, 4- or 5-D convolution weight ``(out, in, *kernel)`` with the Dirac delta,
    so the convolution passes its input through: in each of ``groups`` groups of
    ``out // groups`` output channels, channel d gets a 1 at input channel d, kernel
    centre (for d < min(out // groups, in)), 0 elsewhere.

    Raises ValueError for another rank or ``out`` not divisible by ``groups``.
    Reference: torch.nn.init.dirac_.
    """
    _check(tensor, "dirac_")
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"Only tensors with 3, 4, or 5 dimensions are supported, got shape "
                         f"{list(tensor.shape)}")
    out_channels = tensor.shape[0]
    if groups < 1 or out_channels % groups != 0:
        raise ValueError(f"dim 0 must be divisible by groups: {out_channels} output channels, "
                         f"groups={groups}")
    per_group = out_channels // groups
    centre = tuple(k // 2 for k in tensor.shape[2:])
    with no_grad():
        tensor.zero_()
        for g in range(groups):
            for d in range(min(per_group, tensor.shape[1])):
                tensor[(g * per_group + d, d) + centre] = 1
    return tensor


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot uniform: U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)).

    Raises ValueError for tensors of fewer than 2 dims.
    Reference: torch.nn.init.xavier_uniform_ (Glorot & Bengio, 2010).
    """
    _check(tensor, "xavier_uniform_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Glorot normal: N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    Raises ValueError for tensors of fewer than 2 dims.
    Reference: torch.nn.init.xavier_normal_ (Glorot & Bengio, 2010).
    """
    _check(tensor, "xavier_normal_")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor, fn, a, mode, nonlinearity):
    _check(tensor, fn)
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    return calculate_gain(nonlinearity, a) / math.sqrt(_calculate_correct_fan(tensor, mode))


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He uniform: U(-bound, bound) with bound = gain * sqrt(3 / fan), gain from
    ``calculate_gain(nonlinearity, a)``, fan = fan_in or fan_out per ``mode``.

    Raises ValueError for tensors of fewer than 2 dims or an unknown mode/nonlinearity.
    Reference: torch.nn.init.kaiming_uniform_ (He et al., 2015).
    """
    std = _kaiming_std(tensor, "kaiming_uniform_", a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    """He normal: N(0, std^2) with std = gain / sqrt(fan).

    Raises ValueError for tensors of fewer than 2 dims or an unknown mode/nonlinearity.
    Reference: torch.nn.init.kaiming_normal_ (He et al., 2015).
    """
    std = _kaiming_std(tensor, "kaiming_normal_", a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    """Fill ``tensor`` (rows = size 0, cols = the other dims flattened) with a (semi-)
    orthogonal matrix times ``gain``: the Q of the QR decomposition of a standard normal
    matrix, its columns' signs fixed by R's diagonal so Q is Haar-distributed. Half
    precision draws and factorizes in float32.

    Raises ValueError for tensors of fewer than 2 dims.
    Reference: torch.nn.init.orthogonal_ (Saxe et al., 2013; Mezzadri, 2007).
    """
    from ..linalg import qr  # NOTE: late: ember.linalg imports after nn

    _check(tensor, "orthogonal_")
    if tensor.ndim < 2:
        raise ValueError(f"Only tensors with 2 or more dimensions are supported, got shape "
                         f"{list(tensor.shape)}")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    dtype = tensor.dtype if tensor.dtype.itemsize >= 4 else _FLOAT32
    flat = _f.randn(rows, cols, generator=generator, dtype=dtype, device=tensor.device)
    if rows < cols:
        flat = flat.t()
    q, r = qr(flat)
    q = q * r.diagonal().sign()
    if rows < cols:
        q = q.t()
    with no_grad():
        return tensor.copy_(q.reshape(tensor.shape)).mul_(gain)


def sparse_(tensor: Tensor, sparsity: float, std: float = 0.01, generator=None) -> Tensor:
    """Fill the 2-D ``tensor`` (rows, cols) from N(0, std^2), then zero
    ``ceil(sparsity * rows)`` randomly chosen entries in each column.

    Raises ValueError for another rank. Reference: torch.nn.init.sparse_ (Martens, 2010).
    """
    _check(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError(f"Only tensors with 2 dimensions are supported, got shape "
                         f"{list(tensor.shape)}")
    rows, cols = tensor.shape
    num_zeros = math.ceil(sparsity * rows)
    with no_grad():
        normal_(tensor, 0.0, std, generator)
        for col in range(cols):
            zero_rows = _f.randperm(rows, generator=generator, device=tensor.device)
            tensor[zero_rows[:num_zeros], col] = 0
    return tensor


def _deprecated(new):
    """``new`` under its old name without the underscore, warning as PyTorch does."""
    old = new.__name__[:-1]

    def init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old}` is now deprecated in favor of `nn.init.{new.__name__}`.",
                      FutureWarning, stacklevel=2)
        return new(*args, **kwargs)

    init.__name__ = init.__qualname__ = old
    init.__doc__ = f"Deprecated: use ``{new.__name__}``, which this calls after a FutureWarning."
    return init


uniform, normal, constant, eye, dirac = map(_deprecated, (uniform_, normal_, constant_, eye_,
                                                          dirac_))
xavier_uniform, xavier_normal = _deprecated(xavier_uniform_), _deprecated(xavier_normal_)
kaiming_uniform, kaiming_normal = _deprecated(kaiming_uniform_), _deprecated(kaiming_normal_)
orthogonal, sparse = _deprecated(orthogonal_), _deprecated(sparse_)
