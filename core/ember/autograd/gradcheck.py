"""``gradcheck`` and ``gradgradcheck``: compare autograd with finite differences.

For each input that requires grad and each of its elements, the numerical Jacobian column
is the central difference ``(f(x + eps) - f(x - eps)) / (2 eps)``; the analytical rows
come from one ``ember.autograd.grad`` call per output element with a one-hot
``grad_outputs``. Both are checked elementwise with ``|a - n| <= atol + rtol * |n|`` and a
failure names the worst element. Follows ``torch.autograd.gradcheck``; use float64 inputs,
float32 is too coarse for ``eps=1e-6``.
"""
from __future__ import annotations

import itertools

import numpy as np


class GradcheckError(RuntimeError):
    """A Jacobian mismatch found by gradcheck; the message names the worst element."""


def _as_tuple(x) -> tuple:
    return x if isinstance(x, tuple) else tuple(x) if isinstance(x, list) else (x,)


def _float_outputs(outs) -> list:
    from ..tensor import Tensor
    return [o for o in outs if isinstance(o, Tensor) and o.is_floating_point()]


def _to_np(t):
    # NOTE: a copy: an output that is a view of an input (``x[0]``, ``x.t()``) would
    # otherwise follow the input's finite-difference perturbations.
    return np.array(t.detach().cpu().numpy(), dtype=np.float64, copy=True)


def _numerical(func, inputs, diff_idx, eps):
    """Per (output, input) the numerical Jacobian of shape (out.numel(), in.numel())."""
    from .grad_mode import no_grad
    with no_grad():
        base = [_to_np(o) for o in _float_outputs(_as_tuple(func(*inputs)))]
        jac = {(k, i): np.zeros((b.size, inputs[i].numel())) for k, b in enumerate(base)
               for i in diff_idx}
        for i in diff_idx:
            x = inputs[i]
            for col, idx in enumerate(itertools.product(*map(range, x.shape))):
                orig = x._data[idx].item()
                x._data[idx] = orig + eps
                plus = [_to_np(o) for o in _float_outputs(_as_tuple(func(*inputs)))]
                x._data[idx] = orig - eps
                minus = [_to_np(o) for o in _float_outputs(_as_tuple(func(*inputs)))]
                x._data[idx] = orig
                for k, (p, m) in enumerate(zip(plus, minus)):
                    jac[(k, i)][:, col] = ((p - m) / (2 * eps)).reshape(-1)
    return jac


def _analytical(func, inputs, diff_idx):
    from ..ops.namespace import zeros_like
    from . import grad
    outs = _float_outputs(_as_tuple(func(*inputs)))
    jac = {}
    for k, o in enumerate(outs):
        for i in diff_idx:
            jac[(k, i)] = np.zeros((o.numel(), inputs[i].numel()))
        if not o.requires_grad:
            continue
        for row, idx in enumerate(itertools.product(*map(range, o.shape))):
            go = zeros_like(o)
            go._data[idx] = 1
            gs = grad([o], [inputs[i] for i in diff_idx], [go], retain_graph=True,
                      allow_unused=True)
            for i, g in zip(diff_idx, gs):
                if g is not None:
                    if tuple(g.shape) != tuple(inputs[i].shape):
                        raise GradcheckError(f"gradient for input {i} has shape "
                                             f"{list(g.shape)}, expected "
                                             f"{list(inputs[i].shape)}")
                    jac[(k, i)][row] = _to_np(g).reshape(-1)
    return jac


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """Check the first derivatives of ``func`` at ``inputs`` against finite differences.

    Args:
        func: takes ``*inputs`` and returns a Tensor or a tuple of them (non-float
            outputs are ignored).
        inputs: a Tensor or a tuple of arguments; Tensors with ``requires_grad=True``
            (float64 recommended) are checked.
        eps: the finite-difference step; atol, rtol: the tolerance per element.
    Returns True, or raises GradcheckError naming the worst element (False instead if
    ``raise_exception=False``).
    """
    from ..tensor import Tensor
    inputs = _as_tuple(inputs)
    diff_idx = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor with "
                         "requires_grad=True")
    num = _numerical(func, inputs, diff_idx, eps)
    ana = _analytical(func, inputs, diff_idx)
    if num.keys() != ana.keys():
        msg = (f"the function returned {len(ana) // len(diff_idx)} floating-point outputs with "
               f"grad mode on but {len(num) // len(diff_idx)} under no_grad; gradcheck "
               f"evaluates it both ways, so make the outputs independent of grad mode")
        if raise_exception:
            raise GradcheckError(msg)
        return False
    for key in sorted(num):
        n, a = num[key], ana[key]
        err = np.abs(a - n) - (atol + rtol * np.abs(n))
        if n.size and (err.max() > 0 or not np.all(np.isfinite(a) == np.isfinite(n))):
            r, c = np.unravel_index(np.nanargmax(np.where(np.isnan(err), np.inf, err)),
                                    err.shape)
            msg = (f"Jacobian mismatch for output {key[0]} with respect to input {key[1]}: "
                   f"worst element (output element {r}, input element {c}) numerical "
                   f"{n[r, c]:.6g} vs analytical {a[r, c]:.6g} (tolerance atol={atol}, "
                   f"rtol={rtol}).\nnumerical:\n{n}\nanalytical:\n{a}")
            if raise_exception:
                raise GradcheckError(msg)
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, raise_exception: bool = True, seed: int = 0) -> bool:
    """Check second derivatives: gradcheck of ``(inputs, v) -> vjp(func, inputs, v)``.

    ``grad_outputs`` default to random float64 tensors of the outputs' shapes (from a
    fixed ``seed``). Same return and errors as ``gradcheck``. Follows
    ``torch.autograd.gradgradcheck``.
    """
    from .. import tensor as make
    from ..tensor import Tensor
    from . import grad
    from .grad_mode import enable_grad
    inputs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = _float_outputs(_as_tuple(func(*inputs)))
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(make(rng.standard_normal(tuple(o.shape)), dtype=o.dtype,
                                  device=o.device, requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n = len(inputs)

    def vjp(*args):
        # NOTE: gradcheck evaluates its function under no_grad for the finite differences;
        # the first derivatives inside must still be taken, so record here regardless.
        with enable_grad():
            ins, gos = args[:n], args[n:]
            os = [o for o in _float_outputs(_as_tuple(func(*ins))) if o.requires_grad]
            gs = grad(os, [ins[i] for i in diff], list(gos[:len(os)]), create_graph=True,
                      allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
