"""``RAdam``: rectified Adam (``torch.optim.RAdam``)."""
from __future__ import annotations

from typing import Optional

import math

from .adam import check_adam_hparams
from .optimizer import Optimizer

__all__ = ["RAdam"]


class RAdam(Optimizer):
    r"""RAdam: Adam whose adaptive step is switched on only once its variance is tractable.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), at step t::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)       if decoupled_weight_decay (RAdamW)
        g = g + weight_decay * p              otherwise, if weight_decay != 0
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_hat = m / (1 - beta1^t)
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2^t / (1 - beta2^t)
        if rho_t > 5:
            r = sqrt((rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
            p = p - lr * m_hat * r * sqrt(1 - beta2^t) / (sqrt(v) + eps)
        else:
            p = p - lr * m_hat                (SGD with momentum while rho_t <= 5)

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-3); a float or a one-element Tensor.
        betas: (beta1, beta2), each in [0, 1) (default (0.9, 0.999)).
        eps: added to the denominator, >= 0 (default 1e-8).
        weight_decay: >= 0 (default 0): an L2 penalty, or decoupled decay.
        decoupled_weight_decay: decay the weights directly, as AdamW does.
        maximize: ascend the objective instead of descending it.
        foreach, capturable, differentiable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"exp_avg"`` and ``"exp_avg_sq"`` (the
    parameter's shape and dtype).

    Raises:
        ValueError: lr, eps or weight_decay negative, a beta outside [0, 1).
        TypeError: a hyperparameter that is not a number, betas not a pair.

    Reference: torch.optim.RAdam; Liu et al., "On the Variance of the Adaptive Learning
    Rate and Beyond" (ICLR 2020).
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: Optional[bool] = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None:
        betas = check_adam_hparams(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "foreach": foreach, "capturable": capturable,
                    "decoupled_weight_decay": decoupled_weight_decay,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        rho_inf = 2 / (1 - beta2) - 1
        for p, grad, state in self._params_with_grad(group, "exp_avg", "exp_avg_sq"):
            step = state["step"]
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            rho_t = rho_inf - 2 * step * beta2 ** step / bias_correction2
            if rho_t > 5.0:
                rect = math.sqrt((rho_t - 4) * (rho_t - 2) * rho_inf
                                 / ((rho_inf - 4) * (rho_inf - 2) * rho_t))
                step_size = lr * rect * math.sqrt(bias_correction2) / bias_correction1
                p.add_(exp_avg / (exp_avg_sq.sqrt() + eps), alpha=-step_size)
            else:
                p.add_(exp_avg, alpha=-lr / bias_correction1)
