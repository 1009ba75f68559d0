"""Generic kernels written once against an array namespace ``xp`` (numpy, CuPy).

``make_kernels(xp)`` returns the op-name -> kernel table a backend registers; the cpu
plugin calls it with numpy, the cuda plugin with CuPy. The kernels live by concept in
``backends/kernels/`` (pointwise, predicates, reduction, shape, indexing, data_dependent,
linalg, matrix, factory, pooling, loss, and optim's fused optimizer updates); each module
has ``kernels(xp) -> dict`` and may declare ``UNSUPPORTED`` (op -> ScalarTypes that kernel
must not serve, so the Type lookup reports them as missing rather than letting the array
library fail with its own message).

Kernel contract: take backend arrays and plain Python values in schema order; return
backend arrays (0-d arrays for scalars are fine, ``dispatch.wrap`` normalizes them) with
the dtype PyTorch's op would give; never mutate inputs unless the op is in-place by
declaration (``copy_``, ``fill_``, ``index_put_``, ...); arguments named ``dim`` arrive
already wrapped to non-negative values.
"""
from __future__ import annotations

from .kernels import (copying, data_dependent, factory, indexing, linalg, loss, matrix, optim,
                      pointwise, pointwise_binary, pooling, predicates, reduction, shape,
                      softmax, sorting)
from .kernels import index_update, scan, special
from .kernels import sampling
from .kernels import factorizations
from .kernels import bucketing, special_math
from .kernels import float_parts, log_scan
from .kernels import scatter_reduce
from .kernels import activation
from .kernels import (special_airy, special_bessel, special_gamma, special_polynomials,
                      special_stats)

MODULES = (factory, pointwise, pointwise_binary, predicates, reduction, softmax, sorting, shape,
           copying, indexing, data_dependent, linalg, matrix, pooling, loss, optim)
MODULES += (special, scan, index_update)
MODULES += (sampling,)
MODULES += (factorizations,)  # torch.linalg: inv, solve, det, qr, eigh, svd...
MODULES += (special_math, bucketing)
MODULES += (log_scan, float_parts)  # logcumsumexp, frexp
MODULES += (scatter_reduce,)  # scatter_reduce's sum/prod/mean/amax/amin
MODULES += (activation,)  # leaky_relu, hardtanh, elu, softplus, mish...
MODULES += (special_stats, special_gamma, special_bessel, special_airy,
            special_polynomials)  # torch.special


def make_kernels(xp) -> dict:
    """The whole kernel table for array namespace ``xp``."""
    table: dict = {}
    for mod in MODULES:
        part = mod.kernels(xp)
        clash = table.keys() & part.keys()
        if clash:
            raise RuntimeError(f"kernel(s) {sorted(clash)} defined twice (in {mod.__name__})")
        table.update(part)
    return table


def unsupported() -> dict:
    """op name -> frozenset of ScalarTypes its generic kernel does not serve."""
    out: dict = {}
    for mod in MODULES:
        out.update(getattr(mod, "UNSUPPORTED", {}))
    return out
