"""``ember.nn.Parameter``: a Tensor that a Module registers as one of its parameters.

Design. ``Parameter`` is a ``Tensor`` subclass with no slots of its own, so
``isinstance(p, Parameter)``, ``isinstance(p, Tensor)`` and ``type(p) is Parameter`` hold as
in PyTorch and ``repr`` says "Parameter containing:". The generated op wrappers take their
fast path only when ``x.__class__ is Tensor`` (an exact-class test is the cheapest check
Python has); a plain subclass would miss it and pay for the general promotion path on every
op that touches a weight (about 3x on small ops: ``x + bias`` 1.5 us -> 4.5 us). So
Parameter reports ``__class__`` as ``Tensor``, the same trick ``unittest.mock`` uses for
specs. That is safe because a Parameter has exactly Tensor's memory layout (``__slots__ =
()``): every fast path reads only Tensor slots. ``type(p)`` still tells the truth, and
``isinstance`` checks the real type first.

NOTE: code that needs to know whether something is a Parameter must use ``isinstance`` or
``type()``, never ``x.__class__``.

A Parameter shares memory and the version counter with the tensor it was made from (like
``detach()``), is a leaf, and requires grad unless told otherwise. Ops on it return plain
Tensors. ``p.data = t`` swaps in ``t``'s memory while keeping the same Parameter object
(PyTorch's ``set_data``), which is how ``Module.to`` converts parameters in place so that an
optimizer made before the conversion still holds the live parameters.

Reference: torch.nn.parameter.Parameter.
"""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["Parameter"]


class Parameter(Tensor):
    """A leaf Tensor registered by ``Module.__setattr__`` as a parameter.

    Args:
        data: the initial value, any-shaped Tensor of any dtype (shared, not copied);
            ``None`` gives an empty float32 tensor of shape ``(0,)``.
        requires_grad: whether autograd records ops on it (default True).
    Raises:
        TypeError: ``data`` is not an ember Tensor.
        RuntimeError: ``requires_grad=True`` with a non-floating dtype (pass
            ``requires_grad=False`` for integer parameters).
    Reference: torch.nn.Parameter.
    """

    __slots__ = ()

    def __new__(cls, data=None, requires_grad: bool = True):
        if data is None:
            from ..factories import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): expected data to be an ember.Tensor, got "
                            f"{type(data).__name__}; convert it first with ember.tensor(data)")
        p = data.detach()
        # NOTE: same layout (no new slots), so the object can change its class in place.
        p.__class__ = cls
        if requires_grad:
            p.requires_grad_(True)
        return p

    def __init__(self, data=None, requires_grad: bool = True):
        pass  # everything happens in __new__ (Tensor.__init__ refuses direct calls)

    # NOTE: see the module docstring: keeps the generated ops on their exact-class fast
    # path. A plain class attribute (not a property) so the lookup stays in C.
    __class__ = Tensor

    @property
    def data(self) -> Tensor:
        """A plain tensor sharing this parameter's memory, outside autograd; assigning a
        tensor of any shape and dtype makes the parameter use that tensor's memory."""
        return self.detach()

    @data.setter
    def data(self, value: Tensor) -> None:
        if not isinstance(value, Tensor):
            raise TypeError(f"Parameter.data: expected an ember.Tensor, got "
                            f"{type(value).__name__}")
        if self._requires_grad and not value.is_floating_point():
            raise RuntimeError(f"Parameter.data: a parameter that requires grad must stay "
                               f"floating point, got {value.dtype}; call "
                               f"requires_grad_(False) first")
        # NOTE: this is PyTorch's set_data: the same leaf object, new memory. The leaf's
        # gradient accumulator caches the shape, Type and device it expects, so refresh that too.
        self._data, self._type = value._data, value._type
        acc = getattr(self, "_grad_acc", None)
        if acc is not None:
            from ..autograd.function import input_metadata
            acc._out_meta = (input_metadata(self),)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + Tensor.__repr__(self)

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, protocol):
        return (Parameter, (self.detach(), self._requires_grad))
