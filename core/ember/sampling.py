"""The Python side of the random sampling ops (``normal_``, ``uniform_``, ``random_``,
``bernoulli``, ``normal``, ``poisson``, ``multinomial``, ...).

The ops are declared in ``ops/native_functions.yaml`` ("random sampling") with kernels in
``backends/kernels/sampling.py``. Two things cannot be said in a schema and live here:

* ``normal(mean, std, size)``, the factory overload of ``normal``: a composite that fills
  a new tensor with ``normal_``, so it takes ``dtype``, ``device`` and ``requires_grad``
  as the factories do;
* PyTorch's keyword ``from`` (``x.uniform_(**{'from': -1, 'to': 1})``, ``x.random_(**{'from':
  2, 'to': 5})``): a Python keyword cannot name a parameter, so the schemas say ``from_``
  and ``install`` wraps the two methods to accept either spelling.
"""
from __future__ import annotations

import functools

from .ops.composite import composite

__all__ = ["install"]


@composite("normal.float_float")
def _normal_sized(mean, std, size, generator=None, dtype=None, device=None,
                  requires_grad=False):
    from .factories import empty
    out = empty(size, dtype=dtype, device=device).normal_(mean, std, generator=generator)
    return out.requires_grad_(True) if requires_grad else out


def _accept_from(method):
    """``method`` taking PyTorch's keyword ``from`` as well as ``from_``."""
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if "from" in kwargs:
            if "from_" in kwargs:
                raise TypeError(f"{method.__name__}() got both 'from' and 'from_'; pass one")
            kwargs["from_"] = kwargs.pop("from")
        return method(self, *args, **kwargs)
    return wrapper


def install(tensor_cls) -> None:
    """Let ``Tensor.uniform_`` and ``Tensor.random_`` take the keyword ``from``."""
    for name in ("uniform_", "random_"):
        setattr(tensor_cls, name, _accept_from(getattr(tensor_cls, name)))
