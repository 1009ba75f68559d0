"""Cyclical schedules, stepped once per batch: ``CyclicLR`` and ``OneCycleLR``.

Both can also cycle the momentum (SGD's ``momentum``, Adam-like optimizers' ``betas[0]``)
inversely to the lr, and both set the lr directly from their formula each step, not
recursively from the current lr.
"""
from __future__ import annotations

import math
import numbers
import types

from ..optimizer import Optimizer
from .base import LRScheduler, check_optimizer, is_positive_int, is_real, per_group, set_momentum

__all__ = ["CyclicLR", "OneCycleLR"]

_CYCLIC_MODES = ("triangular", "triangular2", "exp_range")


def _check_cycle_momentum(optimizer: Optimizer) -> bool:
    """Whether the momentum is Adam's ``betas[0]``; ValueError if there is none."""
    if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
        raise ValueError("optimizer must support momentum or beta1 with `cycle_momentum` "
                         "option enabled; pass cycle_momentum=False")
    return "betas" in optimizer.defaults


class CyclicLR(LRScheduler):
    r"""Cycle every group's lr between ``base_lr`` and ``max_lr`` along a triangle.

    Stepped once per batch. A cycle is ``step_size_up`` steps up then ``step_size_down``
    steps down; at step ``t`` (``last_epoch``)::

        cycle = floor(1 + t / total_size)               total_size = up + down
        x = 1 + t / total_size - cycle                  position in the cycle, [0, 1)
        h = x / step_ratio if x <= step_ratio else (x - 1) / (step_ratio - 1)
        lr = base_lr + (max_lr - base_lr) * h * scale_fn(cycle or t)
        momentum = max_momentum - (max_momentum - base_momentum) * h * scale_fn(cycle or t)

    ``mode`` picks ``scale_fn``: ``"triangular"`` 1; ``"triangular2"`` ``1 / 2**(cycle -
    1)`` (halves the amplitude each cycle); ``"exp_range"`` ``gamma**t`` (of the step, not
    the cycle). A custom ``scale_fn(x)`` overrides ``mode``, its argument chosen by
    ``scale_mode`` (``"cycle"`` or ``"iterations"``). With ``cycle_momentum`` the momentum
    (SGD's ``momentum``, Adam-like optimizers' ``betas[0]``) moves inversely to the lr.

    Args:
        optimizer: the wrapped optimizer; building the scheduler sets each group's lr to
            its ``base_lr``.
        base_lr, max_lr: the cycle's bounds, floats or one per group.
        step_size_up: steps of the rising half (a positive number, default 2000).
        step_size_down: steps of the falling half (default: ``step_size_up``).
        mode: ``"triangular"`` (default), ``"triangular2"`` or ``"exp_range"``.
        gamma: the base of ``exp_range`` (default 1.0).
        scale_fn: a custom scale, a function of one number returning a float in [0, 1].
        scale_mode: ``"cycle"`` (default) or ``"iterations"``, for a custom ``scale_fn``.
        cycle_momentum: also cycle the momentum (default True).
        base_momentum, max_momentum: momentum bounds, floats or one per group (default
            0.8, 0.9).
        last_epoch: index of the last batch done; -1 starts fresh.

    ``state_dict()`` saves a custom ``scale_fn`` only as the ``__dict__`` of a callable
    object (not a function or lambda), as in PyTorch.

    Raises:
        ValueError: an unknown mode without ``scale_fn``, an unknown ``scale_mode``, step
            sizes not positive, per-group lists of the wrong length, and cycle_momentum
            with an optimizer without momentum or betas; nothing changes on error.
        TypeError: ``scale_fn`` not callable; as ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.CyclicLR; Smith, "Cyclical Learning Rates for
    Training Neural Networks" (WACV 2017).
    """

    def __init__(self, optimizer: Optimizer, base_lr, max_lr, step_size_up: float = 2000,
                 step_size_down: float | None = None, mode: str = "triangular",
                 gamma: float = 1.0, scale_fn=None, scale_mode: str = "cycle",
                 cycle_momentum: bool = True, base_momentum=0.8, max_momentum=0.9,
                 last_epoch: int = -1) -> None:
        self.optimizer = check_optimizer(optimizer)
        base_lrs = per_group("base_lr", optimizer, base_lr)
        self.max_lrs = per_group("max_lr", optimizer, max_lr)
        if step_size_down is None:
            step_size_down = step_size_up
        for name, size in (("step_size_up", step_size_up), ("step_size_down", step_size_down)):
            if not is_real(size) or not size > 0:
                raise ValueError(f"CyclicLR: expected a positive number of steps {name}, got "
                                 f"{size!r}")
        if scale_fn is None and mode not in _CYCLIC_MODES:
            raise ValueError(f"mode is invalid and scale_fn is None: got mode={mode!r}; "
                             f"expected one of {_CYCLIC_MODES} or a scale_fn")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"scale_fn must be callable, got {type(scale_fn).__name__}")
        if scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"scale_mode must be 'cycle' or 'iterations', got {scale_mode!r}")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            self.use_beta1 = _check_cycle_momentum(optimizer)
            self.base_momentums = per_group("base_momentum", optimizer, base_momentum)
            self.max_momentums = per_group("max_momentum", optimizer, max_momentum)
        self.total_size = float(step_size_up) + float(step_size_down)
        self.step_ratio = float(step_size_up) / self.total_size
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        # NOTE: the built-in modes fix their scale_mode, as in PyTorch
        self.scale_mode = scale_mode if scale_fn is not None else (
            "iterations" if mode == "exp_range" else "cycle")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, optimizer.param_groups):
                group["lr"] = lr
            if cycle_momentum:
                for m_max, m_base, group in zip(self.max_momentums, self.base_momentums,
                                                optimizer.param_groups):
                    set_momentum(group, m_max, self.use_beta1)
                    group["max_momentum"] = m_max
                    group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at ``x`` (the cycle number or the step, see ``mode``)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self) -> list:
        self._warn_if_outside_step()
        t = self.last_epoch
        cycle = math.floor(1 + t / self.total_size)
        x = 1.0 + t / self.total_size - cycle
        if x <= self.step_ratio:
            height = x / self.step_ratio
        else:
            height = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else t)
        lrs = [base_lr + (max_lr - base_lr) * height * scale
               for base_lr, max_lr in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for group, m_base, m_max in zip(self.optimizer.param_groups, self.base_momentums,
                                            self.max_momentums):
                set_momentum(group, m_max - (m_max - m_base) * height * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict:
        """The attributes but the optimizer; a custom ``scale_fn`` as PyTorch saves it."""
        state = super().state_dict()
        fn = state.pop("_scale_fn_custom")
        state["_scale_fn_custom"] = (None if fn is None or isinstance(fn, types.FunctionType)
                                     else fn.__dict__.copy())
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()``; a custom ``scale_fn`` itself is kept."""
        state = dict(state_dict)
        attrs = state.pop("_scale_fn_custom")
        self.__dict__.update(state)
        if attrs is not None and self._scale_fn_custom is not None:
            self._scale_fn_custom.__dict__.update(attrs)


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
        self.optimizer = check_optimizer(optimizer)
        if total_steps is not None:
            if not is_positive_int(total_steps):
                raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
            self.total_steps = total_steps
        elif epochs is not None and steps_per_epoch is not None:
            if not is_positive_int(epochs):
                raise ValueError(f"Expected positive integer epochs, but got {epochs}")
            if not is_positive_int(steps_per_epoch):
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

        max_lrs = per_group("max_lr", optimizer, max_lr)
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:  # checked before any group changes
            self.use_beta1 = _check_cycle_momentum(optimizer)
            max_ms = per_group("max_momentum", optimizer, max_momentum)
            base_ms = per_group("base_momentum", optimizer, base_momentum)
        if last_epoch == -1:
            for m, group in zip(max_lrs, optimizer.param_groups):
                group["initial_lr"] = m / div_factor
                group["max_lr"] = m
                group["min_lr"] = group["initial_lr"] / final_div_factor
        if cycle_momentum and last_epoch == -1:
            for m_max, m_base, group in zip(max_ms, base_ms, optimizer.param_groups):
                set_momentum(group, m_max, self.use_beta1)
                group["max_momentum"] = m_max
                group["base_momentum"] = m_base
        super().__init__(optimizer, last_epoch)

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
                        set_momentum(group, self._anneal(group[m0], group[m1], pct),
                                     self.use_beta1)
                    break
                start_step = end_step
        return lrs
