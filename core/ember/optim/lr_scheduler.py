"""Learning-rate schedulers (``torch.optim.lr_scheduler``).

A scheduler rewrites ``group["lr"]`` of its optimizer's param groups each time its
``step()`` is called (once per epoch, or once per batch for ``OneCycleLR``), after
``optimizer.step()``. Building one records each group's starting lr as
``group["initial_lr"]`` and performs the first step, which sets the lr for step 0.

As in PyTorch, ``StepLR`` and ``CosineAnnealingLR`` update the lr recursively from the
current ``group["lr"]`` (so they compose with other code that changes it); their values
equal the closed forms ``base_lr * gamma ** (epoch // step_size)`` and
``eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2`` up to float
rounding. ``step(epoch)`` (deprecated in PyTorch, kept for compatibility) jumps to an
epoch with the closed form.
"""
from __future__ import annotations

import functools
import math
import numbers
import warnings
import weakref

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR", "OneCycleLR"]

_EPOCH_DEPRECATION = ("The epoch parameter in `scheduler.step()` was not necessary and is being "
                      "deprecated where possible. Please use `scheduler.step()` to step the "
                      "scheduler.")


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

    Subclasses implement ``get_lr()`` (the lrs for ``self.last_epoch``, one per group).
    ``state_dict()`` holds every attribute but the optimizer.

    Raises:
        TypeError: ``optimizer`` is not an ``Optimizer``.
    """

    _get_lr_called_within_step = False
    _is_initial = False

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer; pass an "
                            f"ember.optim optimizer (e.g. ember.optim.SGD)")
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
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
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                warnings.warn(_EPOCH_DEPRECATION, UserWarning, stacklevel=2)
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
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
        if isinstance(step_size, bool) or not isinstance(step_size, int) or step_size <= 0:
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


def _per_group(name: str, optimizer: Optimizer, value) -> list:
    """``value`` for each param group: a list/tuple must have one entry per group."""
    n = len(optimizer.param_groups)
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(value)} values, param_groups has {n}.")
        return list(value)
    return [value] * n


class OneCycleLR(LRScheduler):
    r"""The 1cycle policy: warm the lr up to ``max_lr``, then anneal it far below the start.

    Stepped once per batch for ``total_steps`` (or ``epochs * steps_per_epoch``) steps.
    Two phases (default): ``initial_lr = max_lr / div_factor`` -> ``max_lr`` over the first
    ``pct_start`` of the steps, then ``max_lr`` -> ``min_lr = initial_lr /
    final_div_factor``. ``three_phase=True``: up, back down to ``initial_lr`` (symmetric),
    then down to ``min_lr``. With ``cycle_momentum``, the momentum (SGD's ``momentum``,
    Adam's ``betas[0]``) moves inversely between ``max_momentum`` and ``base_momentum``.
    Each phase anneals with ``anneal_strategy``: ``'cos'`` or ``'linear'``.

    Args:
        optimizer: the wrapped optimizer.
        max_lr: peak lr, a float or one per group.
        total_steps: number of steps of the cycle; or give ``epochs`` and
            ``steps_per_epoch``.
        pct_start: fraction of the cycle spent increasing the lr (default 0.3).
        anneal_strategy: ``'cos'`` (default) or ``'linear'``.
        cycle_momentum: also cycle the momentum (default True).
        base_momentum, max_momentum: momentum bounds, floats or one per group
            (default 0.85, 0.95).
        div_factor: ``initial_lr = max_lr / div_factor`` (default 25).
        final_div_factor: ``min_lr = initial_lr / final_div_factor`` (default 1e4).
        three_phase: use the three-phase schedule (default False).
        last_epoch: index of the last batch done; -1 starts fresh.

    Raises:
        ValueError: no valid total_steps / epochs and steps_per_epoch, pct_start outside
            [0, 1], an unknown anneal_strategy, per-group lists of the wrong length,
            cycle_momentum with an optimizer without momentum or betas, and stepping past
            ``total_steps``.

    Reference: torch.optim.lr_scheduler.OneCycleLR; Smith & Topin, "Super-Convergence"
    (2018).
    """

    def __init__(self, optimizer: Optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum=0.85, max_momentum=0.95,
                 div_factor: float = 25.0, final_div_factor: float = 1e4,
                 three_phase: bool = False, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer; pass an "
                            f"ember.optim optimizer (e.g. ember.optim.SGD)")
        self.optimizer = optimizer
        if total_steps is not None:
            if not _positive_int(total_steps):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not _positive_int(epochs):
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not _positive_int(steps_per_epoch):
                raise ValueError(f"Expected positive integer steps_per_epoch, but got "
                                 f"{steps_per_epoch}")
            self.total_steps = epochs * steps_per_epoch
        else:
            raise ValueError("You must define either total_steps OR (epochs AND "
                             "steps_per_epoch)")
        if isinstance(pct_start, bool) or not isinstance(pct_start, numbers.Real) \
                or not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy!r}")
        self._anneal_func_type = anneal_strategy
        up_end = float(pct_start * self.total_steps) - 1
        if three_phase:
            self._schedule_phases = [
                (up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (float(2 * pct_start * self.total_steps) - 2, "max_lr", "initial_lr",
                 "base_momentum", "max_momentum"),
                (self.total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._schedule_phases = [
                (up_end, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (self.total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]

        max_lrs = _per_group("max_lr", optimizer, max_lr)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor

        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled; pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            max_ms = _per_group("max_momentum", optimizer, max_momentum)
            base_ms = _per_group("base_momentum", optimizer, base_momentum)
            if last_epoch == -1:
                for m_max, m_base, group in zip(max_ms, base_ms, optimizer.param_groups):
                    self._set_momentum(group, m_max)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

    def _set_momentum(self, group: dict, value: float) -> None:
        if self.use_beta1:
            group["betas"] = (value, *group["betas"][1:])
        else:
            group["momentum"] = value

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self._anneal_func_type == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        step_num = self.last_epoch
        if step_num > self.total_steps:
            raise ValueError(f"Tried to step {step_num} times. The specified number of total "
                             f"steps is {self.total_steps}; build the scheduler with a larger "
                             f"total_steps (or epochs * steps_per_epoch)")
        lrs = []
        last = len(self._schedule_phases) - 1
        for group in self.optimizer.param_groups:
            start_step = 0.0
            for i, (end_step, lr0, lr1, m0, m1) in enumerate(self._schedule_phases):
                if step_num <= end_step or i == last:
                    pct = (step_num - start_step) / (end_step - start_step)
                    lrs.append(self._anneal(group[lr0], group[lr1], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[m0], group[m1], pct))
                    break
                start_step = end_step
        return lrs


def _positive_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0
