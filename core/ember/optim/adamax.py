"""``Adamax``: Adam with the infinity norm (``torch.optim.Adamax``)."""
from __future__ import annotations

from typing import Optional

from ..ops.namespace import maximum  # generated op, installed before ember imports optim
from ..autograd.grad_mode import is_grad_enabled
from .adam import check_adam_hparams
from .optimizer import Optimizer

__all__ = ["Adamax"]


class Adamax(Optimizer):
    r"""Adamax: Adam whose second moment is replaced by an exponentially weighted max norm.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), at step t::

        g = -g if maximize
        g = g + weight_decay * p                    if weight_decay != 0
        m = beta1 * m + (1 - beta1) * g
        u = max(beta2 * u, abs(g) + eps)
        p = p - lr / (1 - beta1^t) * m / u

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 2e-3); a float or a one-element Tensor.
        betas: (beta1, beta2), each in [0, 1) (default (0.9, 0.999)).
        eps: added to ``abs(g)``, >= 0 (default 1e-8); keeps ``u`` away from 0.
        weight_decay: L2 penalty, >= 0 (default 0).
        maximize: ascend the objective instead of descending it.
        foreach, differentiable, capturable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"exp_avg"`` (``m``) and ``"exp_inf"``
    (``u``), both of the parameter's shape and dtype.

    Raises:
        ValueError: lr, eps or weight_decay negative, a beta outside [0, 1).
        TypeError: a hyperparameter that is not a number, betas not a pair.

    Reference: torch.optim.Adamax; Kingma & Ba, "Adam: A Method for Stochastic
    Optimization" (2014), section 7.1.
    """

    def __init__(self, params, lr: float = 2e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        betas = check_adam_hparams(lr, betas, eps, weight_decay)
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, (beta1, beta2), eps = group["lr"], group["betas"], group["eps"]
        for p, grad, state in self._params_with_grad(group, "exp_avg", "exp_inf"):
            step = state["step"]
            exp_avg, exp_inf = state["exp_avg"], state["exp_inf"]
            exp_avg.lerp_(grad, 1 - beta1)
            if is_grad_enabled():   # differentiable=True: out= is not recorded
                exp_inf.copy_(maximum(exp_inf.mul(beta2), grad.abs().add_(eps)))
            else:
                maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
            p.add_(exp_avg / exp_inf, alpha=-lr / (1 - beta1 ** step))
