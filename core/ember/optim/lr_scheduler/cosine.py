"""Cosine schedules: ``CosineAnnealingLR`` and ``CosineAnnealingWarmRestarts`` (SGDR)."""
from __future__ import annotations

import math
import numbers

from ..optimizer import Optimizer
from .base import LRScheduler, is_positive_int, is_real

__all__ = ["CosineAnnealingLR", "CosineAnnealingWarmRestarts"]


class CosineAnnealingLR(LRScheduler):
    r"""Anneal every group's lr from its initial value to ``eta_min`` along a half cosine.

    lr(epoch) = eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed
    recursively from the current lr as PyTorch does; past ``T_max`` it rises again
    (a period of ``2 * T_max``; no warm restarts).

    Args:
        optimizer: the wrapped optimizer.
        T_max: half period, in epochs (a positive number).
        eta_min: the minimum lr (default 0).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: T_max not positive. TypeError: as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.CosineAnnealingLR; Loshchilov & Hutter, "SGDR:
    Stochastic Gradient Descent with Warm Restarts" (2017).
    """

    def __init__(self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0,  # noqa: N803
                 last_epoch: int = -1) -> None:
        if isinstance(T_max, bool) or not isinstance(T_max, numbers.Real) or T_max <= 0:
            raise ValueError(f"CosineAnnealingLR: expected a positive T_max, got {T_max!r}")
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        epoch, t_max, eta_min = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current_lrs()
        if self._step_count == 1 and epoch > 0:
            return [eta_min + (base_lr - eta_min) * (1 + math.cos(epoch * math.pi / t_max)) / 2
                    for base_lr in self.base_lrs]
        if (epoch - 1 - t_max) % (2 * t_max) == 0:
            # NOTE: the ratio below would be 0/0 at the trough; step up by the closed form.
            return [group["lr"] + (base_lr - eta_min) * (1 - math.cos(math.pi / t_max)) / 2
                    for base_lr, group in zip(self.base_lrs, self.optimizer.param_groups)]
        ratio = (1 + math.cos(math.pi * epoch / t_max)) / (1 + math.cos(math.pi * (epoch - 1)
                                                                        / t_max))
        return [ratio * (group["lr"] - eta_min) + eta_min
                for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
                for base_lr in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    r"""Cosine annealing that restarts from the initial lr, each period ``T_mult`` times
    longer than the last.

    lr = eta_min + (base_lr - eta_min) * (1 + cos(pi * T_cur / T_i)) / 2, where ``T_cur``
    counts the epochs since the last restart and ``T_i`` is the current period: ``T_0``,
    then ``T_0 * T_mult``, ``T_0 * T_mult**2``, ... Unlike the other schedulers,
    ``step(epoch)`` is a supported (not deprecated) call: ``epoch`` may be fractional
    (``epoch + batch / batches_per_epoch``) to anneal within an epoch.

    Args:
        optimizer: the wrapped optimizer.
        T_0: epochs until the first restart (a positive int).
        T_mult: growth factor of the period after each restart (an int >= 1, default 1).
        eta_min: the minimum lr (default 0).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: T_0 not a positive int, T_mult not an int >= 1, eta_min not a number
            (PyTorch raises ValueError there too), a negative ``epoch`` given to ``step``.
        TypeError: as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.CosineAnnealingWarmRestarts; Loshchilov & Hutter,
    "SGDR: Stochastic Gradient Descent with Warm Restarts" (2017).
    """

    def __init__(self, optimizer: Optimizer, T_0: int, T_mult: int = 1,  # noqa: N803
                 eta_min: float = 0.0, last_epoch: int = -1) -> None:
        if not is_positive_int(T_0):
            raise ValueError(f"Expected positive integer T_0, but got {T_0!r}")
        if not is_positive_int(T_mult):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult!r}")
        if not is_real(eta_min):
            raise ValueError(f"Expected float or int eta_min, but got {eta_min!r} of type "
                             f"{type(eta_min).__name__}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [self.eta_min + (base_lr - self.eta_min)
                * (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
                for base_lr in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch, or jump to ``epoch`` (may be fractional, >= 0), and set
        every group's ``"lr"``; can be called after every batch."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur %= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    # the restart index n solves T_0 * (T_mult**n - 1) / (T_mult - 1) <= epoch
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult ** n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult ** n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self.last_epoch = math.floor(epoch)
        self._get_lr_called_within_step = True
        try:
            values = self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]
