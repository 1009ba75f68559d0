"""Hot backward formulas computed on the kernels directly, for passes that record nothing.

A formula in ``derivatives.yaml`` is written with ember ops, so that with
``create_graph=True`` it records its own history (double backward). Without it nothing
records, and around each kernel an op only adds what the backward does not need: Tensor
wrappers for intermediates that never escape, tracing and promotion checks. The functions
here compute the same formulas by calling the same kernels of the same Type, in the same
order and with the same arguments as the ops would, so their results are those of the
formulas bit for bit. Each returns None (and the caller evaluates the formula instead)
whenever that cannot be guaranteed: grad mode on (``create_graph``), a trace open, or
operands that are not Tensors of one Type (the ops would promote them).

``FAST[(op, inputs)]`` maps a ``derivatives.yaml`` entry and the inputs of one of its
formulas to such a function; ``codegen.py`` calls it from the generated node first. Its
parameters are named after the formula's variables (``grad``, ``self``, ``result``,
``self_shape``...). ``tests/core/autograd/test_fast_formulas.py`` checks every entry
against its formula.

The formula stays the one source of the math. A pointwise formula's kernel form is
derived from its expression (``DERIVED``, compiled by ``kernel_forms.py`` when
``codegen.compile_all`` reads the yaml). The functions written here serve formulas that
call a helper of ``formulas/`` (a layout choice, a view, a fused engine pass), which no
expression compiler sees through; each names the exact expression it computes
(``formula=``), and ``codegen`` refuses to use it when ``derivatives.yaml`` says
otherwise, so a changed formula cannot keep a stale fast form.

Reference: PyTorch computes these formulas with dedicated kernels (``tanh_backward``,
``sigmoid_backward``) for the same reason.
"""
from __future__ import annotations

import math

import numpy as np

from ..backends.elementwise import eager as _engine
from . import kernel_forms as _kernel_forms
from .._base.grad_mode import STATE
from .._base.tracing_state import STATE as _TRACING
from ..tensor import Tensor as _T
from ..tensor import wrap as _wrap
from ..tensor import wrap_view as _wrap_view

FAST: dict = {}

#: Formulas whose kernel form is compiled from their ``derivatives.yaml`` expression
DERIVED = (("tanh", ("self",)), ("sigmoid", ("self",)), ("relu", ("self",)),
           ("mm", ("self",)), ("t", ("self",)))


def fast(op: str, *inputs: str, formula: str):
    """Register the kernel form of the formula ``formula`` of ``op`` for ``inputs``
    (``formula`` must be the ``derivatives.yaml`` expression, checked by ``codegen``)."""
    def register(fn):
        fn.formula = formula
        FAST[(op, inputs)] = fn
        return fn
    return register


def derive(derivs: dict) -> None:
    """Compile the kernel forms of ``DERIVED`` from the formulas of ``derivs`` (op name ->
    ``derivatives.Derivative``) into ``FAST``. Raises NotKernelForm (naming the formula's
    file:line) when one of them no longer compiles."""
    for op, inputs in DERIVED:
        d = derivs[op]
        f = next(f for f in d.formulas if f.inputs == inputs)
        tensors = ["grad", *(a.name for a in d.schema.arguments if a.type.base == "Tensor"),
                   *(r.name or "result" for r in d.schema.returns)]
        name = "_kernel_" + op.replace(".", "__") + "__" + "_".join(inputs)
        try:
            FAST[(op, inputs)] = _kernel_forms.kernel_form(f.expression, tensors, name,
                                                           str(f.location))
        except _kernel_forms.NotKernelForm as e:
            raise _kernel_forms.NotKernelForm(f"{f.location}: {e}; drop ({op!r}, "
                                              f"{inputs!r}) from fast_formulas.DERIVED") from None


# --- used by the engine ----------------------------------------------------------------------

def accumulate(old, g):
    """``old + g``: two gradients for one input of a node, summed in its buffer (both fitted
    to its metadata: one Type, one shape, so the add kernel is all ``+`` would run)."""
    if STATE.enabled or _TRACING.active or old._type is not g._type or \
            old._data.shape != g._data.shape:
        return old + g
    typ = old._type
    return _wrap(typ.kernels["add"](old._data, g._data, 1), typ.backend)


def sum_to_kernels(g, lead: int, inner: tuple):
    """``formulas.sum_to``'s two sums (over the ``lead`` prepended dims, then over the
    ``inner`` stretched ones, kept), or None when ops must record them."""
    if not _unrecorded(g):
        return None
    typ = g._type
    k, a = typ.kernels["sum"], g._data
    if lead:
        a = k(a, tuple(range(lead)), False, None)
    if inner:
        a = k(a, inner, True, None)
    return _wrap(a, typ.backend)


# --- formulas --------------------------------------------------------------------------------

def _unrecorded(grad) -> bool:
    """True when kernels may stand in for the ops on ``grad``: nothing records (grad mode
    off, no trace open) and it is a plain Tensor."""
    return not (STATE.enabled or _TRACING.active) and grad.__class__ is _T


def _pointwise_type(grad, result):
    """The one Type of ``grad`` and ``result`` when the kernels may stand in for the ops
    (nothing records, both plain Tensors of that Type), else None."""
    if not _unrecorded(grad) or result.__class__ is not _T or grad._type is not result._type:
        return None
    return grad._type


def column_major(x) -> bool:
    """Whether the array ``x`` is a matrix laid out column by column (strides ``(1, rows)``
    elements; one row counts as row-major): ``formulas.is_column_major`` of a tensor."""
    return x.ndim == 2 and x.shape[0] > 1 and x.strides[0] == x.itemsize and \
        x.strides[1] == x.shape[0] * x.itemsize


def _mm(grad, a, b, a_t: bool, mat2=None):
    """``grad.mm(b.t())`` (``a_t`` False) or ``a.t().mm(grad)``, all 2-D of one Type; with
    ``mat2`` given and column-major, the latter as ``grad.t().mm(a).t()``
    (``formulas.mm_mat2_backward``)."""
    if not _unrecorded(grad) or a.__class__ is not _T or b.__class__ is not _T or \
            a._data.ndim != 2 or b._data.ndim != 2:
        return None
    typ = grad._type
    k = typ.kernels
    if a_t:
        if a._type is not typ:
            return None
        if mat2 is not None and column_major(mat2._data):
            return _wrap(k["t"](k["mm"](k["t"](grad._data), a._data)), typ.backend)
        return _wrap(k["mm"](k["t"](a._data), grad._data), typ.backend)
    if b._type is not typ:
        return None
    return _wrap(k["mm"](grad._data, k["t"](b._data)), typ.backend)


@fast("matmul", "self", formula="matmul_backward_self(grad, self, other)")
def matmul_self(grad, self, other):
    """``matmul_backward_self`` for 2-D operands: ``grad.mm(other.t())``"""
    return _mm(grad, self, other, False)


@fast("matmul", "other", formula="matmul_backward_other(grad, self, other)")
def matmul_other(grad, self, other):
    """``matmul_backward_other`` for 2-D operands: ``mm_mat2_backward(grad, self, other, 1)``"""
    return _mm(grad, self, other, True, other)


@fast("mm", "mat2", formula="mm_mat2_backward(grad, self, mat2, 1)")
def mm_mat2(grad, self, mat2):
    """``mm_mat2_backward(grad, self, mat2, 1)``"""
    return _mm(grad, self, self, True, mat2)


@fast("addmm", "mat2", formula="mm_mat2_backward(grad, mat1, mat2, alpha)")
def addmm_mat2(grad, mat1, mat2, alpha):
    """``mm_mat2_backward(grad, mat1, mat2, alpha)`` for ``alpha == 1`` (``linear``)."""
    if alpha.__class__ is not int or alpha != 1 or mat2.__class__ is not _T:
        return None
    return _mm(grad, mat1, mat1, True, mat2)


def _expanded(grad, self_shape, dim, keepdim):
    """``grad.expand(self.shape)`` as a kernel result where a reduction's backward has no
    reduced dim to restore (all of them reduced, or ``keepdim``), with its Type; else
    None."""
    if not _unrecorded(grad) or not (dim is None or keepdim):
        return None
    size = tuple(self_shape)
    return grad._type, size, grad._type.kernels["expand"](grad._data, size)


@fast("sum", "self", formula="sum_backward(grad, self.shape, dim, keepdim)")
def sum_self(grad, self_shape, dim, keepdim):
    """``sum_backward(grad, self.shape, dim, keepdim)``: ``grad.expand(self.shape)``, a
    view of ``grad`` as the op makes it."""
    found = _expanded(grad, self_shape, dim, keepdim)
    if found is None:
        return None
    typ, size, e = found
    return _wrap_view(e, typ.backend, grad, _T.expand, (size,), None)


@fast("mean", "self", formula="mean_backward(grad, self.shape, dim, keepdim)")
def mean_self(grad, self_shape, dim, keepdim):
    """``mean_backward``: ``grad.expand(self.shape) / n``, n the elements averaged."""
    found = _expanded(grad, self_shape, dim, keepdim)
    if found is None:
        return None
    typ, size, e = found
    # a 0-d tensor's dim 0 (or -1) averages its one element: prod(()) == 1
    n = math.prod(size if dim is None or not len(dim) or not size else
                  (size[d] for d in dim))
    return _wrap(typ.kernels["div"](e, n, None), typ.backend)


@fast("log_softmax", "self", formula="log_softmax_backward(grad, result, dim)")
def log_softmax_self(grad, result, dim):
    """``log_softmax_backward``: ``grad - result.exp() * grad.sum(dim, keepdim=True)``"""
    typ = _pointwise_type(grad, result)
    if typ is None or not -result._data.ndim <= dim < result._data.ndim:
        return None
    k, g = typ.kernels, grad._data
    total = k["sum"](g, (dim % g.ndim,), True, None)
    return _wrap(k["sub"](g, k["mul"](k["exp"](result._data), total), 1), typ.backend)


@fast("gelu", "self", formula="gelu_backward(grad, self, approximate)")
def gelu_self(grad, self, approximate):
    """``gelu_backward(grad, self, 'none')`` for float32 numpy arrays of one shape: one
    blocked pass of the engine (``elementwise.eager.gelu_backward``), the formula's own
    ufuncs in its order, so the same bits; a dozen ops otherwise."""
    typ = _pointwise_type(grad, self)
    if typ is None or approximate != "none" or typ.backend.xp is not np:
        return None
    g, x = grad._data, self._data
    if x.dtype != np.float32 or g.shape != x.shape:
        return None
    return _wrap(_engine.gelu_backward(g, x), typ.backend)


@fast("gather", "self", formula="gather_backward(grad, self.shape, dim, index)")
def gather_self(grad, self_shape, dim, index):
    """``gather_backward`` for an input with dims: ``zeros(self.shape).scatter_add(dim,
    index, grad)``, the zeros on grad's device."""
    if not _unrecorded(grad) or index.__class__ is not _T or not len(self_shape):
        return None
    typ = grad._type
    if index._type.backend is not typ.backend:
        return None
    k, g = typ.kernels, grad._data
    with typ.backend.on_device_of(g):
        zeros = k["full"](tuple(self_shape), 0, g.dtype)
    return _wrap(k["scatter_add"](zeros, dim % g.ndim, index._data, g), typ.backend)
