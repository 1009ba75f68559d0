"""Sampling kernels: the in-place random fills (``normal_``, ``uniform_``, ``bernoulli_``,
``exponential_``, ``geometric_``, ``log_normal_``, ``cauchy_``, ``random_``) and the sampling
ops ``bernoulli``, ``normal``, ``poisson`` and ``multinomial``.

``rng`` is the backend generator that ``ember.random`` hands out (``numpy.random.Generator``
on cpu, ``ember_cuda.rng.CudaGenerator`` on cuda). The kernels call only its
``random(size)``, ``standard_normal(size)`` and ``integers(low, high, size, dtype)``, which
every backend has; the other distributions are transforms of these: inverse CDFs for the
exponential, geometric and Cauchy, Knuth's multiplication method (rate < 10) and Hoermann's
PTRS rejection sampler (rate >= 10) for the Poisson, exponential races for multinomial
sampling without replacement. Draws are float64, cast to the tensor's dtype on the write.

Every kernel validates its arguments (and, for tensor parameters, their values) before it
draws or writes, so a failed call leaves ``self`` and the generator as they were. Errors
follow PyTorch's: RuntimeError for bad parameters, DtypeError (a RuntimeError) for a
continuous distribution asked of an integer tensor.
Reference: PyTorch ``aten/src/ATen/native/Distributions.cpp``; W. Hoermann, "The
transformed rejection method for generating Poisson random variables" (1993).
"""
from __future__ import annotations

import math

import numpy as np  # host-side dtype facts only; arrays go through xp

from ...errors import DtypeError, ShapeError
from .copying import _FLOAT_MAX
from .shape import check_broadcast_to

# Significand bits per floating dtype: random_() draws integers in [0, 2**digits] there,
# every one of which the dtype holds exactly (PyTorch's rule).
_DIGITS = {"float16": 11, "bfloat16": 8, "float32": 24, "float64": 53}
_MAX_CATEGORIES = 2 ** 24


def _need_float(op: str, a, what: str = "self") -> None:
    if a.dtype.name not in _DIGITS:
        raise DtypeError(f"{op}(): expected a floating-point '{what}' (a continuous "
                         f"distribution), got {a.dtype.name}; convert it with .float() first")


def _bad(op: str, expected: str, got: str) -> RuntimeError:
    return RuntimeError(f"{op}(): expected {expected}, but got {got}")


def _int_range(dtype) -> tuple:
    """(lowest, highest) value of an integer or bool numpy dtype, both inclusive."""
    if dtype.name == "bool":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _random_bounds(op: str, dtype, lo: int, hi: int | None) -> tuple:
    """[lo, hi) checked against ``dtype`` (hi None: up to the dtype's own limit,
    inclusive), as the half-open integer range to draw from."""
    name = dtype.name
    if name in _DIGITS:
        top, limit = 2 ** _DIGITS[name], _FLOAT_MAX[name]
        lowest = -limit
    else:
        lowest, top = _int_range(dtype)
        limit = top
    if hi is None:
        hi = top + 1
        if lo > top:
            raise _bad(op, f"'from' <= {top}, the largest value random_ draws for {name}",
                       f"from={lo}")
    if lo >= hi:
        raise RuntimeError(f"{op}(): expects 'from' to be less than 'to', but got from={lo} "
                           f">= to={hi}; pass from < to")
    if not lowest <= lo <= limit:
        raise _bad(op, f"'from' within {name}'s range [{lowest}, {limit}]", f"from={lo}")
    if not lowest <= hi - 1 <= limit:
        raise _bad(op, f"'to - 1' within {name}'s range [{lowest}, {limit}]", f"to={hi}")
    return lo, hi


def _below(value: float, dtype, xp):
    """The largest value of ``dtype`` strictly below ``value`` (a float)."""
    v = np.asarray(value).astype(dtype)
    if float(v) >= value:
        v = np.nextafter(v, np.asarray(-np.inf, dtype))
    return xp.asarray(v)


def _loggam(xp, x):
    """log Gamma(x) for float64 arrays x >= 1 (numpy's random_loggam: Stirling's series
    at x + n >= 7, then the recurrence back down)."""
    coef = (8.333333333333333e-02, -2.777777777777778e-03, 7.936507936507937e-04,
            -5.952380952380952e-04, 8.417508417508418e-04, -1.917526917526918e-03,
            6.410256410256410e-03, -2.955065359477124e-02, 1.796443723688307e-01,
            -1.39243221690590e+00)
    n = xp.where(x < 7, xp.floor(7 - x), 0)
    x0 = x + n
    x2 = 1.0 / (x0 * x0)
    series = coef[9]
    for c in coef[8::-1]:
        series = series * x2 + c
    gl = series / x0 + 0.5 * math.log(2 * math.pi) + (x0 - 0.5) * xp.log(x0) - x0
    for j in range(6):
        gl = gl - xp.where(j < n, xp.log(xp.maximum(x0 - 1 - j, 1.0)), 0.0)
    return gl


def _poisson(xp, lam, rng):
    """Poisson(lam) draws (float64) for a flat float64 array of finite rates >= 0."""
    out = xp.zeros(lam.shape, dtype=np.float64)
    small = xp.nonzero(lam < 10)[0]
    if small.size:  # Knuth: count uniforms until their product drops below exp(-lam)
        limit, prod = xp.exp(-lam[small]), xp.ones(small.shape, dtype=np.float64)
        pending = xp.arange(small.size)
        while pending.size:
            prod[pending] *= rng.random(pending.shape)
            going = prod[pending] > limit[pending]
            pending = pending[going]
            out[small[pending]] += 1
    big = xp.nonzero(lam >= 10)[0]
    while big.size:  # PTRS; each round accepts > 90% of what is left
        r = lam[big]
        slam, loglam = xp.sqrt(r), xp.log(r)
        b = 0.931 + 2.53 * slam
        a = -0.059 + 0.02483 * b
        invalpha, vr = 1.1239 + 1.1328 / (b - 3.4), 0.9277 - 3.6224 / (b - 2)
        u, v = rng.random(big.shape) - 0.5, rng.random(big.shape)
        us = 0.5 - xp.abs(u)
        k = xp.floor((2 * a / us + b) * u + r + 0.43)
        quick = (us >= 0.07) & (v <= vr)
        slow = (k >= 0) & ~((us < 0.013) & (v > us)) & (
            xp.log(v) + xp.log(invalpha) - xp.log(a / (us * us) + b)
            <= -r + k * loglam - _loggam(xp, xp.maximum(k, 0) + 1))
        ok = quick | slow
        out[big[ok]] = k[ok]
        big = big[~ok]
    return out


def _check_probs(op: str, xp, p) -> None:
    if p.size and not bool(xp.all((p >= 0) & (p <= 1))):  # NaN fails both
        raise _bad(op, "every probability in [0, 1]",
                   f"values in [{float(xp.nanmin(p))}, {float(xp.nanmax(p))}]"
                   + (" and NaN" if bool(xp.isnan(p).any()) else ""))


def _check_std(op: str, std) -> None:
    if not std >= 0:  # NaN fails too
        raise _bad(op, "std >= 0.0", f"std={std}")


def kernels(xp) -> dict:
    def draw_into(a, values):
        a[...] = values
        return a

    def normal_(a, mean, std, rng):
        _need_float("normal_", a)
        _check_std("normal_", std)
        return draw_into(a, mean + std * rng.standard_normal(a.shape))

    def uniform_(a, lo, hi, rng):
        _need_float("uniform_", a)
        limit = _FLOAT_MAX[a.dtype.name]
        if not (math.isfinite(lo) and math.isfinite(hi) and abs(lo) <= limit and
                abs(hi) <= limit):
            raise _bad("uniform_", f"from and to within {a.dtype.name}'s finite range "
                       f"+-{limit:g}", f"from={lo}, to={hi}")
        if lo > hi:
            raise _bad("uniform_", "a [from, to) range with from <= to",
                       f"from={lo} > to={hi}")
        if hi - lo > limit:
            raise _bad("uniform_", f"to - from <= {limit:g} ({a.dtype.name}'s largest value)",
                       f"from={lo}, to={hi}")
        x = (lo + (hi - lo) * rng.random(a.shape)).astype(a.dtype)
        if hi > lo:  # a draw just below 1 may round up to `to` in a narrow dtype
            x = xp.minimum(x, _below(hi, a.dtype, xp))
        return draw_into(a, x)

    def bernoulli_float(a, p, rng, op="bernoulli_"):
        if not 0 <= p <= 1:
            raise _bad(op, "p in [0, 1]", f"p={p}")
        return draw_into(a, rng.random(a.shape) < p)

    def bernoulli_tensor(a, p, rng):
        check_broadcast_to("bernoulli_", p.shape, a.shape, "p")
        _check_probs("bernoulli_", xp, p)
        return draw_into(a, rng.random(a.shape) < p)

    def exponential_(a, lambd, rng):
        _need_float("exponential_", a)
        if not lambd > 0:
            raise _bad("exponential_", "lambd > 0.0", f"lambd={lambd}")
        return draw_into(a, -xp.log1p(-rng.random(a.shape)) / lambd)

    def geometric_(a, p, rng):
        if not 0 < p < 1:
            raise _bad("geometric_", "p in (0, 1)", f"p={p}")
        # P(K > k) = P(V < (1 - p)^k) = (1 - p)^k for V uniform on (0, 1]
        k = xp.ceil(xp.log(1.0 - rng.random(a.shape)) / math.log1p(-p))
        return draw_into(a, xp.maximum(k, 1.0))

    def log_normal_(a, mean, std, rng):
        _need_float("log_normal_", a)
        if not std > 0:
            raise _bad("log_normal_", "std > 0.0", f"std={std}")
        return draw_into(a, xp.exp(mean + std * rng.standard_normal(a.shape)))

    def cauchy_(a, median, sigma, rng):
        _need_float("cauchy_", a)
        if not sigma > 0:
            raise _bad("cauchy_", "sigma > 0.0", f"sigma={sigma}")
        return draw_into(a, median + sigma * xp.tan(math.pi * (rng.random(a.shape) - 0.5)))

    def random_between(a, lo, hi, rng):
        lo, hi = _random_bounds("random_", a.dtype, lo, hi)
        return draw_into(a, rng.integers(lo, hi, size=a.shape, dtype=np.int64))

    def bernoulli(p, rng):
        _need_float("bernoulli", p, "input")
        _check_probs("bernoulli", xp, p)
        return (rng.random(p.shape) < p).astype(p.dtype)

    def bernoulli_p(a, p, rng):
        out = xp.empty(a.shape, dtype=a.dtype)
        return bernoulli_float(out, p, rng, "bernoulli")

    def normal(mean, std, rng):
        """Any of normal's Tensor overloads: mean or std may be a Python float."""
        ref = mean if not isinstance(mean, (int, float)) else std
        _need_float("normal", ref, "mean" if ref is mean else "std")
        if isinstance(std, (int, float)):
            _check_std("normal", std)
        elif std.size and not bool(xp.all(std >= 0)):
            raise _bad("normal", "every element of std >= 0.0",
                       f"min {float(xp.nanmin(std))}" + (", NaN" if bool(xp.isnan(std).any())
                                                          else ""))
        shape = np.broadcast_shapes(*(x.shape for x in (mean, std)
                                      if not isinstance(x, (int, float))))
        return (mean + std * rng.standard_normal(shape)).astype(ref.dtype)

    def poisson(rate, rng):
        _need_float("poisson", rate, "input")
        flat = rate.reshape(-1).astype(np.float64)
        if flat.size and not bool(xp.all(flat >= 0)):
            raise RuntimeError("poisson(): invalid Poisson rate, expected every rate to be "
                               "non-negative (got a negative or NaN rate)")
        if flat.size and not bool(xp.all(xp.isfinite(flat))):
            raise RuntimeError("poisson(): expected finite rates, got inf; clamp the rates "
                               "first")
        return _poisson(xp, flat, rng).reshape(rate.shape).astype(rate.dtype)

    def multinomial(p, n, replacement, rng):
        if p.ndim not in (1, 2):
            raise ShapeError(f"multinomial(): expected a 1-D or 2-D tensor of probabilities "
                             f"(prob_dist must be 1 or 2 dim), got {p.ndim}-D shape "
                             f"{list(p.shape)}")
        _need_float("multinomial", p, "input")
        cats = p.shape[-1]
        if n <= 0:
            raise _bad("multinomial", "num_samples > 0 (cannot sample n_sample <= 0 "
                       "samples)", f"num_samples={n}")
        if not replacement and n > cats:
            raise _bad("multinomial", f"num_samples <= {cats} categories without "
                       f"replacement (cannot sample n_sample > prob_dist.size(-1) samples "
                       f"without replacement); pass replacement=True",
                       f"num_samples={n}")
        if cats > _MAX_CATEGORIES:
            raise _bad("multinomial", "at most 2^24 categories", f"{cats}")
        rows = p.reshape(-1, cats).astype(np.float64)
        if rows.shape[0] == 0:
            return xp.empty(p.shape[:-1] + (n,), dtype=np.int64)
        if not bool(xp.all((rows >= 0) & (rows < math.inf))):  # NaN fails too
            raise RuntimeError("multinomial(): probability tensor contains either `inf`, "
                               "`nan` or element < 0; pass finite, non-negative weights")
        cdf = xp.cumsum(rows, axis=1)
        if not bool(xp.all(cdf[:, -1] > 0)):
            raise RuntimeError("multinomial(): invalid multinomial distribution (sum of "
                               "probabilities <= 0): every row needs a positive weight")
        if replacement:
            u = rng.random((rows.shape[0], n)) * cdf[:, -1:]
            # NOTE: u * total may round up to total: never go past the last positive weight
            last = cats - 1 - xp.argmax(rows[:, ::-1] > 0, axis=1)
            out = xp.stack([xp.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
            out = xp.minimum(out, last[:, None])
        else:
            # Efraimidis & Spirakis: the n largest p / Exp(1) keys; zero weights go last
            e = -xp.log1p(-rng.random(rows.shape))
            keys = xp.where(rows > 0, rows / e, -e)
            out = xp.argsort(-keys, axis=1)[:, :n]
        return out.astype(np.int64).reshape(p.shape[:-1] + (n,))

    return {"normal_": normal_, "uniform_": uniform_, "bernoulli_.float": bernoulli_float,
            "bernoulli_.Tensor": bernoulli_tensor, "exponential_": exponential_,
            "geometric_": geometric_, "log_normal_": log_normal_, "cauchy_": cauchy_,
            "random_.from": random_between,
            "random_.to": lambda a, hi, rng: random_between(a, 0, hi, rng),
            "random_": lambda a, rng: random_between(a, 0, None, rng),
            "bernoulli": bernoulli, "bernoulli.p": bernoulli_p,
            "normal.Tensor_Tensor": normal, "normal.Tensor_float": normal,
            "normal.float_Tensor": normal, "poisson": poisson, "multinomial": multinomial}
