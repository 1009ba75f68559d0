"""``Adam`` (``torch.optim.Adam``); ``AdamW`` is Adam with decoupled weight decay."""
from __future__ import annotations

import math

from .. import maximum  # generated op, installed before ember imports optim
from ..factories import zeros_like
from .optimizer import Optimizer, check_hparam

__all__ = ["Adam"]


def check_adam_hparams(lr, betas, eps, weight_decay) -> tuple:
    """Validate Adam's hyperparameters as PyTorch does; return ``betas`` as a tuple."""
    check_hparam("lr", lr, label="learning rate")
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
        lr: learning rate, >= 0 (default 1e-3).
        betas: (beta1, beta2), each in [0, 1) (default (0.9, 0.999)).
        eps: added to the denominator, >= 0 (default 1e-8).
        weight_decay: >= 0 (default 0): an L2 penalty, or decoupled decay (AdamW).
        amsgrad: use the running maximum of ``v`` (Reddi et al., 2018).
        maximize: ascend the objective instead of descending it.
        decoupled_weight_decay: decay the weights directly, as AdamW.

    State per parameter: ``"step"`` (int), ``"exp_avg"``, ``"exp_avg_sq"``, and
    ``"max_exp_avg_sq"`` with amsgrad.

    Raises:
        ValueError: lr, eps or weight_decay negative, a beta outside [0, 1).
        TypeError: a hyperparameter that is not a number, betas not a pair.

    Reference: torch.optim.Adam; Kingma & Ba, "Adam: A Method for Stochastic
    Optimization" (2014).
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, amsgrad: bool = False, *, maximize: bool = False,
                 decoupled_weight_decay: bool = False) -> None:
        betas = check_adam_hparams(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        # NOTE: the hot path of training loops: about eight in-place ember ops a parameter.
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        weight_decay, amsgrad, maximize = (group["weight_decay"], group["amsgrad"],
                                           group["maximize"])
        decoupled = group.get("decoupled_weight_decay", False)
        all_state = self.state
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
                if amsgrad:
                    state["max_exp_avg_sq"] = zeros_like(p)
            step = state["step"] = state["step"] + 1
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
                max_sq = state.get("max_exp_avg_sq")
                if max_sq is None:  # amsgrad switched on after the first step
                    max_sq = state["max_exp_avg_sq"] = zeros_like(p)
                maximum(max_sq, exp_avg_sq, out=max_sq)
                exp_avg_sq = max_sq
            if step != corrected_for:  # parameters of a group usually share their step
                corrected_for = step
                bias_correction2_sqrt = math.sqrt(1 - beta2 ** step)
                eps_hat = eps * bias_correction2_sqrt
                step_size = -lr * bias_correction2_sqrt / (1 - beta1 ** step)
            denom = exp_avg_sq.sqrt().add_(eps_hat)
            p.add_(exp_avg / denom, alpha=step_size)
