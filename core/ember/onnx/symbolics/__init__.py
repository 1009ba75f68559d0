"""ember's own symbolic functions, one module per family of ops; importing this package
registers them all (``registry.builtin``)."""
from . import (arithmetic, comparison, indexing, loss, nn, pooling, reduction,  # noqa: F401
               shape, slicing, unary)
