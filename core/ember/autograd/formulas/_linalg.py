"""Backward helpers of linear algebra: ``matmul`` (every mix of 1-D, 2-D and batched
operands) and ``einsum``.
"""
from __future__ import annotations

from ...ops import namespace as E

from ..fast_formulas import column_major as _column_major
from ._broadcasting import maybe_multiply, sum_to


def is_column_major(m) -> bool:
    """Whether the 2-D tensor ``m`` is laid out column by column (strides ``(1, rows)``), as
    a weight used through ``weight.t()`` is. A matrix of one row counts as row-major."""
    return _column_major(m._data)


def mm_mat2_backward(grad, mat1, mat2, alpha):
    """``mm``/``addmm`` w.r.t. ``mat2`` (``(k, n)``): ``alpha * mat1.t() @ grad``.

    When ``mat2`` is column-major (``linear``'s ``weight.t()``), the product is computed as
    ``(grad.t() @ mat1).t()``: the same values laid out like ``mat2``, so the ``t`` backward
    hands the weight a row-major gradient that AccumulateGrad keeps instead of copying
    across the transpose. The JIT lowers this source (``jit.symbolic_formulas.HELPERS``,
    where a graph value counts as row-major). Reference: PyTorch's ``mm_mat2_backward``
    (FunctionsManual.cpp).
    """
    if is_column_major(mat2):
        return maybe_multiply(grad.t().mm(mat1).t(), alpha)
    return maybe_multiply(mat1.t().mm(grad), alpha)


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
        return mm_mat2_backward(grad, self, other, 1)
    if self.ndim == 1 and other.ndim == 1:
        return grad * self
    if other.ndim == 2 and self.ndim > 2:
        # a weight shared by every matrix of the batch: one (k, N) @ (N, m) product
        # rather than a batched one summed over the batch (torch folds the same way)
        k, m = other.shape
        return mm_mat2_backward(grad.reshape(-1, m), self.reshape(-1, k), other, 1)
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
    onto k's subscripts; letters only k has (summed away) are broadcast back. A letter
    repeated within an operand (``"ii->i"``, a diagonal) gets its gradient on that
    diagonal: the gradient over the distinct letters, times an identity matrix per repeat
    (torch's einsum backward does the same through ``diagonal``)."""
    ins, out = _einsum_parts(equation, len(tensors))
    free = iter(c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                if c not in equation)
    grads = []
    for k, (sub, t) in enumerate(zip(ins, tensors)):
        uniq = "".join(dict.fromkeys(sub))  # distinct letters, in order
        size = {c: t.shape[sub.index(c)] for c in uniq}
        others = [(s, x) for j, (s, x) in enumerate(zip(ins, tensors)) if j != k]
        avail = set(out).union(*(s for s, _ in others))
        kept = "".join(c for c in uniq if c in avail)
        eq = ",".join([out] + [s for s, _ in others]) + "->" + kept
        g = E.einsum(eq, grad, *[x for _, x in others])
        if kept != uniq:
            for i, c in enumerate(uniq):
                if c not in avail:
                    g = g.unsqueeze(i)
            g = g.expand(tuple(size[c] for c in uniq))
        if uniq != sub:  # repeats: each later occurrence of a letter gets a fresh one
            renamed, eyes, seen = "", [], set()
            for c in sub:
                if c in seen:
                    f = next(free)
                    renamed += f
                    eyes.append((c + f, E.eye(size[c], dtype=g.dtype, device=g.device)))
                else:
                    renamed += c
                    seen.add(c)
            g = E.einsum(",".join([uniq] + [s for s, _ in eyes]) + "->" + renamed, g,
                         *[m for _, m in eyes])
        grads.append(g)
    return grads


# --- torch.linalg -------------------------------------------------------------------------------

def linalg_det_backward(grad, A, det):
    """``linalg.det``: the gradient is the cofactor matrix times grad (PyTorch's
    linalg_det_backward). Invertible A: ``det * A^{-T}``. A singular A (a det of exactly
    0) has cofactors but no inverse: from the SVD A = U S Vh, the cofactors are
    ``det(U) det(Vh) U diag(prod_{j != i} s_j) Vh`` (products without each s_i, made
    from exclusive cumulative products, so no division by a zero singular value)."""
    g = grad.unsqueeze(-1).unsqueeze(-1)
    if not bool((det == 0).any()):
        return (g * det.unsqueeze(-1).unsqueeze(-1)) * E.linalg_inv(A).mT
    U, S, Vh = E.linalg_svd(A)
    one = E.ones_like(S[..., :1])
    left = E.cat([one, S[..., :-1]], -1).cumprod(-1)  # prod_{j < i} s_j
    right = E.cat([S[..., 1:], one], -1).flip(-1).cumprod(-1).flip(-1)  # prod_{j > i}
    sign = (E.linalg_det(U) * E.linalg_det(Vh)).unsqueeze(-1).unsqueeze(-1)
    return g * sign * ((U * (left * right).unsqueeze(-2)) @ Vh)


def linalg_solve_backward(grad, A, B, result, left, grad_input_mask):
    """``X = A^-1 B`` (left) or ``X = B A^-1``: gB = A^-T grad (grad A^-T), gA = -gB X^T
    (-X^T gB); a vector B (torch.linalg.solve's rule) gives gA = -outer(gB, X).
    Giles 2008, "Extended collection of matrix derivative results", sec. 2.3.1."""
    from ...backends.kernels.factorizations import is_vector_rhs
    gB = E.linalg_solve(A.mT, grad, left=left)
    if not grad_input_mask[0]:
        return None, gB
    if is_vector_rhs(A.shape, B.shape):
        gA = -(gB.unsqueeze(-1) * result.unsqueeze(-2))
    else:
        gA = -(gB @ result.mT) if left else -(result.mT @ gB)
    return gA, gB


def cholesky_backward(grad, L, upper):
    """``A = L L^T``: gA = L^-T Phi(L^T gL) L^-1 with Phi the lower triangle, diagonal
    halved, made symmetric (Murray 2016, "Differentiation of the Cholesky decomposition",
    eq. 10; PyTorch's cholesky_backward). Only symmetric perturbations of A are meant."""
    if upper:
        L, grad = L.mT, grad.mT
    P = (L.mT @ grad).tril()
    P = 0.5 * (P + P.tril(-1).mT)
    return E.linalg_solve(L, E.linalg_solve(L.mT, P), left=False)


def linalg_qr_backward(gQ, gR, Q, R, mode):
    """``A = QR`` (m >= n, reduced): gA = (gQ + Q copyltu(M)) R^-T with M = R gR^T - gQ^T Q
    and copyltu(M) = tril(M) + tril(M, -1)^T (Liao, Liu, Wang, Xiang 2019, "Differentiable
    programming tensor networks", sec. on QR; PyTorch's linalg_qr_backward)."""
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "r":
        raise RuntimeError("linalg.qr: the derivative is not implemented when mode='r'; "
                           "call linalg.qr(A, mode='reduced')")
    if m < n or Q.shape[-1] != n:
        raise NotImplementedError(f"linalg.qr: the derivative is implemented for m >= n in "
                                  f"mode 'reduced' only, got A of {m}x{n} in mode {mode!r}")
    gQ = E.zeros_like(Q) if gQ is None else gQ
    gR = E.zeros_like(R) if gR is None else gR
    M = (R @ gR.mT - gQ.mT @ Q).tril()
    M = M + M.tril(-1).mT
    return E.linalg_solve(R.mT, gQ + Q @ M, left=False)


def linalg_eigh_backward(gL, gV, L, V):
    """``A = V diag(L) V^T``: gA = V (diag(gL) + skew(V^T gV) / (L_j - L_i)) V^T with
    skew(X) = (X - X^T) / 2 (Giles 2008, sec. 3.1; PyTorch's linalg_eig_backward). Repeated
    eigenvalues divide by zero: the derivative needs distinct ones."""
    n = L.shape[-1]
    inner = E.zeros_like(V) if gL is None else E.diag_embed(gL)
    if gV is not None:
        VtgV = V.mT @ gV
        gaps = L.unsqueeze(-2) - L.unsqueeze(-1) + E.eye(n, dtype=L.dtype, device=L.device)
        inner = inner + 0.5 * (VtgV - VtgV.mT) / gaps
    return V @ inner @ V.mT


def linalg_svd_backward(gU, gS, gVh, U, S, Vh, full_matrices):
    """``A = U diag(S) Vh``, k = min(m, n) (Townsend 2016, "Differentiating the singular
    value decomposition"; PyTorch's svd_backward, real case):
    gA = U [skew(U^T gU) / E S + S skew(V^T gV) / E + diag(gS)] Vh
    + (I - U U^T) gU S^-1 Vh + U S^-1 gVh (I - V V^T), E_jk = S_k^2 - S_j^2,
    skew(X) = X - X^T. Needs distinct, non-zero singular values. With full_matrices the
    columns past k are not determined by A: they get no gradient."""
    m, n, k = U.shape[-2], Vh.shape[-1], S.shape[-1]
    if full_matrices:
        U, Vh = U.narrow(-1, 0, k), Vh.narrow(-2, 0, k)
        gU = None if gU is None else gU.narrow(-1, 0, k)
        gVh = None if gVh is None else gVh.narrow(-2, 0, k)
    if gU is None and gVh is None:
        return U @ (E.diag_embed(gS) @ Vh)
    gU = E.zeros_like(U) if gU is None else gU
    gVh = E.zeros_like(Vh) if gVh is None else gVh
    V, gV = Vh.mT, gVh.mT
    UtgU, VtgV = U.mT @ gU, V.mT @ gV
    S2 = S * S
    gaps = S2.unsqueeze(-2) - S2.unsqueeze(-1) + E.eye(k, dtype=S.dtype, device=S.device)
    ret = ((UtgU - UtgU.mT) * S.unsqueeze(-2) + S.unsqueeze(-1) * (VtgV - VtgV.mT)) / gaps
    if gS is not None:
        ret = ret + E.diag_embed(gS)
    if m > n:
        gUSinv = gU / S.unsqueeze(-2)
        return (U @ ret + gUSinv - U @ (U.mT @ gUSinv)) @ Vh
    if m < n:
        SinvgVh = gVh / S.unsqueeze(-1)
        return U @ (ret @ Vh + SinvgVh - (SinvgVh @ V) @ Vh)
    return U @ ret @ Vh
