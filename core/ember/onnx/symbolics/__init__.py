"""ember's own symbolic functions, one module per family of ops; importing this package
registers them all (``registry.builtin``)."""
from . import loss, nn, pointwise, reduction, shape  # noqa: F401
