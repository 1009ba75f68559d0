"""``LRScheduler``, the base of the schedulers, and the helpers they share."""
from __future__ import annotations

import functools
import numbers
import warnings
import weakref

from ...tensor import Tensor
from ..optimizer import Optimizer

__all__ = ["LRScheduler"]

EPOCH_DEPRECATION = ("The epoch parameter in `scheduler.step()` was not necessary and is being "
                     "deprecated where possible. Please use `scheduler.step()` to step the "
                     "scheduler.")


def check_optimizer(optimizer) -> Optimizer:
    """``optimizer`` itself; TypeError unless it is an ``Optimizer``."""
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer; pass an "
                        f"ember.optim optimizer (e.g. ember.optim.SGD)")
    return optimizer


def per_group(name: str, optimizer: Optimizer, value) -> list:
    """``value`` for each param group: a list/tuple must have one entry per group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return list(value)
    return [value] * n


def is_positive_int(v) -> bool:
    """An int (not a bool) above 0."""
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def is_real(v) -> bool:
    """A real number (not a bool)."""
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def set_momentum(group: dict, value: float, use_beta1: bool) -> None:
    """Set SGD's ``momentum`` or Adam's ``betas[0]`` (the cyclic schedulers move it)."""
    if use_beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _track_optimizer_step(optimizer: Optimizer) -> None:
    """Wrap ``optimizer.step`` (on the instance) to note that it ran, as PyTorch does, so
    the scheduler can warn when it is stepped before the optimizer."""
    if getattr(optimizer.step, "_wrapped_by_lr_sched", False):
        return
    func = type(optimizer).step
    opt_ref = weakref.ref(optimizer)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        opt = opt_ref()
        opt._opt_called = True
        return func(opt, *args, **kwargs)

    wrapper._wrapped_by_lr_sched = True
    optimizer.step = wrapper


class LRScheduler:
    """Base class of the schedulers (``torch.optim.lr_scheduler.LRScheduler``).

    Args:
        optimizer: the ``Optimizer`` whose groups' ``"lr"`` it sets.
        last_epoch: index of the last epoch done; -1 (default) starts fresh. Any other
            value resumes, and needs ``"initial_lr"`` in every group (KeyError otherwise).

    Subclasses implement ``get_lr()`` (the lrs for ``self.last_epoch``, one per group),
    and ``_get_closed_form_lr()`` where the schedule has one (``step(epoch)`` uses it).
    ``state_dict()`` holds every attribute but the optimizer.

    Raises:
        TypeError: ``optimizer`` is not an ``Optimizer``.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        self.optimizer = check_optimizer(optimizer)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                lr = group["lr"]  # a Tensor lr is copied: the scheduler writes into it
                group.setdefault("initial_lr", lr.clone() if isinstance(lr, Tensor) else lr)
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   f"when resuming an optimizer; load the optimizer's state "
                                   f"dict first, or start with last_epoch=-1")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        _track_optimizer_step(optimizer)
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list:
        """The lr of each group at ``self.last_epoch``; call ``get_last_lr()`` instead."""
        raise NotImplementedError(f"{type(self).__name__} must implement get_lr()")

    def get_last_lr(self) -> list:
        """The lrs the last ``step()`` set, one per param group."""
        return self._last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch (or batch) and set every group's ``"lr"``.

        Call it after ``optimizer.step()``: the reverse order warns, as in PyTorch,
        because it skips the schedule's first value. ``epoch`` (deprecated) jumps there.
        """
        if self._step_count == 1:
            if not getattr(self.optimizer.step, "_wrapped_by_lr_sched", False):
                warnings.warn("Seems like `optimizer.step()` has been overridden after learning "
                              "rate scheduler initialization. Please, make sure to call "
                              "`optimizer.step()` before `lr_scheduler.step()`.", UserWarning,
                              stacklevel=2)
            elif not getattr(self.optimizer, "_opt_called", False):
                warnings.warn("Detected call of `lr_scheduler.step()` before "
                              "`optimizer.step()`. You should call them in the opposite "
                              "order: `optimizer.step()` before `lr_scheduler.step()`. "
                              "Failure to do this will result in skipping the first value "
                              "of the learning rate schedule.", UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        """Move to the next epoch (or to ``epoch``, by the closed form) and set the lrs."""
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            if isinstance(group["lr"], Tensor):  # the user's tensor, filled as torch does
                group["lr"].fill_(float(lr))
            else:
                group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def _warn_if_outside_step(self) -> None:
        if not self._get_lr_called_within_step:
            warnings.warn("To get the last learning rate computed by the scheduler, please use "
                          "`get_last_lr()`.", UserWarning, stacklevel=3)

    def _current_lrs(self) -> list:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        """Every attribute of the scheduler except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()`` (updates the attributes)."""
        self.__dict__.update(state_dict)
