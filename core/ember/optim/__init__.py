"""``ember.optim``: optimizers and learning-rate schedulers (``torch.optim``).

``Optimizer`` is the base (param groups, state, state dicts); ``SGD``, ``ASGD``, ``Adam``,
``AdamW``, ``Adamax``, ``NAdam``, ``RAdam``, ``RMSprop``, ``Rprop``, ``Adagrad``,
``Adadelta``, ``Adafactor`` and ``LBFGS`` (with its strong Wolfe ``line_search``) follow
PyTorch's algorithms, one module each; ``lr_scheduler`` holds the schedulers
(``StepLR``, ``CosineAnnealingLR``, ``OneCycleLR``, ``ReduceLROnPlateau``, ...).
"""
from . import lr_scheduler
from .adadelta import Adadelta
from .adafactor import Adafactor
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "ASGD", "Adam", "AdamW", "Adamax", "NAdam", "RAdam",
           "RMSprop", "Rprop", "Adagrad", "Adadelta", "Adafactor", "LBFGS", "lr_scheduler"]
