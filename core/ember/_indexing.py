"""``Tensor.__getitem__`` / ``__setitem__``: PyTorch's indexing on any backend.

An index is an int, slice, None, ``...``, bool, a list / numpy array / Tensor of ints or
bools, or a tuple of these. ``normalize`` checks it against the tensor (ints in range,
slice steps > 0, one ``...``, mask shapes, index tensors' dtype and device) and turns it
into a tuple the backend kernels ``index`` / ``index_put_`` take (see
``backends/kernels/indexing.py``), so nothing here touches an array library.

Basic indexing (ints, slices, None, ``...``) returns a view that shares memory and version
counter with the tensor; any list, array, bool or Tensor in the index makes a copy, as in
PyTorch. Example: for ``x`` of shape (2, 3, 4), ``x[0, :, [0, 1]]`` has shape (3, 2).
"""
from __future__ import annotations

import operator
import warnings

from . import dispatch as _d
from . import types as _t
from .errors import DeviceMismatchError
from ._base.grad_mode import STATE as _grad_mode
from ._base.hooks import AUTOGRAD as _autograd
from ._base.hooks import TRACER as _tracer
from ._base.tracing_state import STATE as _tracing

_wrap, _wrap_view = _d.wrap, _d.wrap_view
_VALID = ("only integers, slices (`:`), ellipsis (`...`), None, bools and integer or bool "
          "tensors (or lists of them) are valid indices")


def getitem(t, index):
    """``t[index]``: a view for basic indexing, a new tensor otherwise."""
    if _tracing.active and _tracing.current() is not None and _tracer.has_symbolic(index):
        return _tracer.symbolic_getitem(t, index, getitem)
    idx = _plain(index if index.__class__ is tuple else (index,), t._data.shape)
    if idx is not None:  # normalize's own first step, taken here to save a call
        return index_normalized(t, idx, True)
    idx, basic = normalize(t, index)
    return index_normalized(t, idx, basic)


def index_normalized(t, idx: tuple, basic: bool):
    """``t[idx]`` for an index already ``normalize``-d (autograd replays views with it)."""
    typ = t._type
    r = typ.kernels["index"](t._data, idx)
    out = _wrap_view(r, typ.backend, t, _replay_index, (idx,)) if basic else \
        _wrap(r, typ.backend)
    if t._requires_grad or t._base is not None and t._base._requires_grad:  # requires_grad
        _autograd.record_handwritten("index", (out,), t, idx)
    if _tracing.active and _tracing.current() is not None:
        _tracer.record_python("ember::index", None, (t, _traced_index(idx, typ.backend)), out)
    return out


def _traced_index(idx: tuple, backend) -> list:
    """``idx`` for the trace: each index array as the traced Tensor it came from (so an
    index computed from the inputs stays a graph value), or else as a new Tensor (a
    constant index: from a list, or from a tensor the trace does not know). The IR holds
    Tensors, not raw arrays."""
    by_data, out = None, []
    for it in idx:
        if it is None or it is Ellipsis or it.__class__ in (int, bool, slice):
            out.append(it)
            continue
        if by_data is None:
            by_data = {id(tensor._data): tensor for tensor, _ in _tracing.current().env.values()}
        tensor = by_data.get(id(it))
        out.append(tensor if tensor is not None else _d.wrap(it, backend))
    return out


def _replay_index(t, idx):
    return index_normalized(t, idx, True)


def kernel_index(indices) -> tuple:
    """``indices`` as the kernels take them: a tuple whose index tensors are backend arrays.

    An index has two spellings: ``normalize`` gives the kernels' (a tuple of ints, slices,
    None, bools and arrays); a traced graph holds a list whose arrays are Tensors
    (``_traced_index``), and the JIT passes that list on: to ``ember::index_put_`` and,
    through ``prim::AutogradFormula``, to the backward formulas of ``index`` /
    ``index_put_``. ``index_put_normalized`` and those formulas call this so that the
    kernels, and the autograd history recorded for double backward, see only the kernels'
    spelling. Raises TypeError for an index that is neither a tuple nor a list.
    """
    if indices.__class__ is tuple:
        for it in indices:
            if isinstance(it, _d._Tensor):
                break
        else:  # already the kernels' spelling (eager autograd): no copy
            return indices
    elif indices.__class__ is not list:
        raise TypeError(f"expected a normalized index (a tuple, or the list a traced graph "
                        f"holds), got {type(indices).__name__}; normalize a user index with "
                        f"ember._indexing.normalize(t, index)")
    return tuple(it._data if isinstance(it, _d._Tensor) else it for it in indices)


def basic_index(idx: tuple) -> bool:
    """Whether a normalized index is basic (ints, slices, None only): it gives a view."""
    return all(it is None or it.__class__ in (int, slice) for it in idx)


def setitem(t, index, value) -> None:
    """``t[index] = value``: ``value`` is a number or a Tensor that broadcasts to ``t[index]``
    and is cast to ``t.dtype``. On error ``t`` is left unchanged."""
    if _tracing.active and _tracing.current() is not None:
        index = _tracer.guarded_concrete(index)
    idx, _ = normalize(t, index)
    index_put_normalized(t, idx, value, accumulate=False)


def index_put_normalized(t, idx, value, accumulate: bool = False):
    """``t[idx] = value`` (or ``+=`` with ``accumulate``, where repeated indices add up)
    for a normalized index in either spelling (see ``kernel_index``: the JIT runs
    ``ember::index_put_`` with the traced one); records autograd history (``index_put_`` in
    ``derivatives.yaml``). Returns ``t``."""
    idx = kernel_index(idx)
    tensor_value = isinstance(value, _d._Tensor)
    if tensor_value:
        if value.device != t.device:
            raise DeviceMismatchError(f"index_put_(): value is on {value.device} but the "
                                      f"tensor is on {t.device}; move it with "
                                      f".to('{t.device}')")
        arr = value._data
    elif _t.scalar_kind(value) is not None:
        arr = value.item() if hasattr(value, "item") else value
    else:
        raise TypeError(f"can't assign a {type(value).__name__} to a {t._type.name} tensor; "
                        f"assign a number or a Tensor (wrap data with ember.tensor(...))")
    _d.check_writable("index_put_", t)
    node = None
    if (t.requires_grad or (tensor_value and value.requires_grad)) and _grad_mode.enabled:
        node = _autograd.begin_inplace("index_put_", t, (t, idx, value, accumulate))
    t._type.kernels["index_put_"](t._data, idx, arr, accumulate)
    t._bump_version()
    if node is not None:
        _autograd.end_inplace(t, node)
    if _tracing.active and _tracing.current() is not None:
        # index arrays as Tensors, as for ember::index: an IR constant cannot hold an array
        _tracer.record_python("ember::index_put_", None,
                              (t, _traced_index(idx, t._type.backend), value, accumulate), t)
    return t


def normalize(t, index) -> tuple[tuple, bool]:
    """(index tuple for the kernels, whether it is basic indexing, i.e. gives a view)."""
    items = index if index.__class__ is tuple else (index,)
    shape = t._data.shape
    fast = _plain(items, shape)
    if fast is not None:
        return fast, True
    items = [_convert(t, it) for it in items]
    dims = [_dims_used(it) for it in items]
    if sum(it is Ellipsis for it in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    ndim, used = len(shape), sum(dims)
    if used > ndim:
        if ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` to convert "
                             "a 0-dim tensor to a number")
        raise IndexError(f"too many indices for tensor of dimension {ndim} (got {used})")
    out, d, basic = [], 0, True
    for it, n in zip(items, dims):
        if it is Ellipsis:
            out += [slice(None)] * (ndim - used)
            d += ndim - used
            continue
        if it.__class__ is int:
            _check_int(it, d, shape[d])
        elif isinstance(it, _d._Tensor):
            _check_mask(t, it, d)
            it = it._data
        if it is not None and it.__class__ is not int and it.__class__ is not slice:
            basic = False
        out.append(it)
        d += n
    return tuple(out), basic


def _plain(items, shape):
    """``items`` if it is only in-range ints and step-less int slices (the common case),
    else None for the general path."""
    if len(items) > len(shape):
        return None
    d = 0
    for it in items:
        c = it.__class__
        if c is slice:
            if it.step is not None:
                return None
            start, stop = it.start, it.stop
            if start.__class__ is not int and start is not None or \
                    stop.__class__ is not int and stop is not None:
                return None
        elif c is not int or not -shape[d] <= it < shape[d]:
            return None
        d += 1
    return items


def _convert(t, it):
    """One index entry as None, Ellipsis, bool, int, slice or an (int or bool) Tensor."""
    if it is None or it is Ellipsis or it is True or it is False:
        return it
    if it.__class__ is slice:
        return _slice(it)
    if isinstance(it, _d._Tensor):
        return _index_tensor(t, it)
    if isinstance(it, (list, tuple)) or getattr(it, "ndim", 0) > 0:  # numpy arrays too
        return _index_tensor(t, _sequence(t, it))
    if getattr(it, "dtype", None) == bool:  # noqa: E721 - a numpy bool scalar, no numpy import
        return bool(it)
    try:
        return operator.index(it)
    except TypeError:
        raise IndexError(f"{_VALID} (got {type(it).__name__})") from None


def _slice(s: slice) -> slice:
    try:
        start, stop, step = (None if v is None else operator.index(v)
                             for v in (s.start, s.stop, s.step))
    except TypeError:
        raise TypeError(f"slice indices must be integers or None or have an __index__ method, "
                        f"got {s}") from None
    if step is not None and step <= 0:
        if step == 0:
            raise ValueError("slice step cannot be zero")
        raise ValueError(f"step must be greater than zero, got {step}: negative steps are not "
                         f"supported; use ember.flip(t, dims) to reverse")
    return slice(start, stop, step)


def _sequence(t, seq):
    """A list / tuple / numpy array index as a Tensor on ``t``'s device."""
    from .factories import tensor
    if isinstance(seq, (list, tuple)) and len(seq) == 0:
        return tensor([], dtype=_t.int64, device=t.device)
    try:
        return tensor(seq, device=t.device)
    except (TypeError, ValueError) as e:
        raise IndexError(f"{_VALID}; could not make an index tensor from "
                         f"{type(seq).__name__} {seq!r}: {e}") from None


def _index_tensor(t, it):
    if it.device != t.device:
        raise DeviceMismatchError(f"indexing a tensor on {t.device} with an index tensor on "
                                  f"{it.device}; move the index with .to('{t.device}')")
    st = it._type.scalar_type
    if st is _t.uint8:
        warnings.warn("indexing with dtype uint8 is deprecated (as in PyTorch); use a bool "
                      "mask instead", DeprecationWarning, stacklevel=4)
        return it.bool()
    if st not in (_t.bool_, _t.int64, _t.int32):
        raise IndexError(f"tensors used as indices must be int64, int32, uint8 or bool "
                         f"tensors, got {st}")
    return it


def _dims_used(it) -> int:
    """How many dims of the indexed tensor an index entry consumes."""
    if it is None or it is Ellipsis or it is True or it is False:
        return 0
    if isinstance(it, _d._Tensor):
        return it._data.ndim if it._type.scalar_type is _t.bool_ else 1
    return 1


def _check_int(i: int, dim: int, size: int) -> int:
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of bounds for dimension {dim} with size {size}")
    return i


def _check_mask(t, it, d: int) -> None:
    if it._type.scalar_type is not _t.bool_:
        return
    shape = t._data.shape
    for j, n in enumerate(it._data.shape):
        if n != shape[d + j]:
            raise IndexError(f"The shape of the mask {list(it._data.shape)} at index {j} does "
                             f"not match the shape of the indexed tensor {list(shape)} at "
                             f"index {d + j}")
