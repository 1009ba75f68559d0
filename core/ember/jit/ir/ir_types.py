"""The types of IR values: what a pass may assume about a value before running anything.

Every :class:`~ember.jit.ir.Value` carries a ``JitType``. All types are frozen dataclasses,
so they compare by value, hash, and can be shared freely. Their ``str`` is the annotation
the printer writes after ``%name :`` and the parser reads back (``parse_type``):

==============================  ====================================================
type                            printed
==============================  ====================================================
``TensorType()``                ``Tensor`` (nothing known)
``TensorType(float32, sizes)``  ``Float(2, 3)``
``TensorType(float64, rank=2)`` ``Double(*, *)`` (rank known, sizes not)
requires_grad / device known    ``Float(2, 3, requires_grad=1, device=cpu)``
rank 0 (a scalar tensor)        ``Float()``
rank unknown, extras known      ``Float(..., requires_grad=0)``
``IntType()`` ...               ``int``, ``float``, ``bool``, ``NoneType``, ``str``,
                                ``Device``, ``ScalarType``, ``Any``
``ListType(IntType())``         ``int[]``
``TupleType((T, I))``           ``(Tensor, int)``
``OptionalType(TensorType())``  ``Tensor?``
==============================  ====================================================

``None`` in a TensorType field means *unknown*; passes refine types (shape propagation fills
in sizes) and join them where control flow merges (:func:`unify_types`).

Reference: PyTorch's ``aten/src/ATen/core/jit_type.h`` (TensorType, its printer in
``type.cpp``, ``unifyTypes``), written in our own words.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Tuple

from ember import types as _et
from ember.jit.ir._compat import flags

__all__ = [
    "JitType", "TensorType", "IntType", "FloatType", "BoolType", "NoneType", "StringType",
    "DeviceType", "ScalarTypeType", "AnyType", "ListType", "TupleType", "OptionalType",
    "unify_types", "TENSOR_TYPE_NAMES",
]

# "Float" -> ember.float32 etc.: the names PyTorch prints for tensor element types.
TENSOR_TYPE_NAMES = {s.type_name: s for s in _et.all_scalar_types}
_CONTAINS_TENSOR = flags("JitType", "contains_tensor")
_IS_COMPLETE = flags("TensorType", "is_complete")


class JitType:
    """Base of all IR value types (PyTorch's ``c10::Type``). ``str(t)`` is its annotation.

    ``contains_tensor`` (a property) says whether a value of this type holds tensors (a
    tensor, or a list/tuple/optional of them).
    """

    __slots__ = ()

    @property
    def contains_tensor(self) -> bool:
        """Whether a value of this type holds tensors (a tensor, or a list/tuple of them)."""
        return _CONTAINS_TENSOR[self._contains_tensor()]

    def _contains_tensor(self) -> bool:
        return False


@dataclass(frozen=True)
class TensorType(JitType):
    """A tensor whose properties are known or not (``None`` means unknown).

    Args:
        dtype: the element type (an ``ember.ScalarType``) or None.
        device: an ``ember.Device`` (a ``"cuda:0"`` string is accepted) or None.
        rank: number of dimensions, or None; implied by ``sizes`` when those are given.
        sizes: one entry per dimension, each an int or None (that size unknown); or None
            when the rank is unknown. Given a rank only, sizes become ``(None,) * rank``.
        requires_grad: True/False, or None when unknown.
    Raises ValueError when rank and sizes disagree or a size is negative, TypeError for a
    dtype that is not an ember ScalarType.
    """

    dtype: Optional[_et.ScalarType] = None
    device: Optional[_et.Device] = None
    rank: Optional[int] = None
    sizes: Optional[Tuple[Optional[int], ...]] = None
    requires_grad: Optional[bool] = None

    def __post_init__(self):
        if self.dtype is not None and not isinstance(self.dtype, _et.ScalarType):
            raise TypeError(f"TensorType: expected an ember dtype (ember.float32, ...) or None, "
                            f"got {self.dtype!r}")
        if isinstance(self.device, str):
            object.__setattr__(self, "device", _et.Device(self.device))
        if self.sizes is not None:
            sizes = tuple(None if s is None else int(s) for s in self.sizes)
            if any(s is not None and s < 0 for s in sizes):
                raise ValueError(f"TensorType: sizes must be non-negative, got {sizes}")
            if self.rank is not None and self.rank != len(sizes):
                raise ValueError(f"TensorType: rank={self.rank} but {len(sizes)} sizes given "
                                 f"({sizes}); pass one of them or make them agree")
            object.__setattr__(self, "sizes", sizes)
            object.__setattr__(self, "rank", len(sizes))
        elif self.rank is not None:
            if self.rank < 0:
                raise ValueError(f"TensorType: rank must be >= 0, got {self.rank}")
            object.__setattr__(self, "sizes", (None,) * self.rank)
        if self.requires_grad is not None:
            object.__setattr__(self, "requires_grad", bool(self.requires_grad))

    @classmethod
    def from_tensor(cls, t) -> TensorType:
        """The complete type of an ember Tensor ``t``: dtype, device, shape, requires_grad."""
        return cls(dtype=t.dtype, device=t.device, sizes=tuple(t._data.shape),
                   requires_grad=bool(t.requires_grad))

    def _contains_tensor(self) -> bool:
        return True

    def concrete_sizes(self) -> Optional[Tuple[int, ...]]:
        """The sizes when every one is known, else None.

        A method, not a property, although it takes no argument: its answer may be None,
        and a property could not keep the existing call ``t.concrete_sizes()`` working then.
        """
        if self.sizes is None or any(s is None for s in self.sizes):
            return None
        return self.sizes  # type: ignore[return-value]

    @property
    def is_complete(self) -> bool:
        """Whether dtype, device, every size and requires_grad are all known."""
        return _IS_COMPLETE[self.dtype is not None and self.device is not None
                            and self.requires_grad is not None
                            and self.concrete_sizes() is not None]

    def with_sizes(self, sizes) -> TensorType:
        """A copy with ``sizes`` (a sequence of ints/None, or None for unknown rank)."""
        return replace(self, sizes=None if sizes is None else tuple(sizes), rank=None)

    def with_dtype(self, dtype) -> TensorType:
        """A copy with ``dtype``."""
        return replace(self, dtype=dtype)

    def with_device(self, device) -> TensorType:
        """A copy with ``device``."""
        return replace(self, device=device)

    def with_requires_grad(self, requires_grad) -> TensorType:
        """A copy with ``requires_grad`` (True, False or None)."""
        return replace(self, requires_grad=requires_grad)

    def merge(self, other: TensorType) -> TensorType:
        """What is true of both types: fields that agree are kept, others become unknown.

        Sizes merge per dimension when the ranks agree; different ranks give unknown rank.
        This is the join used where control flow merges (PyTorch's ``TensorType::merge``).
        """
        def same(a, b):
            return a if a == b else None
        if self.sizes is not None and other.sizes is not None and self.rank == other.rank:
            sizes = tuple(same(a, b) for a, b in zip(self.sizes, other.sizes))
        else:
            sizes = None
        return TensorType(same(self.dtype, other.dtype), same(self.device, other.device),
                          None, sizes, same(self.requires_grad, other.requires_grad))

    def __str__(self) -> str:
        base = self.dtype.type_name if self.dtype is not None else "Tensor"
        parts = ["..."] if self.sizes is None else ["*" if s is None else str(s)
                                                    for s in self.sizes]
        if self.requires_grad is not None:
            parts.append(f"requires_grad={int(self.requires_grad)}")
        if self.device is not None:
            parts.append(f"device={self.device}")
        if self.sizes is None and len(parts) == 1:
            return base
        return f"{base}({', '.join(parts)})"


class _Named(JitType):
    """A type without parameters; ``_name`` is how it prints."""

    __slots__ = ()
    _name = ""

    def __eq__(self, other) -> bool:
        return type(self) is type(other)

    def __hash__(self) -> int:
        return hash(self._name)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __str__(self) -> str:
        return self._name


class IntType(_Named):
    """``int``: a Python int (int64 in schemas)."""
    _name = "int"


class FloatType(_Named):
    """``float``: a Python float (a double)."""
    _name = "float"


class BoolType(_Named):
    """``bool``: a Python bool."""
    _name = "bool"


class NoneType(_Named):
    """``NoneType``: the type of None (an absent optional argument)."""
    _name = "NoneType"


class StringType(_Named):
    """``str``: a Python string (``reduction='mean'``)."""
    _name = "str"


class DeviceType(_Named):
    """``Device``: an ``ember.Device``."""
    _name = "Device"


class ScalarTypeType(_Named):
    """``ScalarType``: an ember dtype (``ember.float32``)."""
    _name = "ScalarType"


class AnyType(_Named):
    """``Any``: nothing is known (e.g. the result of a PythonOp)."""
    _name = "Any"


@dataclass(frozen=True)
class ListType(JitType):
    """``T[]``: a list whose elements all have type ``elem`` (``int[]``, ``Tensor[]``)."""

    elem: JitType

    def _contains_tensor(self) -> bool:
        return self.elem._contains_tensor()

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True)
class TupleType(JitType):
    """``(T1, T2, ...)``: a tuple with one type per element; ``()`` is the empty tuple."""

    elems: Tuple[JitType, ...]

    def __post_init__(self):
        object.__setattr__(self, "elems", tuple(self.elems))

    def _contains_tensor(self) -> bool:
        return any(e._contains_tensor() for e in self.elems)

    def __str__(self) -> str:
        return f"({', '.join(map(str, self.elems))})"


@dataclass(frozen=True)
class OptionalType(JitType):
    """``T?``: a value of type ``elem`` or None (``Tensor? weight=None`` in a schema)."""

    elem: JitType

    def _contains_tensor(self) -> bool:
        return self.elem._contains_tensor()

    def __str__(self) -> str:
        return f"{self.elem}?"


def unify_types(a: JitType, b: JitType) -> Optional[JitType]:
    """The most precise type that both ``a`` and ``b`` are instances of, or None if none.

    Equal types unify to themselves; tensors merge (:meth:`TensorType.merge`); ``NoneType``
    with ``T`` gives ``T?``; lists and tuples unify element-wise; ``Any`` absorbs all.
    Reference: PyTorch's ``unifyTypes``.
    """
    if a == b:
        return a
    if isinstance(a, AnyType) or isinstance(b, AnyType):
        return AnyType()
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return a.merge(b)
    if isinstance(a, NoneType) or isinstance(b, NoneType):
        other = b if isinstance(a, NoneType) else a
        return other if isinstance(other, OptionalType) else OptionalType(other)
    if isinstance(a, OptionalType) or isinstance(b, OptionalType):
        ea = a.elem if isinstance(a, OptionalType) else a
        eb = b.elem if isinstance(b, OptionalType) else b
        e = unify_types(ea, eb)
        return None if e is None else OptionalType(e)
    if isinstance(a, ListType) and isinstance(b, ListType):
        e = unify_types(a.elem, b.elem)
        return None if e is None else ListType(e)
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        elems = [unify_types(x, y) for x, y in zip(a.elems, b.elems)]
        return None if any(e is None for e in elems) else TupleType(tuple(elems))
    return None
