"""Quantities read off the spectrum: ``svdvals``, ``eigvalsh``, ``pinv`` and
``matrix_rank`` (composites over ``linalg_svd`` / ``linalg_eigh``). When no gradient is
wanted, svdvals and eigvalsh (and matrix_rank, cond, matrix_norm(2) through them) ask
LAPACK for the values alone, through the backend's ``xp.linalg``, as PyTorch's kernels
do; the vectors are computed only for autograd."""
from __future__ import annotations

from ..ops import namespace as E
from .._base.grad_mode import is_grad_enabled, no_grad
from ..dispatch import wrap
from .._base.tracing_state import STATE as _tracing
from ..ops.composite import composite
from ._checks import need_float, need_matrix


def _values_only(A) -> bool:
    """Whether only the values are wanted: no gradient will be asked of A (the gradient
    needs the vectors), no trace is open (it must record linalg_svd / linalg_eigh), and
    a float32/float64 A (others keep the ops' dtype errors)."""
    return not (A.requires_grad and is_grad_enabled()) and not _tracing.active and \
        A.dtype in (E.float32, E.float64) and A.ndim >= 2


@composite("linalg_svdvals")
def _svdvals(A):
    if _values_only(A):
        # LAPACK's gesdd without singular vectors: ~3x faster than linalg_svd at 128x128
        backend = A._type.backend
        s = backend.xp.linalg.svd(A._data, compute_uv=False)
        return wrap(s.astype(A._data.dtype, copy=False), backend)
    return E.linalg_svd(A, False)[1]


@composite("linalg_eigvalsh")
def _eigvalsh(self, UPLO="L"):
    if _values_only(self) and UPLO in ("L", "U") and self.shape[-1] == self.shape[-2]:
        # LAPACK's syevd without eigenvectors (~4x faster than linalg_eigh at 128x128)
        backend = self._type.backend
        w = backend.xp.linalg.eigvalsh(self._data, UPLO=UPLO)
        return wrap(w.astype(self._data.dtype, copy=False), backend)
    return E.linalg_eigh(self, UPLO)[0]


def _spectrum(op, A, hermitian):
    """(values whose magnitudes are compared with the tolerance, the tolerance's scale)."""
    need_matrix(op, A, square=hermitian)
    need_float(op, A)
    if hermitian:
        w, V = E.linalg_eigh(A)
        return w, w.abs(), V
    U, S, Vh = E.linalg_svd(A, False)
    return (U, Vh), S, None


def _magnitudes(op, A, hermitian):
    """|eigenvalues| (hermitian) or singular values, without vectors (matrix_rank)."""
    need_matrix(op, A, square=hermitian)
    need_float(op, A)
    return E.linalg_eigvalsh(A).abs() if hermitian else E.linalg_svdvals(A)


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
    with no_grad():
        mags = _magnitudes("linalg.matrix_rank", self, hermitian)
        return (mags > _tolerance(self, mags, atol, rtol)).sum(-1)
