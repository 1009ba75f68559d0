"""Warm-up schedules: ``ConstantLR`` and ``LinearLR`` scale the lr for the first epochs.

Both update the lr recursively from the current ``group["lr"]``, as PyTorch does, so
they chain with a decay schedule (``ChainedScheduler``, ``SequentialLR``); their closed
forms are what ``step(epoch)`` uses.
"""
from __future__ import annotations

from ..optimizer import Optimizer
from .base import LRScheduler, is_positive_int, is_real


__all__ = ["ConstantLR", "LinearLR"]


def _check_total_iters(cls: str, total_iters) -> None:
    # NOTE: PyTorch takes 0, then divides by it (LinearLR) or never restores the lr.
    if not is_positive_int(total_iters):
        raise ValueError(f"{cls}: expected a positive integer total_iters, got "
                         f"{total_iters!r}")


def _check_factor(message: str, factor, low_open: bool) -> None:
    if not is_real(factor):
        raise TypeError(f"{message}; got {type(factor).__name__} ({factor!r})")
    if factor > 1.0 or factor < 0 or (low_open and factor == 0):
        raise ValueError(f"{message}; got {factor}")


class ConstantLR(LRScheduler):
    """Scale every group's lr by ``factor`` until epoch ``total_iters``, then restore it.

    lr(epoch) = base_lr * factor if epoch < total_iters, else base_lr.

    Args:
        optimizer: the wrapped optimizer.
        factor: the scale, in [0, 1] (default 1/3).
        total_iters: epochs the scale lasts (a positive int, default 5).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: factor outside [0, 1], total_iters not a positive int.
        TypeError: factor not a number; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.ConstantLR.
    """

    def __init__(self, optimizer: Optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1) -> None:
        _check_factor("Constant multiplicative factor expected to be between 0 and 1",
                      factor, low_open=False)
        _check_total_iters("ConstantLR", total_iters)
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.factor for group in self.optimizer.param_groups]
        if self.last_epoch != self.total_iters:
            return self._current_lrs()
        if self.factor == 0:  # NOTE: the recursive undo would divide by zero (PyTorch does)
            return list(self.base_lrs)
        return [group["lr"] * (1.0 / self.factor) for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        scale = 1.0 if self.last_epoch >= self.total_iters else self.factor
        return [base_lr * scale for base_lr in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale every group's lr by a factor moving linearly from ``start_factor`` to
    ``end_factor`` over ``total_iters`` epochs, then keep it.

    lr(epoch) = base_lr * (start_factor + (end_factor - start_factor)
    * min(epoch, total_iters) / total_iters).

    Args:
        optimizer: the wrapped optimizer.
        start_factor: the factor at epoch 0, in (0, 1] (default 1/3).
        end_factor: the factor from epoch ``total_iters`` on, in [0, 1] (default 1.0).
        total_iters: epochs of the ramp (a positive int, default 5).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: start_factor outside (0, 1], end_factor outside [0, 1], total_iters
            not a positive int. TypeError: a factor not a number; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.LinearLR.
    """

    def __init__(self, optimizer: Optimizer, start_factor: float = 1.0 / 3,
                 end_factor: float = 1.0, total_iters: int = 5, last_epoch: int = -1) -> None:
        _check_factor("Starting multiplicative factor expected to be greater than 0 and less "
                      "or equal to 1", start_factor, low_open=True)
        _check_factor("Ending multiplicative factor expected to be between 0 and 1",
                      end_factor, low_open=False)
        _check_total_iters("LinearLR", total_iters)
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0:
            return [group["lr"] * self.start_factor for group in self.optimizer.param_groups]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor
                              + (self.last_epoch - 1) * span)
        return [group["lr"] * ratio for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        factor = (self.start_factor + (self.end_factor - self.start_factor)
                  * min(self.total_iters, self.last_epoch) / self.total_iters)
        return [base_lr * factor for base_lr in self.base_lrs]
