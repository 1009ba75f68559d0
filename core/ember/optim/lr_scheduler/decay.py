"""Decay schedules: ``StepLR``, ``MultiStepLR``, ``ExponentialLR``, ``PolynomialLR``.

As in PyTorch, each updates the lr recursively from the current ``group["lr"]`` (so it
composes with other schedulers in a ``ChainedScheduler``) and has a closed form, which
``step(epoch)`` uses; the two agree up to float rounding.
"""
from __future__ import annotations

from bisect import bisect_right
from collections import Counter

from ..optimizer import Optimizer
from .base import LRScheduler, is_positive_int, is_real

__all__ = ["StepLR", "MultiStepLR", "ExponentialLR", "PolynomialLR"]


def _check_gamma(cls: str, gamma) -> None:
    if not is_real(gamma):
        raise TypeError(f"{cls}: expected gamma to be a real number, got "
                        f"{type(gamma).__name__} ({gamma!r})")


class StepLR(LRScheduler):
    """Multiply every group's lr by ``gamma`` every ``step_size`` epochs.

    lr(epoch) = base_lr * gamma ** (epoch // step_size).

    Args:
        optimizer: the wrapped optimizer.
        step_size: period of the decay, in epochs (a positive int).
        gamma: multiplicative factor (default 0.1).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: step_size not a positive int. TypeError: as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.StepLR.
    """

    def __init__(self, optimizer: Optimizer, step_size: int, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        if not is_positive_int(step_size):
            raise ValueError(f"StepLR: expected a positive integer step_size, got {step_size!r}")
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch == 0 or self.last_epoch % self.step_size != 0:
            return self._current_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** (self.last_epoch // self.step_size)
                for base_lr in self.base_lrs]


class MultiStepLR(LRScheduler):
    """Multiply every group's lr by ``gamma`` at each milestone epoch.

    lr(epoch) = base_lr * gamma ** (number of milestones <= epoch); a milestone listed
    twice counts twice.

    Args:
        optimizer: the wrapped optimizer.
        milestones: epochs (ints) at which to decay, in any order.
        gamma: multiplicative factor (default 0.1).
        last_epoch: see ``LRScheduler``.

    Raises:
        TypeError: milestones not an iterable of ints, gamma not a number; as
            ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.MultiStepLR.
    """

    def __init__(self, optimizer: Optimizer, milestones, gamma: float = 0.1,
                 last_epoch: int = -1) -> None:
        try:
            milestones = list(milestones)
        except TypeError:
            raise TypeError(f"MultiStepLR: expected milestones to be a list of epochs (ints), "
                            f"got {type(milestones).__name__}") from None
        bad = [m for m in milestones if isinstance(m, bool) or not isinstance(m, int)]
        if bad:
            raise TypeError(f"MultiStepLR: expected milestones to be ints, got {bad[0]!r} "
                            f"({type(bad[0]).__name__}) in {milestones}")
        _check_gamma("MultiStepLR", gamma)
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self.last_epoch not in self.milestones:
            return self._current_lrs()
        factor = self.gamma ** self.milestones[self.last_epoch]
        return [group["lr"] * factor for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        milestones = sorted(self.milestones.elements())
        return [base_lr * self.gamma ** bisect_right(milestones, self.last_epoch)
                for base_lr in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply every group's lr by ``gamma`` every epoch.

    lr(epoch) = base_lr * gamma ** epoch.

    Args:
        optimizer: the wrapped optimizer.
        gamma: multiplicative factor per epoch.
        last_epoch: see ``LRScheduler``.

    Raises:
        TypeError: gamma not a number; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.ExponentialLR.
    """

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        _check_gamma("ExponentialLR", gamma)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return self._current_lrs()
        return [group["lr"] * self.gamma for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * self.gamma ** self.last_epoch for base_lr in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay every group's lr to 0 along a polynomial over ``total_iters`` epochs.

    lr(epoch) = base_lr * (1 - min(epoch, total_iters) / total_iters) ** power.

    Args:
        optimizer: the wrapped optimizer.
        total_iters: epochs until the lr reaches 0 (a positive int, default 5).
        power: the polynomial's power (default 1.0: linear).
        last_epoch: see ``LRScheduler``.

    Raises:
        ValueError: total_iters not a positive int (PyTorch divides by zero later).
        TypeError: power not a number; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.PolynomialLR.
    """

    def __init__(self, optimizer: Optimizer, total_iters: int = 5, power: float = 1.0,
                 last_epoch: int = -1) -> None:
        if not is_positive_int(total_iters):
            raise ValueError(f"PolynomialLR: expected a positive integer total_iters, got "
                             f"{total_iters!r}")
        if not is_real(power):
            raise TypeError(f"PolynomialLR: expected power to be a real number, got "
                            f"{type(power).__name__} ({power!r})")
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current_lrs()
        decay = ((1.0 - self.last_epoch / self.total_iters)
                 / (1.0 - (self.last_epoch - 1) / self.total_iters)) ** self.power
        return [group["lr"] * decay for group in self.optimizer.param_groups]

    def _get_closed_form_lr(self) -> list:
        return [base_lr * (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters)
                ** self.power for base_lr in self.base_lrs]
