"""Dropout (``torch.nn.functional.dropout`` and its channel-wise and alpha variants).

``dropout`` is a composite op (``dropout(Tensor input, float p, bool train)``): the mask
is drawn from ember's default generator, so ``E.manual_seed`` repeats it, and applied as
one multiply ``input * mask`` with ``mask`` in {0, 1/(1-p)}; autograd therefore sees that
multiply and the gradient is ``grad * mask``. Uniforms are drawn in float32 whatever the
input's floating dtype, so one seed gives one mask for float16 ... float64 inputs.

``feature_dropout``, ``alpha_dropout`` and ``feature_alpha_dropout`` are composites of the
same kind (aten's ``_dropout_impl``): the feature variants draw one mask entry per (N, C)
channel, shape (N, C, 1, ..., 1), broadcast over the spatial dims; the alpha variants
keep the zero mean and unit variance of SELU activations (Klambauer et al. 2017):
``out = input * (a keep) + a alpha' (keep - 1 + p)``, so a dropped element becomes the
constant ``-a alpha' (1 - p)``, with ``a = 1 / sqrt((alpha'^2 p + 1)(1 - p))`` and
``alpha' = 1.7580993408473766``. ``dropout1d/2d/3d`` are PyTorch's Python
fronts over ``feature_dropout`` (with its unbatched-input handling and warnings).
"""
from __future__ import annotations

import warnings

from ember.ops import namespace as E
from ember.errors import DtypeError, ShapeError
from ember.ops.composite import composite

__all__ = ["dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
           "feature_alpha_dropout"]

_SELU_ALPHA = 1.7580993408473766  # -SELU's negative saturation, scale * alpha


def _check_p(p) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _keep(input, p: float, feature: bool, op: str = "dropout"):
    """1 with probability 1-p, else 0, in input's dtype: of input's shape, or (N, C, 1, ...)
    for the feature variants."""
    if not input.dtype.is_floating_point:
        raise DtypeError(f"{op}(): expected a floating-point input, got {input.dtype}; "
                         f"convert it with .float()")
    shape = tuple(input.shape)
    if feature:
        if input.ndim < 2:
            raise ShapeError(f"{op}(): feature dropout requires at least 2 dimensions in the "
                             f"input (N, C, *), got shape {list(shape)}")
        shape = shape[:2] + (1,) * (input.ndim - 2)
    # out of place: an in-place op here would stay in a trace of ``dropout`` (DCE keeps
    # side effects) and bake this mask into the graph
    return (E.rand(shape, dtype=E.float32, device=input.device) >= p).to(input.dtype)


def _mask(input, p: float, feature: bool = False, op: str = "dropout"):
    """The scaled keep-mask for ``input``: 1/(1-p) with probability 1-p, else 0."""
    if p == 1.0:
        _keep(input, 0.0, feature, op)  # the checks only
        return E.zeros((), dtype=input.dtype, device=input.device)
    return _keep(input, p, feature, op) * (1.0 / (1.0 - p))


def _alpha_affine(input, p: float, feature: bool, op: str):
    """(scale, shift) with ``input * scale + shift`` the alpha dropout of ``input``."""
    if p == 1.0:
        _keep(input, 0.0, feature, op)
        return E.zeros((), dtype=input.dtype, device=input.device), 0.0
    keep = _keep(input, p, feature, op)
    a = 1.0 / ((_SELU_ALPHA ** 2 * p + 1) * (1 - p)) ** 0.5
    return keep * a, (keep - 1.0) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p


@composite("dropout")
def _dropout(input, p, train):
    _check_p(p)
    if not train or p == 0.0:
        return input
    return input * _mask(input, p)


@composite("feature_dropout")
def _feature_dropout(input, p, train):
    _check_p(p)
    if not train or p == 0.0 or input.numel() == 0:
        return input
    return input * _mask(input, p, True, "feature_dropout")


def _alpha(input, p, train, feature, op):
    _check_p(p)
    if not train or p == 0.0 or input.numel() == 0:
        return input
    scale, shift = _alpha_affine(input, p, feature, op)
    return input * scale + shift


@composite("alpha_dropout")
def _alpha_dropout(input, p, train):
    return _alpha(input, p, train, False, "alpha_dropout")


@composite("feature_alpha_dropout")
def _feature_alpha_dropout(input, p, train):
    return _alpha(input, p, train, True, "feature_alpha_dropout")


def dropout(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Randomly zero elements of ``input`` with probability ``p`` while training.

    Survivors are scaled by ``1 / (1 - p)`` so the expectation is unchanged; ``p == 1``
    gives zeros (``input * 0``, so NaN stays NaN); not ``training`` or ``p == 0`` returns
    ``input`` itself. The mask comes from ember's default generator (``E.manual_seed``).

    Args:
        input: a floating tensor of any shape ``(*)``.
        p: the probability of zeroing an element, in [0, 1].
        training: apply dropout (``module.training``); otherwise the identity.
        inplace: write the result into ``input`` (``mul_``) and return it.
    Returns:
        A tensor of ``input``'s shape and dtype.
    Raises:
        ValueError: ``p`` outside [0, 1].
        DtypeError: a non-floating ``input`` while training with ``p > 0``.
        RuntimeError: ``inplace`` on a leaf that requires grad (as any in-place op).
    Reference: torch.nn.functional.dropout.
    """
    _check_p(p)
    if not inplace:
        return E.dropout(input, p, training)
    if not training or p == 0.0:
        return input
    return input.mul_(_mask(input, p))


def _inplace(input, p, training, feature, alpha, op):
    """The in-place variants: the same mask, written into ``input`` (mul_, add_)."""
    if not training or p == 0.0 or input.numel() == 0:
        return input
    if alpha:
        scale, shift = _alpha_affine(input, p, feature, op)
        return input.mul_(scale).add_(shift)
    return input.mul_(_mask(input, p, feature, op))


def _feature(input, p, training, inplace, op):
    if inplace:
        return _inplace(input, p, training, True, False, op)
    return E.feature_dropout(input, p, training)


def dropout1d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, L) or unbatched (C, L) input with probability ``p``.

    Each (n, c) channel is kept (scaled by ``1 / (1 - p)``) or zeroed as a whole: useful
    after 1-D convolutions, where neighbouring elements are correlated (Tompson et al.
    2015). The identity when not ``training`` or ``p == 0``. Floating dtypes.
    Raises ValueError for p outside [0, 1], RuntimeError for input that is not 2-D or 3-D,
    DtypeError for a non-floating input. Reference: torch.nn.functional.dropout1d.
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D input. Note "
            f"that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            f"dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            f"inputs).")
    if input.ndim == 3 or inplace:
        # in place, a (1, C, L) mask broadcasts onto the (C, L) input as a (C, 1) one would
        x = input if input.ndim == 3 else input.unsqueeze(0)
        out = _feature(x, p, training, inplace, "dropout1d")
        return input if inplace else out
    return _feature(input.unsqueeze(0), p, training, False, "dropout1d").squeeze(0)


def dropout2d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, H, W) input with probability ``p``.

    Each (n, c) plane is kept (scaled by ``1 / (1 - p)``) or zeroed as a whole (Tompson et
    al. 2015). As in PyTorch, a 3-D input is read as (N, C, L) (1-D channel dropout, with a
    warning) and other ranks warn that they are deprecated. Floating dtypes.
    Raises ValueError for p outside [0, 1], DtypeError for a non-floating input.
    Reference: torch.nn.functional.dropout2d.
    """
    _check_p(p)
    if input.ndim not in (3, 4):
        warnings.warn(
            f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is deprecated and "
            f"will result in an error in a future release. To retain the behavior and silence "
            f"this warning, please use dropout instead. Note that dropout2d exists to provide "
            f"channel-wise dropout on inputs with 2 spatial dimensions, a channel dimension, "
            f"and an optional batch dimension (i.e. 3D or 4D inputs).", stacklevel=2)
    if input.ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C "
            "is the channel dim. This behavior will change in a future release to interpret "
            "the input as one without a batch dimension, i.e. shape (C, H, W). To maintain "
            "the 1D channel-wise dropout behavior, please switch to using dropout1d instead.",
            stacklevel=2)
    return _feature(input, p, training, inplace, "dropout2d")


def dropout3d(input, p: float = 0.5, training: bool = True, inplace: bool = False):
    """Zero whole channels of (N, C, D, H, W) or unbatched (C, D, H, W) input with
    probability ``p``, scaling kept channels by ``1 / (1 - p)`` (Tompson et al. 2015).

    Other ranks warn that they are deprecated (and are read as unbatched unless 5-D, as
    PyTorch does). Floating dtypes. Raises ValueError for p outside [0, 1], DtypeError for
    a non-floating input. Reference: torch.nn.functional.dropout3d.
    """
    _check_p(p)
    if input.ndim not in (4, 5):
        warnings.warn(
            f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is deprecated and "
            f"will result in an error in a future release. To retain the behavior and silence "
            f"this warning, please use dropout instead. Note that dropout3d exists to provide "
            f"channel-wise dropout on inputs with 3 spatial dimensions, a channel dimension, "
            f"and an optional batch dimension (i.e. 4D or 5D inputs).", stacklevel=2)
    if input.ndim == 5 or inplace:
        x = input if input.ndim == 5 else input.unsqueeze(0)
        out = _feature(x, p, training, inplace, "dropout3d")
        return input if inplace else out
    return _feature(input.unsqueeze(0), p, training, False, "dropout3d").squeeze(0)


def alpha_dropout(input, p: float = 0.5, training: bool = False, inplace: bool = False):
    """Alpha dropout: drop elements to SELU's saturation value and rescale so that zero
    mean and unit variance are kept (Klambauer et al. 2017, "Self-Normalizing Neural
    Networks").

    Kept: ``a (x + alpha' p)``; dropped: ``-a alpha' (1 - p)``, with ``a = 1 / sqrt((alpha'^2
    p + 1)(1 - p))`` and ``alpha' = 1.7580993408473766``. Note ``training`` defaults to
    False, as in PyTorch. Any shape, floating dtypes; p == 1 gives zeros. Raises ValueError
    for p outside [0, 1], DtypeError for a non-floating input.
    Reference: torch.nn.functional.alpha_dropout.
    """
    _check_p(p)
    if inplace:
        return _inplace(input, p, training, False, True, "alpha_dropout")
    return E.alpha_dropout(input, p, training)


def feature_alpha_dropout(input, p: float = 0.5, training: bool = False,
                          inplace: bool = False):
    """Alpha dropout of whole channels: one keep/drop draw per (n, c) of (N, C, *) input,
    with :func:`alpha_dropout`'s affine map. ``training`` defaults to False, as in PyTorch.

    Raises ValueError for p outside [0, 1], ShapeError for fewer than 2 dims, DtypeError
    for a non-floating input. Reference: torch.nn.functional.feature_alpha_dropout.
    """
    _check_p(p)
    if inplace:
        return _inplace(input, p, training, True, True, "feature_alpha_dropout")
    return E.feature_alpha_dropout(input, p, training)
