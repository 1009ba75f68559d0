"""The autograd layer's part of every generated op wrapper (the seeds' VariableType).

``ember.ops.codegen`` writes the dispatch layer of each wrapper and asks this emitter for
the lines of the layer above: the requires-grad test, the call of the op's recorder (the
backward node from ``derivatives.yaml``, see ``codegen.py`` here) and view finishing. For
``mul`` (``self: grad * other``, ``other: grad * self``) the lines after the kernel are::

    _res = _wrap(_r, _T.backend)
    if ((self._requires_grad or self._base is not None and self._base._requires_grad) or
            (other._requires_grad or ...)) and _gm.enabled:
        _finish(_ag_mul(False, self, other), (_res,))
    return _res

so a call whose inputs do not require grad pays one attribute test per input. An op
without a ``derivatives.yaml`` entry raises ``_no_derivative`` instead of recording.

Reference: PyTorch's ``torchgen/packaged/autograd/gen_variable_type.py``.
"""
from __future__ import annotations

from .._base.grad_mode import STATE
from ..ops.codegen import WrapperContext, WrapperEmitter, recorder_name
from . import views as _views


def any_requires_grad(tensors) -> bool:
    """Whether any tensor of a ``Tensor[]`` argument requires grad (views: via their base)."""
    for t in tensors:
        if t._requires_grad or t._base is not None and t._base._requires_grad:
            return True
    return False


def out_grad_error(op: str) -> RuntimeError:
    """PyTorch's error for ``out=`` on an op whose inputs require grad."""
    return RuntimeError(f"{op}(): functions with out=... arguments don't support automatic "
                        f"differentiation, but one of the arguments requires grad; call "
                        f"{op}() without out=, or under 'with ember.no_grad():'")


def no_derivative(op: str) -> NotImplementedError:
    """The error for recording an op that has no ``derivatives.yaml`` entry."""
    return NotImplementedError(f"the derivative for '{op}' is not implemented: add an entry "
                               f"to ember/autograd/derivatives.yaml, or call it under "
                               f"'with ember.no_grad():' or on .detach()-ed inputs")


def requires_grad_test(schema, names, promoted) -> str:
    """Source of the test 'does any differentiable input (among ``names``) require grad?'."""
    parts = []
    for a in schema.arguments:
        if a.type.base != "Tensor" or a.name not in names:
            continue
        n = a.name
        # NOTE: a view requires grad when its base does, even one made before the base
        # got a history (PyTorch's DifferentiableViewMeta::requires_grad).
        rg = f"({n}._requires_grad or {n}._base is not None and {n}._base._requires_grad)"
        if a.type.is_list:
            parts.append(f"_any_rg({n})")
        elif n in promoted:
            parts.append(f"(_isinstance({n}, _Tensor) and {rg})")
        elif a.type.optional:
            parts.append(f"({n} is not None and {rg})")
        else:
            parts.append(rg)
    return " or ".join(parts)


class AutogradEmitter(WrapperEmitter):
    """Emits the autograd layer of each kernel op's wrapper from ``derivatives`` (qualified
    op name -> ``derivatives.Derivative``, as ``derivatives.load()`` returns)."""

    def __init__(self, derivatives: dict):
        self.derivatives = derivatives

    def namespace(self) -> dict:
        """Grad mode, the view and in-place helpers, the errors (the recorders ``_ag_<op>``
        come later: ``ember._build`` adds them once they are compiled)."""
        return {"_gm": STATE, "_finish": _views.finish,
                "_record_inplace": _views.record_inplace,
                "_begin_inplace": _views.begin_inplace, "_end_inplace": _views.end_inplace,
                "_any_rg": any_requires_grad, "_out_grad_error": out_grad_error,
                "_no_derivative": no_derivative}

    def _parts(self, ctx: WrapperContext) -> tuple[str, str | None, str]:
        """(requires-grad test or "" for a non-differentiable op, recorder name or None
        without an entry, the recorder's arguments)."""
        deriv = self.derivatives.get(ctx.nf.kernel_name)
        if deriv is None:
            rg = requires_grad_test(ctx.schema, {a.name for a in ctx.tensors}, ctx.promoted)
        elif deriv.not_differentiable:
            rg = ""
        else:
            rg = requires_grad_test(ctx.schema, set(deriv.differentiable_inputs), ctx.promoted)
        record = recorder_name(ctx.nf.kernel_name) if deriv is not None else None
        return rg, record, ", ".join(a.name for a in ctx.schema.arguments)

    def before_kernel(self, ctx: WrapperContext) -> list[str]:
        """Declared in place (``fill_``, ``copy_``): the node is made before self changes."""
        rg, record, args = self._parts(ctx)
        if not rg:
            return []
        return [f"if ({rg}) and _gm.enabled:",
                f"    _node = _begin_inplace({ctx.op!r}, self, {record}, ({args},))"
                if record else f"    raise _no_derivative({ctx.op!r})",
                "else:", "    _node = None"]

    def into_conditions(self, ctx: WrapperContext) -> list[str]:
        """The ``into:`` fast path records nothing: taken only when there is nothing to."""
        rg = self._parts(ctx)[0]
        return [f"not (({rg}) and _gm.enabled)"] if rg else []

    def before_write_inplace(self, ctx: WrapperContext) -> list[str]:
        """An in-place variant (``add_``) records the op and rebases self's history."""
        rg, record, args = self._parts(ctx)
        if not rg:
            return []
        return [f"if ({rg}) and _gm.enabled:",
                f"    return _record_inplace({ctx.op!r}, self, _r, {record}, ({args},))"
                if record else f"    raise _no_derivative({ctx.op!r})"]

    def after_inplace_kernel(self, ctx: WrapperContext) -> list[str]:
        """Declared in place: finish the node made by ``before_kernel``."""
        return ["if _node is not None: _end_inplace(self, _node)"] if self._parts(ctx)[0] \
            else []

    def out_checks(self, ctx: WrapperContext) -> list[str]:
        """``out=`` is not differentiable: refuse it when an input requires grad."""
        rg = self._parts(ctx)[0]
        return [f"if ({rg}) and _gm.enabled: raise _out_grad_error({ctx.op!r})"] if rg else []

    def on_result(self, ctx: WrapperContext, outputs: str) -> list[str]:
        """Record the node and finish the outputs (view metadata, grad_fn)."""
        rg, record, args = self._parts(ctx)
        if not rg:
            return []
        return [f"if ({rg}) and _gm.enabled:",
                f"    _finish({record}(False, {args}), {outputs})" if record else
                f"    raise _no_derivative({ctx.op!r})"]
