"""In-place view ops: ``unsqueeze_``, ``squeeze_``, ``t_``, ``transpose_`` (and the aliases
``swapaxes_`` / ``swapdims_``, see ``ops/aliases.py``) change ``self``'s shape and strides,
not its values (torch.Tensor.unsqueeze_ and friends).

Each one runs the out-of-place view op (``x.unsqueeze(d)``) and moves the result's layout
and history into ``self``, as PyTorch does:

* the version counter is bumped, so a tensor autograd saved before the change raises
  "modified by an inplace operation" at backward instead of being read with a new shape;
* under autograd the op's backward node (``UnsqueezeBackward``) becomes ``self``'s
  ``grad_fn``; on a view, its view function grows by the op, so later in-place writes to
  it still reach the base (CopySlices);
* a leaf that requires grad, or a view of one, or a non-first output of ``split``/``chunk``
  raises PyTorch's RuntimeError (outside ``no_grad``); nothing is changed then.

NOTE: one departure. PyTorch re-derives the views of a tensor whose layout changed in
place through ``as_strided``; ember replays each view's recorded view function on its base,
which would then describe the old layout. So under autograd, on a tensor that is not a
view, ember refuses when other tensors still share ``self``'s version counter (views of
it, ``detach()``-ed aliases, or outputs autograd saved) and names the out-of-place op.
Traces record the out-of-place op (``ember::unsqueeze``) and rebind ``self`` to its output.
"""
from __future__ import annotations

import sys

from .._base.grad_mode import STATE as _grad_mode
from .._base.hooks import AUTOGRAD as _autograd
from .._base.hooks import TRACER as _tracer
from .._base.tracing_state import STATE as _tracing
from ..tensor import Tensor  # its view ops (generated) are looked up at call time

# NOTE: the self._vc attribute and getrefcount's own argument
_OWN_REFS = 2


def _apply(op: str, self, view_op, args: tuple):
    """Give ``self`` the layout (and history) of ``view_op(self, *args)``; returns self."""
    recording = _grad_mode.enabled and self.requires_grad
    if recording:
        _autograd.check_inplace(op, self)
        if self._base is None and self._vc is not None and \
                sys.getrefcount(self._vc) > _OWN_REFS:
            raise RuntimeError(
                f"{op}(): other tensors share this tensor's memory and version counter (views "
                f"of it, detach()-ed aliases, or outputs autograd saved), and ember cannot "
                f"re-derive their history once the layout changes in place; use the "
                f"out-of-place y = x.{op[:-1]}(...) instead")
    if _tracing.active:
        with _tracer.pause():
            out = view_op(self, *args)
    else:
        out = view_op(self, *args)
    self._data = out._data
    if out.grad_fn is not None:
        self.grad_fn, self.output_nr, self._requires_grad = out.grad_fn, out.output_nr, True
    self._bump_version()
    if self._base is not None:  # out is a view of the same root: base -> self -> op
        self._view_fn = out._view_fn
        self._view_version = self._vc.value
    if _tracing.active and _tracing.current() is not None:
        # self still maps to its old value here
        _tracer.record_python(f"ember::{op[:-1]}", None, (self, *args), self)
    return self


def unsqueeze_(self, dim: int):
    """In place: insert a size-1 dim at ``dim`` in [-ndim-1, ndim]; returns self.

    Raises IndexError for a dim out of range and the RuntimeErrors of the module docstring
    (self unchanged). Reference: torch.Tensor.unsqueeze_.
    """
    return _apply("unsqueeze_", self, Tensor.unsqueeze, (dim,))


def squeeze_(self, dim=None):
    """In place: drop size-1 dims (all, or those of ``dim``, an int or a tuple, that have
    size 1); returns self. Raises IndexError for a dim out of range. Reference:
    torch.Tensor.squeeze_."""
    return _apply("squeeze_", self, Tensor.squeeze, (dim,))


def t_(self):
    """In place: transpose a 2-D tensor (0-D and 1-D stay as they are); returns self.
    Raises RuntimeError for more than 2 dims. Reference: torch.Tensor.t_."""
    return _apply("t_", self, Tensor.t, ())


def transpose_(self, dim0: int, dim1: int):
    """In place: swap dims ``dim0`` and ``dim1``; returns self (``swapaxes_`` and
    ``swapdims_`` are aliases). Raises IndexError for a dim out of range. Reference:
    torch.Tensor.transpose_."""
    return _apply("transpose_", self, Tensor.transpose, (dim0, dim1))


def install(tensor_cls) -> None:
    """Put the in-place view ops on ``Tensor`` (once, at import)."""
    for fn in (unsqueeze_, squeeze_, t_, transpose_):
        setattr(tensor_cls, fn.__name__, fn)
