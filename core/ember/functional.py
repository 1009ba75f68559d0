"""Python fronts over declared ops whose kind of result depends on a flag, as in PyTorch's
``torch/functional.py``: ``nonzero(as_tuple=...)`` (a Tensor or a tuple of Tensors),
``unique`` and ``unique_consecutive`` (a Tensor, or a tuple with the inverse indices and/or
the counts). Each front calls the generated op (``nonzero``, ``_unique2``, ``unique_dim``,
``unique_consecutive`` of ``native_functions.yaml``), so argument checks, devices and
tracing are the op's; ``install`` puts the fronts in ``ember`` and on ``Tensor`` in place
of the generated ``nonzero`` and ``unique_consecutive``.
"""
from __future__ import annotations

from .factories import zeros

__all__ = ["nonzero", "unique", "unique_consecutive"]

_OPS: dict = {}  # the generated ops the fronts call, by name


def nonzero(input, *, out=None, as_tuple: bool = False):
    """Indices of the non-zero elements of ``input`` (NaN counts as non-zero).

    ``as_tuple=False``: an int64 tensor (K, input.ndim), one row per element in row-major
    order (``out=`` takes it). ``as_tuple=True``: a tuple of input.ndim int64 tensors (K,),
    one per dim, which index ``input`` (``x[x.nonzero(as_tuple=True)]``); a 0-d input gives
    one (K,) tensor, K in {0, 1}. Raises TypeError for ``out=`` with ``as_tuple=True``.
    Reference: torch.nonzero.
    """
    if not as_tuple:
        return _OPS["nonzero"](input, out=out)
    if out is not None:
        raise TypeError("nonzero(): out= is not supported with as_tuple=True; call "
                        "nonzero(x, out=...) for the (K, ndim) tensor")
    index = _OPS["nonzero"](input)
    if input.ndim == 0:
        return (zeros(index.shape[0], dtype=index.dtype, device=index.device),)
    return index.unbind(1)


def _pick(output, inverse, counts, return_inverse: bool, return_counts: bool):
    if not (return_inverse or return_counts):
        return output
    return (output,) + ((inverse,) if return_inverse else ()) + \
        ((counts,) if return_counts else ())


def unique(input, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim=None):
    """The distinct elements of ``input`` (or its distinct slices along ``dim``), sorted.

    Returns the values alone, or a tuple (values, inverse_indices?, counts?) with what was
    asked for. dim=None: values are 1-D (input's dtype; every NaN is distinct and sorts
    last), inverse_indices (int64, input's shape) locate each element in them, counts
    (int64) count each value. With ``dim``: values keep input's shape with dim shortened,
    inverse_indices has shape (input.size(dim),). ``sorted=False`` also sorts (PyTorch
    leaves that order unspecified). Raises IndexError for a dim out of range.
    Reference: torch.unique.
    """
    if dim is None:
        res = _OPS["_unique2"](input, sorted, return_inverse, return_counts)
    else:
        res = _OPS["unique_dim"](input, dim, sorted, return_inverse, return_counts)
    return _pick(*res, return_inverse, return_counts)


def unique_consecutive(input, return_inverse: bool = False, return_counts: bool = False,
                       dim=None):
    """``input`` (flattened when dim is None, else its slices along ``dim``) with each run
    of equal consecutive entries kept once: [1, 1, 2, 1] -> [1, 2, 1].

    Returns the values alone or a tuple with inverse_indices (int64: each entry's run,
    input's shape or (input.size(dim),)) and/or counts (int64 run lengths), as asked.
    NaN never equals NaN. Raises IndexError for a dim out of range.
    Reference: torch.unique_consecutive.
    """
    res = _OPS["unique_consecutive"](input, return_inverse, return_counts, dim)
    return _pick(*res, return_inverse, return_counts)


def install(namespace: dict, tensor_cls) -> None:
    """Install the fronts as ``ember.<name>`` and ``Tensor.<name>`` (once, at import)."""
    for name in ("nonzero", "_unique2", "unique_dim", "unique_consecutive"):
        _OPS[name] = namespace[name]
    for name in __all__:
        namespace[name] = globals()[name]
        setattr(tensor_cls, name, globals()[name])
