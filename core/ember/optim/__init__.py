"""``ember.optim``: optimizers and learning-rate schedulers (``torch.optim``).

``Optimizer`` is the base (param groups, state, state dicts); ``SGD``, ``Adam``, ``AdamW``,
``Adamax``, ``NAdam``, ``RAdam``, ``RMSprop``, ``Adagrad`` and ``Adadelta`` follow
PyTorch's algorithms, one module each; ``lr_scheduler`` holds the schedulers
(``StepLR``, ``CosineAnnealingLR``, ``OneCycleLR``, ``ReduceLROnPlateau``, ...).
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop",
           "Adagrad", "Adadelta", "lr_scheduler"]
