"""Backward helpers of indexing: ``index_select``, ``gather``, ``take_along_dim``, and
``t[indices]`` / ``t[indices] = v`` (through ``ember/_indexing.py``).
"""
from __future__ import annotations

from ...ops import namespace as E

from ._shape import _with


def index_select_backward(grad, shape, dim, index):
    """``index_select``: the gradient added back at ``index`` (repeats accumulate)."""
    if len(shape) == 0:
        return grad.reshape(())
    view = [1] * len(shape)
    view[dim] = -1
    idx = index.reshape(view).expand(grad.shape)
    return E.zeros(shape, dtype=grad.dtype, device=grad.device).scatter_add(dim, idx, grad)


def gather_backward(grad, shape, dim, index):
    """``gather``: the gradient added back at ``index`` along ``dim``."""
    if len(shape) == 0:
        return grad.reshape(())
    return E.zeros(shape, dtype=grad.dtype, device=grad.device).scatter_add(dim, index, grad)


def take_along_dim_backward(grad, self, indices, dim):
    """``take_along_dim``: gather_backward on the broadcast input (summed back by the
    engine) or, for ``dim=None``, on the flattened input. Negative indices count from
    the end, as in the forward; scatter_add takes only non-negative ones."""
    if dim is None:
        n = self.numel()
        indices = E.where(indices < 0, indices + n, indices)
        flat = E.zeros(n, dtype=grad.dtype, device=grad.device)
        return flat.scatter_add(0, indices.reshape(-1), grad.reshape(-1)).reshape(self.shape)
    indices = E.where(indices < 0, indices + self.shape[dim], indices)
    shape = _broadcast(_with(self.shape, dim, 1), _with(indices.shape, dim, 1))
    idx = indices.expand(_with(shape, dim, indices.shape[dim]))
    full = _with(shape, dim, self.shape[dim])
    return E.zeros(full, dtype=grad.dtype, device=grad.device).scatter_add(dim, idx, grad)


def _broadcast(a, b) -> list:
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + list(a), [1] * (n - len(b)) + list(b)
    return [x if y == 1 else y for x, y in zip(a, b)]


# NOTE: ``indices`` below is a normalized index in either spelling: eager autograd saves
# the kernels' tuple, the JIT's AutogradFormula passes the traced list with Tensors
# (``ember._indexing.kernel_index``, which index_put_normalized applies itself).

def index_backward(grad, shape, indices):
    """``t[indices]``: the gradient put back at ``indices`` (repeats accumulate)."""
    from ..._indexing import index_put_normalized
    z = E.zeros(shape, dtype=grad.dtype, device=grad.device)
    return index_put_normalized(z, indices, grad, accumulate=True)


def index_put_self_backward(grad, indices, accumulate):
    """``t[indices] = v`` w.r.t. ``t``: the overwritten positions get no gradient."""
    if accumulate:
        return grad
    from ..._indexing import index_put_normalized
    return index_put_normalized(grad.clone(), indices, 0.0, accumulate=False)


def index_put_values_backward(grad, indices):
    """``t[indices] = v`` w.r.t. ``v``: the gradient at ``indices`` (summed to ``v``'s shape
    by the engine)."""
    from ..._indexing import basic_index, index_normalized, kernel_index
    indices = kernel_index(indices)
    return index_normalized(grad, indices, basic_index(indices))
