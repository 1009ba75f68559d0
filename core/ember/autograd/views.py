"""Views and in-place ops under autograd: version checks, CopySlices, view replay.

A view (``x[0]``, ``x.transpose(0, 1)``, ``x.chunk(2)[0]``) shares memory and the version
counter with its base. It also remembers how it was made, as a *view function*: a chain
``(previous, op, args, output_index)`` that, replayed on the base (or on anything of the
base's shape), makes the same view. That is what lets an in-place op on a view change the
base's history (the seeds' VariableViewImpl and CopySlices):

* ``v.mul_(2)`` where ``v`` views ``base``: the base's new ``grad_fn`` is a CopySlices node
  that, given the gradient for the whole base, runs MulBackward on the slice the view
  covers and routes the rest to the base's old history;
* the view's own ``grad_fn`` becomes the view op replayed on the base's new history.

As in the seeds, only the first output of a function that returns several views (the
first chunk of ``chunk``) may be modified in place; the others raise. In-place ops on a leaf
that requires grad, or on a view of one, raise PyTorch's errors.
"""
from __future__ import annotations

from .. import dispatch as _d
from .._base.grad_mode import STATE
from .function import Node, call_node, gradient_edge, set_history


def replay(view_fn, root):
    """Apply a view function chain to ``root``: the view it describes, of ``root``."""
    prev, op, args, index = view_fn
    x = root if prev is None else replay(prev, root)
    out = op(x, *args)
    return out if index is None else out[index]


def _root(t):
    return t._base if t._base is not None else t


def check_inplace(op: str, t) -> None:
    """Raise PyTorch's RuntimeError if ``t`` may not be written in place under autograd;
    nothing is changed."""
    if t.grad_fn is None and t.requires_grad and t._base is None:
        raise RuntimeError(f"{op}(): a leaf Variable that requires grad is being used in an "
                           f"in-place operation. Do it out of place, or under "
                           f"'with ember.no_grad():' if you mean to change the leaf's data "
                           f"(as an optimizer does)")
    if t._base is None or t._view_fn is None:
        return
    base = t._base
    if base.grad_fn is None and base.requires_grad:
        raise RuntimeError(f"{op}(): a view of a leaf Variable that requires grad is being "
                           f"used in an in-place operation. Clone the view first "
                           f"(x[...].clone()), or work under 'with ember.no_grad():'")
    vf = t._view_fn
    while vf is not None:
        if vf[3] not in (None, 0):
            raise RuntimeError(
                f"{op}(): output {vf[3]} of {vf[1].__name__}() is a view and is being modified "
                f"in place. Only the first output of a function that returns several views "
                f"may be modified in place; use an out-of-place op, or .clone() the view")
        vf = vf[0]


def rebase_history(t, node: Node) -> None:
    """After an in-place op that ``node`` differentiates has written ``t``: make ``node``
    the history of ``t`` or, for a view, of its base (through CopySlices)."""
    if t._base is None or t._view_fn is None:
        old = (t.grad_fn, t.output_nr)
        set_history(node, (t,))
        _move_retain_grad(t, old)
        return
    base = t._base
    old = (base.grad_fn, base.output_nr)
    copy = CopySlices(gradient_edge(base), base, t._view_fn, node)
    set_history(copy, (base,))
    _move_retain_grad(base, old)
    refresh_view(t)


def _move_retain_grad(t, old) -> None:
    """``retain_grad`` follows the tensor to its new ``grad_fn`` (its ``.grad`` is the
    gradient of the current value, as in PyTorch); ``register_hook`` hooks stay behind."""
    fn, nr = old
    if fn is None or fn is t.grad_fn or not fn._retain_grad:
        return
    ref = fn._retain_grad.get(nr)
    if ref is None or ref() is not t:
        return
    del fn._retain_grad[nr]
    new = t.grad_fn
    if new._retain_grad is None:
        new._retain_grad = {}
    new._retain_grad[t.output_nr] = ref


def refresh_view(t) -> None:
    """Give view ``t`` the history of its base, replayed through its view function."""
    base = t._base
    if base.grad_fn is None and not base.requires_grad:
        t._view_version = t._vc.value
        return
    prev, STATE.enabled = STATE.enabled, True
    try:
        fresh = replay(t._view_fn, base)
    finally:
        STATE.enabled = prev
    old = (t.grad_fn, t.output_nr)
    t.grad_fn, t.output_nr, t._requires_grad = fresh.grad_fn, fresh.output_nr, True
    t._view_version = t._vc.value
    _move_retain_grad(t, old)


class CopySlices(Node):
    """The history of a base after an in-place op on one of its views.

    ``next_functions``: the base's previous edge, then the in-place op's edges except its
    first (``self``, the view, whose gradient is routed into the base's instead).
    """

    __slots__ = ("view_fn", "fn")

    def __init__(self, base_edge, base, view_fn, fn: Node):
        super().__init__()
        self.view_fn, self.fn = view_fn, fn
        self.next_functions = (base_edge,) + tuple(fn.next_functions[1:])

    def name(self) -> str:
        return "CopySlices"

    def apply(self, grads):
        g = grads[0]
        result = g.clone()
        part = replay(self.view_fn, result)  # the slice the view covers, a view of result
        res = call_node(self.fn, [part.clone()])
        from .engine import _validate
        if res[0] is not None:
            part.copy_(_validate(res[0], self.fn, 0, self.fn) if self.fn._out_meta else res[0])
        else:
            part.zero_()
        return [result, *res[1:]]

    def release_variables(self) -> None:
        # NOTE: an fn that saves its output (sigmoid_, exp_, ...) hands that output out
        # with fn itself as grad_fn (SavedVariable.unpack), so a create_graph backward makes
        # fn reachable directly too: the second backward may then call fn after this node.
        # Its saved tensors stay until the graph is freed; others are released here.
        if not getattr(self.fn, "_result_slots", ()):
            self.fn.release_variables()


def record_inplace(op: str, self, result, recorder, args):
    """Run an in-place op's write under autograd: check, record, write, rebase.

    ``result`` is the functional result (an array); ``recorder(True, *args)`` builds the
    node from the inputs *before* the write. If the write fails, nothing has changed.
    """
    node = begin_inplace(op, self, recorder, args)
    _d.write_inplace(op, self, result)
    end_inplace(self, node)
    return self


def begin_inplace(op: str, self, recorder, args):
    """Before an in-place write under autograd: refuse what PyTorch refuses, then build the
    node from the inputs as they are now (``recorder(True, *args)``)."""
    check_inplace(op, self)
    return recorder(True, *args)


def end_inplace(self, node) -> None:
    """After the write: ``node`` becomes the history of ``self`` (or of its base) and keeps
    the outputs its formulas read."""
    rebase_history(self, node)
    finish_outputs(node, (self,))


def finish(node: Node, outputs) -> None:
    """Outputs of an out-of-place op get ``node`` as ``grad_fn``; saved outputs are kept."""
    if node._plain_outputs and len(outputs) == 1:
        # the common case (one differentiable output, nothing of it saved, not a view, a
        # single-device backend): set_history's work, inlined
        t = outputs[0]
        typ = t._type
        if t.__class__ is _d._Tensor and t._base is None and typ.scalar_type.is_floating_point \
                and typ.backend.device_count == 1:
            t.grad_fn, t.output_nr, t._requires_grad = node, 0, True
            node._out_meta = ((t._data.shape, typ),)
            return
    set_history(node, outputs)
    if node._result_slots or node._out_attrs:
        finish_outputs(node, outputs)


def finish_outputs(node, outputs) -> None:
    """Store the outputs (and output attributes) the node's formulas read."""
    from .function import SavedVariable
    for i, slot, name in node._result_slots:
        if i is None:
            setattr(node, slot, tuple(SavedVariable(o, name, True) for o in outputs))
        else:
            setattr(node, slot, SavedVariable(outputs[i], name, True))
    for i, attr, slot in node._out_attrs:
        setattr(node, slot, [getattr(o, attr) for o in outputs] if i is None
                else getattr(outputs[i], attr))
