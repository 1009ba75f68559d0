"""Quantities read off the spectrum: ``svdvals``, ``eigvalsh``, ``pinv`` and
``matrix_rank`` (composites over ``linalg_svd`` / ``linalg_eigh``)."""
from __future__ import annotations

import ember as E

from ..ops.composite import composite
from ._checks import need_float, need_matrix


@composite("linalg_svdvals")
def _svdvals(A):
    return E.linalg_svd(A, False)[1]


@composite("linalg_eigvalsh")
def _eigvalsh(self, UPLO="L"):
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
