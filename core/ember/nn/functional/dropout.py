"""Dropout (``torch.nn.functional.dropout``).

``dropout`` is a composite op (``dropout(Tensor input, float p, bool train)``): the mask
is drawn from ember's default generator, so ``E.manual_seed`` repeats it, and applied as
one multiply ``input * mask`` with ``mask`` in {0, 1/(1-p)}; autograd therefore sees that
multiply and the gradient is ``grad * mask``. Uniforms are drawn in float32 whatever the
input's floating dtype, so one seed gives one mask for float16 ... float64 inputs.
"""
from __future__ import annotations

import ember as E
from ember.errors import DtypeError
from ember.ops.composite import composite

__all__ = ["dropout"]


def _check_p(p) -> None:
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _mask(input, p: float):
    """The scaled keep-mask for ``input``: 1/(1-p) with probability 1-p, else 0."""
    if not input.dtype.is_floating_point:
        raise DtypeError(f"dropout(): expected a floating-point input, got {input.dtype}; "
                         f"convert it with .float()")
    if p == 1.0:
        return E.zeros((), dtype=input.dtype, device=input.device)
    keep = E.rand(tuple(input.shape), dtype=E.float32, device=input.device) >= p
    # out of place: an in-place op here would stay in a trace of ``dropout`` (DCE keeps
    # side effects) and bake this mask into the graph
    return keep.to(input.dtype) * (1.0 / (1.0 - p))


@composite("dropout")
def _dropout(input, p, train):
    _check_p(p)
    if not train or p == 0.0:
        return input
    return input * _mask(input, p)


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
