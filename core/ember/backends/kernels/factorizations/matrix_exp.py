"""The matrix exponential by Pade scaling and squaring (Higham 2005, "The scaling and
squaring method for the matrix exponential revisited", SIAM J. Matrix Anal. Appl. 26(4),
alg. 2.3).

For each matrix: the smallest Pade degree m in (3, 5, 7, 9, 13) whose bound theta_m
covers ||A||_1 (float32: m <= 7 with the single-precision thetas of the same paper), else
m = 13 (7) on A / 2^s with the least s that brings the norm under theta, and the result
squared s times. The batch is grouped by (m, s), so every matrix gets its own scaling.
"""
from __future__ import annotations

import math

import numpy as np

from ....types import bfloat16, float16
from .checks import check_matrix

# Higham 2005, table 2.3 (double) and the single-precision column of its table 2.2 / 2.3
_THETA = {np.dtype(np.float64): {3: 1.495585217958292e-2, 5: 2.539398330063230e-1,
                                 7: 9.504178996162932e-1, 9: 2.097847961257068e0,
                                 13: 5.371920351148152e0},
          np.dtype(np.float32): {3: 4.258730016922831e-1, 5: 1.880152677804762e0,
                                 7: 3.925724783138660e0}}


def pade_coefficients(m: int) -> list:
    """b_j of the [m/m] Pade approximant of exp: (2m - j)! m! / ((2m)! j! (m - j)!)."""
    f = math.factorial
    return [f(2 * m - j) * f(m) / (f(2 * m) * f(j) * f(m - j)) for j in range(m + 1)]


def degree_and_scaling(norm: float, thetas: dict) -> tuple:
    """(m, s) for a matrix of 1-norm ``norm`` (non-finite norms: the largest m, s = 0, so
    NaN and inf propagate)."""
    for m, theta in thetas.items():
        if norm <= theta:
            return m, 0
    m_top, theta = list(thetas.items())[-1]
    if not math.isfinite(norm):
        return m_top, 0
    return m_top, max(0, math.ceil(math.log2(norm / theta)))


def kernels(xp) -> dict:

    def pade(a, m):
        """r_m(A) = q_m(A)^-1 p_m(A) for a batch (b, n, n); the odd part U and even part V
        of p_m give p = V + U, q = V - U (Higham 2005, eqs. 2.10-2.11)."""
        b = pade_coefficients(m)
        eye = xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape)
        a2 = xp.matmul(a, a)
        if m == 13:  # the 6-multiplication scheme of Higham 2005, eq. 3.4
            a4 = xp.matmul(a2, a2)
            a6 = xp.matmul(a4, a2)
            u = xp.matmul(a, xp.matmul(a6, b[13] * a6 + b[11] * a4 + b[9] * a2)
                          + b[7] * a6 + b[5] * a4 + b[3] * a2 + b[1] * eye)
            v = (xp.matmul(a6, b[12] * a6 + b[10] * a4 + b[8] * a2)
                 + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * eye)
        else:
            powers = [eye, a2]
            while len(powers) <= m // 2:
                powers.append(xp.matmul(powers[-1], a2))
            u = xp.matmul(a, sum(b[2 * i + 1] * p for i, p in enumerate(powers)))
            v = sum(b[2 * i] * p for i, p in enumerate(powers))
        return xp.linalg.solve(v - u, v + u)

    def linalg_matrix_exp(a):
        check_matrix("linalg.matrix_exp", a, square=True)
        n = a.shape[-1]
        if a.size == 0:
            return a.copy()
        thetas = _THETA[np.dtype(a.dtype)]
        flat = a.reshape((math.prod(a.shape[:-2]), n, n))
        norms = np.asarray(xp.abs(flat).sum(-2).max(-1).tolist(), dtype=np.float64)
        plan = [degree_and_scaling(float(x), thetas) for x in norms]
        out = xp.empty_like(flat)
        for m, s in sorted(set(plan)):
            idx = [i for i, p in enumerate(plan) if p == (m, s)]
            sel = xp.asarray(idx)
            r = pade(flat[sel] / a.dtype.type(2.0 ** s), m)
            for _ in range(s):
                r = xp.matmul(r, r)
            out[sel] = r
        return out.reshape(a.shape)

    return {"linalg_matrix_exp": linalg_matrix_exp}


UNSUPPORTED = {"linalg_matrix_exp": frozenset({float16, bfloat16})}
