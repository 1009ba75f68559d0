"""Ops implemented once in core in terms of other ember ops (``dispatch: composite``).

A composite receives Tensors and plain values after the generated wrapper has checked
them, and returns a Tensor. Because it is built from ember ops, autograd and tracing see
through it without any extra code. Register one with ``@composite("name.overload")``.
"""
from __future__ import annotations

from typing import Callable

import ember as E

COMPOSITES: dict[str, Callable] = {}


def composite(name: str):
    """Register the implementation of the composite op ``name``."""
    def register(fn):
        COMPOSITES[name] = fn
        return fn
    return register


@composite("rsub")
def rsub(self, other, alpha=1):
    # other - alpha * self: the reflected subtraction behind ``2 - x``.
    return E.sub(other, self, alpha=alpha)


@composite("expand_as")
def expand_as(self, other):
    return self.expand(other.shape)


@composite("type_as")
def type_as(self, other):
    return self.to(other.dtype)


@composite("view_as")
def view_as(self, other):
    return self.view(other.shape)


@composite("reshape_as")
def reshape_as(self, other):
    return self.reshape(other.shape)


@composite("swapaxes")
def swapaxes(self, axis0, axis1):
    return E.transpose(self, axis0, axis1)


@composite("swapdims")
def swapdims(self, dim0, dim1):
    return E.transpose(self, dim0, dim1)


@composite("movedim")
def movedim(self, source, destination):
    # a permutation: the moved dims go to their destinations, the others keep their order
    from ember.dispatch import wrap_dim
    n = self.ndim
    src = [wrap_dim(d, n, "movedim") for d in source]
    dst = [wrap_dim(d, n, "movedim") for d in destination]
    if len(src) != len(dst):
        raise RuntimeError(f"movedim(): invalid source or destination dims: source "
                           f"({list(source)}) should contain the same number of dims as "
                           f"destination ({list(destination)})")
    for name, dims, given in (("source", src, source), ("destination", dst, destination)):
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"movedim(): repeated dim in `{name}` ({list(given)})")
    rest = iter(d for d in range(n) if d not in src)
    moved = dict(zip(dst, src))
    return self.permute([moved[i] if i in moved else next(rest) for i in range(n)])


@composite("moveaxis")
def moveaxis(self, source, destination):
    return movedim(self, source, destination)


@composite("zero_")
def zero_(self):
    return self.fill_(0)
