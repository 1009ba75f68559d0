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

``Buffer`` marks a tensor that a Module registers as a buffer when assigned as an attribute
(``self.stats = nn.Buffer(t)``), with the same ``__class__`` trick.

``UninitializedParameter`` / ``UninitializedBuffer`` (lazy modules, ``modules/lazy.py``)
know their dtype, device and ``requires_grad`` but not their shape: their array is a
placeholder that raises on any use, so an op, ``.shape`` or ``numel()`` on one fails with a
message saying to run a forward pass first. ``to()`` (and ``Module.to``) changes the dtype
or device they will have; ``materialize(shape)`` gives them memory and turns the same
object into a ``Parameter`` / plain ``Tensor``.

Reference: torch.nn.parameter (Parameter, Buffer, UninitializedParameter,
UninitializedBuffer).
"""
from __future__ import annotations

from ..tensor import Tensor

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "is_lazy"]

# NOTE: Parameter and Buffer shadow ``__class__`` with a plain class attribute, so changing
# an instance's class goes through object's own descriptor.
_set_class = object.__dict__["__class__"].__set__


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


class Buffer(Tensor):
    """A tensor that a Module registers as a buffer (``register_buffer``) when it is
    assigned as an attribute; a plain tensor assigned so stays a plain attribute.

    Args:
        data: the value, any-shaped Tensor of any dtype (shared, not copied; keeps its
            ``requires_grad``); ``None`` gives an empty float32 tensor of shape ``(0,)``.
        persistent (keyword): whether the buffer goes into ``state_dict`` (default True).
    Raises TypeError when ``data`` is not an ember Tensor.
    Reference: torch.nn.Buffer.
    """

    __slots__ = ()
    persistent = True

    def __new__(cls, data=None, *, persistent: bool = True):
        if data is None:
            from ..factories import empty
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer(): expected data to be an ember.Tensor, got "
                            f"{type(data).__name__}; convert it first with ember.tensor(data)")
        t = data.detach()
        t.__class__ = Buffer if persistent else _NonPersistentBuffer
        if data.requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, *, persistent: bool = True):
        pass  # everything happens in __new__

    # NOTE: as Parameter's: ops on buffers stay on the exact-class fast path.
    __class__ = Tensor


class _NonPersistentBuffer(Buffer):
    """``Buffer(t, persistent=False)``: the flag lives in the class because a tensor has
    no room for attributes of its own."""

    __slots__ = ()
    persistent = False


class _Placeholder:
    """The array of an uninitialized parameter or buffer: any use raises ValueError."""

    __slots__ = ("kind", "device_index", "persistent")

    def __init__(self, kind: str, device_index, persistent: bool):
        self.kind, self.device_index, self.persistent = kind, device_index, persistent

    def _fail(self, *args, **kwargs):
        raise ValueError(f"Attempted to use an uninitialized {self.kind[13:].lower()} "
                         f"(ember.nn.{self.kind}, whose shape is not known yet). This "
                         f"happens when a lazy module (LazyLinear, LazyConv2d, ...) is used "
                         f"before its first forward: call the module once with an example "
                         f"batch to initialize its parameters, or call materialize(shape)")

    def __getattr__(self, name: str):
        if name.startswith("__"):  # protocol probes (numpy, copy) see a plain object
            raise AttributeError(name)
        self._fail()

    __array__ = __array_ufunc__ = __array_function__ = _fail
    __len__ = __iter__ = __getitem__ = __setitem__ = __bool__ = __float__ = _fail

    def __repr__(self) -> str:
        return "<uninitialized>"


class _UninitializedMixin:
    """What ``UninitializedParameter`` and ``UninitializedBuffer`` share; see the module
    docstring."""

    __slots__ = ()
    cls_to_become = None

    @classmethod
    def _make(cls, requires_grad, device, dtype, persistent=True):
        from ..factories import empty
        t = empty(0, device=device, dtype=dtype)
        if requires_grad:
            t.requires_grad_(True)
        t._data = _Placeholder(cls.__name__, t._type.backend.device_of(t._data), persistent)
        t.__class__ = cls
        return t

    @property
    def shape(self):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "This error usually happens in `load_state_dict` when trying to load "
                           "an uninitialized parameter into an initialized one. Call `forward` "
                           "to initialize the parameters before accessing their attributes.")

    def size(self, dim=None):
        return self.shape

    @property
    def device(self):
        from ..types import Device
        return Device(self._type.backend.name, self._data.device_index)

    @property
    def data(self):
        self._data._fail()

    @data.setter
    def data(self, value) -> None:
        # Module.to() sets p.data = p.to(...): only another placeholder can be taken
        if not isinstance(value, _UninitializedMixin):
            raise TypeError(f"{type(self).__name__}.data: an uninitialized parameter or "
                            f"buffer takes a new dtype or device through to(), or memory "
                            f"through materialize(shape)")
        self._data, self._type = value._data, value._type

    def to(self, *args, dtype=None, device=None, copy: bool = False):
        """A new uninitialized tensor with the given dtype and/or device (the parsing of
        ``Tensor.to``); ``self`` if nothing changes."""
        from ..types import _BY_NAME, Device, to_scalar_type
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, Device)) and not (isinstance(a, str) and a in _BY_NAME):
                device = a
            else:
                dtype = a
        dtype = self.dtype if dtype is None else to_scalar_type(dtype)
        if dtype is self.dtype and device is None and not copy:
            return self
        return type(self)._make(self._requires_grad, self.device if device is None else device,
                                dtype, self._data.persistent)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give this object memory of ``shape`` (uninitialized values), on ``device`` /
        in ``dtype`` (default: its own), and turn it into ``cls_to_become`` in place, so
        references to it (a module's, an optimizer's) see the result."""
        from ..factories import empty
        t = empty(*tuple(shape), device=self.device if device is None else device,
                  dtype=self.dtype if dtype is None else dtype)
        self._data, self._type = t._data, t._type
        _set_class(self, self.cls_to_become)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)._make(self._requires_grad, self.device, self.dtype,
                                              self._data.persistent)
        return memo[id(self)]

    def __reduce_ex__(self, protocol):
        return (type(self)._make, (self._requires_grad, str(self.device), self.dtype.name,
                                   self._data.persistent))


class UninitializedParameter(_UninitializedMixin, Parameter):
    """A Parameter whose shape is not known yet (the weights of lazy modules).

    Args:
        requires_grad: as Parameter's (default True).
        device, dtype: those of the parameter it will become (defaults: the default device
            and float dtype).
    Only ``dtype``, ``device``, ``requires_grad``, ``to()`` and ``materialize(shape)`` work;
    ``.shape`` raises RuntimeError and any op ValueError ("Attempted to use an
    uninitialized parameter ..."). Reference: torch.nn.parameter.UninitializedParameter.
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        return cls._make(requires_grad, device, dtype)

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass


class UninitializedBuffer(_UninitializedMixin, Buffer):
    """A buffer whose shape is not known yet (the running statistics of lazy norms);
    assigning one as a module attribute registers it as a buffer.

    Args:
        requires_grad: default False.
        device, dtype: those of the tensor it will become.
        persistent: whether it goes into ``state_dict`` (default True).
    Works as ``UninitializedParameter``; ``materialize`` turns it into a plain Tensor.
    Reference: torch.nn.parameter.UninitializedBuffer.
    """

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None,
                persistent: bool = True):
        return cls._make(requires_grad, device, dtype, persistent)

    def __init__(self, requires_grad: bool = False, device=None, dtype=None,
                 persistent: bool = True):
        pass

    @property
    def persistent(self) -> bool:
        return self._data.persistent


def is_lazy(t) -> bool:
    """Whether ``t`` is an uninitialized parameter or buffer.
    Reference: torch.nn.parameter.is_lazy."""
    return isinstance(t, _UninitializedMixin)
