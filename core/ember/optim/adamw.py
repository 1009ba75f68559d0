"""``AdamW``: Adam with decoupled weight decay (``torch.optim.AdamW``)."""
from __future__ import annotations

from typing import Optional

from .adam import Adam

__all__ = ["AdamW"]


class AdamW(Adam):
    r"""Adam with decoupled weight decay.

    Each step first shrinks the weights, ``p = p * (1 - lr * weight_decay)``, then applies
    Adam's update with the plain gradient (no L2 term in the moments); see ``Adam`` for
    the rest of the algorithm, the state and the shapes/dtypes accepted.

    Args:
        params: tensors or param-group dicts (see ``Optimizer``).
        lr: learning rate, >= 0 (default 1e-3); a float or a one-element Tensor.
        betas: (beta1, beta2), each in [0, 1) (default (0.9, 0.999)).
        eps: added to the denominator, >= 0 (default 1e-8).
        weight_decay: decoupled decay coefficient, >= 0 (default 1e-2).
        amsgrad: use the running maximum of the second moment.
        maximize: ascend the objective instead of descending it.
        foreach, capturable, differentiable: PyTorch's switches (see ``Optimizer``).
        fused: None, True or False: as ``Adam`` (the ``_fused_adam_`` kernel).

    Raises:
        ValueError / TypeError: as ``Adam``.

    Reference: torch.optim.AdamW; Loshchilov & Hutter, "Decoupled Weight Decay
    Regularization" (2019).
    """

    def __init__(self, params, lr: float = 1e-3, betas=(0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 1e-2, amsgrad: bool = False, *,
                 maximize: bool = False, foreach: Optional[bool] = None,
                 capturable: bool = False, differentiable: bool = False,
                 fused: Optional[bool] = None) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)
