"""``Adafactor``: Adam-like steps with a factored second moment (``torch.optim.Adafactor``)."""
from __future__ import annotations

from typing import Optional

import math

from ..type_info import finfo
from .optimizer import Optimizer, check_hparam

__all__ = ["Adafactor"]


class Adafactor(Optimizer):
    r"""Adafactor: keeps, for a matrix-shaped gradient, only the row and column means of
    its squares, so the second moment of an (R, C) parameter costs R + C numbers.

    For each parameter ``p`` with gradient ``g`` at step t (PyTorch's variant: no first
    moment, a relative step size)::

        g = -g if maximize
        b = t ** beta2_decay                        (1 - beta2_t)
        rho = min(lr, 1 / sqrt(t))
        a = max(eps2, rms(p)) * rho
        p = p * (1 - lr * weight_decay)             if weight_decay != 0
        for p of 2+ dims, (..., R, C):
            r = lerp(r, mean(g^2, dim=-1), b)       (..., R, 1)
            c = lerp(c, mean(g^2, dim=-2), b)       (..., 1, C)
            v = (r @ c) / max(mean(r, dim=-2), eps1)
        for p of 0 or 1 dims:
            v = lerp(v, g^2, b)
        u = g / sqrt(max(v, eps1^2))
        p = p - a / max(1, rms(u) / d) * u

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: the cap on the relative step size rho, >= 0 (default 1e-2); a float or a
            one-element Tensor.
        beta2_decay: the power of t giving 1 - beta2_t, <= 0 (default -0.8).
        eps: (eps1, eps2): eps1 floors the variance (None: ``finfo(p.dtype).eps``), eps2
            floors the parameter's RMS in the step size; both >= 0 (default (None, 1e-3)).
        d: clipping threshold on the update's RMS, >= 1 (default 1).
        weight_decay: decoupled weight decay, >= 0 (default 0).
        maximize: ascend the objective instead of descending it.
        foreach: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int) and either ``"row_var"`` (..., R, 1) and
    ``"col_var"`` (..., 1, C) for parameters of 2+ dims, or ``"variance"`` (the
    parameter's shape) for the others.

    Raises:
        ValueError: an option outside the ranges above, worded as PyTorch's.
        TypeError: a hyperparameter that is not a number, eps not a pair.

    Reference: torch.optim.Adafactor; Shazeer & Stern, "Adafactor: Adaptive Learning Rates
    with Sublinear Memory Cost" (2018).
    """

    def __init__(self, params, lr: float = 1e-2, beta2_decay: float = -0.8,
                 eps=(None, 1e-3), d: float = 1.0, weight_decay: float = 0.0, *,
                 foreach: Optional[bool] = None, maximize: bool = False) -> None:
        if not isinstance(eps, (tuple, list)) or len(eps) != 2:
            raise TypeError(f"eps must be a pair (eps1 or None, eps2), got {eps!r}")
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        check_hparam("beta2_decay", beta2_decay, low=float("-inf"))
        if beta2_decay > 0:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None:
            check_hparam("eps1", eps[0], label="epsilon1")
        check_hparam("eps2", eps[1], label="epsilon2")
        check_hparam("d", d, low=1.0, label="clipping threshold d")
        check_hparam("weight_decay", weight_decay)
        defaults = {"lr": lr, "beta2_decay": beta2_decay, "eps": tuple(eps), "d": d,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, (eps1, eps2), d = group["lr"], group["eps"], group["d"]
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                if grad.dim() > 1:
                    state["row_var"] = grad.new_zeros((*grad.shape[:-1], 1))
                    state["col_var"] = grad.new_zeros((*grad.shape[:-2], 1, grad.shape[-1]))
                else:
                    state["variance"] = grad.new_zeros(grad.shape)
            state["step"] += 1
            step = state["step"]
            if group["maximize"]:
                grad = -grad
            floor = finfo(p.dtype).eps if eps1 is None else eps1
            beta2_complement = step ** group["beta2_decay"]
            alpha = max(eps2, p.norm().item() / math.sqrt(p.numel())) * min(lr, step ** -0.5)
            if group["weight_decay"] != 0:
                p.mul_(1 - lr * group["weight_decay"])
            if grad.dim() > 1:
                row_var, col_var = state["row_var"], state["col_var"]
                row_var.lerp_(grad.square().mean(-1, keepdim=True), beta2_complement)
                col_var.lerp_(grad.square().mean(-2, keepdim=True), beta2_complement)
                var = (row_var @ col_var).div_(row_var.mean(-2, keepdim=True).clamp_(min=floor))
            else:
                var = state["variance"].lerp_(grad * grad, beta2_complement).clone()
            update = var.clamp_(min=floor * floor).rsqrt_().mul_(grad)
            denom = max(1.0, update.norm().item() / (math.sqrt(update.numel()) * d))
            p.add_(update, alpha=-alpha / denom)
