"""``default_collate``: merge a list of samples into a batch; ``default_convert``: turn
numpy arrays inside one sample into Tensors (used when auto-batching is off).

The rules follow PyTorch, by the type of the first sample:

=============================  ==================================================
sample element                 batch
=============================  ==================================================
Tensor of shape ``S``          Tensor ``(B, *S)`` (``ember.stack``)
numpy array of shape ``S``     Tensor ``(B, *S)``, the array's dtype
numpy scalar                   Tensor ``(B,)``, the scalar's dtype
``float``                      float64 Tensor ``(B,)``
``int`` (``bool``)             int64 (bool when all are bools) Tensor ``(B,)``
``str`` / ``bytes``            the list of samples, unchanged
Mapping                        same mapping type, each key collated
namedtuple                     same namedtuple, each field collated
tuple / list / Sequence        a **list** of collated fields (tuples too, as PyTorch)
=============================  ==================================================

Reference: torch.utils.data.default_collate, torch.utils.data.default_convert.
"""
from __future__ import annotations

import collections.abc as abc

import numpy as np

from ...ops.namespace import stack  # a generated op: ember installs the ops before importing utils
from ...errors import ShapeError
from ...factories import from_numpy, tensor
from ...tensor import Tensor
from ...types import float64

__all__ = ["default_collate", "default_convert"]

_SUPPORTED = ("Tensors, numpy arrays, numbers, strings, dicts, namedtuples or lists/tuples "
              "of these")


def _check_numeric_array(arr: np.ndarray) -> None:
    if arr.dtype.kind in "SaUOV":
        raise TypeError(f"default_collate: numpy arrays of dtype {arr.dtype} cannot become "
                        f"Tensors; batch elements must be {_SUPPORTED}")


def default_collate(batch):
    """Merge a list of samples into a batch (see the module table for the rules).

    Args:
        batch: a non-empty list of samples with the same structure.
    Returns the batch: Tensors of shape ``(B, ...)`` where ``B = len(batch)``, in the
    samples' structure.
    Raises TypeError for an unsupported element type (the message names it), ShapeError
    when samples' tensors, arrays or sequences differ in size, ValueError for an empty
    batch.
    Reference: torch.utils.data.default_collate.
    """
    if not batch:
        raise ValueError("default_collate: expected a non-empty list of samples")
    elem = batch[0]
    if isinstance(elem, Tensor):
        return _stack_tensors(batch)
    if isinstance(elem, np.ndarray):
        for b in batch:
            _check_numeric_array(b)
        try:
            return from_numpy(np.stack(batch))
        except ValueError:
            shapes = sorted({tuple(np.shape(b)) for b in batch})
            raise ShapeError(f"default_collate: numpy arrays in a batch must have the same "
                             f"shape, got shapes {shapes}") from None
    if isinstance(elem, np.generic) and not isinstance(elem, (np.str_, np.bytes_)):
        arr = np.array(batch)
        _check_numeric_array(arr)
        return from_numpy(arr)
    if isinstance(elem, float):
        return tensor(batch, dtype=float64)
    if isinstance(elem, int):  # bool included: tensor() infers bool for all-bool batches
        return tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, abc.Mapping):
        collated = {key: default_collate([d[key] for d in batch]) for key in elem}
        try:
            return type(elem)(collated)
        except TypeError:  # a mapping type whose constructor takes something else
            return collated
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # namedtuple
        return type(elem)(*(default_collate(list(s)) for s in zip(*batch)))
    if isinstance(elem, abc.Sequence):
        size = len(elem)
        if any(len(b) != size for b in batch):
            sizes = sorted({len(b) for b in batch})
            raise ShapeError(f"default_collate: each sequence in a batch should have the "
                             f"same length, got lengths {sizes}")
        fields = [default_collate(list(s)) for s in zip(*batch)]
        if isinstance(elem, tuple):
            return fields
        try:
            return type(elem)(fields)
        except TypeError:
            return fields
    raise TypeError(f"default_collate: batch elements must be {_SUPPORTED}; found "
                    f"{type(elem).__module__}.{type(elem).__qualname__}")


def _stack_tensors(batch):
    shape = batch[0].shape
    for b in batch:
        if not isinstance(b, Tensor):
            raise TypeError(f"default_collate: a batch that starts with a Tensor must hold "
                            f"only Tensors, found {type(b).__name__}")
        if b.shape != shape:
            shapes = sorted({tuple(t.shape) for t in batch})
            raise ShapeError(f"default_collate: stack expects each tensor to be equal size, "
                             f"got shapes {shapes}; pad the samples or pass a collate_fn")
    return stack(batch, 0)


def default_convert(data):
    """Turn numpy arrays (and numpy scalars) inside ``data`` into Tensors, recursing into
    mappings, namedtuples and sequences; everything else is returned unchanged.

    Reference: torch.utils.data.default_convert.
    """
    if isinstance(data, np.ndarray):
        return data if data.dtype.kind in "SaUOV" else from_numpy(data)
    if isinstance(data, np.generic) and not isinstance(data, (np.str_, np.bytes_)):
        return from_numpy(np.asarray(data))
    if isinstance(data, abc.Mapping):
        converted = {k: default_convert(v) for k, v in data.items()}
        try:
            return type(data)(converted)
        except TypeError:
            return converted
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, abc.Sequence) and not isinstance(data, (str, bytes)):
        try:
            return type(data)([default_convert(d) for d in data])
        except TypeError:
            return [default_convert(d) for d in data]
    return data
