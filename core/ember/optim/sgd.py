"""``SGD``: stochastic gradient descent with optional momentum (``torch.optim.SGD``)."""
from __future__ import annotations

from typing import Optional

from .optimizer import Optimizer, check_hparam

__all__ = ["SGD"]


class SGD(Optimizer):
    r"""Stochastic gradient descent, optionally with (Nesterov) momentum.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), per step::

        g = -g if maximize
        g = g + weight_decay * p                      if weight_decay != 0
        if momentum != 0:
            b = g (first step) else momentum * b + (1 - dampening) * g
            g = g + momentum * b if nesterov else b
        p = p - lr * g

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-3); a float or a one-element Tensor.
        momentum: momentum factor, >= 0 (default 0).
        dampening: dampening of the momentum (default 0).
        weight_decay: L2 penalty, >= 0 (default 0).
        nesterov: Nesterov momentum; needs momentum > 0 and dampening == 0.
        maximize: ascend the objective instead of descending it.
        foreach, differentiable, fused: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"momentum_buffer"`` (only with momentum).

    Raises:
        ValueError: a negative lr / momentum / weight_decay, or nesterov without momentum or
            with dampening. TypeError: a hyperparameter that is not a number.

    Reference: torch.optim.SGD (Sutskever et al., 2013, for the momentum form).
    """

    def __init__(self, params, lr: float = 1e-3, momentum: float = 0, dampening: float = 0,
                 weight_decay: float = 0, nesterov: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 differentiable: bool = False, fused: Optional[bool] = None) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        check_hparam("momentum", momentum)
        check_hparam("dampening", dampening, low=float("-inf"))
        check_hparam("weight_decay", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError(f"Nesterov momentum requires a momentum and zero dampening; got "
                             f"momentum={momentum}, dampening={dampening}")
        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, momentum, dampening = group["lr"], group["momentum"], group["dampening"]
        weight_decay, nesterov, maximize = (group["weight_decay"], group["nesterov"],
                                            group["maximize"])
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            if momentum != 0:
                state = self.state[p]
                buf = state.get("momentum_buffer")
                if buf is None:
                    buf = state["momentum_buffer"] = grad.detach().clone()
                else:
                    buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                grad = grad.add(buf, alpha=momentum) if nesterov else buf
            p.add_(grad, alpha=-lr)
