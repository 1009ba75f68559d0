"""Backward helpers of shape and view ops: ``permute``, ``narrow``, ``select``,
``split``/``chunk``, ``unbind``, ``cat``, ``squeeze``, ``repeat``, ``roll``, ``expand``.
"""
from __future__ import annotations

from ...ops import namespace as E

from ._broadcasting import sum_to


def permute_backward(grad, dims):
    """``permute``: the inverse permutation."""
    inv = [0] * len(dims)
    for i, d in enumerate(dims):
        inv[d] = i
    return grad.permute(inv)


def narrow_backward(grad, shape, dim, start, length):
    """``narrow``: the gradient padded with zeros along ``dim`` (by ``cat``); a negative
    ``start`` counts from the end, as in the forward."""
    start = start + shape[dim] if start < 0 else start
    parts = []
    if start > 0:
        parts.append(E.zeros(_with(shape, dim, start), dtype=grad.dtype, device=grad.device))
    parts.append(grad)
    rest = shape[dim] - start - length
    if rest > 0:
        parts.append(E.zeros(_with(shape, dim, rest), dtype=grad.dtype, device=grad.device))
    return E.cat(parts, dim) if len(parts) > 1 else grad


def _with(shape, dim, n):
    s = list(shape)
    s[dim] = n
    return s


def select_backward(grad, shape, dim, index):
    """``select``: the gradient placed back at ``index`` along ``dim``."""
    index = index + shape[dim] if index < 0 else index
    return narrow_backward(grad.unsqueeze(dim), shape, dim, index, 1)


def split_backward(grads, shapes, dim, self_shape, dtype, device):
    """``split``/``chunk``: the pieces' gradients concatenated (zeros for pieces that got
    none)."""
    parts = [g if g is not None else E.zeros(s, dtype=dtype, device=device)
             for g, s in zip(grads, shapes)]
    if not parts:
        return E.zeros(self_shape, dtype=dtype, device=device)
    return E.cat(parts, dim)


def unbind_backward(grads, shape, dim, dtype, device):
    """``unbind``: the slices' gradients stacked (zeros for slices that got none)."""
    piece = _without(shape, dim)
    parts = [g if g is not None else E.zeros(piece, dtype=dtype, device=device) for g in grads]
    if not parts:
        return E.zeros(shape, dtype=dtype, device=device)
    return E.stack(parts, dim)


def _without(shape, dim):
    return [s for i, s in enumerate(shape) if i != dim]


def cat_backward(grad, dim, shapes):
    """``cat``: the gradient cut back into the inputs' extents along ``dim``."""
    out, start = [], 0
    for s in shapes:
        if len(s) == 1 and s[0] == 0:  # a legacy empty input takes no part
            out.append(E.zeros(s, dtype=grad.dtype, device=grad.device))
            continue
        out.append(grad.narrow(dim, start, s[dim]))
        start += s[dim]
    return out


def squeeze_backward(grad, shape):
    """``squeeze``: the gradient reshaped back to the input's ``shape``."""
    return grad.reshape(shape)


def repeat_backward(grad, repeats, shape):
    """``repeat``: sum over the copies: (r0*s0, r1*s1, ...) -> (r0, s0, r1, s1, ...)."""
    lead = len(repeats) - len(shape)
    if lead:
        grad = grad.sum(tuple(range(lead)))
    split = []
    for r, s in zip(repeats[lead:], shape):
        split += [r, s]
    if not split:
        return grad
    g = grad.reshape(split)
    return g.sum(tuple(range(0, len(split), 2)))


def roll_backward(grad, shifts, dims):
    """``roll``: roll back by the negated shifts."""
    return grad.roll([-s for s in shifts], dims)


def expand_backward(grad, shape):
    """``expand``: the gradient summed over the expanded dims, down to ``shape``."""
    return sum_to(grad, shape)
