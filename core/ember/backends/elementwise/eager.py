"""Eager kernels on the engine: one activation over one large array, block by block.

An eager kernel that chains several ufuncs (``sigmoid`` is four, ``gelu`` a dozen) reads
and writes its whole array once per ufunc. :func:`unary` runs the op's recipe
(:mod:`ember.backends.elementwise.recipes`) through a compiled :class:`BlockedKernel`
instead, so the chain stays in cache and uses ember's threads; kernels are compiled once
per (op, dtype, constants) and cached. The kernels in ``backends/kernels/pointwise.py``
call it for numpy arrays of at least :data:`ENGINE_MIN_SIZE` elements (below that a
kernel call costs more than the ufuncs).

Reference: PyTorch's vectorized CPU kernels (``cpu_kernel_vec`` over ``TensorIterator``
chunks) do the same: one pass over memory per op, whatever its formula.
"""
from __future__ import annotations

import threading
from typing import Callable, Optional

import numpy as np

from .engine import compile_program
from .program import Program
from .recipes import compute_dtype, emit
from .recipes import gelu_backward as _gelu_backward_recipe

__all__ = ["unary", "gelu_backward", "ENGINE_MIN_SIZE"]

#: arrays smaller than this run the plain ufunc chain (a blocked call costs ~10 us)
ENGINE_MIN_SIZE = 1 << 15
_lock = threading.Lock()
_kernels: dict = {}


def _build(op: str, dtype: np.dtype, consts: tuple, erf: Optional[Callable]):
    prog = Program(f"eager {op}")
    x = prog.input(dtype)
    ct = compute_dtype(op, dtype, dtype)
    xc = prog.cast(x, ct) if ct != dtype else x
    value = emit(prog, op, ct, [xc], dict(consts), erf=erf)
    if value is None:
        raise ValueError(f"elementwise.eager.unary: no recipe for {op} on {dtype}")
    prog.output(value, dtype=dtype)
    return compile_program(prog, np)


def unary(op: str, a: np.ndarray, erf: Optional[Callable] = None, **consts) -> np.ndarray:
    """``op`` (an ember op name with a recipe: ``"sigmoid"``, ``"gelu"``) of numpy array
    ``a`` (any shape, a floating dtype), computed block by block; a new array of ``a``'s
    shape and dtype. ``consts``: the op's other arguments (``approximate="tanh"``);
    ``erf``: the erf kernel ``gelu`` calls per block. Raises ValueError when ``op`` has no
    recipe for ``a.dtype``."""
    key = (op, a.dtype, tuple(sorted(consts.items())))
    kernel = _kernels.get(key)
    if kernel is None:
        with _lock:
            kernel = _kernels.get(key)
            if kernel is None:
                kernel = _kernels[key] = _build(op, a.dtype, key[2], erf)
    return kernel(a)[0]


def _build_gelu_backward():
    prog = Program("eager gelu_backward")
    g, x = prog.input(np.float32), prog.input(np.float32)
    prog.output(_gelu_backward_recipe(prog, np.dtype(np.float32), g, x))
    return compile_program(prog, np)


def gelu_backward(grad: np.ndarray, x: np.ndarray) -> np.ndarray:
    """GELU's (approximate='none') gradient ``grad * (Phi(x) + x phi(x))`` of two float32
    arrays of one shape, in one blocked pass; bit for bit the formula of
    ``derivatives.yaml`` computed op by op (see ``recipes.gelu_backward``)."""
    kernel = _kernels.get("gelu_backward")
    if kernel is None:
        with _lock:
            kernel = _kernels.get("gelu_backward")
            if kernel is None:
                kernel = _kernels["gelu_backward"] = _build_gelu_backward()
    return kernel(grad, x)[0]
