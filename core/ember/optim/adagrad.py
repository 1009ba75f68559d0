"""``Adagrad`` (``torch.optim.Adagrad``)."""
from __future__ import annotations

from typing import Optional

from ..factories import full_like
from .optimizer import Optimizer, check_hparam

__all__ = ["Adagrad"]


class Adagrad(Optimizer):
    r"""Adagrad: scale each coordinate's step by the root of its summed squared gradients.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), at step t::

        g = -g if maximize
        g = g + weight_decay * p                    if weight_decay != 0
        clr = lr / (1 + (t - 1) * lr_decay)
        s = s + g * g
        p = p - clr * g / (sqrt(s) + eps)

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-2); a float or a one-element Tensor.
        lr_decay: learning-rate decay per step, >= 0 (default 0).
        weight_decay: L2 penalty, >= 0 (default 0).
        initial_accumulator_value: starting value of ``s``, >= 0 (default 0).
        eps: added to the denominator, >= 0 (default 1e-10).
        maximize: ascend the objective instead of descending it.
        foreach, differentiable, fused: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int) and ``"sum"`` (``s``, the parameter's shape and
    dtype). As in PyTorch it is created when a parameter joins the optimizer, not at its
    first step, so ``state_dict()`` holds it before any step. ember fills ``s`` with the
    parameter's group's ``initial_accumulator_value`` (PyTorch takes the constructor's for
    every group; the two agree unless a group overrides it).

    Raises:
        ValueError: a negative lr, lr_decay, weight_decay, initial_accumulator_value or
            eps. TypeError: a hyperparameter that is not a number.

    Reference: torch.optim.Adagrad; Duchi, Hazan & Singer, "Adaptive Subgradient Methods
    for Online Learning and Stochastic Optimization" (JMLR 2011).
    """

    def __init__(self, params, lr: float = 1e-2, lr_decay: float = 0, weight_decay: float = 0,
                 initial_accumulator_value: float = 0, eps: float = 1e-10,
                 foreach: Optional[bool] = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        check_hparam("lr_decay", lr_decay)
        check_hparam("weight_decay", weight_decay)
        check_hparam("initial_accumulator_value", initial_accumulator_value)
        check_hparam("eps", eps, label="epsilon value")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value,
                    "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def add_param_group(self, param_group: dict) -> None:
        """Add a group (see ``Optimizer.add_param_group``) and start its parameters' sums."""
        super().add_param_group(param_group)
        for p in param_group["params"]:
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["sum"] = full_like(p, param_group["initial_accumulator_value"])

    def _step_group(self, group: dict) -> None:
        lr, lr_decay, eps = group["lr"], group["lr_decay"], group["eps"]
        weight_decay, maximize = group["weight_decay"], group["maximize"]
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            step = state["step"] = state["step"] + 1
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            clr = lr / (1 + (step - 1) * lr_decay)
            state_sum = state["sum"]
            state_sum.add_(grad * grad)
            p.add_(grad / (state_sum.sqrt() + eps), alpha=-clr)
