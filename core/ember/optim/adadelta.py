"""``Adadelta`` (``torch.optim.Adadelta``)."""
from __future__ import annotations

from typing import Optional

from .optimizer import Optimizer, check_hparam

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    r"""Adadelta: steps sized by the ratio of running RMS of past updates and of gradients.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), per step::

        g = -g if maximize
        g = g + weight_decay * p                    if weight_decay != 0
        v = rho * v + (1 - rho) * g * g
        d = sqrt(u + eps) / sqrt(v + eps) * g
        u = rho * u + (1 - rho) * d * d
        p = p - lr * d

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: coefficient that scales ``d``, >= 0 (default 1.0); a float or a one-element Tensor.
        rho: decay of the running averages, in [0, 1] (default 0.9).
        eps: added inside both square roots, >= 0 (default 1e-6).
        weight_decay: L2 penalty, >= 0 (default 0).
        maximize: ascend the objective instead of descending it.
        foreach, capturable, differentiable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"square_avg"`` (``v``) and ``"acc_delta"``
    (``u``), both of the parameter's shape and dtype.

    Raises:
        ValueError: a negative lr, eps or weight_decay, rho outside [0, 1].
        TypeError: a hyperparameter that is not a number.

    Reference: torch.optim.Adadelta; Zeiler, "ADADELTA: An Adaptive Learning Rate Method"
    (2012).
    """

    def __init__(self, params, lr: float = 1.0, rho: float = 0.9, eps: float = 1e-6,
                 weight_decay: float = 0, foreach: Optional[bool] = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        check_hparam("rho", rho)
        if rho > 1.0:
            raise ValueError(f"Invalid rho value: {rho}; expected rho in [0, 1]")
        check_hparam("eps", eps, label="epsilon value")
        check_hparam("weight_decay", weight_decay)
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, rho, eps = group["lr"], group["rho"], group["eps"]
        for p, grad, state in self._params_with_grad(group, "square_avg", "acc_delta"):
            square_avg, acc_delta = state["square_avg"], state["acc_delta"]
            square_avg.mul_(rho).add_(grad * grad, alpha=1 - rho)
            delta = acc_delta.add(eps).sqrt_().div_(square_avg.add(eps).sqrt_()).mul_(grad)
            acc_delta.mul_(rho).add_(delta * delta, alpha=1 - rho)
            p.add_(delta, alpha=-lr)
