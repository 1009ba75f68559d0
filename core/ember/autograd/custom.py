"""Custom autograd functions: ``ember.autograd.Function`` (``torch.autograd.Function``).

::

    class Exp(ember.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, grad):
            (y,) = ctx.saved_tensors
            return grad * y

    y = Exp.apply(x)

``forward`` runs without recording; ``backward`` gets one gradient per output and returns
one per ``forward`` argument (None for non-Tensors or inputs that need none). The ``ctx``
is the backward node itself (``y.grad_fn``, named ``ExpBackward``). ``backward`` written
with ember ops is differentiable again (double backward); ``@once_differentiable`` marks
one that is not.
"""
from __future__ import annotations

import functools
from typing import Any, NamedTuple

from .formulas import is_expandable_to
from .function import Node, SavedVariable, gradient_edge, set_history
from .grad_mode import STATE, no_grad


def _only_tensors(what: str, tensors, err: type, allow_none: bool = False) -> None:
    """Raise ``err`` for the first of ``tensors`` that is not a Tensor (nor None, where
    ``allow_none``), in PyTorch's words: ``save_for_backward can only save variables, but
    argument 0 is of type int``."""
    from ..tensor import Tensor
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor) and not (allow_none and t is None):
            raise err(f"{what}, but argument {i} is of type {type(t).__name__}; pass "
                      f"Tensors (the inputs or outputs of forward()) one by one")


class _OutputMeta(NamedTuple):
    """What ``materialize_grads`` needs to make zeros for an output no gradient reached."""

    shape: tuple
    dtype: Any  # ScalarType
    device: Any  # Device


class FunctionCtx:
    """What ``forward`` and ``backward`` share: saved tensors and flags."""

    def save_for_backward(self, *tensors) -> None:
        """Save tensors (inputs or outputs, or None) for ``backward``; each is checked for
        in-place changes when ``saved_tensors`` is read.

        Raises TypeError for anything else (a number, a list: save those on ``ctx``
        itself, ``ctx.k = 3``)."""
        _only_tensors("save_for_backward can only save variables", tensors, TypeError, True)
        self.to_save = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        """Outputs that never get a gradient (indices, masks): they do not require grad.

        Raises RuntimeError for an argument that is not a Tensor."""
        _only_tensors("mark_non_differentiable only accepts variable arguments", tensors,
                      RuntimeError)
        self.non_differentiable = set(map(id, tensors))

    def set_materialize_grads(self, value: bool) -> None:
        """If False, ``backward`` may receive None for outputs that got no gradient
        (default True: zeros of the output's shape)."""
        self.materialize_grads = value

    def mark_dirty(self, *tensors) -> None:
        """In-place changes of inputs are not supported by custom Functions yet.

        Raises RuntimeError for an argument that is not a Tensor (as PyTorch), else
        NotImplementedError."""
        _only_tensors("mark_dirty can only accept variables", tensors, RuntimeError)
        raise NotImplementedError("mark_dirty(): in-place custom Functions are not supported; "
                                  "return a new tensor from forward()")

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to ``save_for_backward``, checked against in-place changes.

        Raises RuntimeError after the graph was freed or if one was modified in place."""
        saved = self.__dict__.get("_saved", ())
        return tuple(None if s is None else s.unpack(self) for s in saved)


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply`` call; also its ``ctx``."""

    _forward_cls: type = None

    def __init__(self):
        Node.__init__(self)
        self.needs_input_grad = ()
        self.materialize_grads = True
        self.non_differentiable = set()
        self.to_save = ()
        self._outputs_meta = ()
        self._input_meta = ()  # the shape of each Tensor argument, None for others

    def name(self) -> str:
        return type(self).__name__

    def apply(self, grads):
        if self.materialize_grads and self._outputs_meta:
            # NOTE: every Tensor output gets zeros, non-differentiable and integral ones
            # included (as in PyTorch), so read the outputs' own metadata, not _out_meta.
            from ..ops.namespace import zeros
            grads = list(grads) + [None] * (len(self._outputs_meta) - len(grads))
            grads = [g if g is not None or meta is None else
                     zeros(meta.shape, dtype=meta.dtype, device=meta.device)
                     for g, meta in zip(grads, self._outputs_meta)]
        out = self._forward_cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self.next_functions)
        if len(out) > n and all(g is None for g in out[n:]):
            out = out[:n]  # extra trailing Nones are allowed, as in PyTorch
        if len(out) != n:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(out)}): return one per "
                               f"argument of forward(), None for non-Tensor arguments")
        self._check_gradients(out)
        return tuple(g if e is not None else None for g, e in zip(out, self.next_functions))

    def _check_gradients(self, out: tuple) -> None:
        """Refuse what ``backward`` returned where it cannot be an input's gradient, as
        PyTorch's ``validate_outputs`` does: a non-Tensor (a number, a string, an array), a
        gradient for a non-Tensor input, a shape that does not sum to the input's (one
        that does is summed by the engine). Other dtypes are cast by the engine."""
        from ..tensor import Tensor
        for i, (g, meta, e) in enumerate(zip(out, self._input_meta, self.next_functions)):
            if g is None:
                continue
            if not isinstance(g, Tensor):
                want = "None" if meta is None else \
                    f"a Tensor of the input's shape {list(meta)}, or None for no gradient"
                raise RuntimeError(f"function {self.name()} returned an invalid gradient at "
                                   f"index {i} - expected Tensor or None (got "
                                   f"{type(g).__name__}); return {want}")
            if meta is None:
                raise RuntimeError(f"function {self.name()} returned a gradient different "
                                   f"than None at position {i + 1}, but the corresponding "
                                   f"forward input was not a Tensor; return None there")
            if e is None:
                continue  # the input needs no gradient: PyTorch checks only the type
            shape = tuple(g.shape)
            if shape != meta and not is_expandable_to(meta, shape):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at "
                                   f"index {i} - got {list(shape)} but expected shape "
                                   f"compatible with {list(meta)}")

    def release_variables(self) -> None:
        from .function import FREED
        if "_saved" in self.__dict__:
            self._saved = tuple(None if s is None else FREED for s in self._saved)


class _FunctionMeta(type):
    def __init__(cls, name, bases, attrs):
        super().__init__(name, bases, attrs)
        cls._backward_cls = type(f"{name}Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})


class Function(FunctionCtx, metaclass=_FunctionMeta):
    """Base class of custom autograd functions; see the module docstring.

    Subclasses define static ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` and are
    called with ``apply``. Follows ``torch.autograd.Function``.
    """

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define forward(ctx, ...)")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("a Function subclass must define backward(ctx, ...) to be "
                                  "differentiated")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` and, if grad mode is on and a Tensor argument requires grad,
        record ``backward`` for the outputs. While tracing, the call is recorded as one
        ``prim::PythonOp`` node, which the JIT runs by calling ``apply`` again."""
        from .._base.tracing_state import STATE as tracing
        if tracing.active and tracing.current() is not None and not kwargs:
            from .._base.hooks import TRACER  # the tracer's hook (the JIT sits above)
            return TRACER.record_python_op(cls, args)
        from ..tensor import Tensor
        ctx = cls._backward_cls()
        record = STATE.enabled and any(isinstance(a, Tensor) and a.requires_grad for a in args)
        ctx.needs_input_grad = tuple(record and isinstance(a, Tensor) and a.requires_grad
                                     for a in args)
        with no_grad():
            result = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(result, tuple)
        outputs = (result,) if single else result
        if not record:
            return result
        ctx.next_functions = tuple(gradient_edge(a) if isinstance(a, Tensor) else None
                                   for a in args)
        ctx._input_meta = tuple(tuple(a.shape) if isinstance(a, Tensor) else None
                                for a in args)
        inputs = {id(a) for a in args if isinstance(a, Tensor)}
        outs = []
        for o in outputs:
            if isinstance(o, Tensor) and id(o) in inputs:
                o = o.detach()  # an input returned as is: a fresh alias gets the history
            outs.append(o)
        diff = [isinstance(o, Tensor) and id(o) not in ctx.non_differentiable
                for o in outputs]
        set_history(ctx, [o if d else None for o, d in zip(outs, diff)])
        ctx._outputs_meta = tuple(_OutputMeta(tuple(o.shape), o.dtype, o.device)
                                  if isinstance(o, Tensor) else None for o in outs)
        for o, d, orig in zip(outs, diff, outputs):
            if isinstance(o, Tensor) and not d:
                o._requires_grad = False
        out_ids = {id(o): o for o in outs if isinstance(o, Tensor)}
        orig_to_new = {id(a): b for a, b in zip(outputs, outs) if isinstance(a, Tensor)}
        saved = []
        for i, t in enumerate(ctx.to_save):
            if t is None:
                saved.append(None)
                continue
            t = orig_to_new.get(id(t), t)
            saved.append(SavedVariable(t, f"saved_tensors[{i}]", is_output=id(t) in out_ids))
        ctx._saved = tuple(saved)
        ctx.to_save = ()
        return outs[0] if single else tuple(outs)


class _DelayedError(Node):
    """The history of a once-differentiable backward's results: differentiating them
    again raises."""

    __slots__ = ("msg",)

    def __init__(self, msg: str, n: int):
        super().__init__()
        self.msg = msg
        self.next_functions = (None,) * n

    def apply(self, grads):
        raise RuntimeError(self.msg)


def once_differentiable(backward):
    """Decorate a ``backward`` that is not itself differentiable: it runs without
    recording, and differentiating its results again raises RuntimeError."""
    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        with no_grad():
            out = backward(ctx, *grads)
        if not STATE.enabled or not any(g is not None and g.requires_grad for g in grads):
            return out
        from ..tensor import Tensor
        outs = out if isinstance(out, tuple) else (out,)
        node = _DelayedError("trying to differentiate twice a function that was marked with "
                             "@once_differentiable", 1)
        node.next_functions = tuple(gradient_edge(g) if g is not None else None
                                    for g in grads if g is not None)[:1] or (None,)
        wrapped = []
        for g in outs:
            if isinstance(g, Tensor) and g.is_floating_point():
                g = g.detach()
                set_history(node, [g])
            wrapped.append(g)
        return tuple(wrapped) if isinstance(out, tuple) else wrapped[0]
    return wrapper
