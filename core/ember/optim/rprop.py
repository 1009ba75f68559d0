"""``Rprop``: resilient backpropagation (``torch.optim.Rprop``)."""
from __future__ import annotations

from typing import Optional

from ..ops.namespace import where  # generated op, installed before ember imports optim
from ..factories import full_like
from .optimizer import Optimizer, check_hparam

__all__ = ["Rprop"]


class Rprop(Optimizer):
    r"""Rprop: a per-element step size that grows while the gradient keeps its sign and
    shrinks when it flips; only the gradient's sign is used.

    For each parameter ``p`` with gradient ``g`` (any shape, a floating dtype), with the
    previous step's (masked) gradient ``g_prev`` (zeros at first) and step sizes ``s``
    (``lr`` at first)::

        g = -g if maximize
        f = etaplus   where g * g_prev > 0
            etaminus  where g * g_prev < 0
            1         elsewhere
        s = clamp(s * f, step_size_min, step_size_max)
        g = 0 where g * g_prev < 0                  (skip the step after a sign flip)
        p = p - sign(g) * s
        g_prev = g

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: the initial step size, >= 0 (default 1e-2); a float or a one-element Tensor.
        etas: (etaminus, etaplus), with 0 < etaminus < 1 < etaplus (default (0.5, 1.2)).
        step_sizes: (step_size_min, step_size_max) (default (1e-6, 50)).
        maximize: ascend the objective instead of descending it.
        capturable, foreach, differentiable: PyTorch's switches (default None / False),
            kept in the param groups; one implementation here (see ``Optimizer``).

    State per parameter: ``"step"`` (int), ``"prev"`` (``g_prev``) and ``"step_size"``
    (``s``), both of the parameter's shape and dtype.

    Raises:
        ValueError: lr negative, or etas outside 0 < etaminus < 1 < etaplus.
        TypeError: a hyperparameter that is not a number, etas or step_sizes not a pair.

    Reference: torch.optim.Rprop; Riedmiller & Braun, "A Direct Adaptive Method for Faster
    Backpropagation Learning: The RPROP Algorithm" (1993).
    """

    def __init__(self, params, lr: float = 1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable: bool = False, foreach: Optional[bool] = None,
                 maximize: bool = False, differentiable: bool = False) -> None:
        check_hparam("lr", lr, label="learning rate", tensor_ok=True)
        etas, step_sizes = _pair("etas", etas), _pair("step_sizes", step_sizes)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}; expected "
                             f"0 < etaminus < 1 < etaplus")
        defaults = {"lr": lr, "etas": etas, "step_sizes": step_sizes, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def _step_group(self, group: dict) -> None:
        (etaminus, etaplus), (step_min, step_max) = group["etas"], group["step_sizes"]
        for p in group["params"]:
            grad = p.grad
            if grad is None:
                continue
            state = self.state[p]
            if not state:
                state["step"] = 0
                state["prev"] = p.new_zeros(p.shape)
                state["step_size"] = full_like(grad, group["lr"])
            state["step"] += 1
            if group["maximize"]:
                grad = -grad
            agreement = grad * state["prev"]
            # NOTE: the 0-d ``one`` keeps the factors in the parameter's dtype; three
            # Python scalars would make a float32 tensor, rounding etaplus for float64.
            one = agreement.new_ones(())
            factor = where(agreement > 0, one * etaplus,
                           where(agreement < 0, one * etaminus, one))
            state["step_size"].mul_(factor).clamp_(step_min, step_max)
            grad = grad.masked_fill(agreement < 0, 0)
            p.addcmul_(grad.sign(), state["step_size"], value=-1)
            state["prev"].copy_(grad)


def _pair(name: str, value) -> tuple:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError(f"{name} must be a pair of numbers, got {value!r}")
    for v in value:
        check_hparam(name, v, low=float("-inf"))
    return tuple(value)
