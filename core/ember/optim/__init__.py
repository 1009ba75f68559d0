"""``ember.optim``: optimizers and learning-rate schedulers (``torch.optim``).

``Optimizer`` is the base (param groups, state, state dicts); ``SGD``, ``Adam``, ``AdamW``
and ``RMSprop`` follow PyTorch's algorithms; ``lr_scheduler`` holds ``StepLR``,
``CosineAnnealingLR`` and ``OneCycleLR``.
"""
from . import lr_scheduler
from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
