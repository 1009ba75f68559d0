"""``ember.nn``: modules, parameters, initialisation and the functional ops (``torch.nn``).

``Module`` holds parameters, buffers and submodules; layers live in ``modules/`` by
family; ``functional`` (``F``) holds the stateless ops the layers call; ``init`` the
initialisers; ``utils`` the training-loop helpers (gradient clipping, flat parameters);
``parallel`` ``DistributedDataParallel``.
"""
from . import functional, init, utils
from .modules import *  # noqa: F401,F403
from . import parallel  # noqa: E402 - after the modules its wrapper builds on
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
from .modules import __all__ as _modules_all

__all__ = ["Parameter", "functional", "init", "parallel", "utils", *_modules_all]
__all__ += ["Buffer", "UninitializedParameter", "UninitializedBuffer"]
