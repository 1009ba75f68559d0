"""Samplers with no ember op behind them: the standard gamma (Marsaglia & Tsang's
squeeze-rejection method) and the binomial (Knuth's beta-splitting recursion).

Both are written in ember ops under ``no_grad`` (so they run on any backend and draw from
ember's generators: ``ember.manual_seed`` repeats them), computing in float64 and casting
back. They are not reparameterized: torch's Gamma/Beta/Dirichlet ``rsample`` differentiate
the draw implicitly (``_standard_gamma_grad``); ember has no such gradient yet, so those
distributions have ``has_rsample = False``.

References: G. Marsaglia, W. W. Tsang, "A simple method for generating gamma variables",
ACM TOMS 26(3), 2000 (with the ``U^(1/alpha)`` boost for ``alpha < 1``); D. E. Knuth,
TAOCP vol. 2, 3.4.1 (binomial from a beta order statistic).
"""
from __future__ import annotations

import math

from ..ops import namespace as E
from .._base.grad_mode import no_grad

_MAX_ROUNDS = 200  # each round accepts >= 95% of what is left: 200 rounds never run out
_BERNOULLI_SUM_MAX = 16  # counts at most this large are summed from Bernoulli draws


def _open_uniform(shape, device):
    return E.empty(shape, dtype=E.float64, device=device).uniform_(
        E.finfo(E.float64).tiny, 1.0)


def _standard_gamma64(alpha):
    """Gamma(alpha, 1) draws in float64 (``alpha`` float64, > 0; NaN where it is not)."""
    shape, device = alpha.shape, alpha.device
    boost = alpha < 1
    a = E.where(boost, alpha + 1, alpha)
    d = a - 1.0 / 3.0
    c = (9 * d).rsqrt()
    out = E.full(shape, math.nan, dtype=E.float64, device=device)
    done = ~(alpha > 0)  # NaN or non-positive: never accepted, left NaN
    for _ in range(_MAX_ROUNDS):
        if bool(done.all()):
            break
        z = E.randn(shape, dtype=E.float64, device=device)
        log_u = _open_uniform(shape, device).log()
        v = (1 + c * z) ** 3
        log_v = v.clamp(min=1e-300).log()
        ok = (v > 0) & (log_u < 0.5 * z * z + d - d * v + d * log_v)
        out = E.where(ok & ~done, d * v, out)
        done = done | ok
    # Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha), in logs so tiny alpha does not underflow
    boosted = (out.log() + _open_uniform(shape, device).log() / alpha).exp()
    return E.where(boost, boosted, out)


def standard_gamma(concentration):
    """Draws from Gamma(concentration, rate=1), same shape and dtype as ``concentration``
    (a float Tensor, > 0), clamped below at the dtype's smallest normal number as torch's
    ``_standard_gamma``. Not differentiable (no autograd history)."""
    with no_grad():
        x = _standard_gamma64(concentration.detach().to(E.float64))
        tiny = E.finfo(concentration.dtype).tiny
        return x.to(concentration.dtype).clamp(min=tiny)


def binomial(total_count, probs):
    """Binomial(total_count, probs) draws as floats of ``probs``' dtype; the two Tensors
    have one shape. ``total_count`` holds nonnegative integers, ``probs`` values in [0, 1].

    While a count exceeds ``_BERNOULLI_SUM_MAX``: draw the order statistic ``X ~ Beta(a,
    n + 1 - a)``, ``a = n // 2 + 1``, of ``n`` uniforms; the count below ``p`` is then
    ``Binomial(a - 1, p / X)`` if ``X >= p`` else ``a + Binomial(n - a, (p - X) / (1 -
    X))``, so each round halves ``n``. Small counts sum Bernoulli draws."""
    with no_grad():
        n = total_count.detach().to(E.float64)
        p = probs.detach().to(E.float64)
        acc = E.zeros_like(n)
        while True:
            big = n > _BERNOULLI_SUM_MAX
            if not bool(big.any()):
                break
            a = E.where(big, (n / 2).floor() + 1, 1.0)
            b = E.where(big, n + 1 - a, 1.0)
            ga, gb = _standard_gamma64(a), _standard_gamma64(b)
            x = (ga / (ga + gb)).clamp(min=1e-300, max=1 - 1e-16)
            left = x >= p
            n = E.where(big, E.where(left, a - 1, b - 1), n)
            acc = E.where(big & ~left, acc + a, acc)
            p = E.where(big, E.where(left, p / x, (p - x) / (1 - x)), p).clamp(0, 1)
        k = E.arange(_BERNOULLI_SUM_MAX, dtype=E.float64, device=n.device)
        u = E.rand(tuple(n.shape) + (_BERNOULLI_SUM_MAX,), dtype=E.float64,
                   device=n.device)
        hits = (u < p.unsqueeze(-1)) & (k < n.unsqueeze(-1))
        return (acc + hits.to(E.float64).sum(-1)).to(probs.dtype)
