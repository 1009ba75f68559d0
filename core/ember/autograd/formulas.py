"""Helpers for the backward formulas in ``derivatives.yaml`` (PyTorch's FunctionsManual).

Every helper is written with ember ops, so what it computes is itself differentiable:
that is what makes double backward work. Shapes in the docstrings: ``grad`` has the
forward output's shape; each helper returns a gradient of the forward input's shape
(or one the engine can sum down to it).
"""
from __future__ import annotations

import math

import ember as E

from .fast_formulas import sum_to_kernels as _sum_to_kernels


# --- shapes and broadcasting ---------------------------------------------------------------

def is_expandable_to(shape, desired) -> bool:
    """Whether ``shape`` broadcasts to ``desired`` (so a gradient of ``desired`` sums to it)."""
    n = len(shape)
    if n > len(desired):
        return False
    return shape == desired[len(desired) - n:] or \
        all(s == d or s == 1 for s, d in zip(shape, desired[len(desired) - n:]))


def sum_to(g, shape):
    """Sum ``g`` down to ``shape`` over the dims broadcasting added or stretched."""
    shape = tuple(shape)
    have = g._data.shape
    if have == shape:
        return g
    lead = len(have) - len(shape)
    inner = tuple([i for i, s in enumerate(shape) if s == 1 and have[lead + i] != 1]) \
        if 1 in shape else ()
    fast = _sum_to_kernels(g, lead, inner)  # nothing records: the kernels directly
    if fast is not None:
        return fast
    if lead:
        g = g.sum(tuple(range(lead)))  # the dims broadcasting prepended
    if inner:
        g = g.sum(inner, keepdim=True)  # the size-1 dims it stretched
    return g


def maybe_multiply(g, s):
    """``g * s``, skipping the multiplication for ``s == 1``."""
    return g if (not isinstance(s, E.Tensor) and s == 1) else g * s


def _dims(dim, ndim: int) -> tuple:
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return tuple(range(ndim))
    return (dim,) if isinstance(dim, int) else tuple(dim)


def restore_reduced_dims(g, dim, keepdim: bool, ndim: int):
    """Undo a reduction's squeeze: unsqueeze the reduced dims of ``g`` (size 1), so that
    ``g`` broadcasts against the reduction's input."""
    if keepdim or ndim == 0:
        return g
    dims = sorted(_dims(dim, ndim))
    if dims == list(range(len(dims))):
        return g  # leading (or all) dims: right-aligned broadcasting restores them
    for d in dims:
        g = g.unsqueeze(d)
    return g


def sum_backward(grad, shape, dim, keepdim):
    """``sum(self, dim, keepdim)``: the gradient spread over the summed dims."""
    return restore_reduced_dims(grad, dim, keepdim, len(shape)).expand(shape)


def mean_backward(grad, shape, dim, keepdim):
    """``mean``: ``sum_backward`` divided by the number of elements averaged."""
    n = 1
    for d in _dims(dim, len(shape)):
        n *= shape[d]
    return sum_backward(grad, shape, dim, keepdim) / n


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
    n = 1
    for d in dims:
        n *= self.shape[d]
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
    if p == "nuc":
        raise NotImplementedError("the derivative of the nuclear norm is not implemented")
    g = restore_reduced_dims(grad, dim, keepdim, self.ndim)
    r = restore_reduced_dims(result, dim, keepdim, self.ndim)
    if p == 0:
        return E.zeros_like(self)
    if p == 1:
        return g * self.sign()
    if p == 2:
        return E.where(r == 0, 0.0, g * self / r)
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


def prod_backward(grad, self, dim, keepdim):
    """``prod``: each element's gradient is the product of the others (exact with zeros)."""
    if self.ndim == 0:
        return grad
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
    """``cumprod``: ``sum_{j >= i} grad_j * d out_j / d x_i``. Without zeros this is
    ``revcumsum(grad * out) / x``; with zeros, the O(n^2) exact form over a (n, n) mask."""
    if self.ndim == 0:
        return grad
    if not bool((self == 0).any()):
        return cumsum_backward(grad * result, dim) / self
    n = self.shape[dim]
    x = self.movedim(dim, -1)
    g = grad.movedim(dim, -1)
    eye = E.eye(n, dtype=E.bool, device=self.device)
    rows = E.where(eye, 1.0, x.unsqueeze(-2)).cumprod(-1)  # row i: x with x_i := 1
    upper = E.tensor([[j >= i for j in range(n)] for i in range(n)], device=self.device)
    out = (rows * upper * g.unsqueeze(-2)).sum(-1)
    return out.movedim(-1, dim)


def softmax_backward(grad, result, dim):
    """``softmax``: ``y * (g - sum(g * y))`` over ``dim``."""
    return result * (grad - (grad * result).sum(dim, keepdim=True))


def log_softmax_backward(grad, result, dim):
    """``log_softmax``: ``g - exp(y) * sum(g)`` over ``dim``."""
    return grad - result.exp() * grad.sum(dim, keepdim=True)


# --- pointwise ---------------------------------------------------------------------------------

def pow_backward_self(grad, self, exponent):
    """``d/dx x^e = e x^(e-1)`` (0 where ``e == 0``, as PyTorch)."""
    if not isinstance(exponent, E.Tensor):
        if exponent == 0:
            return E.zeros_like(grad)
        return grad * exponent * self.pow(exponent - 1)
    return E.where(exponent == 0, 0.0, grad * exponent * self.pow(exponent - 1))


def pow_backward_exponent(grad, self, exponent, result):
    """``d/de x^e = x^e log x`` (0 where ``x == 0`` and ``e >= 0``, as PyTorch)."""
    if not isinstance(self, E.Tensor):
        self = E.tensor(self, dtype=result.dtype, device=result.device)
    cond = (self == 0) & (exponent >= 0)
    return E.where(cond, 0.0, grad * result * self.log())


def gelu_backward(grad, self, approximate):
    """GELU's derivative, exact (erf) or tanh-approximated (Hendrycks & Gimpel, 2016)."""
    if approximate == "tanh":
        k = math.sqrt(2.0 / math.pi)
        inner = k * (self + 0.044715 * self.pow(3))
        t = inner.tanh()
        d_inner = k * (1 + 3 * 0.044715 * self * self)
        return grad * (0.5 * (1 + t) + 0.5 * self * (1 - t * t) * d_inner)
    cdf = 0.5 * (1 + (self * (1 / math.sqrt(2.0))).erf())
    pdf = (-0.5 * self * self).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


def silu_backward(grad, self):
    """``silu(x) = x sigmoid(x)``: ``s (1 + x (1 - s))``."""
    s = self.sigmoid()
    return grad * s * (1 + self * (1 - s))


def clamp_backward(grad, self, min, max):  # noqa: A002 - the op's argument names
    """``clamp``: the gradient where ``min <= self <= max``, 0 elsewhere."""
    mask = E.ones_like(self, dtype=E.bool)
    if min is not None:
        mask = mask & (self >= min)
    if max is not None:
        mask = mask & (self <= max)
    return E.where(mask, grad, 0.0)


def clamp_backward_min(grad, self, min, max):  # noqa: A002
    """``clamp`` w.r.t. ``min``: the gradient where ``min`` was chosen (never when ``min >=
    max``: ``max`` wins that tie, as in PyTorch)."""
    mask = self < min
    if max is not None:
        mask = mask & (min < max)
    return E.where(mask, grad, 0.0)


def clamp_backward_max(grad, self, min, max):  # noqa: A002
    """``clamp`` w.r.t. ``max``: the gradient where ``max`` was chosen (it wins ties with
    ``min``, as in PyTorch)."""
    mask = self > max
    if min is not None:
        mask = mask | (min > max)
    return E.where(mask, grad, 0.0)


def isfinite(x):
    """Elementwise ``isfinite`` from ember ops."""
    return (x == x) & (x.abs() != math.inf)  # noqa: PLR0124 - false for NaN


def maximum_backward(grad, self, other):
    """``maximum(self, other)`` w.r.t. ``self``: ties split the gradient in half; a NaN on
    either side (NaN propagates) passes it to both, as PyTorch."""
    return E.where(self == other, grad / 2, E.where(self < other, 0.0, grad))


def minimum_backward(grad, self, other):
    """``minimum(self, other)`` w.r.t. ``self``: as ``maximum_backward``, mirrored."""
    return E.where(self == other, grad / 2, E.where(self > other, 0.0, grad))


def atan2_backward(grad, self, other):
    """``atan2(self, other)``: ``(other, -self) / (self^2 + other^2)``; 0 at the origin,
    as PyTorch (the angle has no derivative there)."""
    denom = self * self + other * other
    zero = denom == 0
    scale = grad / E.where(zero, 1.0, denom)
    return E.where(zero, 0.0, scale * other), E.where(zero, 0.0, -scale * self)


# --- shapes and views ------------------------------------------------------------------------

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


# --- indexing -------------------------------------------------------------------------------

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


def index_backward(grad, shape, indices):
    """``t[indices]``: the gradient put back at ``indices`` (repeats accumulate)."""
    from .._indexing import index_put_normalized
    z = E.zeros(shape, dtype=grad.dtype, device=grad.device)
    return index_put_normalized(z, indices, grad, accumulate=True)


def index_put_self_backward(grad, indices, accumulate):
    """``t[indices] = v`` w.r.t. ``t``: the overwritten positions get no gradient."""
    if accumulate:
        return grad
    from .._indexing import index_put_normalized
    return index_put_normalized(grad.clone(), indices, 0.0, accumulate=False)


def index_put_values_backward(grad, indices):
    """``t[indices] = v`` w.r.t. ``v``: the gradient at ``indices`` (summed to ``v``'s shape
    by the engine)."""
    from .._indexing import basic_index, index_normalized
    return index_normalized(grad, indices, basic_index(indices))


# --- linear algebra ---------------------------------------------------------------------------

def matmul_backward_self(grad, self, other):
    """``matmul`` w.r.t. ``self``, for every mix of 1-D, 2-D and batched operands."""
    if self.ndim == 2 and other.ndim == 2:
        return grad.mm(other.t())
    if self.ndim == 1 and other.ndim == 1:
        return grad * other
    a_1d, b_1d = self.ndim == 1, other.ndim == 1
    g = grad.unsqueeze(-2) if a_1d else grad
    g = g.unsqueeze(-1) if b_1d else g
    b = other.unsqueeze(-1) if b_1d else other
    ga = g @ b.mT
    ga = sum_to(ga, (1,) + tuple(self.shape) if a_1d else self.shape)
    return ga.reshape(self.shape)


def matmul_backward_other(grad, self, other):
    """``matmul`` w.r.t. ``other``."""
    if self.ndim == 2 and other.ndim == 2:
        return self.t().mm(grad)
    if self.ndim == 1 and other.ndim == 1:
        return grad * self
    a_1d, b_1d = self.ndim == 1, other.ndim == 1
    g = grad.unsqueeze(-2) if a_1d else grad
    g = g.unsqueeze(-1) if b_1d else g
    a = self.unsqueeze(0) if a_1d else self
    gb = a.mT @ g
    gb = sum_to(gb, tuple(other.shape) + (1,) if b_1d else other.shape)
    return gb.reshape(other.shape)


def _einsum_parts(equation: str, n: int):
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise NotImplementedError("einsum backward with '...' is not implemented; spell the "
                                  "dims out with letters")
    lhs, arrow, out = eq.partition("->")
    ins = lhs.split(",")
    if not arrow:
        letters = "".join(ins)
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(ins) != n:
        raise ValueError(f"einsum(): equation {equation!r} has {len(ins)} operands, got {n}")
    return ins, out


def einsum_backward(grad, equation, tensors):
    """``einsum``: operand k's gradient is the einsum of ``grad`` with the other operands
    onto k's subscripts; letters only k has (summed away) are broadcast back."""
    ins, out = _einsum_parts(equation, len(tensors))
    grads = []
    for k, (sub, t) in enumerate(zip(ins, tensors)):
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum backward for repeated subscripts ({sub!r}, a "
                                      f"diagonal) is not implemented")
        others = [(s, x) for j, (s, x) in enumerate(zip(ins, tensors)) if j != k]
        avail = set(out).union(*(set(s) for s, _ in others))
        kept = "".join(c for c in sub if c in avail)
        eq = ",".join([out] + [s for s, _ in others]) + "->" + kept
        g = E.einsum(eq, grad, *[x for _, x in others])
        if kept != sub:
            for i, c in enumerate(sub):
                if c not in avail:
                    g = g.unsqueeze(i)
            g = g.expand(t.shape)
        grads.append(g)
    return grads
