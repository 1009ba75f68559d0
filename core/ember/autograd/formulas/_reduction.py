"""Backward helpers of the reductions (``sum``, ``mean``, ``max``/``min``/``amax``,
``sort``/``topk``, ``var``/``std``, ``norm``, ``logsumexp``, ``prod``), of the scans
(``cumsum``, ``cumprod``) and of ``softmax``/``log_softmax``.
"""
from __future__ import annotations

import math

from ...ops import namespace as E
from ..._base.grad_mode import is_grad_enabled

from ._broadcasting import _dims, restore_reduced_dims


def sum_backward(grad, shape, dim, keepdim):
    """``sum(self, dim, keepdim)``: the gradient spread over the summed dims."""
    return restore_reduced_dims(grad, dim, keepdim, len(shape)).expand(shape)


def mean_backward(grad, shape, dim, keepdim):
    """``mean``: ``sum_backward`` divided by the number of elements averaged."""
    return sum_backward(grad, shape, dim, keepdim) / _reduced_numel(shape, dim)


def _reduced_numel(shape, dim) -> int:
    """The number of elements each output of a reduction over ``dim`` combines; a 0-d
    tensor's dim 0 (or -1) holds its one element, as PyTorch treats it."""
    n = 1
    for d in _dims(dim, len(shape)):
        n *= shape[d] if shape else 1
    return n


def evenly_distribute_backward(grad, self, result):
    """Full ``max``/``min``: the gradient shared evenly among the elements that tie; for a
    NaN result, among the NaNs (as PyTorch)."""
    mask = (self == result) | (_isnan(self) & _isnan(result))
    return grad * mask / mask.sum()


def _isnan(x):
    return x != x  # noqa: PLR0124 - NaN is the one value unequal to itself


def amax_backward(grad, self, result, dim, keepdim):
    """``amax``/``amin``: like ``evenly_distribute_backward`` per reduced slice."""
    g = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    r = restore_reduced_dims(result, dim, keepdim, self.ndim)
    mask = self == r
    return g * mask / mask.sum(_dims(dim, self.ndim), keepdim=True)


def value_selecting_reduction_backward(grad, dim, indices, shape, keepdim):
    """``max.dim``, ``sort``, ``topk``: the gradient scattered back to the chosen indices."""
    if len(shape) == 0:
        return grad.reshape(())
    g = grad if keepdim else grad.unsqueeze(dim)
    i = indices if keepdim else indices.unsqueeze(dim)
    return E.zeros(shape, dtype=grad.dtype, device=grad.device).scatter(dim, i, g)


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 0 if unbiased is False else 1


def var_backward(grad, self, dim, unbiased, keepdim, correction):
    """``var``: ``2 (x - mean) / (N - correction)``, times the restored gradient."""
    dims = _dims(dim, self.ndim)
    n = _reduced_numel(self.shape, dim)
    c = _correction(unbiased, correction)
    g = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    # NOTE: no degrees of freedom (n == c) makes the forward NaN; IEEE 2/0 = inf keeps the
    # gradient NaN too, where Python's 2.0 / 0 would raise ZeroDivisionError.
    scale = 2.0 / (n - c) if n != c else math.inf
    return g * scale * (self - self.mean(dims, keepdim=True))


def std_backward(grad, self, result, dim, unbiased, keepdim, correction):
    """``std``: ``var_backward`` of ``grad / (2 std)``, 0 where std is 0 (as PyTorch)."""
    g = E.where(result == 0, 0.0, grad / (2 * result))
    return var_backward(g, self, dim, unbiased, keepdim, correction)


def norm_backward(grad, self, p, result, dim, keepdim):
    """``norm(self, p, dim)`` for p in {0, 1, 2, inf, -inf, other}; 'fro' is p=2."""
    p = 2.0 if p is None or p == "fro" else p
    g = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    if p == "nuc":  # the sum of the singular values: U @ Vh of the reduced SVD
        d0, d1 = _dims(dim, self.ndim) if dim is not None else (0, 1)
        U, _, Vh = E.linalg_svd(self.movedim((d0, d1), (-2, -1)), full_matrices=False)
        return g * (U @ Vh).movedim((-2, -1), (d0, d1))
    r = restore_reduced_dims(result, dim, keepdim, self.ndim)
    if p == 0:
        return E.zeros_like(self)
    if p == 1:
        return g * self.sign()
    if p == 2:  # scaled on the reduced shape first: one full-size multiply (as PyTorch)
        return self * E.where(r == 0, 0.0, g / r)
    if math.isinf(p):
        mask = self.abs() == r
        return g * self.sign() * mask / mask.sum(_dims(dim, self.ndim), keepdim=True)
    # x |x|^(p-2) is 0 * inf at x == 0 for p < 2: written as sign(x) |x|^(p-1) there, and
    # for p < 1 (an infinite slope at 0) set to 0, as PyTorch's linalg_vector_norm_backward
    if p < 1:
        scaled = E.where(self == 0, 0.0, self.sign() * self.abs().pow(p - 1))
        return scaled * g * r.pow(1 - p)
    scaled = self.sign() * self.abs().pow(p - 1) if p < 2 else self * self.abs().pow(p - 2)
    return scaled * E.where(r == 0, 0.0, g / r.pow(p - 1))


def logsumexp_backward(grad, self, result, dim, keepdim):
    """``logsumexp``: the gradient weighted by ``softmax(self)`` over ``dim``."""
    g = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    r = restore_reduced_dims(result, dim, keepdim, self.ndim)
    return g * (self - r).exp()


def _exclusive_products(x, dim):
    """For each element, the product of the other elements along ``dim`` (zeros allowed):
    exclusive cumulative products from the left times those from the right."""
    n = x.shape[dim]
    ones = E.ones_like(x.narrow(dim, 0, 1))
    left = E.cat([ones, x.narrow(dim, 0, n - 1).cumprod(dim)], dim) if n > 1 else ones
    xr = x.flip([dim])
    right = E.cat([ones, xr.narrow(dim, 0, n - 1).cumprod(dim)], dim) if n > 1 else ones
    return left * right.flip([dim])


def prod_backward(grad, self, result, dim, keepdim):
    """``prod``: each element's gradient is the product of the others: ``result / self``
    when no element is 0 (PyTorch's prod_backward; one rounding more than the product),
    else exclusive products from both sides (exact with zeros)."""
    if self.ndim == 0:
        return grad
    if not bool((self == 0).any()):
        if dim is None:
            return grad * (result / self)
        return restore_reduced_dims(grad * result, dim, keepdim, self.ndim) / self
    if dim is None:
        flat = self.reshape(-1)
        return (grad * _exclusive_products(flat, 0)).reshape(self.shape)
    g = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    return g * _exclusive_products(self, dim)


def cumsum_backward(grad, dim):
    """``cumsum``: reversed cumulative sum of the gradient."""
    if grad.ndim == 0:
        return grad
    return grad.flip([dim]).cumsum(dim).flip([dim])


def cumprod_backward(grad, self, dim, result):
    """``cumprod``: ``grad_i = sum_{j >= i} grad_j * d out_j / d x_i`` (PyTorch's
    cumprod_backward). Without zeros this is ``revcumsum(grad * out) / x``. With zeros:

    * first order (grad mode off), O(n) per slice with its first zero at k: for i < k the
      same sum stopped before k, over ``x`` with the zeros from k on set to 1; at k,
      ``sum_{j >= k} grad_j * out_{k-1} * prod_{k < l <= j} x_l`` (the cumulative product
      with x_k := 1); after k, 0 (x_k stays a factor of every d out_j / d x_i);
    * create_graph (grad mode on), the O(n^2) polynomial form over a (n, n) mask, whose
      own derivative is right: the first-order form drops terms that are 0 at x_k = 0
      but whose slope in x_k is not (PyTorch also switches forms there).
    """
    if self.ndim == 0:
        return grad
    zero = self == 0
    if not bool(zero.any()):
        return cumsum_backward(grad * result, dim) / self
    if is_grad_enabled():
        return _cumprod_backward_quadratic(grad, self, dim)
    seen = zero.cumsum(dim)  # zeros at or before each position
    before = seen == 0
    first = zero & (seen == 1)
    head = cumsum_backward(E.where(before, grad * result, 0.0), dim) / E.where(before, self,
                                                                                 1.0)
    tail = grad * E.where(first, 1.0, self).cumprod(dim)
    at_k = E.where(before, 0.0, tail).sum(dim, keepdim=True)
    return E.where(before, head, 0.0) + E.where(first, at_k, 0.0)


def _cumprod_backward_quadratic(grad, self, dim):
    """``cumprod_backward`` as a polynomial in ``self``: row i of a (n, n) matrix holds the
    cumulative product of x with x_i := 1, masked to j >= i and weighted by grad_j."""
    n = self.shape[dim]
    x = self.movedim(dim, -1)
    g = grad.movedim(dim, -1)
    eye = E.eye(n, dtype=E.bool, device=self.device)
    rows = E.where(eye, 1.0, x.unsqueeze(-2)).cumprod(-1)  # row i: x with x_i := 1
    upper = E.ones((n, n), dtype=E.bool, device=self.device).triu()
    out = (rows * upper * g.unsqueeze(-2)).sum(-1)
    return out.movedim(-1, dim)


def softmax_backward(grad, result, dim):
    """``softmax``: ``y * (g - sum(g * y))`` over ``dim``."""
    return result * (grad - (grad * result).sum(dim, keepdim=True))


def log_softmax_backward(grad, result, dim):
    """``log_softmax``: ``g - exp(y) * sum(g)`` over ``dim``."""
    return grad - result.exp() * grad.sum(dim, keepdim=True)


def nansum_backward(grad, self, dim, keepdim):
    """``nansum``: ``sum_backward`` where ``self`` is not NaN, 0 at the NaNs."""
    return sum_backward(grad, self.shape, dim, keepdim) * (self == self)  # noqa: PLR0124


def cummaxmin_backward(grad, self, indices, dim):
    """``cummax``/``cummin``: each gradient added to the element its running extremum came
    from (PyTorch's cummaxmin_backward)."""
    if self.ndim == 0:
        return grad
    return E.zeros(self.shape, dtype=grad.dtype, device=grad.device).scatter_add(dim, indices,
                                                                                  grad)
