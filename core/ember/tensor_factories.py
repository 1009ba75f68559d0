"""``Tensor.new_empty`` / ``new_zeros`` / ``new_ones`` / ``new_full`` / ``new_tensor``:
factories whose dtype and device default to an existing tensor's.

They are methods of ``Tensor`` that call the factories of ``factories.py``, so they live
apart from both (tensor.py is below the factories in the import order) and ``install``
attaches them at ``import ember``. Like PyTorch's, the results are new leaves: they copy
nothing from ``self`` but its dtype and device (a ``cuda:1`` tensor makes ``cuda:1``
tensors), and do not require grad unless ``requires_grad=True``.
Reference: torch.Tensor.new_empty / new_zeros / new_ones / new_full / new_tensor.
"""
from __future__ import annotations

from . import factories as _f

__all__ = ["new_empty", "new_zeros", "new_ones", "new_full", "new_tensor", "install"]


def _defaults(self, fn: str, dtype, device) -> tuple:
    if not isinstance(self, _f.Tensor):
        raise TypeError(f"{fn}(): expected a Tensor as self, got {type(self).__name__}")
    return (self.dtype if dtype is None else dtype,
            self.device if device is None else device)


def new_empty(self, *size, dtype=None, device=None, requires_grad: bool = False):
    """An uninitialized tensor of shape ``size`` (``x.new_empty(2, 3)`` or
    ``x.new_empty((2, 3))``) with self's dtype and device unless given.

    Raises TypeError for a non-integer size, ValueError for a negative one.
    Reference: torch.Tensor.new_empty."""
    dtype, device = _defaults(self, "new_empty", dtype, device)
    return _f.empty(_f._size(size, "new_empty"), dtype=dtype, device=device,
                    requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad: bool = False):
    """Zeros of shape ``size`` (varargs or one tuple) with self's dtype and device unless
    given. Raises TypeError for a non-integer size, ValueError for a negative one,
    RuntimeError for ``requires_grad=True`` with a non-floating dtype.
    Reference: torch.Tensor.new_zeros."""
    dtype, device = _defaults(self, "new_zeros", dtype, device)
    return _f.zeros(_f._size(size, "new_zeros"), dtype=dtype, device=device,
                    requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad: bool = False):
    """Ones of shape ``size`` (varargs or one tuple) with self's dtype and device unless
    given; errors as ``new_zeros``. Reference: torch.Tensor.new_ones."""
    dtype, device = _defaults(self, "new_ones", dtype, device)
    return _f.ones(_f._size(size, "new_ones"), dtype=dtype, device=device,
                   requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad: bool = False):
    """``fill_value`` everywhere in a tensor of shape ``size`` (a tuple), with self's dtype
    (the value is cast to it, floats truncating into integers) and device unless given.
    Raises TypeError for a non-number fill_value or a non-integer size.
    Reference: torch.Tensor.new_full."""
    dtype, device = _defaults(self, "new_full", dtype, device)
    if _f._t.scalar_kind(fill_value) is None:
        raise TypeError(f"new_full(): fill_value must be a number, got "
                        f"{type(fill_value).__name__}")
    return _f.full(size, fill_value, dtype=dtype, device=device, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad: bool = False):
    """A copy of ``data`` (numbers, nested lists, a numpy array or a Tensor) with self's
    dtype and device unless given: ``float_x.new_tensor([1, 2])`` is float32, as in
    PyTorch. A Tensor ``data`` is copied and detached (``data.clone().detach()`` says the
    same more plainly). Raises what ``ember.tensor`` raises for data without a numeric
    dtype or ragged lists. Reference: torch.Tensor.new_tensor."""
    dtype, device = _defaults(self, "new_tensor", dtype, device)
    return _f.tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)


def install(tensor_cls) -> None:
    """Attach the ``new_*`` methods to ``tensor_cls`` (``ember.Tensor``)."""
    for fn in (new_empty, new_zeros, new_ones, new_full, new_tensor):
        setattr(tensor_cls, fn.__name__, fn)
