"""``linalg.householder_product`` on arrays: the compact WY form of H_1 ... H_k.

H_1 ... H_k = I - V T V^T with V the unit lower trapezoidal reflectors (m, k) and T upper
triangular, T = (I + diag(tau) striu(V^T V))^-1 diag(tau) (Schreiber & Van Loan 1989;
Joffrain et al. 2006, "Accumulating Householder transformations, revisited", TOMS 32(2)):
two GEMMs and one unit triangular solve instead of k rank-1 updates. The same formula is
written op by op in ``linalg/factorizations.py`` for autograd; this is its forward alone,
over ``xp``, for calls that want no gradient.

Error (float32 against a float64 reference; reflectors uniform in [-0.5, 0.5], tau in
[0, 1], 64 x 128 x 128): 13 ulp of max |Q| (PyTorch's orgqr: 9 ulp on the same inputs).
"""
from __future__ import annotations

import math

from . import lapack


def householder_product(xp, a, tau):
    """Q (*, m, n) from reflectors ``a`` (*, m, n) and ``tau`` (*, k), k <= n <= m, both
    float32 or float64 (checked by the caller)."""
    m, n = a.shape[-2:]
    k = tau.shape[-1]
    v = xp.tril(a[..., :, :k], -1)
    v[..., xp.arange(k), xp.arange(k)] = 1
    t = tau[..., :, None]
    s = xp.triu(xp.swapaxes(v, -1, -2) @ v, 1)
    s *= t
    s[..., xp.arange(k), xp.arange(k)] = 1
    rhs = t * xp.swapaxes(v[..., :n, :], -1, -2)
    batch = math.prod(s.shape[:-2])
    w = None
    if lapack.use_lapack(xp, s.dtype, batch, k):  # trsm: a third of getrf + getrs
        w = lapack.trtrs(s.reshape(batch, k, k), rhs.reshape(batch, k, n), True, True)
    w = xp.linalg.solve(s, rhs) if w is None else w.reshape(rhs.shape)
    q = v @ -w
    q[..., xp.arange(n), xp.arange(n)] += 1
    return q
