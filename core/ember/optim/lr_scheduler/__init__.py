"""Learning-rate schedulers (``torch.optim.lr_scheduler``).

A scheduler rewrites ``group["lr"]`` of its optimizer's param groups each time its
``step()`` is called (once per epoch, or once per batch for ``CyclicLR`` and
``OneCycleLR``), after ``optimizer.step()``. Building one records each group's starting
lr as ``group["initial_lr"]`` and performs the first step, which sets the lr for step 0.

As in PyTorch, most schedules update the lr recursively from the current ``group["lr"]``
(so they compose with other code that changes it, and in a ``ChainedScheduler``); their
values equal the closed forms given in their docstrings up to float rounding.
``step(epoch)`` (deprecated in PyTorch, kept for compatibility) jumps to an epoch with
the closed form where there is one.

Modules by concept: ``base`` (``LRScheduler``), ``lambdas`` (user functions), ``decay``
(step, multi-step, exponential, polynomial), ``warmup`` (constant, linear), ``cosine``,
``cyclic`` (``CyclicLR``, ``OneCycleLR``), ``plateau`` (``ReduceLROnPlateau``) and
``chained`` (``SequentialLR``, ``ChainedScheduler``).
"""
from .base import LRScheduler
from .chained import ChainedScheduler, SequentialLR
from .cosine import CosineAnnealingLR, CosineAnnealingWarmRestarts
from .cyclic import CyclicLR, OneCycleLR
from .decay import ExponentialLR, MultiStepLR, PolynomialLR, StepLR
from .lambdas import LambdaLR, MultiplicativeLR
from .plateau import ReduceLROnPlateau
from .warmup import ConstantLR, LinearLR

__all__ = ["LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR",
           "ConstantLR", "LinearLR", "ExponentialLR", "PolynomialLR", "CosineAnnealingLR",
           "CosineAnnealingWarmRestarts", "CyclicLR", "OneCycleLR", "SequentialLR",
           "ChainedScheduler", "ReduceLROnPlateau"]
