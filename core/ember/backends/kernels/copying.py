"""Copying kernels: cat, stack, flip, roll, repeat, clone, and the in-place writes fill_,
copy_ and masked_fill.

Results here never alias their inputs (numpy's ``flip`` is a view, so it is copied).
Kernels of ops declared in place (``fill_(Tensor(a!) self, ...)``) validate everything
first, then write ``self``'s array; the generated wrapper bumps the version and returns
``self``. ``cast_scalar`` turns a Python number into a value of an array's dtype with
PyTorch's overflow check (``uint8.fill_(300)`` raises, ``uint8.fill_(-1)`` wraps to 255).
"""
from __future__ import annotations

import math

from ..._base.wrap_dim import wrap_dim
from ...errors import DtypeError, ShapeError
from .pointwise import blend
from .shape import check_broadcast_to

# Largest finite value per floating dtype name (float64 takes any finite Python float).
_FLOAT_MAX = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
              "float32": 3.4028234663852886e38, "float64": math.inf}


_NAMES: dict = {}


def cast_scalar(value, dtype, op: str):
    """``value`` (bool, int or float) as a Python number that ``dtype`` holds exactly.

    Follows PyTorch: floats truncate toward zero into integers; negative ints wrap into
    unsigned dtypes down to -max; a value outside the dtype's range (or NaN/inf into an
    integer dtype) raises RuntimeError.
    """
    name = _NAMES.get(dtype)
    if name is None:  # numpy's dtype.name is Python code (~1 us): looked up once a dtype
        name = _NAMES[dtype] = dtype.name
    if name == "bool":
        return bool(value)
    if name in _FLOAT_MAX:
        try:
            v = float(value)
        except OverflowError:  # an int beyond float64
            raise _overflow(op, value, name, f"+-{_FLOAT_MAX[name]:g}") from None
        if math.isfinite(v) and abs(v) > _FLOAT_MAX[name]:  # inf and nan are kept
            raise _overflow(op, value, name, f"+-{_FLOAT_MAX[name]:g}")
        return v
    bits = 8 * dtype.itemsize
    signed = name.startswith("int")
    hi = 2 ** (bits - 1) - 1 if signed else 2 ** bits - 1
    lo = -(2 ** (bits - 1)) if signed else 0
    if isinstance(value, float):
        if not (math.isfinite(value) and lo <= value <= hi):
            raise _overflow(op, value, name, f"[{lo}, {hi}]")
        return int(value)
    v = int(value)
    if not (lo if signed else -hi) <= v <= hi:
        raise _overflow(op, value, name, f"[{lo if signed else -hi}, {hi}]")
    return v + 2 ** bits if v < 0 and not signed else v


def overflow_error(op, value, name, valid,
                   way_out: str = "convert the tensor to a wider dtype first") -> RuntimeError:
    """PyTorch's "value V cannot be converted to type T without overflow", with the valid
    range and the way out (also ``checked_cast.check_fits``'s message)."""
    return RuntimeError(f"{op}(): value {value} cannot be converted to type {name} without "
                        f"overflow (valid: {valid}); {way_out}")


_overflow = overflow_error


def kernels(xp) -> dict:
    def fill_(a, value):
        a.fill(cast_scalar(value, a.dtype, "fill_"))
        return a

    def copy_(a, src, non_blocking):
        check_broadcast_to("copy_", src.shape, a.shape)
        a[...] = src  # casts like PyTorch's copy_: any dtype to any dtype
        return a

    def masked_fill(a, mask, value):
        if mask.dtype != bool:
            raise DtypeError(f"masked_fill(): only boolean masks are supported, but got mask "
                             f"with dtype {mask.dtype}; pass mask.bool() or a comparison")
        v = xp.asarray(cast_scalar(value, a.dtype, "masked_fill"), dtype=a.dtype)
        return blend(xp, mask, v, a)  # branch-free: numpy's where branches per element

    concatenate = xp.concatenate

    def cat(arrays, dim):
        n = arrays[0].ndim
        if n:  # the common case: let the array library check, explain only on error
            if not -n <= dim < n:
                wrap_dim(dim, n, "cat")  # raises IndexError with the valid range
            try:
                return concatenate(arrays, dim + n if dim < 0 else dim)
            except ValueError:
                pass  # 0-d or legacy empty operands, or a real mismatch: see below
        for i, a in enumerate(arrays):
            if a.ndim == 0:
                raise ShapeError(f"cat(): zero-dimensional tensor (at position {i}) cannot be "
                                 f"concatenated; unsqueeze it or use stack()")
        # NOTE: PyTorch's legacy rule: 1-d empty tensors are skipped whatever the shapes.
        parts = [(i, a) for i, a in enumerate(arrays) if a.shape != (0,)] or \
            [(0, arrays[0])]
        i0, ref = parts[0]
        dim = wrap_dim(dim, ref.ndim, "cat")
        for i, a in parts[1:]:
            if a.ndim != ref.ndim:
                raise ShapeError(f"cat(): tensors must have the same number of dimensions: "
                                 f"tensor {i0} has {ref.ndim} and tensor {i} has {a.ndim}")
            for d in range(a.ndim):
                if d != dim and a.shape[d] != ref.shape[d]:
                    raise ShapeError(
                        f"cat(): sizes of tensors must match except in dimension {dim}. "
                        f"Expected size {ref.shape[d]} but got size {a.shape[d]} for tensor "
                        f"number {i} in the list (shapes {list(ref.shape)} and "
                        f"{list(a.shape)})")
        return xp.concatenate([a for _, a in parts], axis=dim)

    def stack(arrays, dim):
        ref = arrays[0]
        for i, a in enumerate(arrays[1:], 1):
            if a.shape != ref.shape:
                raise ShapeError(f"stack(): expects each tensor to be equal size, but got "
                                 f"{list(ref.shape)} at entry 0 and {list(a.shape)} at "
                                 f"entry {i}")
        return xp.stack(arrays, axis=wrap_dim(dim, ref.ndim + 1, "stack"))

    def flip(a, dims):
        if a.ndim == 0 or not dims:
            return a.copy()
        return xp.flip(a, axis=dims).copy()  # numpy's flip is a view

    def roll(a, shifts, dims):
        if not dims:
            if len(shifts) != 1:
                raise RuntimeError(f"roll(): without dims, shifts must be a single int, got "
                                   f"{list(shifts)}")
            return xp.roll(a.reshape(-1), shifts[0]).reshape(a.shape)
        if len(shifts) != len(dims):
            raise RuntimeError(f"roll(): shifts and dimensions must align. shifts: "
                               f"{len(shifts)}, dims: {len(dims)}")
        if a.ndim == 0:
            return a.copy()
        return xp.roll(a, shifts, axis=dims)

    def repeat(a, repeats):
        if len(repeats) < a.ndim:
            raise RuntimeError(f"repeat(): number of dimensions of repeat dims "
                               f"({len(repeats)}) can not be smaller than number of "
                               f"dimensions of tensor ({a.ndim})")
        if any(r < 0 for r in repeats):
            raise RuntimeError(f"repeat(): repeats must be non-negative, got {list(repeats)}")
        a = a.reshape((1,) * (len(repeats) - a.ndim) + a.shape)
        return a.copy() if all(r == 1 for r in repeats) else xp.tile(a, repeats)

    def clone(a):
        # order="K" keeps a transposed layout, like PyTorch's preserve_format
        return xp.array(a, copy=True, order="K")

    return {"fill_": fill_, "copy_": copy_, "masked_fill": masked_fill, "cat": cat,
            "stack": stack, "flip": flip, "roll": roll, "repeat": repeat, "clone": clone}
