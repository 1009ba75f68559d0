"""Backward of ``scatter_reduce`` (sum, prod, mean, amax, amin; with or without self).

Notation: a *group* is one output position with everything reduced into it (self's own
value when ``include_self``, and each ``src`` entry the index sends there). Each input's
gradient is the output's gradient times the derivative of its group's reduction:

* sum: 1; mean: 1 / (group size);
* amax / amin: 1 / (number of group members equal to the result) for those members, 0 for
  the rest (PyTorch distributes the gradient evenly over ties);
* prod: the product of the other members, computed without dividing by zero: a nonzero
  member x gets ``result / x``; with ``Z`` zeros in the group and ``P`` the product of its
  nonzero members, a zero member gets ``P`` if it is the only zero, else 0. Written so,
  the second derivative is exact too, except for a zero member of a group with two or
  more zeros: as PyTorch, double backward (create_graph) then raises RuntimeError.

With ``include_self=False`` self's value survives only where no index points: there the
gradient passes through, elsewhere it is 0. Entries of ``src`` outside ``index``'s extent
take no part and get 0. Built from ember ops (``P`` through scatter_reduce itself), so
double backward works.
"""
from __future__ import annotations

from ...ops import namespace as E
from ..._base.grad_mode import is_grad_enabled


def _touched(self, dim, index):
    """Bool mask of self's shape: True where some index points."""
    return E.zeros(self.shape, dtype=E.bool_, device=self.device).scatter(dim, index, True)


def _region(src, index):
    """The part of ``src`` that index covers (index may be smaller in every dim)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return src[tuple(slice(0, n) for n in index.shape)]


def _pad_to(g, shape):
    """``g`` (index's shape) placed at the start of zeros of ``shape`` (src's)."""
    if tuple(g.shape) == tuple(shape):
        return g
    out = E.zeros(shape, dtype=g.dtype, device=g.device)
    out[tuple(slice(0, n) for n in g.shape)] = g
    return out


def _others_product(x, product, zeros, prod_nonzero):
    """d(group product)/dx for member x of a group whose product is ``product``, with
    ``zeros`` zero members and ``prod_nonzero`` the product of its nonzero members (see the
    module docstring)."""
    nonzero = x != 0
    if is_grad_enabled() and bool(((~nonzero) & (zeros > 1)).any()):
        raise RuntimeError("scatter_reduce(): double backward is unsupported for reduce="
                           "'prod' when two or more zeros are reduced into the same "
                           "position (as PyTorch); the first derivative is exact, so "
                           "backward without create_graph works")
    safe = E.where(nonzero, x, 1.0)  # no 0/0 in the branch where() discards
    return E.where(nonzero, product / safe, E.where(zeros == 1, prod_nonzero, 0.0))


def scatter_reduce_backward(grad, self, dim, index, src, reduce, include_self, result,
                            grad_input_mask=(True, True)):
    """(grad_self, grad_src) of ``self.scatter_reduce(dim, index, src, reduce,
    include_self=include_self)``; shapes: self's and src's."""
    if self.ndim == 0:  # the kernel treats 0-d as (1,); so do the helpers
        g_self, g_src = scatter_reduce_backward(
            grad.reshape(1), self.reshape(1), 0, index.reshape(1), src.reshape(1), reduce,
            include_self, result.reshape(1), grad_input_mask)
        return (None if g_self is None else g_self.reshape(()),
                None if g_src is None else g_src.reshape(()))
    s = _region(src, index)
    if include_self:
        self_part = None
    else:
        self_part = grad.masked_fill(_touched(self, dim, index), 0)
    if reduce == "sum":
        g_self, g_src = grad, grad.gather(dim, index)
    elif reduce == "mean":
        ones = E.ones(index.shape, dtype=grad.dtype, device=grad.device)
        count = E.full(self.shape, 1.0 if include_self else 0.0, dtype=grad.dtype,
                       device=grad.device).scatter_add(dim, index, ones).clamp(min=1)
        g_self, g_src = grad / count, (grad / count).gather(dim, index)
    elif reduce in ("amax", "amin"):
        self_hit = (self == result) if include_self else \
            E.zeros(self.shape, dtype=E.bool_, device=self.device)
        src_hit = s == result.gather(dim, index)
        count = self_hit.to(grad.dtype).scatter_add(dim, index, src_hit.to(grad.dtype))
        share = grad / count.clamp(min=1)
        g_self = E.where(self_hit, share, 0.0)
        g_src = E.where(src_hit, share.gather(dim, index), 0.0)
    else:  # prod
        src_zero = s == 0
        if include_self:
            self_zero = self == 0
            base = self.masked_fill(self_zero, 1)
        else:
            self_zero = E.zeros(self.shape, dtype=E.bool_, device=self.device)
            base = E.ones_like(self)
        zeros = self_zero.to(grad.dtype).scatter_add(dim, index, src_zero.to(grad.dtype))
        prod_nonzero = base.scatter_reduce(dim, index, s.masked_fill(src_zero, 1), "prod")
        g_self = grad * _others_product(self, result, zeros, prod_nonzero)
        g_src = grad.gather(dim, index) * _others_product(
            s, result.gather(dim, index), zeros.gather(dim, index),
            prod_nonzero.gather(dim, index))
    if self_part is not None:
        g_self = self_part
    return (g_self if grad_input_mask[0] else None,
            _pad_to(g_src, src.shape) if grad_input_mask[1] else None)
