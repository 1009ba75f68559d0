"""The cuda kernel table: ember's generic kernels on CuPy, overridden where CuPy differs.

``make_kernels(cupy, bfloat16)`` runs ``ember.backends.array_api.make_kernels`` with a
namespace that is CuPy except for five functions whose CuPy versions compute something
else than numpy's or refuse what numpy takes, then replaces a few kernels outright. Every
generic kernel module was read for numpy-only behaviour; what differs (CuPy 13/14 sources
and docs), and what this module does about it:

* float ``floor_divide`` and ``remainder`` (also ``div(rounding_mode='floor')``): CuPy
  computes ``floor(a / b)`` (``carray.cuh``), so ``5.0 // 0.1`` is 50 where numpy and
  PyTorch give 49. Here: numpy's ``npy_divmod`` built on ``fmod``, as an ElementwiseKernel
  (float16 computes in float32, bfloat16 goes through float32); integers keep CuPy's
  loops, which already follow Python.
* ``add.at`` (``index_put_(accumulate=True)``, ``scatter_add``): CuPy's scatter_add has
  atomics for int32, uint32, uint64 and float16/32/64 only, and raises TypeError for the
  rest. Here: int64 adds through a uint64 view (two's complement wraps the same), bool,
  int8, int16 and uint8 accumulate in int32 and bfloat16 in float32, written back once
  (narrow integers wrap mod 2**bits, as PyTorch's do).
* ``maximum.at``/``minimum.at`` (``scatter_reduce`` amax/amin): CuPy takes int32, int64,
  uint32, uint64, float32 and float64 only (``_scatter_op_single`` in
  ``cupy/_core/_routines_indexing.pyx``, v14.2.0), and its float atomics drop NaN (CAS
  loops on ``fmaxf``/``fminf``, ``cupy/_core/include/cupy/atomics.cuh``), which also
  rounds float64 through float32. Here: the integers CuPy has as they are; bool, int8,
  int16 and uint8 in int32; floats (float16 and bfloat16 through float32) as
  order-preserving int32/int64 keys with NaN keyed above (maximum) or below (minimum)
  every number, written back once: numpy's values, NaN propagating, float64 exact
  (-0.0 orders below 0.0, as in IEEE 754-2019's maximum; numpy keeps the first of them).
* ``maximum.accumulate``/``minimum.accumulate`` (``cummax``, ``cummin``, ``mode``): CuPy's
  ``ufunc.accumulate`` is cumsum/cumprod for add/multiply and raises NotImplementedError
  for every other ufunc (``ufunc.accumulate`` in ``cupy/_core/_kernel.pyx``, v14.2.0).
  Here: a log-step scan (Hillis & Steele, 1986): ceil(log2 n) elementwise passes over
  shifted slices, the earlier operand first, so ties and NaN resolve as in numpy's loop.
* ``sort``, ``argsort``, ``topk``: not every CuPy takes ``kind='stable'``, thrust sorts no
  bfloat16, and ``argpartition`` is a full sort. Here: CuPy's sort, stable by contract,
  called without ``kind``; bfloat16 sorted by its exact float32 keys; topk sorts once.
* float16 ``matmul``, ``mm``, ``bmm``: the generic kernels multiply in float32 because
  numpy has no half GEMM. Here: cuBLAS's half GEMM, which accumulates in float32 and rounds
  once, the same contract without the float32 copies and with tensor cores.
* ``rand``, ``randn``: CuPy draws float32 directly; float16 and float32 draw float32.

Checked and left generic: ``astype(copy=False)``, reductions with ``dtype=``/``keepdims``
and ``argmax`` ties (first index, NaN first), ``take_along_axis``, ``copyto(where=)``,
``bincount(weights=)``, ``einsum(optimize=True)``, ``out=`` of ufuncs, ``may_share_memory``;
``where`` takes its plain branch (the bit-select fast path is numpy only); CuPy never
warns, so the kernels' warnings filter has nothing to do. ``addmm`` stays generic in
float16 (float32 compute, one rounding). bfloat16 needs CuPy >= 14 (ml_dtypes support);
with CuPy 13 every kernel declines it (``unsupported``) and the factories raise TypeError.
"""
from __future__ import annotations

import functools
import types

import numpy as np

from ember.backends import array_api
from ember.backends.kernels.linalg import check_inner  # the generic shape check, reused
from ember.plugins.hints import install_hint
from ember.types import bfloat16 as _bf16

F16, F32, F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)
BF16 = _bf16.numpy
INT64 = np.dtype(np.int64)
# dtypes CuPy's scatter_add (add.at) takes: its atomicAdd overloads
ATOMIC_ADD = frozenset(np.dtype(t) for t in (np.int32, np.uint32, np.uint64, np.float16,
                                             np.float32, np.float64))
# dtypes ember hands to CuPy's maximum.at/minimum.at as they are: the integers of
# _scatter_op_single's 'max'/'min' lists (cupy/_core/_routines_indexing.pyx, v14.2.0);
# its float32/float64 go through keys (atomics.cuh's fmaxf/fminf drop NaN)
ATOMIC_EXTREMUM = frozenset(np.dtype(t) for t in (np.int32, np.int64, np.uint32, np.uint64))
# float dtype -> (its integer key dtype, the bits a negative value's key flips)
ORDER_KEYS = {F32: (np.dtype(np.int32), 0x7FFFFFFF), F64: (INT64, 0x7FFFFFFFFFFFFFFF)}

# numpy's npy_divmod (numpy/_core/src/npymath/npy_math_internal.h.src), which PyTorch's
# div_floor_floating and remainder follow: exact where floor(a / b) rounds the wrong way.
DIVMOD_PREAMBLE = r"""
template <typename T> struct ember_opmath { typedef T type; };
template <> struct ember_opmath<float16> { typedef float type; };

// the C functions by name, not C++ overloads: the same under NVRTC and nvcc
__device__ float ember_fmod(float a, float b) { return fmodf(a, b); }
__device__ double ember_fmod(double a, double b) { return fmod(a, b); }
__device__ float ember_floor(float a) { return floorf(a); }
__device__ double ember_floor(double a) { return floor(a); }
__device__ float ember_copysign(float a, float b) { return copysignf(a, b); }
__device__ double ember_copysign(double a, double b) { return copysign(a, b); }

template <typename F> __device__ F ember_floor_divide(F a, F b) {
    if (b == F(0)) return a / b;                    // inf or nan, as numpy
    F mod = ember_fmod(a, b);
    F div = (a - mod) / b;
    if (mod != F(0) && ((b < F(0)) != (mod < F(0)))) div -= F(1);
    if (div == F(0)) return ember_copysign(F(0), a / b);
    F floordiv = ember_floor(div);
    if (div - floordiv > F(0.5)) floordiv += F(1);
    return floordiv;
}

template <typename F> __device__ F ember_remainder(F a, F b) {
    F mod = ember_fmod(a, b);                       // nan for b == 0
    if (b == F(0)) return mod;
    if (mod != F(0)) {
        if ((b < F(0)) != (mod < F(0))) mod += b;
    } else {
        mod = ember_copysign(F(0), b);
    }
    return mod;
}
"""


def _divmod_kernel(cupy, fn: str):
    """An ElementwiseKernel ``(T a, T b) -> T`` applying ``ember_<fn>`` in T's opmath."""
    return cupy.ElementwiseKernel(
        "T a, T b", "T out",
        f"typedef typename ember_opmath<T>::type F; out = (T)ember_{fn}((F)a, (F)b);",
        f"ember_{fn}", preamble=DIVMOD_PREAMBLE)


def _float_divmod(cupy, fn: str):
    """numpy-compatible ``floor_divide``/``remainder``; integers stay with CuPy's own
    (Python semantics already), floats go to the ElementwiseKernel (compiled on first use,
    once per dtype and device)."""
    integral = getattr(cupy, fn)
    compiled = []

    def kernel(a, b):
        dt = (b if a.__class__ in (int, float, bool) else a).dtype
        if dt == BF16:  # no bfloat16 math in the kernel: float32 is exact for these values
            return kernel(a.astype(F32), b.astype(F32)).astype(BF16)
        if dt.kind != "f":
            return integral(a, b)
        if not compiled:
            compiled.append(_divmod_kernel(cupy, fn))
        return compiled[0](a, b)
    kernel.__name__ = fn
    return kernel


def _add_at(cupy, a, indices, b=None) -> None:
    """numpy's ``np.add.at(a, indices, b)`` for every dtype: repeated indices all add."""
    b = cupy.asarray(b, dtype=a.dtype)
    if a.dtype in ATOMIC_ADD:
        cupy.add.at(a, indices, b)
    elif a.dtype == INT64:  # two's complement: uint64 addition wraps exactly like int64
        cupy.add.at(a.view(cupy.uint64), indices, b.view(cupy.uint64))
    else:  # bool, int8, int16, uint8 (wrapping mod 2**bits on the way back), bfloat16
        wide = F32 if a.dtype == BF16 else np.dtype(np.int32)
        acc = a.astype(wide)
        cupy.add.at(acc, indices, b.astype(wide))
        a[...] = acc


def _order_keys(cupy, x, nan_key: int):
    """Integer keys of float32/float64 ``x`` in the order of its values (-0.0 below 0.0),
    NaN keyed ``nan_key``: a non-negative float's bits as they are, a negative one's
    with every bit but the sign flipped (larger magnitudes get smaller keys)."""
    itype, flip = ORDER_KEYS[x.dtype]
    bits = x.view(itype)
    return cupy.where(x != x, itype.type(nan_key),  # noqa: PLR0124 - x != x is isnan
                      cupy.where(bits < 0, bits ^ itype.type(flip), bits))


def _from_order_keys(cupy, keys, dtype):
    """The float32/float64 values of ``_order_keys`` (the extreme keys come back NaN)."""
    itype, flip = ORDER_KEYS[dtype]
    return cupy.where(keys < 0, keys ^ itype.type(flip), keys).view(dtype)


def _extremum_at(cupy, name: str, a, indices, b=None) -> None:
    """numpy's ``np.maximum.at(a, indices, b)`` (``name`` "maximum") or ``minimum.at`` for
    every dtype: repeated indices all compete and NaN wins (see the module docstring)."""
    ufunc = getattr(cupy, name)
    b = cupy.asarray(b, dtype=a.dtype)
    if a.dtype in ATOMIC_EXTREMUM:
        ufunc.at(a, indices, b)
    elif a.dtype.kind in "biu":  # bool, int8, int16, uint8, uint16: exact in int32
        acc = a.astype(np.int32)
        ufunc.at(acc, indices, b.astype(np.int32))
        a[...] = acc
    elif a.dtype.kind == "f" or a.dtype == BF16:  # float16/bfloat16: exact in float32
        wide = a.dtype if a.dtype in ORDER_KEYS else F32
        info = np.iinfo(ORDER_KEYS[wide][0])
        nan_key = info.max if name == "maximum" else info.min
        keys = _order_keys(cupy, a.astype(wide, copy=False), nan_key)
        ufunc.at(keys, indices, _order_keys(cupy, b.astype(wide, copy=False), nan_key))
        a[...] = _from_order_keys(cupy, keys, wide)
    else:  # complex: CuPy's own TypeError
        ufunc.at(a, indices, b)


def _scan(cupy, name: str, array, axis=0, dtype=None, out=None):
    """numpy's ``np.maximum.accumulate`` (``name`` "maximum") or ``minimum.accumulate``:
    a log-step (Hillis-Steele) scan, ceil(log2 n) passes of the ufunc over shifted slices
    along ``axis``. Each pass computes its whole right-hand side before writing, and takes
    the earlier operand first as numpy's loop does (``out[i] = f(out[i-1], a[i])``), so
    ties and NaN give numpy's values. Reference: Hillis & Steele, "Data parallel
    algorithms" (CACM 29(12), 1986)."""
    ufunc = getattr(cupy, name)
    if array.ndim == 0:
        raise TypeError(f"{name}.accumulate: cannot accumulate a 0-d array")
    axis = axis % array.ndim
    acc = array.astype(dtype or array.dtype, copy=True)  # C-contiguous, ours to write
    n, lead = array.shape[axis], (slice(None),) * axis
    step = 1
    while step < n:
        acc[lead + (slice(step, None),)] = ufunc(acc[lead + (slice(None, n - step),)],
                                                 acc[lead + (slice(step, None),)])
        step *= 2
    if out is None:
        return acc
    out[...] = acc
    return out


def _with_methods(ufunc, **methods):
    """``ufunc`` as the generic kernels call it, the named methods (``at``, ``accumulate``)
    replaced by the given functions; everything else is the ufunc's."""
    table = {name: staticmethod(fn) for name, fn in methods.items()}
    table.update(__call__=staticmethod(ufunc),
                 __getattr__=lambda self, name: getattr(ufunc, name))
    return type("NumpyCompatibleUfunc", (), table)()


def numpy_compatible(cupy):
    """CuPy as the namespace the generic kernels compute with, ``floor_divide``,
    ``remainder``, ``add.at``, ``maximum.at``/``accumulate`` and
    ``minimum.at``/``accumulate`` replaced by their numpy-compatible versions."""
    ns = types.SimpleNamespace(**vars(cupy))
    ns.floor_divide = _float_divmod(cupy, "floor_divide")
    ns.remainder = _float_divmod(cupy, "remainder")
    ns.add = _with_methods(cupy.add, at=functools.partial(_add_at, cupy))
    for name in ("maximum", "minimum"):
        setattr(ns, name, _with_methods(getattr(cupy, name),
                                        at=functools.partial(_extremum_at, cupy, name),
                                        accumulate=functools.partial(_scan, cupy, name)))
    return ns


def _sorting(cupy) -> dict:
    """sort, argsort and topk on CuPy's (always stable) sort."""
    def keys_of(a):
        return a.astype(F32) if a.dtype == BF16 else a  # exact and order-preserving

    def argsort_stable(keys, dim, descending):
        if not descending:
            return cupy.argsort(keys, axis=dim)
        # descending and stable: sort the reversed input ascending and reverse back, so
        # ties keep input order and NaN (sorted last ascending) comes first
        r = cupy.argsort(cupy.flip(keys, axis=dim), axis=dim)
        return (keys.shape[dim] - 1) - cupy.flip(r, axis=dim)

    def sort(a, dim, descending, stable):
        if a.ndim == 0:
            return a.copy(), cupy.zeros((), cupy.int64)
        return gather(a, argsort_stable(keys_of(a), dim, descending), dim)

    def argsort(a, dim, descending, stable):
        if a.ndim == 0:
            return cupy.zeros((), cupy.int64)
        return argsort_stable(keys_of(a), dim, descending).astype(cupy.int64, copy=False)

    def gather(a, idx, dim):
        """(values of ``a`` at ``idx`` along ``dim``, ``idx`` as int64)."""
        values = cupy.take_along_axis(keys_of(a), idx, axis=dim).astype(a.dtype, copy=False)
        return values, idx.astype(cupy.int64, copy=False)

    def topk(a, k, dim, largest, sorted_):
        n = a.shape[dim] if a.ndim else 1
        if not 0 <= k <= n:
            raise IndexError(f"topk(): k={k} is out of range for dimension {dim} of size {n} "
                             f"(input shape {list(a.shape)}); expected 0 <= k <= {n}")
        if a.ndim == 0:
            return a.copy(), cupy.zeros((), cupy.int64)
        # NOTE: one full stable sort: CuPy's argpartition sorts fully anyway
        idx = argsort_stable(keys_of(a), dim, largest)[(slice(None),) * dim + (slice(0, k),)]
        return gather(a, idx, dim)

    return {"sort": sort, "argsort": argsort, "topk": topk}


def _half_matmul(cupy, generic: dict) -> dict:
    """matmul, mm and bmm straight to cuBLAS for float16 operands; everything else (and
    every error) through the generic kernels."""
    def half(a, b) -> bool:
        return getattr(a, "dtype", None) == F16 and getattr(b, "dtype", None) == F16

    def matmul(a, b):
        if half(a, b) and a.ndim and b.ndim:
            check_inner("matmul", a, b)
            return cupy.matmul(a, b)
        return generic["matmul"](a, b)

    def mm(a, b):
        if half(a, b) and a.ndim == 2 and b.ndim == 2:
            check_inner("mm", a, b)
            return cupy.matmul(a, b)
        return generic["mm"](a, b)

    def bmm(a, b):
        if half(a, b) and a.ndim == 3 and b.ndim == 3 and a.shape[0] == b.shape[0]:
            check_inner("bmm", a, b)
            return cupy.matmul(a, b)
        return generic["bmm"](a, b)

    return {"matmul": matmul, "mm": mm, "bmm": bmm}


def _factories(cupy, generic: dict, bfloat16: bool) -> dict:
    """rand/randn drawn in float32 unless float64 is asked for; with ``bfloat16`` False,
    every factory refuses it with the way out (the factories call kernels directly, so
    ``unsupported`` does not reach them)."""
    def draw_dtype(dtype):
        return F64 if dtype == F64 else F32

    def rand(size, dtype, rng):
        return rng.random(size, dtype=draw_dtype(dtype)).astype(dtype, copy=False)

    def randn(size, dtype, rng):
        return rng.standard_normal(size, dtype=draw_dtype(dtype)).astype(dtype, copy=False)

    table = dict(generic, rand=rand, randn=randn)
    if bfloat16:
        return table

    def refusing(name, fn):
        def kernel(*args):
            if any(a is BF16 or (isinstance(a, np.dtype) and a == BF16) for a in args):
                raise TypeError(no_bfloat16_message(cupy.__version__))
            return fn(*args)
        kernel.__name__ = name
        return kernel
    return {name: refusing(name, fn) for name, fn in table.items()}


def no_bfloat16_message(version: str) -> str:
    """The TypeError text for bfloat16 on a CuPy ``version`` below 14, with the way out."""
    return (f"the cuda backend cannot hold bfloat16 with CuPy {version} (CuPy supports "
            f"ml_dtypes' bfloat16 from version 14): upgrade with "
            f"{install_hint('cuda', upgrade=True)}; or use float16 or float32")


FACTORIES = ("empty", "full", "arange", "linspace", "eye", "rand", "randn", "randint")


def make_kernels(cupy, bfloat16: bool) -> dict:
    """The cuda backend's op -> kernel table (see the module docstring)."""
    table = array_api.make_kernels(numpy_compatible(cupy))
    table.update(_sorting(cupy))
    table.update(_half_matmul(cupy, dict(table)))
    table.update(_factories(cupy, {n: table[n] for n in FACTORIES}, bfloat16))
    return table


def unsupported(kernels, bfloat16: bool) -> dict:
    """op -> ScalarTypes its kernel must not serve: the generic list, plus bfloat16
    everywhere when the installed CuPy has no bfloat16."""
    out = dict(array_api.unsupported())
    if not bfloat16:
        for op in kernels:
            out[op] = out.get(op, frozenset()) | {_bf16}
    return out
