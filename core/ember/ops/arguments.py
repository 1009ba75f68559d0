"""One table of how an op's non-Tensor arguments are checked and converted, by schema type.

An op is called two ways that must accept the same arguments: its generated wrapper
(``codegen.py``; the lines come from ``emit_dispatch.argument_lines``) and the JIT's
array-mode plans (``jit/runtime/plan_array_mode.py``), which convert a constant argument once, at
plan time, and then call the kernel on arrays. Both read ``ARGUMENT_CONVERSIONS``: schema
type (``int``, ``Scalar``, ``ScalarType`` ...) -> the ``dispatch`` check that converts a
value of it or raises the PyTorch-style TypeError (``dispatch.arg_error``: ``max_pool2d():
argument 'stride' (position 3) must be tuple of ints of length 2, not str``). For
``max_pool2d``'s ``int[2] stride=[]`` the wrapper's line reads::

    stride = _check_int_list(stride, 'max_pool2d', 'stride', 3, 2)

and a plan computes ``dispatch.check_int_list(value, 'max_pool2d', 'stride', 3, 2)``
(``convert``). A wrapper skips the call for the values the check returns unchanged
(``Conversion.changes`` false: a default, a plain number), so a correct call pays a
comparison, not a call. Tensor operands are not in the table: they are checked where
they are promoted (``emit_dispatch.py``); a schema type that is not in it (``Device``,
``Layout``, ``Generator``) is taken as given and converted where it is used.

Reference: torchgen's ``PythonArgParser`` type table (``torchgen/api/python.py``).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

from .. import dispatch as _d
from .schema import Argument

__all__ = ["Conversion", "ARGUMENT_CONVERSIONS", "convert", "argument_lines", "namespace"]


class Conversion(NamedTuple):
    """How a value of one schema type is checked and converted.

    ``check(value, op, name, pos)`` returns the converted value (``3`` for
    ``numpy.int64(3)``) or raises TypeError (ValueError for a Scalar tensor of several
    elements); ``check_list(value, op, name, pos, size)`` does it for ``T[]`` / ``T[N]``
    (None: a list of this type is checked by ``check``). ``name`` / ``list_name``: the
    globals the generated wrappers call them by. ``changes``: an expression over ``{n}``,
    false for every value ``check`` returns unchanged; the wrapper calls ``check`` only
    where it holds (None: always). ``none_passes``: ``check`` returns None unchanged, so an
    optional argument needs no None test of its own.
    """

    check: Callable
    name: str
    changes: Optional[str]
    check_list: Optional[Callable] = None
    list_name: Optional[str] = None
    none_passes: bool = False


_INT = Conversion(_d.check_int, "_check_int", "{n}.__class__ is not _int",
                  _d.check_int_list, "_check_int_list")
_NUMBER = "{n}.__class__ is not _int and {n}.__class__ is not _float"

#: schema type -> its Conversion (the generated wrappers and the array-mode plans)
ARGUMENT_CONVERSIONS: dict = {
    "int": _INT,
    "SymInt": _INT,
    "bool": Conversion(_d.check_bool, "_check_bool", "{n} is not True and {n} is not False",
                       _d.check_bool_list, "_check_bool_list"),
    "float": Conversion(_d.check_float, "_check_float", _NUMBER),
    "Scalar": Conversion(_d.check_scalar, "_check_scalar", _NUMBER),
    "str": Conversion(_d.check_str, "_check_str", "{n}.__class__ is not _str"),
    # ``ScalarType?`` -> the numpy dtype kernels take
    "ScalarType": Conversion(_d.check_dtype, "_check_dtype", "{n} is not None",
                             none_passes=True),
}


def _conversion(a: Argument):
    """(conversion, whether it is the list form) for argument ``a``, or None."""
    conv = ARGUMENT_CONVERSIONS.get(a.type.base)
    if conv is None:
        return None
    return conv, a.type.is_list and conv.check_list is not None


def convert(a: Argument, value, op: str, pos: int):
    """``value`` of argument ``a`` (at 1-based position ``pos`` of ``op``) as the op's
    wrapper passes it to the kernel: checked and converted by its schema type's
    ``Conversion``; None stays None for an optional argument; a value of a type not in
    the table is returned as it is. Raises the check's TypeError / ValueError."""
    found = _conversion(a)
    if found is None or (value is None and a.type.optional):
        return value
    conv, many = found
    if many:
        return conv.check_list(value, op, a.name, pos, a.type.size)
    return conv.check(value, op, a.name, pos)


def argument_lines(a: Argument, pos: int, op: str) -> list[str]:
    """The wrapper's source lines that check and convert argument ``a`` (not a Tensor) in
    place: ``if alpha.__class__ is not _int and alpha.__class__ is not _float: alpha =
    _check_scalar(alpha, 'add', 'alpha', 3)``; none for a type not in the table."""
    found = _conversion(a)
    if found is None:
        return []
    conv, many = found
    n, t = a.name, a.type
    args = f"{n}, {op!r}, {n!r}, {pos}"
    optional = t.optional and not (conv.none_passes and not many)
    if many:  # called for every value (it hands a tuple of ints back as it is)
        opt = f"if {n} is not None: " if optional else ""
        return [f"{opt}{n} = {conv.list_name}({args}, {t.size})"]
    call = f"{n} = {conv.name}({args})"
    if conv.changes is None:
        return [f"if {n} is not None: {call}" if optional else call]
    guard = f"{n} is not None and " if optional else ""
    return [f"if {guard}{conv.changes.format(n=n)}: {call}"]


def namespace() -> dict:
    """The globals the lines of ``argument_lines`` read: every check of the table by its
    name, and the classes its ``changes`` tests compare with."""
    ns = {"_int": int, "_float": float, "_str": str}
    for conv in ARGUMENT_CONVERSIONS.values():
        ns[conv.name] = conv.check
        if conv.list_name is not None:
            ns[conv.list_name] = conv.check_list
    return ns
