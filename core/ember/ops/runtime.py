"""What the generated op wrappers call at run time, and the globals they run with.

``codegen.py`` writes each wrapper's source; the wrapper executes in ``namespace()`` (kept in
``codegen.NAMESPACE``, where ``ember.autograd`` adds its recorders ``_ag_<op>``). The
helpers here are the ones that need more than ``dispatch``: autograd errors and tests,
device checks, generators and the tracer's entry.
"""
from __future__ import annotations

from .. import dispatch as _d
from ..autograd import grad_mode as _grad_mode
from ..autograd import views as _views
from ..jit import tracing_state as _tracing


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


def namespace() -> dict:
    """A new dict of the globals every generated wrapper reads."""
    from . import checks, composite
    return {
        "_checks": checks.CHECKS,
        # warnings raised by kernels called straight from a wrapper are attributed here
        "__name__": "ember.ops.generated",
        "_Tensor": _d._Tensor, "_wrap": _d.wrap, "_wrap_view": _d.wrap_view,
        "_promote": _d.promote_operands, "_promote_list": _d.promote_list,
        "_write_out": _d.write_out, "_write_inplace": _d.write_inplace,
        "_composite_inplace": _d.composite_inplace,
        "_check_writable": _d.check_writable,
        "_check_tensor": _d.check_tensor, "_check_optional_tensor": _d.check_optional_tensor,
        "_check_tensor_list": _d.check_tensor_list, "_check_int": _d.check_int,
        "_check_int_list": _d.check_int_list, "_check_float": _d.check_float,
        "_check_bool": _d.check_bool, "_check_bool_list": _d.check_bool_list,
        "_check_scalar": _d.check_scalar,
        "_check_str": _d.check_str, "_check_dtype": _d.check_dtype,
        "_self_error": _d.self_not_tensor_error, "_no_tensor_error": _d.no_tensor_error,
        "_wrap_dim": _d.wrap_dim, "_wrap_dims": _d.wrap_dims, "_same_device": same_device,
        "_to_device_of": to_device_of,
        "_gen": _generator_arg, "_value_error": _d.kernel_value_error,
        "_kernel_error": _d.kernel_error,
        "_composite": composite.COMPOSITES, "_len": len,
        "_isinstance": isinstance, "_int": int, "_float": float, "_str": str, "_tuple": tuple,
        "_SCALAR_CATEGORY": {float: 2, int: 1, bool: 0}, "_enumerate": enumerate,
        # autograd (the recorders ``_ag_<op>`` are added by ember.autograd at import)
        "_gm": _grad_mode.STATE, "_finish": _views.finish,
        "_record_inplace": _views.record_inplace, "_begin_inplace": _views.begin_inplace,
        "_end_inplace": _views.end_inplace, "_any_rg": any_requires_grad,
        "_out_grad_error": out_grad_error, "_no_derivative": no_derivative,
        # tracing (ember.jit): the state every wrapper checks, and the recorder
        "_tr": _tracing.STATE, "_record": _record_traced,
    }


def _record_traced(kind, fn, args, kwargs):
    from ..jit.tracer import record_op
    return record_op(kind, fn, args, kwargs)


def same_device(op: str, typ, t, name: str) -> None:
    """Raise DeviceMismatchError unless tensor ``t`` lives on ``typ``'s backend."""
    if t._type.backend is not typ.backend and t._type.backend.name != typ.backend.name:
        raise _d.DeviceMismatchError(
            f"{op}(): expected '{name}' on '{typ.backend.name}' like the other tensors, but it "
            f"is on {t.device}; move it with .to('{typ.backend.name}')")


def to_device_of(typ, t, self_):
    """``t`` itself when it lives on ``typ``'s backend, else ``t`` moved to ``self_``'s
    device (a differentiable ``.to``): the ``cross_device`` arguments of
    ``native_functions.yaml`` (``copy_``'s src). Another device of the same backend
    (cuda:0 -> cuda:1) is the backend's to bring over, in its kernel."""
    b = t._type.backend
    if b is typ.backend or b.name == typ.backend.name:
        return t
    return t.to(device=self_.device)


def _generator_arg(g, backend):
    from ..random import backend_rng
    return backend_rng(g, backend)
