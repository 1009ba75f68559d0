"""Kernel pairs: one forward kernel and one backward node instead of an op chain.

PyTorch computes its common losses (``nll_loss``, ``binary_cross_entropy``,
``smooth_l1_loss``, ``ctc_loss``...) with native kernel pairs; ember's composites record
one autograd node per op and pay Python dispatch per op. ``run`` calls a kernel pair
written against the array namespace ``xp`` (numpy or CuPy, so the CUDA plugin gets the
same formula) and records a single node whose first-order backward is the backward
kernel.

The op-by-op composite stays the one source of truth for higher orders: with
``create_graph=True`` the node re-runs it (the ``reference``) on the saved inputs and
differentiates that, so gradgradcheck sees exactly the derivative it did before. While a
trace is open the reference runs instead of the kernel, so traced graphs (and ONNX
exports) keep their ops.

A kernel pair is two functions:

* ``forward(xp, arrays, args) -> (out, saved)``: ``arrays`` are the input arrays (None for
  an absent optional Tensor), ``out`` the result array, ``saved`` anything the backward
  needs (arrays computed on the way, e.g. softmax);
* ``backward(xp, grad, arrays, saved, args, needs) -> grads``: one gradient array (or None)
  per input, given the output gradient array ``grad``; ``needs[i]`` says whether input i
  wants one.

The layers below autograd (``ops/composite.py``, ``linalg/``) call ``run`` through the hook
``ember._base.hooks.AUTOGRAD.kernel_pair`` (installed by ``autograd/tensor_methods.py``),
the layers above import it from here.
"""
from __future__ import annotations

from ember import autograd as _autograd
from ember import dispatch as _d
from ember.autograd.function import FREED, Node, SavedVariable, gradient_edge, set_history
from ember._base.grad_mode import STATE
from ember._base.tracing_state import STATE as _TRACING

__all__ = ["run", "tracing"]


def tracing() -> bool:
    """True while some trace is open (fused kernels then yield to the traced op chain)."""
    return bool(_TRACING.active)


class KernelPairBackward(Node):
    """The backward node of one kernel-pair call (named ``<Op>Backward0`` per op)."""

    __slots__ = ("kernel", "reference", "saved", "state", "args", "needs")
    _trusted_arity = True

    def apply(self, grads):
        g = grads[0]
        inputs = [None if s is None else s.unpack(self) for s in self.saved]
        if STATE.enabled:
            return self._differentiable(g, inputs)
        arrays = [None if t is None else t._data for t in inputs]
        outs = self.kernel(g._type.backend.xp, g._data, arrays, self.state, self.args,
                           self.needs)
        return tuple(None if o is None or not need else _d.wrap(o, t._type.backend)
                     for o, need, t in zip(outs, self.needs, inputs))

    def _differentiable(self, g, inputs):
        """create_graph: the derivative of the op-by-op form, itself differentiable."""
        # NOTE: fresh aliases, so each gets the partial derivative through its own position
        # only (an input computed from another input, or one passed twice, would otherwise
        # get the total derivative at each position, counted twice by the engine)
        inputs = [t.view_as(t) if need else t for t, need in zip(inputs, self.needs)]
        wanted = [t for t, need in zip(inputs, self.needs) if need]
        out = self.reference(*inputs, *self.args)
        got = iter(_autograd.grad(out, wanted, g, create_graph=True, allow_unused=True))
        return tuple(next(got) if need else None for need in self.needs)

    def release_variables(self) -> None:
        self.saved = tuple(None if s is None else FREED for s in self.saved)
        self.state = None


_NODES: dict = {}


def _node_class(name: str) -> type:
    cls = _NODES.get(name)
    if cls is None:
        stem = "".join(p.capitalize() for p in name.split("_"))
        cls = _NODES[name] = type(f"{stem}Backward0", (KernelPairBackward,),
                                  {"__slots__": (), "__module__": __name__})
    return cls


def run(name: str, reference, forward, backward, tensors: tuple, args: tuple):
    """``reference(*tensors, *args)`` computed by the kernel pair (see the module docstring).

    tensors: the op's Tensor inputs (None for an absent optional one), all on one backend;
    args: plain values. Returns the result Tensor, with one ``<Op>Backward0`` node as its
    grad_fn when grad mode is on and an input requires grad. While tracing, returns
    ``reference(...)`` itself.
    """
    if _TRACING.active:
        return reference(*tensors, *args)
    backend = tensors[0]._type.backend
    out, state = forward(backend.xp, [None if t is None else t._data for t in tensors], args)
    res = _d.wrap(out, backend)
    if not STATE.enabled:
        return res
    needs = tuple([t is not None and t._requires_grad for t in tensors])
    if True not in needs:
        return res
    node = _node_class(name)()
    node.kernel, node.reference, node.args, node.needs, node.state = \
        backward, reference, args, needs, state
    node.saved = tuple([None if t is None else SavedVariable(t, "input")
                        for t in tensors])
    node.next_functions = tuple([gradient_edge(t) if need else None
                                 for t, need in zip(tensors, needs)])
    set_history(node, [res])
    return res
