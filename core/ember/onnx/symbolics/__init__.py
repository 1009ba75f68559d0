"""ember's own symbolic functions, one module per family of ops; importing this package
registers them all (``registry.builtin``)."""
from . import (activation, arithmetic, comparison, indexing, loss, matrix,  # noqa: F401
               nn, pooling, reduction, resampling, rnn, shape, slicing, unary)
from . import sizes  # noqa: F401,E402
