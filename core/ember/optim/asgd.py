"""``ASGD``: averaged stochastic gradient descent (``torch.optim.ASGD``)."""
from __future__ import annotations

from typing import Optional

from .optimizer import Optimizer, check_hparam

__all__ = ["ASGD"]


class ASGD(Optimizer):
    r"""Averaged SGD: SGD with a decaying step size that also keeps a running average
    of the iterates (Polyak-Ruppert averaging), which is what one evaluates.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), at step
    t (eta starts at ``lr``, mu at 1)::

        g = -g if maximize
        g = g + weight_decay * p                    if weight_decay != 0
        p = p * (1 - lambd * eta) - eta * g
        ax = p                                      if mu == 1
        ax = ax + mu * (p - ax)                     otherwise
        eta = lr / (1 + lambd * lr * t) ** alpha
        mu = 1 / max(1, t - t0)

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-2); a float or a one-element Tensor.
        lambd: decay term (default 1e-4).
        alpha: power of the eta update (default 0.75).
        t0: the step at which averaging starts (default 1e6).
        weight_decay: L2 penalty, >= 0 (default 0).
        maximize: ascend the objective instead of descending it.
        foreach, differentiable, capturable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"eta"`` and ``"mu"`` (Python floats; PyTorch
    keeps float32 0-d tensors, so its eta is rounded to float32 and its iterates differ
    from ember's in about the 8th digit) and ``"ax"`` (the average, the parameter's shape
    and dtype).

    Raises:
        ValueError: lr or weight_decay negative.
        TypeError: a hyperparameter that is not a number.

    Reference: torch.optim.ASGD; Polyak & Juditsky, "Acceleration of Stochastic
    Approximation by Averaging" (1992).
    """

    def __init__(self, params, lr: float = 1e-2, lambd: float = 1e-4, alpha: float = 0.75,
                 t0: float = 1e6, weight_decay: float = 0, foreach: Optional[bool] = None,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        check_hparam("weight_decay", weight_decay)
        for name, value in (("lambd", lambd), ("alpha", alpha), ("t0", t0)):
            check_hparam(name, value, low=float("-inf"))
        defaults = {"lr": lr, "lambd": lambd, "alpha": alpha, "t0": t0,
                    "weight_decay": weight_decay, "foreach": foreach, "maximize": maximize,
                    "differentiable": differentiable, "capturable": capturable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        lr, lambd, alpha, t0 = group["lr"], group["lambd"], group["alpha"], group["t0"]
        for p, grad, state in self._params_with_grad(group, "ax"):
            if "eta" not in state:
                state["eta"], state["mu"] = float(lr), 1.0
            eta, step = state["eta"], state["step"]
            p.mul_(1 - lambd * eta).add_(grad, alpha=-eta)
            if state["mu"] != 1:
                state["ax"].add_(p.sub(state["ax"]).mul_(state["mu"]))
            else:
                state["ax"].copy_(p)
            state["eta"] = lr / (1 + lambd * lr * step) ** alpha
            state["mu"] = 1 / max(1, step - t0)
