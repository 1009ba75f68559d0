"""What the generated op wrappers call at run time, and the dispatch layer's globals.

``codegen.py`` writes each wrapper's source; the wrapper executes in ``namespace()`` (kept in
``codegen.NAMESPACE``) plus the globals of the upper layers' emitters (autograd's, the
tracer's: see ``codegen.WrapperEmitter``). The helpers here are the ones that need more
than ``dispatch``: device checks and generators. This module imports only downward
(dispatch, Tensor); autograd's helpers live in ``ember.autograd.wrapper_emitter``.
"""
from __future__ import annotations

from .. import dispatch as _d
from . import arguments as _arguments
from ..tensor import Tensor as _Tensor
from ..tensor import wrap as _wrap
from ..tensor import wrap_view as _wrap_view


def namespace() -> dict:
    """A new dict of the globals every generated wrapper reads."""
    from . import checks, composite
    return {
        **_arguments.namespace(),  # the argument checks, by the names their table gives them
        "_checks": checks.CHECKS,
        # warnings raised by kernels called straight from a wrapper are attributed here
        "__name__": "ember.ops.generated",
        "_Tensor": _Tensor, "_wrap": _wrap, "_wrap_view": _wrap_view,
        "_promote": _d.promote_operands, "_promote_list": _d.promote_list,
        "_write_out": _d.write_out, "_write_inplace": _d.write_inplace,
        "_composite_inplace": _d.composite_inplace,
        "_check_writable": _d.check_writable,
        "_check_tensor": _d.check_tensor, "_check_optional_tensor": _d.check_optional_tensor,
        "_check_tensor_list": _d.check_tensor_list,
        "_self_error": _d.self_not_tensor_error, "_no_tensor_error": _d.no_tensor_error,
        "_wrap_dim": _d.wrap_dim, "_wrap_dims": _d.wrap_dims, "_same_device": same_device,
        "_to_device_of": to_device_of,
        "_gen": _generator_arg, "_value_error": _d.kernel_value_error,
        "_kernel_error": _d.kernel_error,
        "_composite": composite.COMPOSITES, "_len": len,
        "_isinstance": isinstance, "_int": int, "_float": float, "_str": str, "_tuple": tuple,
        "_SCALAR_CATEGORY": {float: 2, int: 1, bool: 0}, "_enumerate": enumerate,
    }


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
