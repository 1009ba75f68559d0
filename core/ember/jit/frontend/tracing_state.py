"""Whether this thread is tracing: ``STATE``, the one check every op wrapper makes.

It lives in the bottom layer, ``ember/_base/tracing_state.py`` (no imports from ember);
this module re-exports the same object under its historical path, and holds the tracer's
emitter: its part of every generated op wrapper.
"""
from __future__ import annotations

from ..._base.tracing_state import STATE

__all__ = ["STATE", "TraceEmitter"]


class TraceEmitter:
    """The tracer's part of every generated op wrapper (an ``ops.codegen.WrapperEmitter``):
    its first line, which, while a trace is open, hands the call to the tracer; the tracer
    runs the wrapper again and records it as one ``ember::<op>`` node::

        if _tr.active and _tr.claim(): return _record('ember::add', _wrapper_add,
                                                      (self, other, ), {'alpha': alpha})

    It has no other hooks. (Not a subclass of ``WrapperEmitter``: this module is imported
    before the ops exist.)
    """

    def namespace(self) -> dict:
        """The state every wrapper checks, and the recorder."""
        return {"_tr": STATE, "_record": _record_traced}

    def prologue(self, ctx) -> list[str]:
        """The trace hook (``ctx``: an ``ops.codegen.WrapperContext``)."""
        args, kwargs = ctx.call_args()
        # ``_wrapper_<name>``, not ``<name>``: an argument may share the op's name (``pad``)
        return [f"if _tr.active and _tr.claim(): return _record({'ember::' + ctx.qualified!r}, "
                f"_wrapper_{ctx.fn_name}, {args}, {kwargs})"]


def _record_traced(kind, fn, args, kwargs):
    # NOTE: the tracer (ir, op_registry, ...) loads with the first trace, not at import
    from .tracer import record_op
    return record_op(kind, fn, args, kwargs)
