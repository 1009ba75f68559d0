"""A kernel's array-level form: the one ufunc a kernel is, declared where it is defined.

A caller that builds a call once and runs it many times (the JIT's array-mode plans,
``ember.jit.runtime.plan_array_mode``) may call that ufunc in place of the kernel, and hand it
``out=`` to write into a buffer it reuses. The form holds under a contract the kernel's
author checks once:

    for operands of one dtype, float32 or float64 (arrays, or Python numbers, which
    numpy >= 2 and CuPy take as weak scalars, as PyTorch does), with the kernel's
    arguments after its operands equal to ``when`` (the operands are the kernel's
    arguments but the last ``len(when)``), the kernel returns exactly
    ``ufunc(*operands)``.

A kernel that *is* an ``xp`` ufunc (``exp``: ``xp.exp`` itself) needs no declaration; any
other declares its form with :func:`declare_ufunc`::

    def add(a, b, alpha):
        ...                       # alpha == 1: add_(a, b), with weak numbers kept weak
    declare_ufunc(add, xp.add, when=(1,))

The ufunc is the backend's own (``xp.add``: numpy's or CuPy's), so the form works for
every backend built from ``array_api.make_kernels(xp)``; a backend that replaces a kernel
without declaring a form simply has its kernel called.

Reference: NumPy's ufunc protocol (``nin``, ``out=``); PyTorch's structured kernels
declare an ``out=`` form beside the functional one (``native_functions.yaml``).
"""
from __future__ import annotations

from typing import Callable, NamedTuple, Optional

__all__ = ["UfuncForm", "declare_ufunc", "ufunc_form"]


class UfuncForm(NamedTuple):
    """A kernel's array-level form: ``ufunc`` (an ``xp`` ufunc) and ``when``, the values
    the kernel's last arguments must have, after its operands (``(1,)`` for ``add``'s
    ``alpha``; ``()`` when all its arguments are operands)."""
    ufunc: Callable
    when: tuple = ()


def declare_ufunc(kernel: Callable, ufunc: Callable, when: tuple = ()) -> Callable:
    """Declare that ``kernel`` is ``ufunc`` under the module docstring's contract, its
    arguments after the ufunc's operands equal to ``when``; returns ``kernel``.

    Raises TypeError when ``ufunc`` is not callable or ``when`` is not a tuple. (Nothing
    else of ``ufunc`` is read here: kernel tables are built at import, for stand-ins of
    CuPy too; callers read its ``out=`` when they call it.)
    """
    if not callable(ufunc):
        raise TypeError(f"declare_ufunc: expected the xp ufunc the kernel calls, got "
                        f"{type(ufunc).__name__}")
    if not isinstance(when, tuple):
        raise TypeError(f"declare_ufunc: expected when as a tuple of argument values, got "
                        f"{type(when).__name__}; write when=(1,) for one argument")
    kernel.array_form = UfuncForm(ufunc, when)
    return kernel


def ufunc_form(kernel: Callable, xp) -> Optional[UfuncForm]:
    """The array-level form of ``kernel`` of a backend computing with ``xp``: the one it
    declared, itself when it is an ``xp`` ufunc, else None."""
    form = getattr(kernel, "array_form", None)
    if form is not None:
        return form
    ufunc_type = getattr(xp, "ufunc", None)
    if ufunc_type is not None and isinstance(kernel, ufunc_type):
        return UfuncForm(kernel)
    return None
