"""``ember.linalg``: PyTorch's ``torch.linalg`` under its short names.

Each name is the op declared as ``linalg_<name>`` in ``ops/native_functions.yaml`` (the
``torch.linalg`` section): ``inv``, ``solve``, ``det``, ``slogdet``, ``cholesky``, ``qr``,
``eigh`` and ``svd`` have kernels (``backends/kernels/factorizations.py``) and derivatives
(``autograd/formulas/_linalg.py``); the rest are composites written here over ember ops,
so autograd and tracing see through them. Matrices are batched over leading dims
``(*, m, n)``, float32/float64. ``LinAlgError`` (a RuntimeError) is what a singular or
non-positive-definite input raises.

    >>> A = ember.tensor([[4.0, 1.0], [1.0, 3.0]])
    >>> ember.linalg.solve(A, ember.tensor([1.0, 2.0]))    # A x = b
    >>> ember.linalg.matrix_norm(A, ord=2)                  # the largest singular value
"""
from __future__ import annotations

import math

import numpy as np

import ember as E

from .backends.kernels.factorizations import LinAlgError
from .dispatch import wrap_dim
from .errors import DtypeError, ShapeError
from .ops.composite import composite
from .types import to_scalar_type

__all__ = ["LinAlgError", "inv", "solve", "det", "slogdet", "cholesky", "qr", "eigh",
           "eigvalsh", "svd", "svdvals", "vector_norm", "matrix_norm", "norm", "pinv",
           "matrix_rank", "matrix_power", "multi_dot", "cross"]


def _need_matrix(op: str, A, square: bool = False) -> None:
    if A.ndim < 2:
        raise ShapeError(f"{op}: The input tensor A must have at least 2 dimensions, got shape "
                         f"{list(A.shape)}; expected (*, m, n)")
    if square and A.shape[-1] != A.shape[-2]:
        raise ShapeError(f"{op}: A must be batches of square matrices, but they are "
                         f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _need_float(op: str, A, dtype=None):
    """``A`` cast to ``dtype`` (which may only widen, as in norm), checked floating."""
    if not A.is_floating_point():
        raise DtypeError(f"{op}: Expected a floating point tensor as input. Got "
                         f"{A.dtype.name}; convert with .double() or .float()")
    if dtype is None:
        return A
    dt = to_scalar_type(dtype)
    if dt is not A.dtype:
        if not dt.is_floating_point or dt.itemsize < A.dtype.itemsize:
            raise DtypeError(f"{op}: the input dtype {A.dtype.name} should be convertible "
                             f"without narrowing to the specified dtype {dt.name}")
        A = A.to(dt)
    return A


# ==== norms =====================================================================================

@composite("linalg_vector_norm")
def _vector_norm(self, ord=2, dim=None, keepdim=False, dtype=None):
    return E.norm(self, ord, dim, keepdim, dtype=dtype)


def _matrix_norm(self, ord, dim, keepdim, dtype):
    op = "linalg.matrix_norm"
    _need_matrix(op, self)
    dims = [wrap_dim(d, self.ndim, op) for d in ([dim] if isinstance(dim, int) else dim)]
    if len(dims) != 2 or dims[0] == dims[1]:
        raise ShapeError(f"{op}: dim must be a 2-tuple of different dims, got {dim}")
    A = _need_float(op, self, dtype)
    d0, d1 = dims
    if ord == "fro":
        r = E.norm(A, 2, dims, True)
    elif ord == "nuc" or ord in (2, -2):
        s = E.linalg_svdvals(A.movedim((d0, d1), (-2, -1)))
        r = s.sum(-1) if ord == "nuc" else s.amax(-1) if ord == 2 else s.amin(-1)
        r = r.unsqueeze(-1).unsqueeze(-1).movedim((-2, -1), (d0, d1))
    elif ord in (1, -1, math.inf, -math.inf):
        inner, outer = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(inner, keepdim=True)
        r = sums.amax(outer, keepdim=True) if ord > 0 else sums.amin(outer, keepdim=True)
    else:
        raise ValueError(f"{op}: Order {ord} not supported; expected 'fro', 'nuc', 1, -1, 2, "
                         f"-2, inf or -inf")
    if not keepdim:
        r = r.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    return r


@composite("linalg_matrix_norm.str_ord")
def _matrix_norm_str(self, ord="fro", dim=(-2, -1), keepdim=False, dtype=None):
    if ord not in ("fro", "nuc"):
        raise ValueError(f"linalg.matrix_norm: Order {ord} not supported; expected 'fro', "
                         f"'nuc' or a number")
    return _matrix_norm(self, ord, dim, keepdim, dtype)


@composite("linalg_matrix_norm")
def _matrix_norm_scalar(self, ord, dim=(-2, -1), keepdim=False, dtype=None):
    return _matrix_norm(self, ord, dim, keepdim, dtype)


def _norm(self, ord, dim, keepdim, dtype):
    op = "linalg.norm"
    if dim is not None:
        dim = [dim] if isinstance(dim, int) else list(dim)
    if dim is None:
        if ord is None:
            return E.norm(self, 2, None, keepdim, dtype=dtype)
        if self.ndim not in (1, 2):
            raise ShapeError(f"{op}: If dim is not specified but ord is, the input must be 1D "
                             f"or 2D. Got {self.ndim}D.")
        dim = list(range(self.ndim))
    if len(dim) == 1 and not isinstance(ord, str):
        return E.norm(self, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return _matrix_norm(self, "fro" if ord is None else ord, dim, keepdim, dtype)
    raise ShapeError(f"{op}: If dim is specified, it must be of length 1 or 2 (2 for ord="
                     f"{ord!r}). Got {dim}")


@composite("linalg_norm.ord_str")
def _norm_str(self, ord, dim=None, keepdim=False, dtype=None):
    return _norm(self, ord, dim, keepdim, dtype)


@composite("linalg_norm")
def _norm_scalar(self, ord=None, dim=None, keepdim=False, dtype=None):
    return _norm(self, ord, dim, keepdim, dtype)


# ==== spectra, pseudo-inverse, rank =============================================================

@composite("linalg_svdvals")
def _svdvals(A):
    return E.linalg_svd(A, False)[1]


@composite("linalg_eigvalsh")
def _eigvalsh(self, UPLO="L"):
    return E.linalg_eigh(self, UPLO)[0]


def _spectrum(op, A, hermitian):
    """(values whose magnitudes are compared with the tolerance, the tolerance's scale)."""
    _need_matrix(op, A, square=hermitian)
    _need_float(op, A)
    if hermitian:
        w, V = E.linalg_eigh(A)
        return w, w.abs(), V
    U, S, Vh = E.linalg_svd(A, False)
    return (U, Vh), S, None


def _tolerance(A, mags, atol, rtol):
    """max(atol, rtol * max magnitude), (*, 1); rtol as torch.linalg.pinv's default."""
    if rtol is None:
        rtol = 0.0 if atol is not None and atol > 0 else \
            E.finfo(A.dtype).eps * max(A.shape[-2], A.shape[-1])
    top = mags.amax(-1, keepdim=True) if mags.shape[-1] else E.zeros_like(mags[..., :1])
    return E.clamp(top.detach() * rtol, min=0.0 if atol is None else atol)


@composite("linalg_pinv.atol_rtol_float")
def _pinv(self, atol=None, rtol=None, hermitian=False):
    op = "linalg.pinv"
    factors, mags, V = _spectrum(op, self, hermitian)
    keep = mags > _tolerance(self, mags, atol, rtol)
    vals = factors if hermitian else mags
    inv = E.where(keep, 1.0 / E.where(keep, vals, E.ones_like(vals)), E.zeros_like(vals))
    if hermitian:
        return (V * inv.unsqueeze(-2)) @ V.mT
    U, Vh = factors
    return (Vh.mT * inv.unsqueeze(-2)) @ U.mT


@composite("linalg_matrix_rank.atol_rtol_float")
def _matrix_rank(self, atol=None, rtol=None, hermitian=False):
    with E.no_grad():
        _, mags, _ = _spectrum("linalg.matrix_rank", self, hermitian)
        return (mags > _tolerance(self, mags, atol, rtol)).sum(-1)


# ==== products ==================================================================================

@composite("linalg_matrix_power")
def _matrix_power(self, n):
    _need_matrix("linalg.matrix_power", self, square=True)
    if n == 0:
        eye = E.eye(self.shape[-1], dtype=self.dtype, device=self.device)
        return eye.expand(self.shape).clone()
    base = E.linalg_inv(self) if n < 0 else self
    n, result = abs(n), None
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def _chain_order(dims):
    """split[i][j]: where the cheapest product of matrices i..j splits (CLRS 15.2)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1], k)
                for k in range(i, j))
    return split


@composite("linalg_multi_dot")
def _multi_dot(tensors):
    op = "linalg.multi_dot"
    n = len(tensors)
    if n < 2:
        raise ValueError(f"{op}: expected at least 2 tensors but got {n}")
    mats = list(tensors)
    for i, t in enumerate(mats):
        ok = (1, 2) if i in (0, n - 1) else (2,)
        if t.ndim not in ok:
            raise ShapeError(f"{op}: tensor {i} must be {' or '.join(f'{d}D' for d in ok)} but "
                             f"got {t.ndim}D")
    first_1d, last_1d = mats[0].ndim == 1, mats[-1].ndim == 1
    if first_1d:
        mats[0] = mats[0].unsqueeze(0)
    if last_1d:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i].shape[1] != mats[i + 1].shape[0]:
            raise ShapeError(f"{op}: tensors {i} and {i + 1} with shapes "
                             f"{list(tensors[i].shape)} and {list(tensors[i + 1].shape)} "
                             f"cannot be multiplied")
    split = _chain_order([mats[0].shape[0]] + [m.shape[1] for m in mats])

    def product(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return product(i, k) @ product(k + 1, j)

    r = product(0, n - 1)
    if first_1d:
        r = r.squeeze(0)
    if last_1d:
        r = r.squeeze(-1)
    return r


@composite("linalg_cross")
def _cross(self, other, dim=-1):
    try:
        shape = np.broadcast_shapes(tuple(self.shape), tuple(other.shape))
    except ValueError:
        raise ShapeError(f"linalg.cross: the shapes {list(self.shape)} and "
                         f"{list(other.shape)} do not broadcast") from None
    d = wrap_dim(dim, len(shape), "linalg.cross")
    sizes = [x.shape[i] if i >= 0 else 1 for x in (self, other)
             for i in (d - len(shape) + x.ndim,)]
    if sizes != [3, 3]:
        raise ShapeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                         f"{sizes[0]} and {sizes[1]}")
    a, b = self.expand(shape), other.expand(shape)
    return a.roll(-1, d) * b.roll(-2, d) - a.roll(-2, d) * b.roll(-1, d)


# ==== torch's top-level spellings ===============================================================

@composite("det")
def _det(self):
    return E.linalg_det(self)


@composite("logdet")
def _logdet(self):
    sign, logabsdet = E.linalg_slogdet(self)
    return E.where(sign < 0, math.nan, logabsdet)


@composite("slogdet")
def _slogdet(self):
    return E.linalg_slogdet(self)


@composite("inverse")
def _inverse(self):
    return E.linalg_inv(self)


@composite("matrix_power")
def _matrix_power_top(self, n):
    return E.linalg_matrix_power(self, n)


@composite("pinverse")
def _pinverse(self, rcond=1e-15):
    return E.linalg_pinv(self, rtol=rcond)


# ==== the namespace =============================================================================

inv = E.linalg_inv
solve = E.linalg_solve
det = E.linalg_det
slogdet = E.linalg_slogdet
cholesky = E.linalg_cholesky
qr = E.linalg_qr
eigh = E.linalg_eigh
eigvalsh = E.linalg_eigvalsh
svd = E.linalg_svd
svdvals = E.linalg_svdvals
vector_norm = E.linalg_vector_norm
matrix_norm = E.linalg_matrix_norm
norm = E.linalg_norm
pinv = E.linalg_pinv
matrix_rank = E.linalg_matrix_rank
matrix_power = E.linalg_matrix_power
multi_dot = E.linalg_multi_dot
cross = E.linalg_cross
