"""``ember.Tensor``: backend data, its Type, and autograd metadata (the seeds' Variable).

A Tensor holds one backend array (``numpy.ndarray`` on cpu) and the Type that says which
backend and ScalarType it is. Views (``view``, ``transpose``, basic slicing, ...) share
memory with their base, as in PyTorch, and share its version counter so that autograd can
detect in-place changes. Every op method (``add``, ``sum``, ...) is generated from
``ops/native_functions.yaml`` and installed on this class at import; this module holds
what is not an op: properties, conversions, Python protocols and the repr, and the
Tensor's constructors for kernel results, ``wrap`` and ``wrap_view``.

Layering: this module imports only the bottom layer (``ember/_base``), types and the backend
registry; the layers above get the class by importing it from here. Indexing
(``__getitem__`` / ``__setitem__``, ``_indexing.py``) and the operators sit above dispatch
and are installed on the class by the composition root (``ember/_build.py``), as are the
autograd methods (``backward``, ``register_hook``, ``retain_grad``, ``retains_grad``:
``autograd/tensor_methods.py``) and pickling (``factories.py``). What records history or
traces here (``to``, ``detach``, symbolic ``shape`` while tracing) calls the layer above
through the hook tables of ``_base/hooks.py``.
"""
from __future__ import annotations

from . import _dlpack
from . import types as _t
from ._base.hooks import AUTOGRAD as _autograd
from ._base.hooks import TRACER as _tracer
from ._base.tracing_state import STATE as _tracing
from ._base.wrap_dim import wrap_dim as _wrap_dim
from .backends import registry as _registry


def _check_grad(t, g, what: str) -> None:
    """Raise unless ``g`` can be ``t``'s gradient: a Tensor of ``t``'s shape, dtype and
    device (PyTorch's checks on ``.grad`` assignment and on a hook's result)."""
    # NOTE: every optimizer step checks every .grad: the usual fit is settled by comparing
    # the Types (backend and dtype) and shapes, without building Device objects
    if g.__class__ is Tensor and g is not t and g._type is t._type and \
            g._data.shape == t._data.shape and (t._type.backend.device_count == 1 or
                                                g.device == t.device):
        return
    from .errors import DeviceMismatchError, DtypeError, ShapeError
    if not isinstance(g, Tensor):
        raise TypeError(f"{what} expected to be a Tensor or None but got {type(g).__name__}; "
                        f"wrap a number with ember.full_like(t, value)")
    if g is t:
        raise RuntimeError(f"{what}: can't assign a tensor as its own grad; assign a copy "
                           f"(t.detach().clone())")
    if g._type.scalar_type is not t._type.scalar_type:
        raise DtypeError(f"{what} has data of a different type: expected {t.dtype}, got "
                         f"{g.dtype}; convert it with .to({t.dtype})")
    if g.device != t.device:
        raise DeviceMismatchError(f"{what} has data located on a different device: expected "
                                  f"{t.device}, got {g.device}; move it with .to({t.device!r})")
    if g._data.shape != t._data.shape:
        raise ShapeError(f"{what} has data of a different size: expected "
                         f"{list(t._data.shape)}, got {list(g._data.shape)}; a gradient has "
                         f"the shape of its tensor (expand or reshape it first)")


class Size(tuple):
    """A tensor's shape: a tuple of ints that prints as ``ember.Size([2, 3])``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"ember.Size({list(self)})"

    def numel(self) -> int:
        """The number of elements."""
        n = 1
        for s in self:
            n *= s
        return n


class _VersionCounter:
    """Shared by a tensor and its views; bumped by every in-place write."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0


class Tensor:
    """An n-dimensional array on a backend, with autograd metadata.

    Create one with a factory (``ember.tensor``, ``ember.zeros``, ...), not this class.
    Attributes: ``shape`` / ``size()`` (an ``ember.Size``), ``dtype`` (a ScalarType),
    ``device``, ``ndim``, ``requires_grad``, ``grad``, ``grad_fn``. Ops are methods
    (``x.add(y)``) and operators (``x + y``), with PyTorch's broadcasting and promotion.
    """

    # NOTE: _view_fn/_view_version are set only on views, _grad_acc only on leaves that
    # autograd has seen: read them with getattr(t, name, None) or after checking _base.
    __slots__ = ("_data", "_type", "_requires_grad", "_grad", "grad_fn", "output_nr", "_base",
                 "_vc", "_view_fn", "_view_version", "_grad_acc", "__weakref__")

    # NOTE: no __init__: factories and dispatch.wrap fill the slots directly (hot path).
    def __init__(self, *args, **kwargs):
        raise TypeError("create tensors with ember.tensor(data), ember.zeros(shape), ... ; "
                        "ember.Tensor is not called directly")

    # --- metadata ------------------------------------------------------------------------
    @property
    def shape(self) -> Size:
        """The sizes of the dimensions, a tuple subclass: ``(N, C, H, W)`` (torch.Tensor.shape).
        While tracing, the sizes of a traced tensor are SymInts
        (``jit/frontend/symbolic_sizes.py``)."""
        if _tracing.active:
            sym = _tracer.sym_shape(self)
            if sym is not None:
                return Size(sym)
        return Size(self._data.shape)

    def size(self, dim: int | None = None):
        """The shape, or the size of one dimension ``dim`` (negative counts from the end);
        SymInts while tracing, as ``shape``."""
        if dim is None:
            return self.shape
        d = _wrap_dim(dim, self._data.ndim, "size")
        if _tracing.active:
            sym = _tracer.sym_size(self, d)
            if sym is not None:
                return sym
        return self._data.shape[d]

    @property
    def dtype(self) -> _t.ScalarType:
        """The ScalarType of the elements (``ember.float32``, ...)."""
        return self._type.scalar_type

    @property
    def device(self) -> _t.Device:
        """Where the data lives: ``Device('cpu')``, ``Device('cuda', 0)``."""
        b = self._type.backend
        return _t.Device(b.name, b.device_of(self._data))

    @property
    def ndim(self) -> int:
        """The number of dimensions (0 for a scalar tensor)."""
        return self._data.ndim

    def dim(self) -> int:
        """The number of dimensions (``ndim``)."""
        return self._data.ndim

    def numel(self) -> int:
        """The number of elements, the product of the shape (1 for a 0-d tensor); a SymInt
        while tracing, as ``shape``."""
        if _tracing.active:
            sym = _tracer.sym_numel(self)
            if sym is not None:
                return sym
        return self._data.size

    def element_size(self) -> int:
        """Bytes per element."""
        return self._type.scalar_type.itemsize

    def stride(self, dim: int | None = None):
        """Strides in elements (not bytes), like PyTorch."""
        st = tuple(s // self._type.scalar_type.itemsize for s in self._data.strides)
        return st if dim is None else st[_wrap_dim(dim, self._data.ndim, "stride")]

    def is_contiguous(self) -> bool:
        """Whether the elements are laid out in row-major order without gaps."""
        return bool(self._data.flags.c_contiguous)

    def type(self, dtype=None):
        """The Type (``CPUFloatType``), or a copy converted to ``dtype`` if one is given."""
        if dtype is None:
            return self._type
        return self.to(dtype)

    @property
    def T(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """All dims reversed, as a view: ``(d0, ..., dn) -> (dn, ..., d0)``."""
        return self.permute(*range(self._data.ndim - 1, -1, -1))

    @property
    def mT(self) -> Tensor:  # noqa: N802 - PyTorch's name
        """The last two dims swapped, as a view (a batch of matrices transposed).

        Raises IndexError for tensors of fewer than 2 dims."""
        if self._data.ndim < 2:
            raise IndexError(f"tensor.mT is only supported on matrices or batches of "
                             f"matrices, got a {self._data.ndim}-D tensor")
        return self.transpose(-2, -1)

    @property
    def requires_grad(self) -> bool:
        """Whether autograd records ops on this tensor: set on leaves, True for results of
        recorded ops, and True for a view whose base requires grad (as in PyTorch)."""
        return self._requires_grad or (self._base is not None and self._base._requires_grad)

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        self.requires_grad_(bool(value))

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op produced (.grad is accumulated on these)."""
        return self.grad_fn is None

    @property
    def is_cuda(self) -> bool:
        """Whether the tensor lives on the 'cuda' backend."""
        return self._type.backend.name == "cuda"

    @property
    def data(self) -> Tensor:
        """A tensor sharing this one's memory, outside autograd."""
        return self.detach()

    @property
    def grad(self) -> Tensor | None:
        """The gradient backward accumulated into this tensor (a Tensor of its shape, dtype
        and device), or None (torch.Tensor.grad).

        Assigning checks what is assigned, as PyTorch does: None or a Tensor of exactly this
        tensor's shape, dtype and device. Raises TypeError for anything else than a Tensor
        or None, ShapeError / DtypeError / DeviceMismatchError for a mismatch, RuntimeError
        for the tensor itself; nothing is assigned then.
        """
        return self._grad

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            _check_grad(self, value, "assigned grad")
        self._grad = value

    @grad.deleter
    def grad(self) -> None:
        self._grad = None

    def _version_counter(self) -> _VersionCounter:
        if self._vc is None:
            self._vc = _VersionCounter()
        return self._vc

    @property
    def _version(self) -> int:
        return 0 if self._vc is None else self._vc.value

    def _bump_version(self) -> None:
        self._version_counter().value += 1

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set ``requires_grad`` in place and return ``self``.

        Raises RuntimeError for non-floating tensors, and for turning it off on a non-leaf
        (use ``detach()``), as PyTorch does.
        """
        if requires_grad and not self._type.scalar_type.is_floating_point:
            raise RuntimeError(f"only tensors of floating point dtype can require gradients, "
                               f"got {self.dtype}; convert first with .float()")
        if not requires_grad and self.grad_fn is not None:
            raise RuntimeError("you can only change requires_grad flags of leaf variables. If "
                               "you want to use a computed variable in a subgraph that doesn't "
                               "require differentiation use var_no_grad = var.detach().")
        self._requires_grad = requires_grad
        return self

    def detach(self) -> Tensor:
        """A new leaf sharing memory (and the version counter) with this one, without
        history: in-place changes to either are seen by the other and by autograd's
        version checks."""
        t = wrap(self._data, self._type.backend)
        t._vc = self._version_counter()
        if _tracing.active and _tracing.current() is not None:
            # a node, so the trace keeps the data flow (untraced, the detached tensor
            # would become a constant holding the example input's data)
            _tracer.record_python("ember::detach", None, (self,), t)
        return t

    def detach_(self) -> Tensor:
        """Detach ``self`` from its history in place (it becomes a leaf without grad).

        Raises RuntimeError on a view (use ``detach()``), as PyTorch does."""
        if self._base is not None and self._view_fn is not None and self.grad_fn is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        self.grad_fn, self.output_nr, self._requires_grad = None, 0, False
        return self

    # --- conversions ---------------------------------------------------------------------
    def to(self, *args, dtype=None, device=None, non_blocking: bool = False,
           copy: bool = False) -> Tensor:
        """Convert dtype and/or device: ``x.to(ember.float64)``, ``x.to("cuda:0")``,
        ``x.to(other)``. Returns ``self`` when nothing changes and ``copy`` is False.
        ``non_blocking`` is accepted as PyTorch's (``xb.to(device, non_blocking=True)``)
        and ignored: ember's copies between devices are synchronous.

        Raises NoBackendError if the target device's plugin is not installed.
        """
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif isinstance(a, (str, _t.Device)) and not (isinstance(a, str) and
                                                          a in _t._BY_NAME):
                device = a
            else:
                dtype = a
        st = self.dtype if dtype is None else _t.to_scalar_type(dtype)
        here = self._type.backend
        target = here if device is None else _registry.get_backend(device)
        idx = _t.Device(device).index if device is not None else None
        # another device of the same backend (cuda:0 -> cuda:1) is a move too
        moves = target is not here or (idx is not None and here.device_of(self._data)
                                       not in (None, idx))
        if not moves and st is self.dtype and not copy:
            return self
        arr = self._data
        if target is not here:
            arr = target.from_numpy(here.to_numpy(arr), idx)
        elif moves:            # the backend's from_numpy copies its own arrays across
            arr = target.from_numpy(arr, idx)
        if target.device_count == 1:
            arr = arr.astype(st.numpy, copy=(copy or target is here) and not moves)
        else:  # CuPy's astype allocates on the current device: cast where arr lives
            with target.on_device_of(arr):
                arr = arr.astype(st.numpy, copy=(copy or target is here) and not moves)
        out = wrap(arr, target)
        if self.requires_grad:
            _autograd.record_handwritten("_to_copy", (out,), self, st, device)
        if _tracing.active and _tracing.current() is not None:
            _tracer.record_python("ember::_to_copy", None, (self, st, device), out)
        return out

    def cpu(self) -> Tensor:
        """``self.to("cpu")``."""
        return self.to("cpu")

    def cuda(self, device=None) -> Tensor:
        """``self.to("cuda")`` or to ``cuda:device``; needs the ember-cuda plugin."""
        return self.to("cuda" if device is None else _t.Device("cuda", device)
                       if isinstance(device, int) else device)

    def float(self) -> Tensor:
        """``self.to(ember.float32)``: a converted copy, or ``self`` if already float32."""
        return self.to(_t.float32)

    def double(self) -> Tensor:
        """``self.to(ember.float64)``: a converted copy, or ``self`` if already float64."""
        return self.to(_t.float64)

    def half(self) -> Tensor:
        """``self.to(ember.float16)``: a converted copy, or ``self`` if already float16."""
        return self.to(_t.float16)

    def bfloat16(self) -> Tensor:
        """``self.to(ember.bfloat16)``: a converted copy, or ``self`` if already bfloat16."""
        return self.to(_t.bfloat16)

    def long(self) -> Tensor:
        """``self.to(ember.int64)``: a converted copy, or ``self`` if already int64."""
        return self.to(_t.int64)

    def int(self) -> Tensor:
        """``self.to(ember.int32)``: a converted copy, or ``self`` if already int32."""
        return self.to(_t.int32)

    def short(self) -> Tensor:
        """``self.to(ember.int16)``: a converted copy, or ``self`` if already int16."""
        return self.to(_t.int16)

    def char(self) -> Tensor:
        """``self.to(ember.int8)``: a converted copy, or ``self`` if already int8."""
        return self.to(_t.int8)

    def byte(self) -> Tensor:
        """``self.to(ember.uint8)``: a converted copy, or ``self`` if already uint8."""
        return self.to(_t.uint8)

    def bool(self) -> Tensor:
        """``self.to(ember.bool)``: a converted copy, or ``self`` if already bool."""
        return self.to(_t.bool_)

    def is_floating_point(self) -> bool:
        """Whether the dtype is a floating type."""
        return self._type.scalar_type.is_floating_point

    def numpy(self, *, force: bool = False):
        """The data as a numpy array, sharing memory on cpu and other host backends
        (``Backend.is_host``).

        Raises RuntimeError if the tensor requires grad (call ``.detach()`` first),
        TypeError if it lives in device memory (call ``.cpu()``, or pass ``force=True`` to
        copy).
        """
        if self.requires_grad and not force:
            raise RuntimeError("can't call numpy() on a tensor that requires grad; use "
                               "tensor.detach().numpy() instead")
        b = self._type.backend
        if not b.is_host and not force:
            raise TypeError(f"can't convert a {self.device} tensor to numpy; copy it to the "
                            f"host first with .cpu()")
        return b.to_numpy(self._data)

    def __array__(self, dtype=None, copy=None):
        arr = self._type.backend.to_numpy(self._data)
        return arr if dtype is None else arr.astype(dtype, copy=False)

    def item(self):
        """The value of a one-element tensor as a Python number.

        Raises ValueError (``RuntimeError`` in PyTorch) for more than one element.
        """
        if _tracing.active:
            _warn_traced(self, "number")
        return self._item()

    def _item(self):
        if self._data.size != 1:
            raise ValueError(f"a Tensor with {self._data.size} elements cannot be converted "
                             f"to a Python scalar; index it or reduce it first")
        return self._type.backend.to_numpy(self._data).reshape(()).item()

    def tolist(self):
        """Nested Python lists of Python numbers (a number for a zero-dim tensor)."""
        if _tracing.active:
            _warn_traced(self, "list")
        arr = self._type.backend.to_numpy(self._data)
        if arr.dtype == _t.bfloat16.numpy:
            arr = arr.astype("float32")
        return arr.tolist()

    def __dlpack__(self, *args, **kwargs):
        """A DLPack capsule sharing this tensor's memory (the array API protocol, so
        ``torch.from_dlpack(t)`` and ``numpy.from_dlpack(t)`` work); bfloat16 goes out as
        DLPack's kDLBfloat, which numpy alone cannot export."""
        return _dlpack.export_capsule(self._data, _t.bfloat16.numpy, args, kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    # --- Python protocols ----------------------------------------------------------------
    def __len__(self) -> int:
        """The size of dim 0; TypeError for a 0-d tensor."""
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        # NOTE: len() turns any int into a plain one, so a traced len(x) is baked in;
        # traced.py's check of a new size against a fresh trace catches it (x.size(0) is
        # the symbolic spelling)
        return self._data.shape[0]

    def __iter__(self):
        """Iterate over dim 0 (views from ``unbind``); TypeError for a 0-d tensor."""
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def _scalar(self, kind: str):
        if _tracing.active:
            _warn_traced(self, kind)
        if self._data.size != 1:
            raise ValueError(f"only one-element tensors can be converted to Python {kind}s, "
                             f"this one has {self._data.size} elements")
        return self._item()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __float__(self) -> float:
        return float(self._scalar("float"))

    def __int__(self) -> int:
        return int(self._scalar("int"))

    def __index__(self) -> int:
        if self._type.scalar_type.is_floating_point or self._type.scalar_type is _t.bool_:
            raise TypeError(f"only integer tensors of a single element can be converted to an "
                            f"index, got {self.dtype}")
        return int(self._scalar("int"))

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        from ._format import tensor_repr
        return tensor_repr(self)

    def __deepcopy__(self, memo):
        t = self.clone() if not self.requires_grad else self.detach().clone()
        t.requires_grad = self.requires_grad
        return t

    __array_priority__ = 1000  # numpy defers ``ndarray + tensor`` to Tensor.__radd__


_new_tensor = Tensor.__new__


def wrap(arr, backend):
    """A new Tensor around backend array ``arr`` (a 0-d result becomes a 0-d array).

    The constructor of every kernel result; ``backend`` is the Backend whose kernel made
    ``arr``. Raises TypeError if the backend has no Type for ``arr``'s dtype."""
    if arr.__class__ is not backend.array_type:
        arr = backend.xp.asarray(arr)
    t = _new_tensor(Tensor)
    t._data = arr
    try:
        t._type = backend.types_by_dtype[arr.dtype]
    except KeyError:
        t._type = backend.type_for_array(arr)  # raises the unsupported-dtype TypeError
    t._requires_grad = False
    t._grad = t.grad_fn = t._base = t._vc = None
    t.output_nr = 0
    return t


def wrap_view(arr, backend, base, op=None, args: tuple = (), index=None):
    """Like ``wrap`` but marks the result as a view of ``base``: it shares the version
    counter of ``base``'s root and remembers its *view function* ``(previous, op, args,
    index)``, which autograd replays after an in-place op on the view (see
    ``autograd/views.py``). ``op=None`` makes a view autograd cannot replay.

    A view-or-copy kernel (``reshape``, ``contiguous``) that had to copy returns a fresh
    array (``arr.base is None``, and not ``base``'s own array): that result is a plain
    tensor, as in PyTorch.
    """
    if arr.__class__ is not backend.array_type:
        arr = backend.xp.asarray(arr)
    if arr.base is None and arr is not base._data:
        return wrap(arr, backend)
    # NOTE: wrap's body, inlined (keep the two in step): views (view, t, x[1:4]) are as
    # hot as any op, and this saves a call
    t = _new_tensor(Tensor)
    t._data = arr
    try:
        t._type = backend.types_by_dtype[arr.dtype]
    except KeyError:
        t._type = backend.type_for_array(arr)
    t._requires_grad = False
    t._grad = t.grad_fn = None
    t.output_nr = 0
    if base._base is not None:
        root, prev = base._base, base._view_fn
        t._view_fn = None if op is None or prev is None else (prev, op, args, index)
    else:
        root = base
        t._view_fn = None if op is None else (None, op, args, index)
    t._base = root
    vc = root._vc
    if vc is None:
        vc = root._version_counter()
    t._vc = vc
    t._view_version = vc.value
    return t


def _warn_traced(t, what: str) -> None:
    _tracer.warn_python_value(t, what)
