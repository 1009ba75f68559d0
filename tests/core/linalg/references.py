"""numpy float64 references for the ember.linalg tests, written without the code under
test: LU with partial pivoting (Golub & Van Loan alg. 3.4.1, one matrix at a time),
triangular substitution, and exp by its Taylor series."""
from __future__ import annotations

import numpy as np

import ember as E

TOL = {E.float32: {"rtol": 1e-4, "atol": 1e-5}, E.float64: {}}


def t(x, dtype=E.float64, requires_grad=False):
    return E.tensor(np.asarray(x), dtype=dtype, requires_grad=requires_grad)


def well_conditioned(shape, seed=0):
    """Uniform [-1, 1) plus 3 I on the last two dims: |eigenvalues| >= 1 for n <= 4."""
    rng = np.random.default_rng(seed)
    return rng.uniform(-1, 1, shape) + 3 * np.eye(shape[-1], shape[-2]).T


def uniform(shape, seed=0, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, shape)


def lu_reference(a: np.ndarray, pivot: bool = True):
    """(P, L, U, pivots (1-based), info) of one (m, n) matrix, A = P L U."""
    m, n = a.shape
    k = min(m, n)
    u = a.astype(np.float64).copy()
    perm = np.arange(m)
    pivots, info = [], 0
    for j in range(k):
        p = j + int(np.argmax(np.abs(u[j:, j]))) if pivot else j
        u[[j, p]] = u[[p, j]]
        perm[[j, p]] = perm[[p, j]]
        pivots.append(p + 1)
        if u[j, j] == 0:
            info = info or j + 1
            continue
        u[j + 1:, j] /= u[j, j]
        u[j + 1:, j + 1:] -= np.outer(u[j + 1:, j], u[j, j + 1:])
    L = np.tril(u[:, :k], -1) + np.eye(m, k)
    U = np.triu(u[:k, :])
    P = np.eye(m)[:, perm]
    return P, L, U, np.array(pivots, dtype=np.int32), info


def batched(fn, a, *args):
    """``fn`` over the leading dims of ``a``, each output stacked back."""
    flat = a.reshape((-1,) + a.shape[-2:])
    outs = [fn(x, *args) for x in flat]
    return tuple(np.asarray([o[i] for o in outs]).reshape(a.shape[:-2] + np.shape(outs[0][i]))
                 for i in range(len(outs[0])))


def substitute(a: np.ndarray, b: np.ndarray, upper: bool, unit: bool = False) -> np.ndarray:
    """X with A X = B for one triangular A (n, n), by forward or back substitution."""
    n = a.shape[0]
    x = np.zeros_like(b, dtype=np.float64)
    for i in (range(n - 1, -1, -1) if upper else range(n)):
        s = b[i] - a[i] @ x
        x[i] = s if unit else s / a[i, i]
    return x


def expm_taylor(a: np.ndarray, terms: int = 60) -> np.ndarray:
    """exp(A) by its Taylor series after scaling by 2^s so that ||A||_1 / 2^s < 0.5, then
    squaring: converges to float64 accuracy for every norm the tests use."""
    s = max(0, int(np.ceil(np.log2(max(np.abs(a).sum(-2).max(), 1e-300) / 0.5))))
    x = a / 2.0 ** s
    out = np.broadcast_to(np.eye(a.shape[-1]), a.shape).copy()
    term = out.copy()
    for j in range(1, terms):
        term = term @ x / j
        out = out + term
    for _ in range(s):
        out = out @ out
    return out
