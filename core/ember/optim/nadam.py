"""``NAdam``: Adam with Nesterov momentum (``torch.optim.NAdam``)."""
from __future__ import annotations

from typing import Optional

from .adam import check_adam_hparams
from .optimizer import Optimizer, check_hparam

__all__ = ["NAdam"]


class NAdam(Optimizer):
    r"""NAdam: Adam whose first moment looks one step ahead, as Nesterov momentum does.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), at step t::

        g = -g if maximize
        p = p * (1 - lr * weight_decay)       if decoupled_weight_decay (NAdamW)
        g = g + weight_decay * p              otherwise, if weight_decay != 0
        mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay))
        mu_next = beta1 * (1 - 0.5 * 0.96^((t + 1) * momentum_decay))
        prod = prod * mu_t                    (the product mu_1 * ... * mu_t)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        d = sqrt(v / (1 - beta2^t)) + eps
        p = p - lr * (1 - mu_t) / (1 - prod) * g / d
              - lr * mu_next / (1 - prod * mu_next) * m / d

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 2e-3); a float or a one-element Tensor.
        betas: (beta1, beta2), each in [0, 1) (default (0.9, 0.999)).
        eps: added to the denominator, >= 0 (default 1e-8).
        weight_decay: >= 0 (default 0): an L2 penalty, or decoupled decay.
        momentum_decay: ``psi``, how fast ``mu_t`` warms up to ``beta1``, >= 0
            (default 4e-3).
        decoupled_weight_decay: decay the weights directly, as AdamW does.
        maximize: ascend the objective instead of descending it.
        foreach, capturable, differentiable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"mu_product"`` (``prod``, a Python float;
    PyTorch keeps a 0-d tensor of the same value), ``"exp_avg"`` and ``"exp_avg_sq"`` (the
    parameter's shape and dtype).

    Raises:
        ValueError: lr, eps, weight_decay or momentum_decay negative, a beta outside
            [0, 1). TypeError: a hyperparameter that is not a number, betas not a pair.

    Reference: torch.optim.NAdam; Dozat, "Incorporating Nesterov Momentum into Adam"
    (ICLR 2016 workshop); Loshchilov & Hutter (2019) for the decoupled decay.
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: Optional[bool] = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None:
        betas = check_adam_hparams(lr, betas, eps, weight_decay)
        check_hparam("momentum_decay", momentum_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        momentum_decay = group["momentum_decay"]
        for p, grad, state in self._params_with_grad(group, "exp_avg", "exp_avg_sq"):
            step = state["step"]
            mu = beta1 * (1.0 - 0.5 * 0.96 ** (step * momentum_decay))
            mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((step + 1) * momentum_decay))
            mu_product = state["mu_product"] = state.get("mu_product", 1.0) * mu
            exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
            exp_avg.lerp_(grad, 1 - beta1)
            exp_avg_sq.mul_(beta2).add_(grad * grad, alpha=1 - beta2)
            denom = exp_avg_sq.div(1 - beta2 ** step).sqrt_() + eps   # sqrt's result saved
            p.add_(grad / denom, alpha=-lr * (1.0 - mu) / (1.0 - mu_product))
            p.add_(exp_avg / denom, alpha=-lr * mu_next / (1.0 - mu_product * mu_next))
