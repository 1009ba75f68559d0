"""``ReduceLROnPlateau``: cut the lr when a watched metric stops improving."""
from __future__ import annotations

import math
import warnings

from ..optimizer import Optimizer
from .base import EPOCH_DEPRECATION, LRScheduler, check_optimizer, is_real

__all__ = ["ReduceLROnPlateau"]


def _check_count(name: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"ReduceLROnPlateau: expected a non-negative integer {name}, got "
                         f"{value!r}")


class ReduceLROnPlateau(LRScheduler):
    """Multiply every group's lr by ``factor`` when a metric has not improved for
    ``patience`` epochs.

    ``step(metrics)`` takes the metric of the epoch (a float or one-element tensor)::

        better = metric < best * (1 - threshold)   mode "min", threshold_mode "rel"
                 metric < best - threshold         mode "min", threshold_mode "abs"
                 metric > best * (1 + threshold)   mode "max", threshold_mode "rel"
                 metric > best + threshold         mode "max", threshold_mode "abs"
        if better: best = metric; bad = 0 else: bad += 1
        if in cooldown: cooldown -= 1; bad = 0
        if bad > patience:
            lr = max(lr * factor, min_lr) for each group, kept if it would drop by <= eps
            cooldown = cooldown epochs; bad = 0

    Unlike the other schedulers it does not record ``initial_lr`` or change the lr when
    built, and ``step`` takes the metric (``epoch`` is deprecated).

    Args:
        optimizer: the wrapped optimizer.
        mode: ``"min"`` (default; the metric should fall) or ``"max"``.
        factor: the cut, in [0, 1) (default 0.1).
        patience: epochs without improvement tolerated (a non-negative int, default 10).
        threshold: the least change that counts as improvement (default 1e-4).
        threshold_mode: ``"rel"`` (default) or ``"abs"``: how ``threshold`` applies.
        cooldown: epochs to wait after a cut before counting again (default 0).
        min_lr: the lowest lr, a float or one per group (default 0).
        eps: cuts smaller than this are skipped (default 1e-8).

    Raises:
        ValueError: factor outside [0, 1), an unknown mode or threshold_mode, patience or
            cooldown not a non-negative int, a ``min_lr`` list of the wrong length.
        RuntimeError: on a cut, the optimizer gained groups and ``min_lr`` was a list.
        TypeError: as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.ReduceLROnPlateau.
    """

    def __init__(self, optimizer: Optimizer, mode: str = "min", factor: float = 0.1,
                 patience: int = 10, threshold: float = 1e-4, threshold_mode: str = "rel",
                 cooldown: int = 0, min_lr=0, eps: float = 1e-8) -> None:
        if not is_real(factor) or not factor < 1.0:
            raise ValueError(f"Factor should be < 1.0, got {factor!r}; the lr is multiplied "
                             f"by factor, so a value >= 1 would never reduce it")
        if factor < 0:
            raise ValueError(f"Factor should be >= 0, got {factor}")
        self.optimizer = check_optimizer(optimizer)
        n = len(optimizer.param_groups)
        if isinstance(min_lr, (list, tuple)):
            if len(min_lr) != n:
                raise ValueError(f"expected {n} min_lrs, got {len(min_lr)}; pass one float, "
                                 f"or one per param group")
            self.default_min_lr = None
            self.min_lrs = list(min_lr)
        else:
            self.default_min_lr = min_lr
            self.min_lrs = [min_lr] * n
        _check_count("patience", patience)
        _check_count("cooldown", cooldown)
        self._init_is_better(mode, threshold, threshold_mode)
        self.factor = factor
        self.patience = patience
        self.cooldown = cooldown
        self.eps = eps
        self.last_epoch = 0
        self._last_lr = self._current_lrs()
        self._reset()

    def _reset(self) -> None:
        self.best = self.mode_worse
        self.cooldown_counter = 0
        self.num_bad_epochs = 0

    @property
    def in_cooldown(self) -> bool:
        """Whether the scheduler is waiting out ``cooldown`` epochs after a cut."""
        return self.cooldown_counter > 0

    def step(self, metrics, epoch: int | None = None) -> None:
        """Record the epoch's metric (a float or one-element tensor); cut the lrs if it
        has not improved for more than ``patience`` epochs."""
        current = float(metrics)
        if epoch is None:
            epoch = self.last_epoch + 1
        else:
            warnings.warn(EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self.last_epoch = epoch
        if self._is_better(current, self.best):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.in_cooldown:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs in cooldown do not count
        if self.num_bad_epochs > self.patience:
            self._reduce_lr()
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = self._current_lrs()

    def _reduce_lr(self) -> None:
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"The number of param groups in the `optimizer` "
                                   f"({len(groups)}) differs from when `ReduceLROnPlateau` "
                                   f"was initialized ({len(self.min_lrs)}), usually due to a "
                                   f"new param group being added to the optimizer. Please "
                                   f"modify the `min_lrs` field to match the length of the "
                                   f"`optimizer` param groups.")
            self.min_lrs = [self.default_min_lr] * len(groups)
        for group, min_lr in zip(groups, self.min_lrs):
            old_lr = float(group["lr"])
            new_lr = max(old_lr * self.factor, min_lr)
            if old_lr - new_lr > self.eps:
                group["lr"] = new_lr

    def _is_better(self, a: float, best: float) -> bool:
        if self.mode == "min" and self.threshold_mode == "rel":
            return a < best * (1.0 - self.threshold)
        if self.mode == "min":
            return a < best - self.threshold
        if self.threshold_mode == "rel":
            return a > best * (self.threshold + 1.0)
        return a > best + self.threshold

    def _init_is_better(self, mode: str, threshold: float, threshold_mode: str) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode!r} is unknown! Expected 'min' or 'max'")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode!r} is unknown! Expected 'rel' or "
                             f"'abs'")
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.mode = mode
        self.threshold = threshold
        self.threshold_mode = threshold_mode

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()`` (updates the attributes)."""
        self.__dict__.update(state_dict)
        self._init_is_better(self.mode, self.threshold, self.threshold_mode)
