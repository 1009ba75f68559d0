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
