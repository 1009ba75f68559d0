"""``RMSprop`` (``torch.optim.RMSprop``)."""
from __future__ import annotations

from typing import Optional

from ..factories import zeros_like
from .optimizer import Optimizer, check_hparam

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    r"""RMSprop: divide the gradient by a running root mean square of its history.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), per step::

        g = -g if maximize
        g = g + weight_decay * p                    if weight_decay != 0
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            a = alpha * a + (1 - alpha) * g
            d = sqrt(v - a * a) + eps
        else:
            d = sqrt(v) + eps
        if momentum > 0:
            b = momentum * b + g / d
            p = p - lr * b
        else:
            p = p - lr * g / d

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-2); a float or a one-element Tensor.
        alpha: smoothing constant, >= 0 (default 0.99).
        eps: added to the denominator, >= 0 (default 1e-8).
        weight_decay: L2 penalty, >= 0 (default 0).
        momentum: momentum factor, >= 0 (default 0).
        centered: normalize by an estimate of the gradient's variance instead.
        maximize: ascend the objective instead of descending it.
        capturable, foreach, differentiable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"square_avg"``, ``"momentum_buffer"`` (with
    momentum > 0), ``"grad_avg"`` (centered).

    Raises:
        ValueError: a negative lr, alpha, eps, momentum or weight_decay.
        TypeError: a hyperparameter that is not a number.

    Reference: torch.optim.RMSprop; Hinton, Lecture 6e of "Neural Networks for Machine
    Learning"; Graves, "Generating Sequences With Recurrent Neural Networks" (2013) for
    the centered form.
    """

    def __init__(self, params, lr: float = 1e-2, alpha: float = 0.99, eps: float = 1e-8,
                 weight_decay: float = 0, momentum: float = 0, centered: bool = False,
                 capturable: bool = False, foreach: Optional[bool] = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        check_hparam("eps", eps, label="epsilon value")
        check_hparam("momentum", momentum)
        check_hparam("weight_decay", weight_decay)
        check_hparam("alpha", alpha)
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay,
                    "capturable": capturable, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, alpha, eps = group["lr"], group["alpha"], group["eps"]
        weight_decay, momentum = group["weight_decay"], group["momentum"]
        centered, maximize = group["centered"], group["maximize"]
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["square_avg"] = zeros_like(p)
            # NOTE: the optional buffers start lazily, so a scheduler that turns momentum on
            # (OneCycleLR) or a group switched to centered keeps working.
            if momentum > 0 and "momentum_buffer" not in state:
                state["momentum_buffer"] = zeros_like(p)
            if centered and "grad_avg" not in state:
                state["grad_avg"] = zeros_like(p)
            state["step"] += 1
            if maximize:
                grad = -grad
            if weight_decay != 0:
                grad = grad.add(p, alpha=weight_decay)
            square_avg = state["square_avg"]
            square_avg.mul_(alpha).add_(grad * grad, alpha=1 - alpha)
            if centered:
                grad_avg = state["grad_avg"]
                grad_avg.mul_(alpha).add_(grad, alpha=1 - alpha)
                avg = square_avg.sub(grad_avg * grad_avg).sqrt_()
            else:
                avg = square_avg.sqrt()
            avg = avg + eps   # sqrt's result stays as autograd saved it
            if momentum > 0:
                buf = state["momentum_buffer"]
                buf.mul_(momentum).add_(grad / avg)
                p.add_(buf, alpha=-lr)
            else:
                p.add_(grad / avg, alpha=-lr)
