"""numpy behind CuPy's API, the parts of the fake CuPy (``_fake_cupy.py``) that are not
about devices: ``ufunc`` (numpy's ufunc with CuPy's ``at``/``reduce``/``accumulate``/
``reduceat`` and their limits) and ``with_cupy_signature`` (a numpy function behind
CuPy's signature, refusing what CuPy's refuses). The limits come from CuPy 14.2.0's
source; each names its place.
"""
from __future__ import annotations

import inspect

import numpy as np

from ._cupy_api import UFUNC_METHODS

# the dtypes each CuPy scatter op takes: _scatter_op_single in
# cupy/_core/_routines_indexing.pyx (v14.2.0); add is atomicAdd's overloads (int64 through
# atomics.cuh), subtract int32/uint32 only, max/min and the bitwise ops no 8/16-bit type
_I = ("int32", "int64", "uint32", "uint64")
ATOMIC_DTYPES = {
    "add": frozenset(np.dtype(t) for t in _I + ("float16", "float32", "float64")),
    "subtract": frozenset(np.dtype(t) for t in ("int32", "uint32")),
    "maximum": frozenset(np.dtype(t) for t in _I + ("float32", "float64")),
    "minimum": frozenset(np.dtype(t) for t in _I + ("float32", "float64")),
    "bitwise_and": frozenset(np.dtype(t) for t in _I),
    "bitwise_or": frozenset(np.dtype(t) for t in _I),
    "bitwise_xor": frozenset(np.dtype(t) for t in _I),
}


class ufunc:
    """numpy's ufunc ``name`` with CuPy's methods (see the module docstring)."""

    def __init__(self, name: str):
        self._np, self.__name__ = getattr(np, name), name  # (fix, i0, sinc: not ufuncs)

    def __call__(self, *args, **kwargs):
        with np.errstate(all="ignore"):  # CuPy never warns
            return self._np(*args, **kwargs)

    def __repr__(self):
        return f"<ufunc 'cupy_{self.__name__}'>"

    def _refuse(self, method: str):
        users = UFUNC_METHODS[method]
        if users is not None and self.__name__ not in users:
            raise NotImplementedError(f"`cupy_{self.__name__}.{method}` is not supported yet")

    def at(self, a, indices, b=None):
        self._refuse("at")
        index = indices if isinstance(indices, tuple) else (indices,)
        arrays = [i for i in index if isinstance(i, (np.ndarray, list))]
        single_mask = len(arrays) == 1 and np.asarray(arrays[0]).dtype == bool
        if arrays and not single_mask and a.dtype not in ATOMIC_DTYPES[self.__name__]:
            names = ", ".join(sorted(str(t) for t in ATOMIC_DTYPES[self.__name__]))
            raise TypeError(f"cupy.{self.__name__}.at only supports {names} as data type")
        if arrays and not single_mask and a.dtype.kind == "f" and \
                self.__name__ in ("maximum", "minimum"):
            # atomics.cuh's float and double atomicMax/atomicMin: CAS loops on
            # fmaxf/fminf, which skip NaN and take (and store) float32 values
            touched = np.zeros(a.shape, dtype=bool)
            touched[indices] = True
            f32 = a.astype(np.float32)
            (np.fmax if self.__name__ == "maximum" else np.fmin).at(
                f32, indices, np.asarray(b).astype(np.float32))
            a[touched] = f32[touched]
            return
        self._np.at(a, indices, b)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        self._refuse("reduce")
        return self._np.reduce(array, axis, dtype, out, keepdims)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        self._refuse("accumulate")
        return self._np.accumulate(array, axis, dtype, out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        self._refuse("reduceat")
        return self._np.reduceat(array, indices, axis, dtype, out)

    def outer(self, A, B, **kwargs):
        return self._np.outer(A, B, **kwargs)


def with_cupy_signature(name: str, fn, text: str):
    """numpy's ``fn`` behind CuPy's signature ``text``: a call binds against CuPy's
    parameters first (TypeError for what CuPy does not take), then passes numpy what it
    was given: leading parameters by position where numpy's in that place is the same
    (perhaps renamed: ``a``/``arr``), the others by name. A parameter numpy lacks is
    dropped at CuPy's default and otherwise refused (NotImplementedError: the fake does not
    emulate it)."""
    sig = parse_signature(text)
    try:
        target = inspect.signature(fn)
    except (TypeError, ValueError):
        target = None
    if target is not None and str(target) == text:
        return fn
    P = inspect.Parameter
    POSITIONAL, NAMED = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD), (P.POSITIONAL_OR_KEYWORD,
                                                                     P.KEYWORD_ONLY)
    theirs = list(target.parameters.values()) if target is not None else []

    def call(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        pos, kw = [], {}
        for i, (pname, value) in enumerate(bound.arguments.items()):
            p = sig.parameters[pname]
            if p.kind is P.VAR_POSITIONAL:
                pos.extend(value)
            elif p.kind is P.VAR_KEYWORD:
                kw.update(value)
            elif target is None:  # a numpy builtin without a signature: CuPy's layout
                (pos.append(value) if p.kind is not P.KEYWORD_ONLY and len(pos) == i
                 else kw.__setitem__(pname, value))
            elif len(pos) == i < len(theirs) and theirs[i].kind in POSITIONAL and \
                    (theirs[i].name == pname or theirs[i].name not in sig.parameters):
                pos.append(value)  # the same parameter, perhaps renamed (a/arr, tup/arrays)
            elif pname in target.parameters and target.parameters[pname].kind in NAMED:
                kw[pname] = value
            elif repr(value) != repr(p.default):
                raise NotImplementedError(f"the fake cupy.{name} does not emulate CuPy's "
                                          f"{pname}={value!r}")
        return fn(*pos, **kw)
    call.__name__, call.__signature__ = name, sig
    call.__doc__ = f"numpy.{name} behind cupy.{name}{text}"
    return call


class Default:
    """A default value that prints as CuPy's signature shows it."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self):
        return self.text


def parse_signature(text: str) -> inspect.Signature:
    """The ``inspect.Signature`` of a ``FUNCTIONS`` entry (defaults are ``Default``s)."""
    parts, depth, quote, start = [], 0, "", 1
    for i, ch in enumerate(text[1:-1], 1):
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:-1].strip():
        parts.append(text[start:-1].strip())
    P, params, kind = inspect.Parameter, [], inspect.Parameter.POSITIONAL_OR_KEYWORD
    for part in parts:
        if part == "/":
            params = [p.replace(kind=P.POSITIONAL_ONLY) for p in params]
        elif part == "*":
            kind = P.KEYWORD_ONLY
        elif part.startswith("**"):
            params.append(P(part[2:], P.VAR_KEYWORD))
        elif part.startswith("*"):
            params.append(P(part[1:], P.VAR_POSITIONAL))
            kind = P.KEYWORD_ONLY
        else:
            name, eq, default = part.partition("=")
            params.append(P(name, kind, default=Default(default) if eq else P.empty))
    return inspect.Signature(params)
