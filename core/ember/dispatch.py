"""The runtime half of dispatch: what generated op wrappers call between parsing and kernel.

A generated wrapper (see ``ops/codegen.py``) binds its arguments with Python's own
machinery, then calls into this module to

* check and convert arguments (``int[2]``, ``ScalarType?``, dims) with PyTorch-like errors,
* promote the dtypes of its tensor operands (``promote_operands``), casting arrays so the
  kernel sees one dtype,
* find the kernel through the operands' Type (``Type.kernels[op]``, cached),
* wrap the kernel's arrays into Tensors (``wrap``, defined with the Tensor in ``tensor.py``
  and re-exported here) and honour ``out=`` / in-place writes
  (``write_out``, ``write_inplace``) without leaving a tensor half-changed on error.

Kernels never see Tensors; Tensors never reach kernels.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Sequence

from . import types as _t
from ._base.wrap_dim import wrap_dim, wrap_dims  # noqa: F401 - the wrappers' and old path
from .backends import registry as _registry
from .errors import DeviceMismatchError, DtypeError, ShapeError
from .plugins.hints import distribution, install_hint
from .tensor import Tensor as _Tensor, wrap, wrap_view  # noqa: F401 - the old path of wrap

_index = operator.index


def _served(op: str, backend) -> list:
    """The ScalarTypes ``backend``'s kernel for ``op`` computes: none without a kernel;
    else every dtype except those ``backend.unsupported[op]`` excludes (dispatch refuses
    them) and, where the kernel declares ``dtypes`` (a frozenset of ScalarTypes), those
    outside it (the kernel refuses them with its own typed error, as the linear-algebra
    kernels refuse integers)."""
    kernel = backend.kernels.get(op)
    if kernel is None:
        return []
    own = getattr(kernel, "dtypes", None)
    refused = backend.unsupported.get(op, ())
    return [s for s in _t.all_scalar_types
            if s not in refused and (own is None or s in own)]


def _implementers(op: str) -> list[str]:
    """The names of the Types whose backend computes ``op`` (``_served``)."""
    return [backend.type(s).name for backend in _registry.all_backends()
            for s in _served(op, backend)]


def _way_out(op: str, backend) -> str:
    """What to do about a kernel ``backend`` lacks: a newer version of ember's own plugin
    (with its install hint), or the author's kernel table."""
    if distribution(backend.name) is not None:
        return (f"a newer version of its plugin may have it: "
                f"{install_hint(backend.name, upgrade=True)}")
    return (f"add '{op}' to the kernel table of backend '{backend.name}' (docs/plugins.md, "
            f"'The minimal kernel set'), or move the tensors to a backend that has it")


def missing_kernel_error(op: str, typ) -> NotImplementedError:
    """The NotImplementedError for ``op`` on Type ``typ``: who has it and what to do."""
    have = _implementers(op)
    where = f"it is implemented for: {', '.join(have)}" if have else \
        "no installed backend implements it"
    b = typ.backend
    if op in b.kernels:   # the backend excludes this dtype on purpose: nothing to install
        way = f"'{b.name}' computes {op} in other dtypes: convert the inputs with .to(dtype)"
    else:
        way = _way_out(op, b)
    return NotImplementedError(f"{op}: no kernel for {typ.name} ({typ.scalar_type} on "
                               f"'{b.name}'); {where}; {way}.")


_t.set_missing_kernel_error(missing_kernel_error)  # what Type.kernels[op] raises


def missing_backend_kernel_error(op: str, backend) -> NotImplementedError:
    """The NotImplementedError for a kernel that ``backend`` lacks and that is looked up
    on the backend itself, not through a Type (the factories: ``full``, ``empty``,
    ``randn``...): the op, the backend, who has it and what to do. Raised by the kernel
    table the plugin manager gives each backend (``plugins/kernel_table.py``)."""
    have = sorted({b.name for b in _registry.all_backends() if op in b.kernels})
    where = (f"backends that have it: {', '.join(have)}" if have else
             "no installed backend implements it")
    return NotImplementedError(f"{op}: backend '{backend.name}' has no kernel '{op}'; "
                               f"{where}; {_way_out(op, backend)}.")


def type_name(v: Any) -> str:
    return type(v).__name__


def arg_error(op: str, name: str, pos: int, expected: str, value: Any) -> TypeError:
    """``add(): argument 'other' (position 2) must be Tensor, not str``."""
    return TypeError(f"{op}(): argument '{name}' (position {pos}) must be {expected}, "
                     f"not {type_name(value)}")


def check_tensor(v, op: str, name: str, pos: int):
    if not isinstance(v, _Tensor):
        raise arg_error(op, name, pos, "Tensor", v)
    return v


def self_not_tensor_error(op: str, v, pos: int, more: bool) -> TypeError:
    """The TypeError for a promoted ``self`` that is not a Tensor (``sin(2.0)``), where
    PyTorch has no ``Scalar self`` overload (``number_self`` in native_functions.yaml).

    PyTorch's text plus the way out: wrap the number in a tensor, or, for an op the
    ``math`` module has, use it on Python numbers. ``more``: the op takes arguments after
    ``self`` (the suggested call shows ``, ...``; one with ``self`` at ``pos`` > 1, as
    ``polygamma(n, self)``, shows ``..., `` before it).
    """
    err = arg_error(op, "self", pos, "Tensor", v)
    before, rest = ("..., " if pos > 1 else ""), (", ..." if more else "")
    if _t.scalar_kind(v) is not None:
        n = v.item() if hasattr(v, "item") else v  # a numpy scalar shows as its number
        hint = (f"wrap the number in a tensor first: "
                f"ember.{op}({before}ember.tensor({n!r}){rest})")
        if callable(getattr(math, op, None)):
            hint += f", or use math.{op}({before}{n!r}{rest}) for Python numbers"
        return TypeError(f"{err}; {hint}")
    if isinstance(v, (list, tuple)):
        return TypeError(f"{err}; wrap the values in a tensor first: "
                         f"ember.{op}({before}ember.tensor(values){rest})")
    if hasattr(v, "__array__") or hasattr(v, "__dlpack__"):
        return TypeError(f"{err}; convert the array first: "
                         f"ember.{op}({before}ember.as_tensor(array){rest})")
    return err


def no_tensor_error(op: str, values: Sequence, names: Sequence[str]) -> TypeError:
    """The TypeError for an op whose promoted operands are all Python numbers where
    PyTorch needs one Tensor among them (``pow(2, 3)``: ``number_self: with_tensor``)."""
    got = " and ".join(type_name(v) for v in values)
    which = " or ".join(f"'{n}'" for n in names)
    args = ", ".join([f"ember.tensor({values[0]!r})"] + [repr(v) for v in values[1:]])
    return TypeError(f"{op}(): expected a Tensor for {which}, got {got}; wrap one in a "
                     f"tensor first: ember.{op}({args}), or compute with Python numbers")


def check_optional_tensor(v, op: str, name: str, pos: int):
    if v is None or isinstance(v, _Tensor):
        return v
    raise arg_error(op, name, pos, "Tensor or None", v)


def check_tensor_list(v, op: str, name: str, pos: int) -> list:
    if isinstance(v, _Tensor) or not isinstance(v, (list, tuple)):
        raise arg_error(op, name, pos, "tuple or list of Tensors", v)
    for i, t in enumerate(v):
        if not isinstance(t, _Tensor):
            raise TypeError(f"{op}(): expected Tensor as element {i} in argument '{name}', "
                            f"but got {type_name(t)}")
    return list(v)


def check_int(v, op: str, name: str, pos: int) -> int:
    if v.__class__ is int:
        return v
    if isinstance(v, (bool, float)) or v is None:
        raise arg_error(op, name, pos, "int", v)
    try:
        return _index(v)
    except TypeError:
        raise arg_error(op, name, pos, "int", v) from None


def check_int_list(v, op: str, name: str, pos: int, size: int | None) -> tuple:
    if v.__class__ is tuple:
        for x in v:
            if x.__class__ is not int:
                break
        else:
            return v
    if isinstance(v, (list, tuple)):
        return tuple(check_int(x, op, name, pos) for x in v)
    if v.__class__ is int or (not isinstance(v, (bool, float)) and hasattr(v, "__index__")):
        n = check_int(v, op, name, pos)
        return (n,) * size if size else (n,)
    raise arg_error(op, name, pos, f"tuple of ints{f' of length {size}' if size else ''}", v)


def check_float(v, op: str, name: str, pos: int) -> float:
    if v.__class__ is float or v.__class__ is int:
        return v
    if isinstance(v, _Tensor) and v.ndim == 0:
        return v.item()
    if not isinstance(v, (str, bytes, bool)):
        try:
            return float(v)
        except (TypeError, ValueError):
            pass
    raise arg_error(op, name, pos, "float", v)


def check_bool(v, op: str, name: str, pos: int) -> bool:
    if v is True or v is False:
        return v
    if hasattr(v, "dtype") and getattr(v, "ndim", 1) == 0 and str(v.dtype) == "bool":
        return bool(v)
    raise arg_error(op, name, pos, "bool", v)


def check_bool_list(v, op: str, name: str, pos: int, size: int | None) -> tuple:
    """``bool[3]``: a list or tuple of bools (of ``size`` if given), returned as a tuple."""
    if isinstance(v, (list, tuple)) and (size is None or len(v) == size):
        return tuple(check_bool(x, op, name, pos) for x in v)
    raise arg_error(op, name, pos, f"tuple of bools{f' of length {size}' if size else ''}", v)


def check_scalar(v, op: str, name: str, pos: int):
    if v.__class__ in (int, float, bool):
        return v
    if isinstance(v, _Tensor):
        if v.numel() != 1:
            raise ValueError(f"{op}(): argument '{name}' must be a number or a one-element "
                             f"tensor, got a tensor of shape {tuple(v.shape)}")
        return v.item()
    if _t.scalar_kind(v) is not None:
        return v.item()
    raise arg_error(op, name, pos, "Number", v)


def check_str(v, op: str, name: str, pos: int) -> str:
    if isinstance(v, str):
        return v
    raise arg_error(op, name, pos, "str", v)


def check_dtype(v, op: str, name: str, pos: int):
    """``ScalarType?`` -> the numpy dtype kernels take (None stays None)."""
    if v is None:
        return None
    try:
        return _t.to_scalar_type(v, name).numpy
    except TypeError:
        raise arg_error(op, name, pos, "ember.dtype", v) from None


# --- dtype promotion over operands -------------------------------------------------------

def _backend_of(op: str, operands: Sequence, names: Sequence[str]):
    backend, first = None, None
    for v, n in zip(operands, names):
        if isinstance(v, _Tensor):
            b = v._type.backend
            if backend is None:
                backend, first = b, (n, v)
            # NOTE: names, not only identity: a tensor made before plugins reloaded keeps
            # the old Backend object of its (still the same) device type
            elif (b is not backend and b.name != backend.name) or \
                    v.device != first[1].device:
                raise DeviceMismatchError(
                    f"{op}(): expected all tensors on one device, but '{first[0]}' is on "
                    f"{first[1].device} and '{n}' is on {v.device}; move one with "
                    f".to('{first[1].device}')")
    return backend


def promote_operands(op: str, rule: str, operands: Sequence, names: Sequence[str]):
    """Cast the tensor operands of ``op`` to their PyTorch result type.

    Args:
        rule: ``"common"`` (the result type), ``"float"`` (the result type, but integral or
            bool results become the default float dtype, as ``exp`` or true division do).
        operands: Tensors and Python scalars (wrapped numbers), or None for absent
            optional tensors.
    Returns ``(Type, arrays)``: scalars stay Python numbers (numpy treats them as weak),
    unless no operand is a Tensor (then they become 0-d arrays of the result dtype); None
    stays None. Raises TypeError for an operand that is neither, DeviceMismatchError
    for tensors on different devices.
    """
    dim_types, zero_types, scalars = [], [], []
    for v, n, pos in zip(operands, names, range(1, len(operands) + 1)):
        if isinstance(v, _Tensor):
            (dim_types if v._data.ndim else zero_types).append(v._type.scalar_type)
        elif v is not None:
            if _t.scalar_kind(v) is None:
                raise arg_error(op, n, pos, "Tensor or Number", v)
            scalars.append(v)
    backend = _backend_of(op, operands, names)
    st = _t.result_type(dim_types, zero_types, scalars)
    if rule == "float" and not st.is_floating_point:
        st = _t.get_default_dtype()
    if backend is None:
        # NOTE: no Tensor among the operands (``where(cond, 1, 2.5)``): numbers alone cannot
        # tell the kernel the result dtype, so they reach it as 0-d arrays of that dtype.
        backend = _registry.default_backend()
        typ = backend.type(st)
        return typ, [None if v is None else backend.xp.asarray(v, dtype=typ.np_dtype)
                     for v in operands]
    typ = backend.type(st)
    arrays = []
    for v in operands:
        if isinstance(v, _Tensor):
            a = v._data
            arrays.append(a if v._type is typ else a.astype(typ.np_dtype))
        elif v is None or v.__class__ in (int, float, bool):
            arrays.append(v)
        else:  # numpy scalar: make it a weak Python scalar
            arrays.append(v.item())
    return typ, arrays


def promote_list(op: str, tensors: Sequence, name: str):
    """Promote a ``Tensor[]`` operand (``cat``, ``stack``) to one Type; arrays in order."""
    if tensors.__class__ is list or tensors.__class__ is tuple:
        # the common case, checked and unpacked in one pass: Tensors of one Type
        typ, arrays = None, []
        for t in tensors:
            if t.__class__ is not _Tensor or t._type is not typ and typ is not None:
                break
            typ = t._type
            arrays.append(t._data)
        else:
            if typ is not None:  # (see the NOTE below on devices)
                return typ, arrays
    tensors = check_tensor_list(tensors, op, name, 1)
    if not tensors:
        raise ValueError(f"{op}(): expected a non-empty list of Tensors for '{name}'")
    typ = tensors[0]._type
    for t in tensors:
        if t._type is not typ:
            break
    else:  # one Type already: nothing to promote
        # NOTE: like the binary fast path, this takes one Type to mean one device; a
        # backend with several devices must let its kernels refuse mixed device indices.
        return typ, [t._data for t in tensors]
    typ, arrays = promote_operands(op, "common", tensors,
                                   [f"{name}[{i}]" for i in range(len(tensors))])
    return typ, arrays


def kernel_value_error(op: str, err: ValueError, operands: Sequence, names: Sequence[str]):
    """Turn an array library's broadcasting ValueError into a ShapeError that names the
    operands and their shapes; other ValueErrors, and ShapeErrors a kernel raised itself,
    pass through unchanged."""
    if "broadcast" not in str(err) or isinstance(err, ShapeError):
        return err
    shapes = ", ".join(f"'{n}' {list(v.shape)}" for v, n in zip(operands, names)
                       if isinstance(v, _Tensor))
    return ShapeError(f"{op}(): shapes do not broadcast: {shapes}. Each dimension, aligned "
                      f"from the right, must be equal or 1; reshape or unsqueeze an operand")


# numpy's words for a result whose size overflows the address space
_TOO_BIG = ("array is too big", "Maximum allowed dimension exceeded",
            "Maximum allowed size exceeded")


def kernel_error(op: str, err: BaseException) -> BaseException:
    """The error a wrapper raises for ``err``, a ValueError or MemoryError from op's kernel:
    numpy's allocation failures get the op's name (MemoryError: "Unable to allocate 4.00
    TiB for an array with shape (1099511627776,) and data type float32"; a ShapeError,
    as PyTorch's "Storage size calculation overflowed", for a size beyond the address
    space); any other ``err`` is returned unchanged (its cause kept)."""
    msg = str(err)
    if isinstance(err, MemoryError):
        new = MemoryError(f"{op}(): can't allocate memory for the result: {msg}; pass "
                          f"smaller sizes, a narrower dtype, or free memory")
    elif any(w in msg for w in _TOO_BIG):
        new = ShapeError(f"{op}(): the result is too large to address (numpy: "
                         f"{msg.rstrip('.')}; storage size calculation overflowed); pass "
                         f"smaller sizes")
    else:
        return err
    new.__suppress_context__ = True  # raised in place of err: as `raise new from None`
    return new


# --- writes: out= and in-place -------------------------------------------------------------

def _castable_result(op: str, dst_tensor, result, way_out: str):
    """``result`` as a backend array, after checking its dtype may be stored in
    ``dst_tensor`` (PyTorch's ``can_cast``); raises DtypeError naming ``way_out``, in which
    ``{src}`` stands for the result dtype's name."""
    backend = dst_tensor._type.backend
    if result.__class__ is not backend.array_type:
        result = backend.xp.asarray(result)
    src = backend.type_for_array(result).scalar_type
    dst = dst_tensor._type.scalar_type
    if not _t.can_cast(src, dst):
        raise DtypeError(f"{op}(): result type {src.name} can't be cast to the desired "
                         f"output type {dst.name}; {way_out.format(src=src.name)}")
    return result


def write_out(op: str, out, result):
    """Store ``result`` (a backend array) in tensor ``out`` and return ``out``.

    Follows PyTorch: the result dtype must be castable to ``out.dtype``; an ``out`` of the
    wrong shape is resized (reallocated), which detaches it from any base it viewed.
    Raises DtypeError before writing anything if the cast is not allowed, RuntimeError
    (``check_writable``'s) for an ``out`` that cannot be written: expanded, or sharing a
    read-only numpy array.
    """
    if not isinstance(out, _Tensor):
        raise arg_error(op, "out", 0, "Tensor", out)
    result = _castable_result(op, out, result, "pass an out tensor of dtype {src} or wider")
    dst = out._type.scalar_type
    if out._data.shape != result.shape:
        out._data = result.astype(dst.numpy, copy=True)
        out._base = None
    else:
        try:
            out._data[...] = result
        except ValueError:  # NOTE: checked only on failure: numpy refused a read-only array
            check_writable(op, out)
            raise
    out._bump_version()
    return out


def check_writable(op: str, t) -> None:
    """Raise RuntimeError if an in-place write to ``t`` would hit one memory location through
    several elements (an ``expand``-ed tensor), like PyTorch; ``t`` is left unchanged."""
    a = t._data
    if 0 in a.strides and a.size > 1 and \
            any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        raise RuntimeError(
            f"{op}(): unsupported operation: more than one element of the written-to tensor "
            f"refers to a single memory location (an expand()-ed tensor of shape "
            f"{list(a.shape)}, strides {list(t.stride())}). Please clone() the tensor before "
            f"performing the operation.")
    if not getattr(a.flags, "writeable", True):  # numpy only: CuPy arrays are always writable
        raise RuntimeError(f"{op}(): the written-to tensor is read-only: it shares the memory "
                           f"of a read-only numpy array (from_numpy) or of an expand()-ed "
                           f"tensor; clone() it before writing, or give from_numpy a "
                           f"writable array (numpy.array(arr) copies it)")


def write_inplace(op: str, self, result):
    """Store ``result`` in ``self`` for an in-place op (``add_``) and return ``self``.

    Checks first, so a failing op leaves ``self`` unchanged: the result must have
    ``self``'s shape (no broadcasting of ``self``) and a dtype castable to ``self.dtype``.
    """
    data = self._data
    if 0 in data.strides:  # only expanded tensors (and size-0/1 dims) have zero strides
        check_writable(op, self)
    if result.__class__ is data.__class__ and result.shape == data.shape and \
            (result.dtype is data.dtype or result.dtype == data.dtype):  # the common case
        try:
            data[...] = result
        except ValueError:  # NOTE: checked only on failure: numpy refused a read-only array
            check_writable(op, self)
            raise
        vc = self._vc
        if vc is None:
            vc = self._version_counter()
        vc.value += 1
        return self
    result = check_inplace_result(op, self, result)
    try:
        data[...] = result
    except ValueError:
        check_writable(op, self)
        raise
    self._bump_version()
    return self


def check_inplace_result(op: str, self, result):
    """``result`` (a backend array) after checking that an in-place op may store it in
    ``self``: the same shape (in-place ops cannot grow ``self``) and a dtype ``can_cast`` to
    ``self.dtype``. Raises RuntimeError / DtypeError naming the way out; writes nothing."""
    data = self._data
    if result.shape != data.shape:
        raise RuntimeError(f"{op}(): output with shape {list(data.shape)} doesn't match "
                           f"the broadcast shape {list(result.shape)}; in-place ops cannot "
                           f"grow 'self', use the out-of-place {op.rstrip('_')}()")
    return _castable_result(op, self, result,
                            f"use the out-of-place {op.rstrip('_')}() or convert 'self' "
                            f"first with .to(ember.{{src}})")


def composite_inplace(op: str, self, result):
    """Store a composite op's differentiable ``result`` Tensor in ``self`` for its
    generated in-place variant (``structured: inplace``) and return ``self``.

    Checked as ``write_inplace`` first (nothing is written on error); then ``self.copy_``,
    whose backward sends the gradient on to ``result``'s graph, which holds ``self``'s old
    value: the same gradients as PyTorch's in-place op (and its leaf and saved-tensor
    checks).
    """
    check_inplace_result(op, self, result._data)
    return self.copy_(result)
