"""ember-example-logging-backend: a host backend over numpy, device ``logcpu``, that logs
every kernel call to the ``ember_example_logging_backend`` logger (entry point ``logcpu``)."""
from .kernels import KERNELS, logger, make_kernels

__all__ = ["KERNELS", "logger", "make_kernels"]
