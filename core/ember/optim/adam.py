"""``Adam`` (``torch.optim.Adam``); ``AdamW`` is Adam with decoupled weight decay."""
from __future__ import annotations

import math
from typing import Optional

from ..ops.namespace import maximum  # generated op, installed before ember imports optim
from ..autograd.grad_mode import is_grad_enabled
from ..backends.kernels.optim import FUSED_DTYPES
from ..factories import zeros_like
from ..tensor import Tensor
from .optimizer import Optimizer, check_hparam

__all__ = ["Adam"]


def check_adam_hparams(lr, betas, eps, weight_decay) -> tuple:
    """Validate Adam's hyperparameters as PyTorch does; return ``betas`` as a tuple."""
    check_hparam("lr", lr, label="learning rate", tensor_ok=True)
    check_hparam("eps", eps, label="epsilon value")
    if not isinstance(betas, (tuple, list)) or len(betas) != 2:
        raise TypeError(f"betas must be a pair (beta1, beta2), e.g. (0.9, 0.999); got {betas!r}")
    for i, beta in enumerate(betas):
        check_hparam(f"betas[{i}]", beta, high=1.0, label=f"beta parameter at index {i}")
    check_hparam("weight_decay", weight_decay)
    return tuple(betas)


class Adam(Optimizer):
    r"""Adam: adaptive moment estimation.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), at step t::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)       if decoupled_weight_decay (AdamW)
        g = g + weight_decay * p              otherwise, if weight_decay != 0
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        v_hat = max(v_hat, v) if amsgrad else v
        p = p - lr / (1 - beta1^t) * m / (sqrt(v_hat) / sqrt(1 - beta2^t) + eps)

    The last line is computed as ``p - (lr * sqrt(bc2) / bc1) * m / (sqrt(v_hat) + eps *
    sqrt(bc2))``: the same value, one op less per parameter (results match PyTorch to
    float rounding).

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-3); a float or a one-element Tensor.
        betas: (beta1, beta2), each in [0, 1) (default (0.9, 0.999)).
        eps: added to the denominator, >= 0 (default 1e-8).
        weight_decay: >= 0 (default 0): an L2 penalty, or decoupled decay (AdamW).
        amsgrad: use the running maximum of ``v`` (Reddi et al., 2018).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: decay the weights directly, as AdamW.

    State per parameter: ``"step"`` (int), ``"exp_avg"``, ``"exp_avg_sq"``, and
    ``"max_exp_avg_sq"`` with amsgrad.

    ``foreach``, ``capturable``, ``differentiable``: PyTorch's switches, kept in the
    param groups; see ``Optimizer`` for what each means here. A Tensor ``lr`` with
    ``foreach=True`` and ``capturable=False`` raises PyTorch's ValueError.

    ``fused`` (PyTorch's ``Adam(fused=...)``): None (default) updates each float32 or
    float64 parameter whose backend has the ``_fused_adam_`` kernel (``backends/kernels/
    optim.py``: the CPU and CUDA backends) in one kernel call instead of nine ember ops,
    with bit-identical results, and every other parameter through ember ops; False always
    uses ember ops; True requires the kernel for every parameter.

    Raises:
        ValueError: lr, eps or weight_decay negative, a beta outside [0, 1).
        TypeError: a hyperparameter that is not a number, betas not a pair.
        RuntimeError: on ``step()`` with ``fused=True``, a parameter the kernel cannot
            update (its dtype, backend, a gradient of another Type or shape, or memory it
            cannot write in place), before any parameter of its group changes.

    Reference: torch.optim.Adam; Kingma & Ba, "Adam: A Method for Stochastic
    Optimization" (2014).
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None, decoupled_weight_decay: bool = False) -> None:
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True; pass lr=float(lr), or capturable=True")
        betas = check_adam_hparams(lr, betas, eps, weight_decay)
        if fused not in (None, True, False):
            raise TypeError(f"fused must be None, True or False, got {fused!r}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable,
                    "fused": fused, "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        # NOTE: the hot path of training loops: one _fused_adam_ kernel call a parameter,
        # else nine ember ops.
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad, maximize = (group["weight_decay"], group["amsgrad"],
                                           group["maximize"])
        decoupled = group.get("decoupled_weight_decay", False)
        fused = group.get("fused")
        if group.get("differentiable"):   # the kernel writes arrays: autograd cannot see it
            fused = False
        all_state = self.state
        if fused:
            for p in group["params"]:   # all or nothing: check before changing anything
                why = p.grad is not None and _unfusable(p, p.grad, all_state.get(p))
                if why:
                    raise RuntimeError(f"Adam(fused=True): cannot fuse the update of a "
                                       f"parameter of shape {list(p.shape)}: {why}; use "
                                       f"fused=None to update such parameters with ember ops")
        corrected_for = None  # the step the scalars below were computed for
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = all_state[p]
            if not state:
                state["step"] = 0
                state["exp_avg"] = zeros_like(p)
                state["exp_avg_sq"] = zeros_like(p)
            if amsgrad and "max_exp_avg_sq" not in state:  # also when switched on later
                state["max_exp_avg_sq"] = zeros_like(p)
            step = state["step"] = state["step"] + 1
            if step != corrected_for:  # parameters of a group usually share their step
                corrected_for = step
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                eps_hat = eps * bias_correction2_sqrt
                step_size = -lr * bias_correction2_sqrt / (1 - beta1 ** step)
            # NOTE: fused=True checked every parameter above; None checks each here
            if fused or fused is None and not _unfusable(p, grad, state):
                moments = (state["exp_avg"], state["exp_avg_sq"],
                           state["max_exp_avg_sq"] if amsgrad else None)
                p._type.backend.kernels["_fused_adam_"](
                    p._data, grad._data, *(m._data if m is not None else None
                                           for m in moments),
                    beta1, beta2, step_size, eps_hat, weight_decay,
                    1 - lr * weight_decay if decoupled else None, maximize)
                for t in (p, *moments):
                    if t is not None:
                        t._bump_version()
                continue
            if maximize:
                grad = -grad
            if weight_decay != 0:
                if decoupled:
                    p.mul_(1 - lr * weight_decay)
                else:
                    grad = grad.add(p, alpha=weight_decay)
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.mul_(beta1).add_(grad, alpha=1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            if amsgrad:
                max_sq = state["max_exp_avg_sq"]
                if is_grad_enabled():   # differentiable=True: out= is not recorded
                    max_sq.copy_(maximum(max_sq.clone(), exp_avg_sq))
                else:
                    maximum(max_sq, exp_avg_sq, out=max_sq)
                exp_avg_sq = max_sq
            denom = exp_avg_sq.sqrt() + eps_hat   # sqrt's result stays as saved
            p.add_(exp_avg / denom, alpha=step_size)


def _unfusable(p, grad, state) -> str:
    """Why ``_fused_adam_`` cannot update ``p`` in place (empty when it can): the kernel
    writes ``p`` and its moments with ufuncs (``out=``), so each must be a writable,
    non-overlapping array of one Type and shape, on a one-device backend."""
    typ = p._type
    data = p._data
    if data.dtype not in FUSED_DTYPES:
        return f"its dtype is {p.dtype} (the kernel takes float32 and float64)"
    backend = typ.backend
    if "_fused_adam_" not in backend.kernels:
        return f"backend {backend.name!r} has no _fused_adam_ kernel"
    if backend.device_count > 1:
        return "its backend has several devices"
    if grad._type is not typ or grad._data.shape != data.shape:
        return (f"its gradient is a {grad._type.name} of shape {list(grad.shape)}, not a "
                f"{typ.name} of the parameter's shape")
    moments = (state.get(k) for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq")) \
        if state else ()
    for t in (p, *moments):
        if t is None:
            continue
        if t._type is not typ or t._data.shape != data.shape:
            return f"its state holds a {t._type.name} of shape {list(t.shape)}"
        a = t._data
        if 0 in a.strides or not getattr(a.flags, "writeable", True):
            return "its memory is read-only or expanded (stride 0)"
    return ""
