"""Schedulers made of schedulers: ``SequentialLR`` (one after another) and
``ChainedScheduler`` (all at once, their factors multiplying)."""
from __future__ import annotations

from bisect import bisect_right

from ..optimizer import Optimizer
from .base import LRScheduler, check_optimizer
from .plateau import ReduceLROnPlateau

__all__ = ["SequentialLR", "ChainedScheduler"]


def _check_schedulers(cls: str, schedulers, optimizer: Optimizer) -> list:
    """The schedulers as a list; raise unless each is an ``LRScheduler`` (but not
    ``ReduceLROnPlateau``, whose ``step`` needs a metric) of ``optimizer``."""
    schedulers = list(schedulers)
    if not schedulers:
        raise ValueError(f"{cls} expects at least one scheduler, but got no scheduler.")
    for i, sched in enumerate(schedulers):
        if not isinstance(sched, LRScheduler):
            raise TypeError(f"{cls}: the scheduler at index {i} is a {type(sched).__name__}, "
                            f"not an LRScheduler")
        if isinstance(sched, ReduceLROnPlateau):
            raise ValueError(f"{cls} does not support `ReduceLROnPlateau` scheduler as it "
                             f"requires additional kwargs to be specified when calling "
                             f"`step`, but got one at index {i} in the given schedulers "
                             f"sequence; step it separately")
        if sched.optimizer is not optimizer:
            raise ValueError(f"{cls} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {type(sched).__name__} at index {i} with "
                             f"another {type(sched.optimizer).__name__}; build every "
                             f"scheduler on the one optimizer")
    return schedulers


class _Composite(LRScheduler):
    """State dicts that hold the wrapped schedulers' state dicts."""

    def state_dict(self) -> dict:
        """The attributes but the optimizer, with each wrapped scheduler's state dict."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict) -> None:
        """Restore a ``state_dict()`` into this scheduler and the wrapped ones."""
        state = dict(state_dict)
        saved = state.pop("_schedulers")
        self.__dict__.update(state)
        for sched, s in zip(self._schedulers, saved):
            sched.load_state_dict(s)


class SequentialLR(_Composite):
    """Run schedulers one after another, switching at the milestone epochs.

    Epochs before ``milestones[0]`` follow ``schedulers[0]``, then up to ``milestones[1]``
    ``schedulers[1]``, and so on; each scheduler starts again from its epoch 0 (its closed
    form at 0, usually the initial lr) at its milestone. Building it resets every group's
    lr to ``initial_lr`` and rewinds the schedulers, undoing their own first steps.

    Args:
        optimizer: the wrapped optimizer (every scheduler's).
        schedulers: the schedulers, in order (not ``ReduceLROnPlateau``).
        milestones: ``len(schedulers) - 1`` epochs (ints, non-decreasing).
        last_epoch: kept for PyTorch's signature; -1 (default).

    ``step()`` takes no epoch. ``state_dict()`` nests the schedulers' state dicts.

    Raises:
        ValueError: no schedulers, a ``ReduceLROnPlateau``, a scheduler of another
            optimizer, the wrong number of milestones, or milestones out of order.
        TypeError: an entry that is not an ``LRScheduler``, a milestone not an int; as
            ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.SequentialLR.
    """

    def __init__(self, optimizer: Optimizer, schedulers, milestones,
                 last_epoch: int = -1) -> None:
        check_optimizer(optimizer)
        schedulers = _check_schedulers("SequentialLR", schedulers, optimizer)
        milestones = list(milestones)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"Sequential Schedulers expects number of schedulers provided to "
                             f"be one more than the number of milestone points, but got "
                             f"number of schedulers {len(schedulers)} and the number of "
                             f"milestones to be equal to {len(milestones)}")
        if any(isinstance(m, bool) or not isinstance(m, int) for m in milestones):
            raise TypeError(f"SequentialLR: expected milestones to be ints, got {milestones}")
        if milestones != sorted(milestones):
            raise ValueError(f"SequentialLR: expected non-decreasing milestones, got "
                             f"{milestones}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        # NOTE: each scheduler already stepped once when built; rewind them all
        for sched in schedulers:
            _rewind(sched)
        first = schedulers[bisect_right(milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        """Advance one epoch, in the scheduler whose turn it is."""
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        sched = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            sched._update_lr(0)
        else:
            sched.step()
        self._last_lr = sched.get_last_lr()


def _rewind(sched: LRScheduler) -> None:
    if hasattr(sched, "_schedulers"):
        for s in sched._schedulers:
            _rewind(s)
    else:
        sched.last_epoch -= 1


class ChainedScheduler(_Composite):
    """Step several schedulers together, each on the lr the previous one left.

    Each ``step()`` steps every scheduler in order; with recursive schedules (such as
    ``ConstantLR`` and ``ExponentialLR``) their factors multiply.

    Args:
        schedulers: the schedulers (not ``ReduceLROnPlateau``), all of one optimizer.
        optimizer: that optimizer (default: the first scheduler's).

    ``step()`` takes no epoch. ``state_dict()`` nests the schedulers' state dicts.

    Raises:
        ValueError: no schedulers, a ``ReduceLROnPlateau``, or schedulers of different
            optimizers. TypeError: an entry that is not an ``LRScheduler``.

    Reference: torch.optim.lr_scheduler.ChainedScheduler.
    """

    def __init__(self, schedulers, optimizer: Optimizer | None = None) -> None:
        schedulers = list(schedulers)
        if optimizer is None and schedulers and isinstance(schedulers[0], LRScheduler):
            optimizer = schedulers[0].optimizer
        schedulers = _check_schedulers("ChainedScheduler", schedulers, optimizer)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = self._current_lrs()

    def step(self) -> None:
        """Step every scheduler, in order."""
        for sched in self._schedulers:
            sched.step()
        self._last_lr = self._current_lrs()
