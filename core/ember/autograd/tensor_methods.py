"""The autograd layer's part of ``Tensor``, and of the hand-written ops below it.

``Tensor`` (``tensor.py``) sits below autograd, so the methods that run the engine or
reach a tensor's backward node are defined here and installed on the class by the
composition root (``ember/_build.py`` calls ``install``), as PyTorch's
``torch/_tensor.py`` methods call into ``torch.autograd``:

* ``Tensor.backward``, ``Tensor.register_hook``, ``Tensor.retain_grad`` and the property
  ``Tensor.retains_grad``;
* the autograd hooks (``ember._base.hooks.AUTOGRAD``) through which ``Tensor.to``,
  indexing, the in-place view ops and the kernel-pair composites of ``ops/`` and
  ``linalg/`` record history without importing this layer.

Reference: ``torch/_tensor.py`` (``Tensor.backward``, ``register_hook``) and
``torch/csrc/autograd/variable.cpp`` (``VariableHooks``: ``retain_grad``, ``grad_fn``).
"""
from __future__ import annotations

import weakref

from . import RECORDERS, record_handwritten
from . import backward as _backward
from . import kernel_pair
from .function import RemovableHandle, grad_accumulator, gradient_edge
from .views import begin_inplace as _begin_inplace
from .views import check_inplace, end_inplace

__all__ = ["backward", "register_hook", "retain_grad", "retains_grad", "install"]


def backward(self, gradient=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate the gradient of this tensor w.r.t. the graph leaves into their
    ``.grad`` (``torch.Tensor.backward``); see ``ember.autograd.backward``."""
    _backward(self, gradient, retain_graph, create_graph, inputs=inputs)


def register_hook(self, hook):
    """Run ``hook(grad) -> Tensor or None`` whenever the gradient for this tensor is
    computed; a returned tensor replaces the gradient. Returns a handle with
    ``remove()``. Raises RuntimeError if the tensor does not require grad."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                           "gradient; call .requires_grad_() first")
    if self.grad_fn is not None:
        node, nr = gradient_edge(self)
    else:
        node, nr = grad_accumulator(self), 0  # hooks on a leaf live on its accumulator
    hooks = node._tensor_hooks(nr)
    hooks.append(hook)
    return RemovableHandle(hooks, hook)


def retain_grad(self) -> None:
    """Keep ``.grad`` for this non-leaf tensor after backward (a no-op on leaves).

    Raises RuntimeError if the tensor does not require grad."""
    if not self.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if self.grad_fn is None:
        return
    node = self.grad_fn
    if node._retain_grad is None:
        node._retain_grad = {}
    node._retain_grad[self.output_nr] = weakref.ref(self)


def _retains_grad(self) -> bool:
    """Whether ``retain_grad()`` was called on this non-leaf tensor."""
    node = self.grad_fn
    return node is not None and bool(node._retain_grad) and \
        self.output_nr in node._retain_grad


retains_grad = property(_retains_grad, doc=_retains_grad.__doc__)


def begin_inplace(op: str, self, args: tuple):
    """Before the hand-written in-place write ``op`` (``index_put_``) under autograd: refuse
    what PyTorch refuses, then build ``op``'s node (``derivatives.yaml``) from ``args`` as
    they are now; returns the node for ``views.end_inplace``."""
    return _begin_inplace(op, self, RECORDERS[op][1], args)


def install(tensor_cls, hooks) -> None:
    """Put the methods above on ``tensor_cls`` and supply the autograd ``hooks``
    (``ember._base.hooks.AUTOGRAD``); called once, by the composition root."""
    for name, fn in (("backward", backward), ("register_hook", register_hook),
                     ("retain_grad", retain_grad)):
        fn.__qualname__ = f"{tensor_cls.__name__}.{name}"
        setattr(tensor_cls, name, fn)
    tensor_cls.retains_grad = retains_grad
    hooks.install(record_handwritten=record_handwritten, begin_inplace=begin_inplace,
                  end_inplace=end_inplace, check_inplace=check_inplace,
                  kernel_pair=kernel_pair.run)
