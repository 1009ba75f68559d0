"""Full backward hooks for ``Module``: ``register_full_backward_hook`` and
``register_full_backward_pre_hook`` (kept apart from module.py by concept).

How it works (PyTorch's ``torch.utils.hooks.BackwardHook``): when a module that has
backward hooks is called, its Tensor arguments pass through an identity autograd Function
before ``forward``, and its Tensor outputs through another one after it. Backward reaches
the output identity's node first: a pre-hook there sees the gradients w.r.t. the outputs
(``grad_output``), runs the backward pre-hooks (which may replace them) and keeps them.
Backward then reaches the input identity's node, whose results are the gradients w.r.t.
the inputs (``grad_input``): a post-hook there runs the backward hooks with both, and a
tuple a hook returns replaces ``grad_input`` on its way to the inputs' producers.

``grad_input`` has one entry per positional argument of the call and ``grad_output`` one
per output (a Tensor, or each element of a returned tuple); the entry is None for
non-Tensors, for inputs that do not require grad and for outputs that got no gradient.
Keyword arguments are not seen, as in PyTorch. Departure: PyTorch gives zeros rather than
None for a Tensor input that does not require grad beside one that does.
Reference: torch.nn.Module.register_full_backward_hook / register_full_backward_pre_hook.
"""
from __future__ import annotations

from ...autograd import is_grad_enabled
from ...autograd.custom import Function
from ...tensor import Tensor

__all__ = ["BackwardHooksMixin"]


class _BackwardHookFunction(Function):
    """The identity, as a node the hooks can sit on."""

    @staticmethod
    def forward(ctx, *tensors):
        ctx.mark_non_differentiable(*[t for t in tensors if not t.requires_grad])
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _wrap_tensors(args: tuple):
    """(args with every Tensor passed through the identity, indices of those Tensors, the
    identity's node) or (args, None, None) when nothing needs a gradient."""
    index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
    tensors = [args[i] for i in index]
    if not (is_grad_enabled() and any(t.requires_grad for t in tensors)):
        return args, None, None
    new = _BackwardHookFunction.apply(*tensors)
    node = next(t.grad_fn for t in new if t.grad_fn is not None)
    out = list(args)
    for i, t in zip(index, new):
        out[i] = t
    return tuple(out), index, node


class _BackwardHook:
    """The hooks of one module call: set up around ``forward`` by ``Module.__call__``."""

    def __init__(self, module, hooks: list, pre_hooks: list):
        self.module, self.hooks, self.pre_hooks = module, hooks, pre_hooks
        self.grad_outputs = None
        self.n_inputs, self.input_index = 0, None

    def setup_input_hook(self, args: tuple) -> tuple:
        args, self.input_index, node = _wrap_tensors(args)
        self.n_inputs = len(args)
        if node is not None:
            node.register_hook(self._on_grad_input)
        return args

    def setup_output_hook(self, result):
        single = isinstance(result, Tensor)
        if not single and not isinstance(result, tuple):
            raise TypeError(f"{type(self.module).__name__}: full backward hooks need forward() "
                            f"to return a Tensor or a tuple, got {type(result).__name__}; "
                            f"remove the backward hooks or return a tuple")
        outs, index, node = _wrap_tensors((result,) if single else result)
        if node is not None:
            n = len(outs)
            node.register_prehook(lambda grads: self._on_grad_output(grads, index, n))
        return outs[0] if single else outs

    def _on_grad_output(self, grads, index, n):
        packed = [None] * n
        for i, g in zip(index, grads):
            packed[i] = g
        packed = tuple(packed)
        for hook in self.pre_hooks:
            new = hook(self.module, packed)
            if new is None:
                continue
            if len(new) != n:
                raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                   f"grad_output, got {len(new)}, but expected {n}")
            packed = tuple(new)
        if self.input_index is None:  # no input needs a gradient: report and stop here
            for hook in self.hooks:
                res = hook(self.module, (None,) * self.n_inputs, packed)
                if res is not None and not all(g is None for g in res):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
        else:
            self.grad_outputs = packed
        return tuple(packed[i] for i in index)

    def _on_grad_input(self, grad_inputs, _grad_outputs):
        if self.grad_outputs is None:  # no output got a gradient
            return None
        packed = [None] * self.n_inputs
        for i, g in zip(self.input_index, grad_inputs):
            packed[i] = g
        packed = tuple(packed)
        for hook in self.hooks:
            new = hook(self.module, packed, self.grad_outputs)
            if new is None:
                continue
            if len(new) != len(packed):
                raise RuntimeError(f"Backward hook returned an invalid number of grad_input, "
                                   f"got {len(new)}, but expected {len(packed)}")
            packed = tuple(new)
        self.grad_outputs = None
        return tuple(packed[i] for i in self.input_index)


class BackwardHooksMixin:
    """The backward-hook half of ``Module``; see the module docstring."""

    def register_full_backward_hook(self, hook, prepend: bool = False):
        """Run ``hook(module, grad_input, grad_output)`` when the gradients w.r.t. this
        module's inputs are computed; a returned tuple (one entry per positional argument)
        replaces ``grad_input``. Returns a handle with ``remove()``.

        Raises (during backward) RuntimeError if the hook returns a tuple of the wrong
        length. Reference: torch.nn.Module.register_full_backward_hook."""
        return self._add_hook(self._backward_hooks, hook, prepend, False)

    def register_full_backward_pre_hook(self, hook, prepend: bool = False):
        """Run ``hook(module, grad_output)`` when the gradients w.r.t. this module's outputs
        are known, before the ones w.r.t. its inputs are computed; a returned tuple (one
        entry per output) replaces ``grad_output``. Returns a handle with ``remove()``.
        Reference: torch.nn.Module.register_full_backward_pre_hook."""
        return self._add_hook(self._backward_pre_hooks, hook, prepend, False)

    def _backward_hook_for_call(self):
        """A ``_BackwardHook`` for one call, or None when no backward hook is registered."""
        if not (self._backward_hooks or self._backward_pre_hooks):
            return None
        return _BackwardHook(self, list(self._backward_hooks.values()),
                             list(self._backward_pre_hooks.values()))
