"""Schedules given by user functions of the epoch: ``LambdaLR`` and ``MultiplicativeLR``."""
from __future__ import annotations

import types

from ..optimizer import Optimizer
from .base import LRScheduler, check_optimizer

__all__ = ["LambdaLR", "MultiplicativeLR"]


class _LambdaScheduler(LRScheduler):
    """Holds one function of the epoch per param group, saved as PyTorch saves them."""

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int) -> None:
        n = len(check_optimizer(optimizer).param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}; pass "
                                 f"one function, or one per param group")
            lambdas = list(lr_lambda)
        else:
            lambdas = [lr_lambda] * n
        for fn in lambdas:
            if not callable(fn):
                raise TypeError(f"lr_lambda should be a function, but got "
                                f"{type(fn).__name__}")
        self.lr_lambdas = lambdas
        super().__init__(optimizer, last_epoch)

    def state_dict(self) -> dict:
        """The attributes but the optimizer; of ``lr_lambdas``, only the ``__dict__`` of
        callable objects (None for functions and lambdas, which cannot be saved)."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}
        state["lr_lambdas"] = [None if isinstance(fn, types.FunctionType) else fn.__dict__.copy()
                               for fn in self.lr_lambdas]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()``; the functions themselves are kept."""
        state = dict(state_dict)
        saved = state.pop("lr_lambdas")
        self.__dict__.update(state)
        for fn, attrs in zip(self.lr_lambdas, saved):
            if attrs is not None:
                fn.__dict__.update(attrs)


class LambdaLR(_LambdaScheduler):
    """Set each group's lr to its initial lr times a function of the epoch.

    lr(epoch) = base_lr * lr_lambda(epoch).

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch (an int) returning a float factor, or a list
            with one such function per param group.
        last_epoch: see ``LRScheduler``.

    ``state_dict()`` saves the ``__dict__`` of callable objects in ``lr_lambdas``, not
    functions or lambdas (as in PyTorch): rebuild the scheduler with the same functions.

    Raises:
        ValueError: a list of functions whose length is not the number of groups.
        TypeError: a ``lr_lambda`` that is not callable; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.LambdaLR.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        return [base_lr * fn(self.last_epoch)
                for fn, base_lr in zip(self.lr_lambdas, self.base_lrs)]


class MultiplicativeLR(_LambdaScheduler):
    """Multiply each group's lr by a function of the epoch at every step but the first.

    lr(0) = base_lr; lr(epoch) = lr(epoch - 1) * lr_lambda(epoch).

    Args:
        optimizer: the wrapped optimizer.
        lr_lambda: a function of the epoch (an int) returning a float factor, or a list
            with one such function per param group.
        last_epoch: see ``LRScheduler``.

    ``state_dict()`` saves ``lr_lambdas`` as ``LambdaLR`` does.

    Raises:
        ValueError: a list of functions whose length is not the number of groups.
        TypeError: a ``lr_lambda`` that is not callable; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.MultiplicativeLR.
    """

    def __init__(self, optimizer: Optimizer, lr_lambda, last_epoch: int = -1) -> None:
        super().__init__(optimizer, lr_lambda, last_epoch)

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        if self._is_initial:
            return self._current_lrs()
        return [group["lr"] * fn(self.last_epoch)
                for fn, group in zip(self.lr_lambdas, self.optimizer.param_groups)]
