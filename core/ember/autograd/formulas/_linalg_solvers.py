"""Backward helpers of the LU factorization, triangular solves, least squares and the
matrix exponential (``torch.linalg``). Written with ember ops, so each is differentiable
again (double backward), as the package docstring requires.
"""
from __future__ import annotations

from ...ops import namespace as E


def solve_triangular_backward(grad, A, X, upper, left, unitriangular, grad_input_mask):
    """``X = A^-1 B`` (left) or ``B A^-1`` with A triangular: gB = A^-T grad (grad A^-T),
    gA = -gB X^T (-X^T gB) restricted to A's triangle (its strict part when unitriangular:
    the diagonal is not read). Giles 2008, "Extended collection of matrix derivative
    results", sec. 2.3.1, with the triangle as the domain."""
    gB = E.linalg_solve_triangular(A.mT, grad, upper=not upper, left=left,
                                   unitriangular=unitriangular)
    gA = None
    if grad_input_mask[0]:
        gA = -(gB @ X.mT) if left else -(X.mT @ gB)
        off = 1 if unitriangular else 0
        gA = gA.triu(off) if upper else gA.tril(-off)
    return gA, (gB if grad_input_mask[1] else None)


def lu_backward(gL, gU, P, L, U):
    """``A = P L U`` with L (m, k) unit lower and U (k, n) upper, k = min(m, n).

    Square part: with phi = L^-1 P^T dA U^-1 = L^-1 dL + dU U^-1 (strictly lower plus
    upper), gA = P L^-T (tril(L^T gL, -1) + triu(gU U^T)) U^-T. A wide A = P L [U1 U2] adds
    gA2 = P L^-T gU2 and moves -gU2 U2^T into the lower part; a tall A = P [L1; L2] U adds
    gA2 = P gL2 U^-T and moves -L2^T gL2 into the upper part (PyTorch's linalg_lu_backward
    follows the same derivation)."""
    m, n = L.shape[-2], U.shape[-1]
    gL = E.zeros_like(L) if gL is None else gL
    gU = E.zeros_like(U) if gU is None else gU
    if m <= n:
        U1, U2, gU1, gU2 = U[..., :m], U[..., m:], gU[..., :m], gU[..., m:]
        phi = (L.mT @ gL - gU2 @ U2.mT).tril(-1) + (gU1 @ U1.mT).triu()
        phi = E.linalg_solve_triangular(U1.mT, phi, upper=False, left=False)
        rhs = E.cat([phi, gU2], -1)
        return P @ E.linalg_solve_triangular(L.mT, rhs, upper=True, unitriangular=True)
    L1, L2, gL1, gL2 = L[..., :n, :], L[..., n:, :], gL[..., :n, :], gL[..., n:, :]
    phi = (L1.mT @ gL1).tril(-1) + (gU @ U.mT - L2.mT @ gL2).triu()
    phi = E.linalg_solve_triangular(L1.mT, phi, upper=True, unitriangular=True)
    rhs = E.cat([phi, gL2], -2)
    return P @ E.linalg_solve_triangular(U.mT, rhs, upper=False, left=False)


def lu_factor_ex_backward(grad, LU, pivots):
    """``linalg.lu_factor_ex``: the packed gradient split into L's strict lower part and
    U's upper part, then :func:`lu_backward`."""
    k = min(LU.shape[-2], LU.shape[-1])
    P, L, U = E.lu_unpack(LU, pivots)
    return lu_backward(grad[..., :, :k].tril(-1), grad[..., :k, :].triu(), P, L, U)


def lu_unpack_backward(gL, gU, shape):
    """``lu_unpack``: L's strict lower part and U's upper part go back to their places in
    the packed (m, n) matrix (the unit diagonal of L is a constant)."""
    m, n = shape[-2], shape[-1]
    k = min(m, n)
    pad = E.pad  # nn.functional.pad is this op
    g = None
    if gL is not None:
        g = pad(gL.tril(-1), (0, n - k))
    if gU is not None:
        gu = pad(gU.triu(), (0, 0, 0, m - k))
        g = gu if g is None else g + gu
    return g


def pinv_backward(gP, P, A):
    """``P = pinv(A)`` of locally constant rank (Golub & Pereyra 1973, "The
    differentiation of pseudo-inverses and nonlinear least squares problems", eq. 4.12):
    gA = -P^T gP P^T + (I - A P) gP^T P P^T + P^T P gP^T (I - P A)."""
    Pt = P.mT
    K = gP.mT @ (P @ Pt)
    PtPg = (Pt @ P) @ gP.mT
    return -(Pt @ gP @ Pt) + (K - A @ (P @ K)) + (PtPg - (PtPg @ P) @ A)


def lstsq_backward(gX, gres, A, B, X, grad_input_mask):
    """``X = pinv(A) B`` (the least-squares solution of full or locally constant rank):
    gB = pinv(A)^T gX, gA = pinv_backward(gX B^T). The residuals r_j = ||A x_j - b_j||^2
    are stationary in x_j, so they add gA += 2 R diag(g_res) X^T, gB -= 2 R diag(g_res)
    with R = A X - B. PyTorch's linalg_lstsq_backward (which also goes through pinv)."""
    vector = B.ndim == A.ndim - 1
    Bm, Xm = (B.unsqueeze(-1), X.unsqueeze(-1)) if vector else (B, X)
    gXm = E.zeros_like(Xm) if gX is None else (gX.unsqueeze(-1) if vector else gX)
    P = E.linalg_pinv(A)
    gA = pinv_backward(gXm @ Bm.mT, P, A) if grad_input_mask[0] else None
    gB = P.mT @ gXm if grad_input_mask[1] else None
    if gres is not None and gres.numel():
        W = (A @ Xm - Bm) * gres.unsqueeze(-2)
        gA = None if gA is None else gA + 2 * (W @ Xm.mT)
        gB = None if gB is None else gB - 2 * W
    if vector and gB is not None:
        gB = gB.squeeze(-1)
    return gA, gB


def matrix_exp_backward(A, grad):
    """``exp(A)``: the adjoint of the Frechet derivative, L(A^T, grad), read off the upper
    right block of exp([[A^T, grad], [0, A^T]]) (Mathias 1996, "A chain rule for matrix
    functions and applications"; Higham 2008, "Functions of Matrices", thm. 3.6)."""
    n = A.shape[-1]
    At = A.mT.expand(grad.shape)
    M = E.cat([E.cat([At, grad], -1), E.cat([E.zeros_like(At), At], -1)], -2)
    return E.linalg_matrix_exp(M)[..., :n, n:]
