"""The case table of ``bench_throughput.py``: which op, on which inputs, in which family.

A :class:`Case` is data: ``call(L, *args)`` runs the op with ``L`` = ``ember`` or
``torch`` (ember mirrors torch's API, so one callable serves both; ``torch_call``
overrides it where the spellings differ), and ``build(g)`` returns the arguments for one
size from a :class:`Gen`: numpy arrays wrapped in :class:`Diff` become tensors that
require grad in the fwd+bwd mode, other arrays become constant tensors, anything else
(ints, tuples, strings) passes through. Generic families (unary, special, binary,
reductions, activations, in-place) are generated from name lists; the rest are one line
a case. Names missing in either library are skipped and listed in :data:`SKIPPED`.

Shapes per size (``g.big`` is the 1e6 size): vectors for pointwise; (rows, cols) with the
op over -1 for row-wise ops; (B, n, n) for linalg; (N, C, H, W) for images.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple, Optional

import numpy as np

import ember
import torch

SIZES = {"1e3": 1_000, "1e6": 1_000_000}

# kind -> (shape at 1e3, shape at 1e6)
SHAPES = {
    "vec": ((1000,), (1_000_000,)),
    "mat": ((10, 100), (1000, 1000)),
    "img": ((1, 4, 16, 16), (8, 32, 64, 64)),
    "seq": ((1, 4, 256), (16, 64, 1024)),
    "vol": ((1, 2, 8, 8, 8), (4, 8, 32, 32, 32)),
    "bmat": ((4, 16, 16), (64, 128, 128)),
    "mmA": ((16, 32), (512, 1024)),
    "mmB": ((32, 16), (1024, 512)),
    "bmmA": ((2, 16, 16), (16, 128, 256)),
    "bmmB": ((2, 16, 16), (16, 256, 128)),
    "qkv": ((1, 1, 32, 32), (4, 8, 256, 128)),
}


class Diff(NamedTuple):
    """An input that requires grad in the fwd+bwd mode."""
    a: np.ndarray


class Case(NamedTuple):
    op: str
    family: str
    call: Callable                 # call(L, *args), L = ember or torch
    build: Callable                # build(g: Gen) -> list of args
    grad: bool = True              # time fwd+bwd too
    check: str = "value"           # "value" | "shape" (sign-ambiguous, random) | "none"
    torch_call: Optional[Callable] = None


class Gen:
    """Seeded inputs for one size: ``g.x(kind)`` a Diff float32 array, ``g.c`` a constant."""

    def __init__(self, size: str, seed: int = 0):
        self.n = SIZES[size]
        self.big = self.n >= 100_000
        self.rng = np.random.default_rng(seed)

    def shape(self, kind):
        return SHAPES[kind][self.big] if isinstance(kind, str) else tuple(kind)

    def u(self, kind="vec", lo=-2.0, hi=2.0):
        return self.rng.uniform(lo, hi, self.shape(kind)).astype(np.float32)

    def x(self, kind="vec", lo=-2.0, hi=2.0):
        return Diff(self.u(kind, lo, hi))

    def c(self, kind="vec", lo=-2.0, hi=2.0):
        return self.u(kind, lo, hi)

    def i(self, kind, hi, lo=0, dtype=np.int64):
        return self.rng.integers(lo, hi, self.shape(kind)).astype(dtype)

    def sign(self, kind):
        return np.where(self.rng.random(self.shape(kind)) < 0.5, -1.0, 1.0).astype(np.float32)

    def distinct(self, kind="mat"):
        """A Diff array in (-2, 2) whose rows hold distinct values: random float32 rows of
        1000 tie now and then, and sort/argsort/mode indices of ties differ by library."""
        perm = self.perm_rows(kind)
        return Diff((perm / perm.shape[-1] * 4 - 2 + self.rng.uniform(0, 1e-3, perm.shape))
                    .astype(np.float32))

    def spd(self, kind="bmat"):
        """Well-conditioned symmetric positive definite matrices."""
        a = self.u(kind, -1, 1)
        n = a.shape[-1]
        return Diff((a @ np.swapaxes(a, -1, -2) / n + np.eye(n, dtype=np.float32))
                    .astype(np.float32))

    def perm_rows(self, kind):
        """Each row of an int64 array of ``kind``'s shape is a permutation of its columns."""
        return np.argsort(self.rng.random(self.shape(kind)), axis=-1)

    def side(self, power=2):
        """An int ``m`` with ``m ** power`` about the size."""
        return int(round(self.n ** (1.0 / power)))


def F(L):
    return L.nn.functional


SKIPPED: list = []  # (name, why)
CASES: list = []


def add(op, family, call, build, grad=True, check="value", torch_call=None):
    CASES.append(Case(op, family, call, build, grad, check, torch_call))


def _have(mod_e, mod_t, name, family):
    if hasattr(mod_e, name) and hasattr(mod_t, name):
        return True
    SKIPPED.append((f"{family}:{name}", "ember" if not hasattr(mod_e, name) else "torch"))
    return False


# ---- pointwise: generated from name lists ------------------------------------------------
DOMAINS = {"any": (-2.0, 2.0), "pos": (0.1, 4.0), "unit": (-0.95, 0.95),
           "prob": (0.05, 0.95), "gt1": (1.1, 4.0), "small": (-1.0, 1.0)}
# no derivative in torch (or none to compare against): forward only
NONDIFF = {"airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
           "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "spherical_bessel_j0",
           "sign", "floor", "ceil", "trunc", "round", "signbit", "isnan", "isinf", "isfinite",
           "isposinf", "isneginf", "logical_not", "frexp", "floor_divide", "nextafter",
           "heaviside", "eq", "ne", "lt", "le", "gt", "ge", "isclose", "logical_and",
           "logical_or", "logical_xor", "igamma", "igammac", "gammainc", "gammaincc"}

UNARY = {
    "any": "abs neg sign sgn positive exp exp2 expm1 sin cos atan sinh cosh tanh sigmoid relu "
           "erf erfc asinh frac signbit square floor ceil trunc round nan_to_num sinc deg2rad "
           "rad2deg isnan isinf isfinite isposinf isneginf logical_not i0 frexp",
    "small": "tan",
    "pos": "log log2 log10 log1p sqrt rsqrt lgamma digamma reciprocal",
    "unit": "asin acos atanh erfinv",
    "prob": "logit",
    "gt1": "acosh",
}
for dom, names in UNARY.items():
    for name in names.split():
        if _have(ember, torch, name, "unary"):
            lo, hi = DOMAINS[dom]
            add(name, "unary", lambda L, x, _n=name: getattr(L, _n)(x),
                lambda g, _lo=lo, _hi=hi: [g.x("vec", _lo, _hi)], grad=name not in NONDIFF)

SPECIAL = {
    "any": "airy_ai bessel_j0 bessel_j1 erf erfc erfcx expit expm1 exp2 i0 i0e i1 i1e "
           "log_ndtr modified_bessel_i0 modified_bessel_i1 ndtr round sinc spherical_bessel_j0",
    "pos": "bessel_y0 bessel_y1 digamma entr gammaln log1p modified_bessel_k0 "
           "modified_bessel_k1 scaled_modified_bessel_k0 scaled_modified_bessel_k1 psi",
    "unit": "erfinv",
    "prob": "logit ndtri",
}
for dom, names in SPECIAL.items():
    for name in names.split():
        if _have(ember.special, torch.special, name, "special"):
            lo, hi = DOMAINS[dom]
            add(f"special.{name}", "special",
                lambda L, x, _n=name: getattr(L.special, _n)(x),
                lambda g, _lo=lo, _hi=hi: [g.x("vec", _lo, _hi)], grad=name not in NONDIFF)
for name in ("chebyshev_polynomial_t chebyshev_polynomial_u chebyshev_polynomial_v "
             "chebyshev_polynomial_w shifted_chebyshev_polynomial_t "
             "shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
             "shifted_chebyshev_polynomial_w hermite_polynomial_h hermite_polynomial_he "
             "laguerre_polynomial_l legendre_polynomial_p").split():
    if _have(ember.special, torch.special, name, "special"):
        add(f"special.{name}(n=6)", "special",
            lambda L, x, _n=name: getattr(L.special, _n)(x, 6),
            lambda g: [g.x("vec", -0.95, 0.95)], grad=False)
for name, doms in {"xlogy": ("any", "pos"), "xlog1py": ("any", "pos"), "zeta": ("gt1", "pos"),
                   "gammainc": ("pos", "pos"), "gammaincc": ("pos", "pos")}.items():
    if _have(ember.special, torch.special, name, "special"):
        add(f"special.{name}", "special", lambda L, x, y, _n=name: getattr(L.special, _n)(x, y),
            lambda g, _d=doms: [g.x("vec", *DOMAINS[_d[0]]), g.x("vec", *DOMAINS[_d[1]])],
            grad=name not in NONDIFF and name != "zeta")
add("special.polygamma(1)", "special", lambda L, x: L.special.polygamma(1, x),
    lambda g: [g.x("vec", 0.1, 4)])
add("special.multigammaln(p=3)", "special", lambda L, x: L.special.multigammaln(x, 3),
    lambda g: [g.x("vec", 1.1, 4)])
add("special.softmax(-1)", "special", lambda L, x: L.special.softmax(x, -1),
    lambda g: [g.x("mat")])
add("special.logsumexp(-1)", "special", lambda L, x: L.special.logsumexp(x, -1),
    lambda g: [g.x("mat")])

BINARY = {  # name -> (domain of self, domain of other)
    **{n: ("any", "any") for n in "add sub mul maximum minimum atan2 copysign fmax fmin hypot "
       "logaddexp logaddexp2 nextafter heaviside eq ne lt le gt ge isclose".split()},
    **{n: ("any", "pos") for n in "div true_divide floor_divide remainder fmod xlogy".split()},
    **{n: ("pos", "small") for n in ("pow", "float_power")},
    **{n: ("pos", "pos") for n in ("igamma", "igammac")},
}
for name, (d0, d1) in BINARY.items():
    if _have(ember, torch, name, "binary"):
        add(name, "binary", lambda L, x, y, _n=name: getattr(L, _n)(x, y),
            lambda g, _a=d0, _b=d1: [g.x("vec", *DOMAINS[_a]), g.x("vec", *DOMAINS[_b])],
            grad=name not in NONDIFF)
for name in ("logical_and", "logical_or", "logical_xor"):
    add(name, "binary", lambda L, x, y, _n=name: getattr(L, _n)(x > 0, y > 0),
        lambda g: [g.c(), g.c()], grad=False)
for name in ("add", "sub", "mul", "div"):
    add(f"{name}(bcast row)", "binary", lambda L, x, y, _n=name: getattr(L, _n)(x, y),
        lambda g: [g.x("mat"), g.x((g.shape("mat")[1],), 0.5, 2)])
add("add(bcast col)", "binary", lambda L, x, y: x + y,
    lambda g: [g.x("mat"), g.x((g.shape("mat")[0], 1))])
add("lerp(w=0.3)", "binary", lambda L, x, y: L.lerp(x, y, 0.3), lambda g: [g.x(), g.x()])
add("lerp(w=tensor)", "binary", lambda L, x, y, w: L.lerp(x, y, w),
    lambda g: [g.x(), g.x(), g.x("vec", 0, 1)])
add("addcmul", "binary", lambda L, x, y, z: L.addcmul(x, y, z, value=0.5),
    lambda g: [g.x(), g.x(), g.x()])
add("addcdiv", "binary", lambda L, x, y, z: L.addcdiv(x, y, z, value=0.5),
    lambda g: [g.x(), g.x(), g.x("vec", 0.5, 2)])
add("where", "binary", lambda L, c, x, y: L.where(c > 0, x, y), lambda g: [g.c(), g.x(), g.x()])
add("ldexp", "binary", lambda L, x, e: L.ldexp(x, e), lambda g: [g.x(), g.i("vec", 4, -4)])
add("equal", "binary", lambda L, x, y: L.equal(x, y), lambda g: [g.c(), g.c()], grad=False)
add("allclose", "binary", lambda L, x, y: L.allclose(x, y), lambda g: [g.c(), g.c()],
    grad=False)
add("dist(p=2)", "binary", lambda L, x, y: L.dist(x, y), lambda g: [g.x(), g.x()])

# ---- Python-number operands, casts, clamps ------------------------------------------------
SCALAR = {
    "x+1": lambda L, x: x + 1, "x-1": lambda L, x: x - 1, "x*2": lambda L, x: x * 2,
    "x/3": lambda L, x: x / 3, "1/x": lambda L, x: 1 / x, "-x": lambda L, x: -x,
    "x**2": lambda L, x: x ** 2, "x**3": lambda L, x: x ** 3, "x**0.5": lambda L, x: x ** 0.5,
    "x**-1": lambda L, x: x ** -1, "2**x": lambda L, x: 2 ** x,
    "clamp(-.5,.5)": lambda L, x: L.clamp(x, -0.5, 0.5),
    "clamp_min(1)": lambda L, x: L.clamp_min(x, 1.0),
    "clamp_max(1)": lambda L, x: L.clamp_max(x, 1.0),
    "x.half()": lambda L, x: x.half(), "x.double()": lambda L, x: x.double(),
    "x.to(int32)": lambda L, x: x.to(L.int32), "x>1": lambda L, x: x > 1,
}
for name, fn in SCALAR.items():
    add(name, "scalar", fn, lambda g: [g.x("vec", 0.1, 4)],
        grad=name not in ("x.to(int32)", "x>1"))
add("int.float()", "scalar", lambda L, x: x.float(), lambda g: [g.i("vec", 100)], grad=False)

# ---- integer ops ---------------------------------------------------------------------------
for name in ("bitwise_and", "bitwise_or", "bitwise_xor", "gcd", "lcm", "add", "mul",
             "floor_divide", "remainder", "maximum"):
    if _have(ember, torch, name, "integer"):
        add(f"{name}(int32)", "integer", lambda L, x, y, _n=name: getattr(L, _n)(x, y),
            lambda g: [g.i("vec", 1000, 1, np.int32), g.i("vec", 100, 1, np.int32)],
            grad=False)
for name, call in {"bitwise_left_shift": lambda L, x, y: L.bitwise_left_shift(x, y),
                   "bitwise_right_shift": lambda L, x, y: L.bitwise_right_shift(x, y)}.items():
    add(f"{name}(int32)", "integer", call,
        lambda g: [g.i("vec", 1000, 1, np.int32), g.i("vec", 8, 0, np.int32)], grad=False)
for name in ("bitwise_not", "abs", "neg", "sign", "sum", "cumsum(0)", "bincount",
             "sort(0)", "unique"):
    base = name.split("(")[0]
    # NOTE: sort's values only: the indices of equal keys may differ (stable or not)
    call = {"cumsum(0)": lambda L, x: L.cumsum(x, 0),
            "sort(0)": lambda L, x: L.sort(x, 0).values,
            }.get(name, lambda L, x, _n=base: getattr(L, _n)(x))
    add(f"{name}(int64)", "integer", call, lambda g: [g.i("vec", 1000)], grad=False)

# ---- reductions and row-wise ops over -1 of (rows, cols) -----------------------------------
ROWWISE = {
    "any": "sum mean amax amin var std logsumexp nansum nanmean cumsum softmax log_softmax "
           "logcumsumexp max min median nanmedian cummax cummin sort std_mean var_mean mode "
           "argmax argmin argsort count_nonzero",
    "near1": "prod cumprod",
}
for dom, names in ROWWISE.items():
    for name in names.split():
        if _have(ember, torch, name, "reduction"):
            build = ((lambda g: [g.x("mat", 0.999, 1.001)]) if dom == "near1"
                     else (lambda g: [g.distinct("mat")]))
            add(f"{name}(-1)", "reduction", lambda L, x, _n=name: getattr(L, _n)(x, -1), build,
                grad=name not in ("argmax", "argmin", "argsort", "count_nonzero"))
for name in ("sum", "mean", "amax", "var", "logsumexp", "cumsum", "softmax", "max"):
    add(f"{name}(0)", "reduction", lambda L, x, _n=name: getattr(L, _n)(x, 0),
        lambda g: [g.x("mat")])
for name in ("sum", "mean", "max", "min", "var", "std", "norm", "median", "prod", "amax",
             "argmax", "nansum", "count_nonzero"):
    lo, hi = (0.9999, 1.0001) if name == "prod" else (-2.0, 2.0)
    add(f"{name}()", "reduction", lambda L, x, _n=name: getattr(L, _n)(x),
        lambda g, _lo=lo, _hi=hi: [g.x("vec", _lo, _hi)],
        grad=name not in ("argmax", "count_nonzero"))
for name in ("any", "all"):
    add(f"{name}(-1)", "reduction", lambda L, x, _n=name: getattr(L, _n)(x > -1.9, -1),
        lambda g: [g.c("mat")], grad=False)
add("norm(dim=-1)", "reduction", lambda L, x: L.norm(x, dim=-1), lambda g: [g.x("mat")])
add("aminmax(-1)", "reduction", lambda L, x: L.aminmax(x, dim=-1), lambda g: [g.x("mat")],
    grad=False)
add("topk(10,-1)", "reduction", lambda L, x: L.topk(x, 10, -1), lambda g: [g.distinct()])
add("kthvalue(5,-1)", "reduction", lambda L, x: L.kthvalue(x, 5, -1),
    lambda g: [g.distinct()])
add("quantile(.3,-1)", "reduction", lambda L, x: L.quantile(x, 0.3, -1), lambda g: [g.x("mat")])
add("nanquantile(.3,-1)", "reduction", lambda L, x: L.nanquantile(x, 0.3, -1),
    lambda g: [g.x("mat")])
add("msort", "reduction", lambda L, x: L.msort(x), lambda g: [g.x("mat")])
add("diff(-1)", "reduction", lambda L, x: L.diff(x, dim=-1), lambda g: [g.x("mat")])
add("trapezoid(-1)", "reduction", lambda L, x: L.trapezoid(x, dim=-1), lambda g: [g.x("mat")])
add("cov", "reduction", lambda L, x: L.cov(x), lambda g: [g.x("mat")])
add("corrcoef", "reduction", lambda L, x: L.corrcoef(x), lambda g: [g.x("mat")])
add("histc(100)", "reduction", lambda L, x: L.histc(x, 100, -2, 2), lambda g: [g.c()],
    grad=False)
add("vector_norm(-1)", "reduction", lambda L, x: L.linalg.vector_norm(x, dim=-1),
    lambda g: [g.x("mat")])

# ---- activations (nn.functional) -----------------------------------------------------------
ACTIVATIONS = ("relu gelu silu mish elu selu celu leaky_relu hardtanh relu6 hardswish "
               "hardsigmoid softshrink hardshrink tanhshrink softsign softplus logsigmoid "
               "sigmoid tanh").split()
for name in ACTIVATIONS:
    if _have(ember.nn.functional, torch.nn.functional, name, "activation"):
        add(f"F.{name}", "activation", lambda L, x, _n=name: getattr(F(L), _n)(x),
            lambda g: [g.x()])
add("F.gelu(tanh)", "activation", lambda L, x: F(L).gelu(x, approximate="tanh"),
    lambda g: [g.x()])
add("F.threshold", "activation", lambda L, x: F(L).threshold(x, 0.1, 0.0), lambda g: [g.x()])
add("F.rrelu(eval)", "activation", lambda L, x: F(L).rrelu(x, training=False),
    lambda g: [g.x()])
add("F.prelu", "activation", lambda L, x, w: F(L).prelu(x, w),
    lambda g: [g.x("img"), g.x((g.shape("img")[1],), 0, 0.5)])
for name in ("glu", "softmax", "log_softmax", "softmin", "normalize"):
    add(f"F.{name}(-1)", "activation", lambda L, x, _n=name: getattr(F(L), _n)(x, dim=-1),
        lambda g: [g.x("mat")])

# ---- shape and index ops ---------------------------------------------------------------------
def _rows(g):
    return g.shape("mat")[0]


def _cols(g):
    return g.shape("mat")[1]


SHAPE_OPS = {  # name -> (call, build)
    "cat(0)": (lambda L, x, y: L.cat([x, y], 0), lambda g: [g.x("mat"), g.x("mat")]),
    "cat(-1)": (lambda L, x, y: L.cat([x, y], -1), lambda g: [g.x("mat"), g.x("mat")]),
    "stack(0)": (lambda L, x, y: L.stack([x, y]), lambda g: [g.x("mat"), g.x("mat")]),
    "flip(-1)": (lambda L, x: L.flip(x, [-1]), lambda g: [g.x("mat")]),
    "roll(7,-1)": (lambda L, x: L.roll(x, 7, -1), lambda g: [g.x("mat")]),
    "rot90": (lambda L, x: L.rot90(x), lambda g: [g.x("mat")]),
    "t().contiguous()": (lambda L, x: x.t().contiguous(), lambda g: [g.x("mat")]),
    "permute(NHWC).contiguous()": (lambda L, x: x.permute(0, 2, 3, 1).contiguous(),
                                   lambda g: [g.x("img")]),
    "expand.contiguous()": (lambda L, x, r: x.expand(r, -1).contiguous(),
                            lambda g: [g.x((1, _cols(g))), _rows(g)]),
    "repeat(2,1)": (lambda L, x: x.repeat(2, 1), lambda g: [g.x("mat")]),
    "tile(1,2)": (lambda L, x: L.tile(x, (1, 2)), lambda g: [g.x("mat")]),
    "repeat_interleave(2,0)": (lambda L, x: L.repeat_interleave(x, 2, 0),
                               lambda g: [g.x("mat")]),
    "index_select(0)": (lambda L, x, i: L.index_select(x, 0, i),
                        lambda g: [g.x("mat"), g.rng.permutation(_rows(g))]),
    "index_select(1)": (lambda L, x, i: L.index_select(x, 1, i),
                        lambda g: [g.x("mat"), g.rng.permutation(_cols(g))]),
    "gather(1)": (lambda L, x, i: L.gather(x, 1, i),
                  lambda g: [g.x("mat"), g.i("mat", g.shape("mat")[1])]),
    "take_along_dim(1)": (lambda L, x, i: L.take_along_dim(x, i, 1),
                          lambda g: [g.x("mat"), g.i("mat", g.shape("mat")[1])]),
    "take": (lambda L, x, i: L.take(x, i), lambda g: [g.x("mat"), g.i("vec", g.n)]),
    "scatter(1)": (lambda L, x, i, s: L.scatter(x, 1, i, s),
                   lambda g: [g.x("mat"), g.perm_rows("mat"), g.x("mat")]),
    "scatter_add(1)": (lambda L, x, i, s: L.scatter_add(x, 1, i, s),
                       lambda g: [g.x("mat"), g.i("mat", g.shape("mat")[1]), g.x("mat")]),
    "scatter_reduce(amax)": (lambda L, x, i, s: L.scatter_reduce(x, 1, i, s, "amax"),
                             lambda g: [g.x("mat"), g.perm_rows("mat"), g.x("mat")]),
    "index_add(0)": (lambda L, x, i, s: L.index_add(x, 0, i, s),
                     lambda g: [g.x("mat"), g.i((_rows(g),), _rows(g)), g.x("mat")]),
    "index_copy(0)": (lambda L, x, i, s: L.index_copy(x, 0, i, s),
                      lambda g: [g.x("mat"), g.rng.permutation(_rows(g)), g.x("mat")]),
    "index_fill(1)": (lambda L, x, i: L.index_fill(x, 1, i, 0.0),
                      lambda g: [g.x("mat"), g.i((_cols(g) // 10,), _cols(g))]),
    "index_put": (lambda L, x, i, v: L.index_put(x, (i,), v),
                  lambda g: [g.x("mat"), g.rng.permutation(_rows(g)), g.x("mat")]),
    "masked_fill": (lambda L, x, m: L.masked_fill(x, m > 0, 0.0),
                    lambda g: [g.x("mat"), g.c("mat")]),
    "masked_select": (lambda L, x, m: L.masked_select(x, m > 0),
                      lambda g: [g.x("mat"), g.c("mat")]),
    "masked_scatter": (lambda L, x, m, s: L.masked_scatter(x, m > 0, s),
                       lambda g: [g.x("mat"), g.c("mat"), g.x("mat")]),
    "tril": (lambda L, x: L.tril(x), lambda g: [g.x("mat")]),
    "triu(1)": (lambda L, x: L.triu(x, 1), lambda g: [g.x("mat")]),
    "diagonal": (lambda L, x: L.diagonal(x, 0, -2, -1), lambda g: [g.x("bmat")]),
    "diag_embed": (lambda L, x: L.diag_embed(x), lambda g: [g.x((g.side(3), g.side(3)))]),
    "narrow(1)": (lambda L, x: L.narrow(x, 1, 1, x.shape[1] // 2).contiguous(),
                  lambda g: [g.x("mat")]),
    "chunk(4,0)[1]": (lambda L, x: L.chunk(x, 4, 0)[1].contiguous(), lambda g: [g.x("mat")]),
    "clone": (lambda L, x: L.clone(x), lambda g: [g.x("mat")]),
    "select_scatter": (lambda L, x, s: L.select_scatter(x, s, 0, 0),
                       lambda g: [g.x("mat"), g.x((_cols(g),))]),
    "slice_scatter": (lambda L, x, s: L.slice_scatter(x, s, 0, 0, s.shape[0]),
                      lambda g: [g.x("mat"), g.x((_rows(g) // 2, _cols(g)))]),
    "cartesian_prod": (lambda L, a, b: L.cartesian_prod(a, b),
                                   lambda g: [g.x((g.side(),)), g.x((g.side(),))]),
    "combinations(r=2)": (lambda L, a: L.combinations(a, 2),
                          lambda g: [g.x((int(math.sqrt(2 * g.n)),))]),
    "meshgrid(ij)": (lambda L, a, b: L.meshgrid(a, b, indexing="ij"),
                     lambda g: [g.x((g.side(),)), g.x((g.side(),))]),
    "F.pad(constant)": (lambda L, x: F(L).pad(x, (1, 1, 1, 1)), lambda g: [g.x("img")]),
    "F.pad(reflect)": (lambda L, x: F(L).pad(x, (1, 1, 1, 1), "reflect"),
                       lambda g: [g.x("img")]),
    "F.pad(replicate)": (lambda L, x: F(L).pad(x, (1, 1, 1, 1), "replicate"),
                         lambda g: [g.x("img")]),
    "F.pad(circular)": (lambda L, x: F(L).pad(x, (1, 1, 1, 1), "circular"),
                        lambda g: [g.x("img")]),
    "F.embedding": (lambda L, i, w: F(L).embedding(i, w),
                    lambda g: [g.i((g.n // 64,), 5000), g.x((5000, 64))]),
    "F.embedding_bag(mean)": (lambda L, i, w: F(L).embedding_bag(i, w, mode="mean"),
                              lambda g: [g.i((g.n // 256, 4), 5000), g.x((5000, 64))]),
}
for name, (call, build) in SHAPE_OPS.items():
    add(name, "shape/index", call, build)
for name, (call, build) in {
    "nonzero": (lambda L, x: L.nonzero(x > 0), lambda g: [g.c("mat")]),
    "argwhere": (lambda L, x: L.argwhere(x > 0), lambda g: [g.c("mat")]),
    "unique(sorted)": (lambda L, x: L.unique(x, sorted=True), lambda g: [g.i("vec", 1000)]),
    "unique_consecutive": (lambda L, x: L.unique_consecutive(x),
                           lambda g: [np.sort(g.i("vec", 1000))]),
    "searchsorted": (lambda L, s, v: L.searchsorted(s, v),
                     lambda g: [np.sort(g.c()), g.c()]),
    "bucketize": (lambda L, v, b: L.bucketize(v, b), lambda g: [g.c(), np.sort(g.c((100,)))]),
    "isin": (lambda L, a, b: L.isin(a, b), lambda g: [g.i("vec", 2000), g.i((100,), 2000)]),
    "one_hot(100)": (lambda L, i: F(L).one_hot(i, 100), lambda g: [g.i((g.n // 100,), 100)]),
    "tril_indices": (lambda L, r: L.tril_indices(r, r), lambda g: [int(math.sqrt(2 * g.n))]),
    "triu_indices": (lambda L, r: L.triu_indices(r, r), lambda g: [int(math.sqrt(2 * g.n))]),
}.items():
    add(name, "shape/index", call, build, grad=False)

# ---- products ----------------------------------------------------------------------------------
def _lin(g):
    """(N, in) input, (out, in) weight, (out,) bias of a linear layer."""
    n, k = ((16, 64), (1024, 1024))[g.big]
    return [g.x((n, k)), g.x((k // 2, k), -0.1, 0.1), g.x((k // 2,))]


BLAS = {
    "matmul": (lambda L, a, b: L.matmul(a, b), lambda g: [g.x("mmA"), g.x("mmB")]),
    "mm": (lambda L, a, b: L.mm(a, b), lambda g: [g.x("mmA"), g.x("mmB")]),
    "bmm": (lambda L, a, b: L.bmm(a, b), lambda g: [g.x("bmmA"), g.x("bmmB")]),
    "matmul(batched)": (lambda L, a, b: a @ b, lambda g: [g.x("bmmA"), g.x("bmmB")]),
    "addmm": (lambda L, c, a, b: L.addmm(c, a, b),
              lambda g: [g.x((g.shape("mmA")[0], g.shape("mmB")[1])), g.x("mmA"), g.x("mmB")]),
    "baddbmm": (lambda L, c, a, b: L.baddbmm(c, a, b),
                lambda g: [g.x(g.shape("bmmA")[:2] + g.shape("bmmB")[2:]), g.x("bmmA"),
                           g.x("bmmB")]),
    "addbmm": (lambda L, c, a, b: L.addbmm(c, a, b),
               lambda g: [g.x(g.shape("bmmA")[1:2] + g.shape("bmmB")[2:]), g.x("bmmA"),
                          g.x("bmmB")]),
    "mv": (lambda L, a, v: L.mv(a, v), lambda g: [g.x("mat"), g.x((g.shape("mat")[1],))]),
    "addmv": (lambda L, c, a, v: L.addmv(c, a, v),
              lambda g: [g.x((g.shape("mat")[0],)), g.x("mat"), g.x((g.shape("mat")[1],))]),
    "outer": (lambda L, a, b: L.outer(a, b), lambda g: [g.x((g.side(),)), g.x((g.side(),))]),
    "addr": (lambda L, c, a, b: L.addr(c, a, b),
             lambda g: [g.x((g.side(), g.side())), g.x((g.side(),)), g.x((g.side(),))]),
    "dot": (lambda L, a, b: L.dot(a, b), lambda g: [g.x(), g.x()]),
    "vdot": (lambda L, a, b: L.vdot(a, b), lambda g: [g.x(), g.x()]),
    "inner": (lambda L, a, b: L.inner(a, b), lambda g: [g.x("mmA"), g.x("mmA")]),
    "einsum(bij,bjk)": (lambda L, a, b: L.einsum("bij,bjk->bik", a, b),
                        lambda g: [g.x("bmmA"), g.x("bmmB")]),
    "einsum(ij,ij->i)": (lambda L, a, b: L.einsum("ij,ij->i", a, b),
                         lambda g: [g.x("mat"), g.x("mat")]),
    "tensordot(1)": (lambda L, a, b: L.tensordot(a, b, 1), lambda g: [g.x("mmA"), g.x("mmB")]),
    "kron": (lambda L, a, b: L.kron(a, b),
             lambda g: [g.x((g.side(4),) * 2), g.x((g.side(4),) * 2)]),
    "F.linear": (lambda L, x, w, b: F(L).linear(x, w, b), _lin),
    "F.bilinear": (lambda L, a, b, w, c: F(L).bilinear(a, b, w, c),
                   lambda g: [g.x((g.n // 64, 64)), g.x((g.n // 64, 32)), g.x((16, 64, 32)),
                              g.x((16,))]),
    "chain_matmul/multi_dot": (lambda L, a, b, c: L.linalg.multi_dot([a, b, c]),
                               lambda g: [g.x("mmA"), g.x("mmB"), g.x("mmA")]),
    "trace": (lambda L, a: L.trace(a), lambda g: [g.x("mat")]),
    "cross(-1)": (lambda L, a, b: L.linalg.cross(a, b),
                  lambda g: [g.x((g.n // 3, 3)), g.x((g.n // 3, 3))]),
    # NOTE: cdist/pdist at 1e6 elements of output, not input: ember materialises the
    # (P, R, M) differences, and 1e6 inputs would need gigabytes
    "cdist(p=2)": (lambda L, a, b: L.cdist(a, b),
                   lambda g: [g.x((g.side(), 64)), g.x((g.side(), 64))]),
    "cdist(p=1)": (lambda L, a, b: L.cdist(a, b, p=1.0),
                   lambda g: [g.x((g.side(), 64)), g.x((g.side(), 64))]),
    "pdist": (lambda L, a: F(L).pdist(a), lambda g: [g.x((int(math.sqrt(2 * g.n)), 32))]),
    "F.pairwise_distance": (lambda L, a, b: F(L).pairwise_distance(a, b),
                            lambda g: [g.x("mat"), g.x("mat")]),
    "F.cosine_similarity": (lambda L, a, b: F(L).cosine_similarity(a, b, dim=-1),
                            lambda g: [g.x("mat"), g.x("mat")]),
}
for name, (call, build) in BLAS.items():
    add(name, "blas", call, build)

# ---- linalg on batched (B, n, n) matrices ------------------------------------------------------
def _spd(g):
    return [g.spd()]


def _rhs(g):
    return [g.spd(), g.x(g.shape("bmat")[:2] + (4,))]


def _tri(g):
    a = g.spd().a
    return [Diff(np.triu(a)), g.x(g.shape("bmat")[:2] + (4,))]


LINALG = {  # name -> (call, build, check)
    "linalg.inv": (lambda L, a: L.linalg.inv(a), _spd, "value"),
    "linalg.solve": (lambda L, a, b: L.linalg.solve(a, b), _rhs, "value"),
    "linalg.det": (lambda L, a: L.linalg.det(a), _spd, "value"),
    # NOTE: logabsdet only: torch's sign output requires grad but has no gradient
    "linalg.slogdet": (lambda L, a: L.linalg.slogdet(a).logabsdet, _spd, "value"),
    "logdet": (lambda L, a: L.logdet(a), _spd, "value"),
    "linalg.cholesky": (lambda L, a: L.linalg.cholesky(a), _spd, "value"),
    "linalg.qr": (lambda L, a: L.linalg.qr(a), _spd, "shape"),
    "linalg.eigh": (lambda L, a: L.linalg.eigh(a), _spd, "shape"),
    "linalg.eigvalsh": (lambda L, a: L.linalg.eigvalsh(a), _spd, "value"),
    "linalg.svd": (lambda L, a: L.linalg.svd(a, full_matrices=False), _spd, "shape"),
    "linalg.svdvals": (lambda L, a: L.linalg.svdvals(a), _spd, "value"),
    "linalg.pinv": (lambda L, a: L.linalg.pinv(a), _spd, "value"),
    "linalg.matrix_norm(fro)": (lambda L, a: L.linalg.matrix_norm(a), _spd, "value"),
    "linalg.matrix_norm(2)": (lambda L, a: L.linalg.matrix_norm(a, 2), _spd, "value"),
    "linalg.matrix_power(3)": (lambda L, a: L.linalg.matrix_power(a, 3), _spd, "value"),
    "linalg.matrix_exp": (lambda L, a: L.linalg.matrix_exp(a * 0.1), _spd, "value"),
    "linalg.lu_factor": (lambda L, a: L.linalg.lu_factor(a), _spd, "value"),
    "linalg.lu": (lambda L, a: L.linalg.lu(a), _spd, "value"),
    "linalg.lu_solve": (lambda L, a, b: L.linalg.lu_solve(*L.linalg.lu_factor(a), b), _rhs,
                        "value"),
    "linalg.solve_triangular": (lambda L, a, b: L.linalg.solve_triangular(a, b, upper=True),
                                _tri, "value"),
    "linalg.lstsq": (lambda L, a, b: L.linalg.lstsq(a, b).solution, _rhs, "value"),
    "linalg.cond": (lambda L, a: L.linalg.cond(a), _spd, "value"),
    "linalg.matrix_rank": (lambda L, a: L.linalg.matrix_rank(a), _spd, "value"),
    "linalg.householder_product": (
        lambda L, a, t: L.linalg.householder_product(a, t),
        lambda g: [g.x("bmat", -0.5, 0.5), g.x(g.shape("bmat")[:2], 0, 1)], "value"),
    "linalg.vecdot": (lambda L, a, b: L.linalg.vecdot(a, b), lambda g: [g.x("mat"), g.x("mat")],
                      "value"),
    "cholesky_solve": (lambda L, a, b: L.cholesky_solve(b, L.linalg.cholesky(a)), _rhs,
                       "value"),
    "cholesky_inverse": (lambda L, a: L.cholesky_inverse(L.linalg.cholesky(a[0])),
                         _spd, "value"),
}
for name, (call, build, check) in LINALG.items():
    add(name, "linalg", call, build, grad=name != "linalg.matrix_rank", check=check)

# ---- nn layers on images (N, C, H, W), sequences (N, C, L), volumes (N, C, D, H, W) ------------
def _conv(kind, k, groups=1, transpose=False):
    def build(g):
        c = g.shape(kind)[1]
        w = (c, c // groups) + (k,) * (len(g.shape(kind)) - 2)
        return [g.x(kind), g.x(w, -0.2, 0.2), g.x((c,))]
    return build


def _norm_params(g, kind="img"):
    c = g.shape(kind)[1]
    return [g.x((c,), 0.5, 1.5), g.x((c,))]


NN = {
    "F.conv2d 3x3": (lambda L, x, w, b: F(L).conv2d(x, w, b, padding=1), _conv("img", 3)),
    "F.conv2d 3x3 s2": (lambda L, x, w, b: F(L).conv2d(x, w, b, stride=2, padding=1),
                        _conv("img", 3)),
    "F.conv2d 1x1": (lambda L, x, w, b: F(L).conv2d(x, w, b), _conv("img", 1)),
    "F.conv2d 3x3 depthwise": (lambda L, x, w, b: F(L).conv2d(x, w, b, padding=1,
                                                              groups=x.shape[1]),
                               lambda g: _conv("img", 3, groups=g.shape("img")[1])(g)),
    "F.conv1d 3": (lambda L, x, w, b: F(L).conv1d(x, w, b, padding=1), _conv("seq", 3)),
    "F.conv3d 3": (lambda L, x, w, b: F(L).conv3d(x, w, b, padding=1), _conv("vol", 3)),
    "F.conv_transpose2d 2s2": (lambda L, x, w, b: F(L).conv_transpose2d(x, w, b, stride=2),
                               _conv("img", 2)),
    "F.conv_transpose1d 2s2": (lambda L, x, w, b: F(L).conv_transpose1d(x, w, b, stride=2),
                               _conv("seq", 2)),
    "F.max_pool2d 2": (lambda L, x: F(L).max_pool2d(x, 2), lambda g: [g.x("img")]),
    "F.max_pool2d 3s2p1": (lambda L, x: F(L).max_pool2d(x, 3, 2, 1), lambda g: [g.x("img")]),
    "F.avg_pool2d 2": (lambda L, x: F(L).avg_pool2d(x, 2), lambda g: [g.x("img")]),
    "F.avg_pool2d 3s1p1": (lambda L, x: F(L).avg_pool2d(x, 3, 1, 1), lambda g: [g.x("img")]),
    "F.lp_pool2d 2": (lambda L, x: F(L).lp_pool2d(x, 2.0, 2), lambda g: [g.x("img", 0.1, 2)]),
    "F.adaptive_avg_pool2d 1": (lambda L, x: F(L).adaptive_avg_pool2d(x, 1),
                                lambda g: [g.x("img")]),
    "F.adaptive_avg_pool2d 5": (lambda L, x: F(L).adaptive_avg_pool2d(x, 5),
                                lambda g: [g.x("img")]),
    "F.adaptive_max_pool2d 4": (lambda L, x: F(L).adaptive_max_pool2d(x, 4),
                                lambda g: [g.x("img")]),
    "F.max_pool1d 2": (lambda L, x: F(L).max_pool1d(x, 2), lambda g: [g.x("seq")]),
    "F.avg_pool1d 2": (lambda L, x: F(L).avg_pool1d(x, 2), lambda g: [g.x("seq")]),
    "F.adaptive_avg_pool1d 7": (lambda L, x: F(L).adaptive_avg_pool1d(x, 7),
                                lambda g: [g.x("seq")]),
    "F.adaptive_max_pool1d 7": (lambda L, x: F(L).adaptive_max_pool1d(x, 7),
                                lambda g: [g.x("seq")]),
    "F.max_pool3d 2": (lambda L, x: F(L).max_pool3d(x, 2), lambda g: [g.x("vol")]),
    "F.avg_pool3d 2": (lambda L, x: F(L).avg_pool3d(x, 2), lambda g: [g.x("vol")]),
    "F.adaptive_avg_pool3d 3": (lambda L, x: F(L).adaptive_avg_pool3d(x, 3),
                                lambda g: [g.x("vol")]),
    "F.max_unpool2d(max_pool2d)": (
        lambda L, x: F(L).max_unpool2d(*F(L).max_pool2d(x, 2, return_indices=True), 2),
        lambda g: [g.x("img")]),
    "F.batch_norm(train)": (lambda L, x, w, b: F(L).batch_norm(
        x, None, None, w, b, training=True), lambda g: [g.x("img")] + _norm_params(g)),
    "F.batch_norm(eval)": (lambda L, x, m, v, w, b: F(L).batch_norm(x, m, v, w, b),
                           lambda g: [g.x("img"), g.c((g.shape("img")[1],)),
                                      g.c((g.shape("img")[1],), 0.5, 2)] + _norm_params(g)),
    "F.layer_norm(-1)": (lambda L, x, w, b: F(L).layer_norm(x, x.shape[-1:], w, b),
                         lambda g: [g.x("mat"), g.x((g.shape("mat")[1],)),
                                    g.x((g.shape("mat")[1],))]),
    "F.rms_norm(-1)": (lambda L, x, w: F(L).rms_norm(x, x.shape[-1:], w),
                       lambda g: [g.x("mat"), g.x((g.shape("mat")[1],))]),
    "F.group_norm(C/4)": (lambda L, x, w, b: F(L).group_norm(x, x.shape[1] // 4, w, b),
                          lambda g: [g.x("img")] + _norm_params(g)),
    "F.instance_norm": (lambda L, x: F(L).instance_norm(x), lambda g: [g.x("img")]),
    "F.local_response_norm 3": (lambda L, x: F(L).local_response_norm(x, 3),
                                lambda g: [g.x("img")]),
    "F.interpolate nearest x2": (lambda L, x: F(L).interpolate(x, scale_factor=2),
                                 lambda g: [g.x("img")]),
    "F.interpolate nearest-exact x2": (
        lambda L, x: F(L).interpolate(x, scale_factor=2, mode="nearest-exact"),
        lambda g: [g.x("img")]),
    "F.interpolate bilinear x2": (
        lambda L, x: F(L).interpolate(x, scale_factor=2, mode="bilinear"),
        lambda g: [g.x("img")]),
    "F.interpolate bicubic x2": (
        lambda L, x: F(L).interpolate(x, scale_factor=2, mode="bicubic"),
        lambda g: [g.x("img")]),
    "F.interpolate linear x2": (
        lambda L, x: F(L).interpolate(x, scale_factor=2, mode="linear"),
        lambda g: [g.x("seq")]),
    "F.interpolate trilinear x2": (
        lambda L, x: F(L).interpolate(x, scale_factor=2, mode="trilinear"),
        lambda g: [g.x("vol")]),
    "F.pixel_shuffle 2": (lambda L, x: F(L).pixel_shuffle(x, 2), lambda g: [g.x("img")]),
    "F.pixel_unshuffle 2": (lambda L, x: F(L).pixel_unshuffle(x, 2), lambda g: [g.x("img")]),
    "F.channel_shuffle 2": (lambda L, x: F(L).channel_shuffle(x, 2), lambda g: [g.x("img")]),
    "F.unfold 3x3": (lambda L, x: F(L).unfold(x, 3, padding=1), lambda g: [g.x("img")]),
    "F.fold 3x3": (lambda L, x, s: F(L).fold(x, s, 3, padding=1),
                   lambda g: [g.x((g.shape("img")[0], g.shape("img")[1] * 9,
                                   g.shape("img")[2] * g.shape("img")[3])),
                              g.shape("img")[2:]]),
    "F.grid_sample bilinear": (
        lambda L, x, grid: F(L).grid_sample(x, grid, align_corners=False),
        lambda g: [g.x("img"), g.x(g.shape("img")[:1] + g.shape("img")[2:] + (2,), -1, 1)]),
    "F.grid_sample nearest": (
        lambda L, x, grid: F(L).grid_sample(x, grid, mode="nearest", align_corners=False),
        lambda g: [g.x("img"), g.c(g.shape("img")[:1] + g.shape("img")[2:] + (2,), -1, 1)]),
    "F.affine_grid": (lambda L, t, s: F(L).affine_grid(t, s, align_corners=False),
                      lambda g: [g.x((g.shape("img")[0], 2, 3)), g.shape("img")]),
    "F.scaled_dot_product_attention": (
        lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v),
        lambda g: [g.x("qkv"), g.x("qkv"), g.x("qkv")]),
    "F.scaled_dot_product_attention(causal)": (
        lambda L, q, k, v: F(L).scaled_dot_product_attention(q, k, v, is_causal=True),
        lambda g: [g.x("qkv"), g.x("qkv"), g.x("qkv")]),
}
for name, (call, build) in NN.items():
    add(name, "nn", call, build)


# ---- losses (input (N, C) requires grad; targets constant) ------------------------------------
def _ctc(g):
    """Logits (T, N, C), targets (N, S), lengths. NOTE: the case applies log_softmax, as
    models do: torch's ctc_loss gradient is only right through it (pytorch#52241)."""
    t, n, c, s = ((20, 2, 10, 5), (200, 32, 50, 40))[g.big]
    return [g.x((t, n, c)), g.i((n, s), c, 1), np.full(n, t, np.int64), np.full(n, s, np.int64)]


def _mlm_target(g):
    """multilabel_margin_loss targets: a few labels a row, then -1. NOTE: (N, C) is kept at
    (1000, 100) for the 1e6 size: ember builds an (N, C, C) tensor."""
    shape = ((10, 100), (1000, 100))[g.big]
    t = np.full(shape, -1, np.int64)
    t[:, :4] = g.i((shape[0], 4), shape[1])
    return [g.x(shape), t]


LOSSES = {
    "mse_loss": (lambda L, x, y: F(L).mse_loss(x, y), lambda g: [g.x("mat"), g.c("mat")]),
    "l1_loss": (lambda L, x, y: F(L).l1_loss(x, y), lambda g: [g.x("mat"), g.c("mat")]),
    "smooth_l1_loss": (lambda L, x, y: F(L).smooth_l1_loss(x, y),
                       lambda g: [g.x("mat"), g.c("mat")]),
    "huber_loss": (lambda L, x, y: F(L).huber_loss(x, y), lambda g: [g.x("mat"), g.c("mat")]),
    "binary_cross_entropy": (lambda L, x, y: F(L).binary_cross_entropy(x, y),
                             lambda g: [g.x("mat", 0.05, 0.95), g.c("mat", 0, 1)]),
    "binary_cross_entropy_with_logits": (
        lambda L, x, y: F(L).binary_cross_entropy_with_logits(x, y),
        lambda g: [g.x("mat"), g.c("mat", 0, 1)]),
    "cross_entropy": (lambda L, x, t: F(L).cross_entropy(x, t),
                      lambda g: [g.x("mat"), g.i((g.shape("mat")[0],), g.shape("mat")[1])]),
    "cross_entropy(smoothing=.1)": (
        lambda L, x, t: F(L).cross_entropy(x, t, label_smoothing=0.1),
        lambda g: [g.x("mat"), g.i((g.shape("mat")[0],), g.shape("mat")[1])]),
    "cross_entropy(probs)": (lambda L, x, p: F(L).cross_entropy(x, p),
                             lambda g: [g.x("mat"), g.c("mat", 0, 0.01)]),
    "nll_loss": (lambda L, x, t: F(L).nll_loss(x, t),
                 lambda g: [g.x("mat"), g.i((g.shape("mat")[0],), g.shape("mat")[1])]),
    "kl_div(batchmean)": (lambda L, x, y: F(L).kl_div(x, y, reduction="batchmean"),
                          lambda g: [g.x("mat", -5, -0.1), g.c("mat", 0.01, 1)]),
    "poisson_nll_loss": (lambda L, x, y: F(L).poisson_nll_loss(x, y),
                         lambda g: [g.x("mat"), g.c("mat", 0, 4)]),
    "gaussian_nll_loss": (lambda L, x, y, v: F(L).gaussian_nll_loss(x, y, v),
                          lambda g: [g.x("mat"), g.c("mat"), g.x("mat", 0.5, 2)]),
    "margin_ranking_loss": (lambda L, a, b, y: F(L).margin_ranking_loss(a, b, y),
                            lambda g: [g.x(), g.x(), g.sign("vec")]),
    "hinge_embedding_loss": (lambda L, x, y: F(L).hinge_embedding_loss(x, y),
                             lambda g: [g.x("mat"), g.sign("mat")]),
    "soft_margin_loss": (lambda L, x, y: F(L).soft_margin_loss(x, y),
                         lambda g: [g.x("mat"), g.sign("mat")]),
    "cosine_embedding_loss": (lambda L, a, b, y: F(L).cosine_embedding_loss(a, b, y),
                              lambda g: [g.x("mat"), g.x("mat"),
                                         g.sign((g.shape("mat")[0],))]),
    "triplet_margin_loss": (lambda L, a, p, n: F(L).triplet_margin_loss(a, p, n),
                            lambda g: [g.x("mat"), g.x("mat"), g.x("mat")]),
    "multi_margin_loss": (lambda L, x, t: F(L).multi_margin_loss(x, t),
                          lambda g: [g.x("mat"), g.i((g.shape("mat")[0],), g.shape("mat")[1])]),
    "multilabel_soft_margin_loss": (lambda L, x, y: F(L).multilabel_soft_margin_loss(x, y),
                                    lambda g: [g.x("mat"), (g.c("mat") > 0).astype(np.float32)]),
    "multilabel_margin_loss (N,100)": (lambda L, x, t: F(L).multilabel_margin_loss(x, t),
                                       _mlm_target),
    "ctc_loss": (lambda L, x, t, il, tl: F(L).ctc_loss(x.log_softmax(-1), t, il, tl), _ctc),
}
for name, (call, build) in LOSSES.items():
    add(f"F.{name}", "loss", call, build)

# ---- random draws and factories (shapes only: values differ by design) ------------------------
RANDOM = {
    "F.dropout(train)": (lambda L, x: F(L).dropout(x, 0.5), lambda g: [g.x("mat")]),
    "F.alpha_dropout(train)": (lambda L, x: F(L).alpha_dropout(x, 0.5, training=True),
                               lambda g: [g.x("mat")]),
    "F.rrelu(train)": (lambda L, x: F(L).rrelu(x, training=True), lambda g: [g.x()]),
    "F.gumbel_softmax": (lambda L, x: F(L).gumbel_softmax(x, dim=-1), lambda g: [g.x("mat")]),
}
for name, (call, build) in RANDOM.items():
    add(name, "random", call, build, check="shape")
for name, (call, build) in {
    "rand": (lambda L, n: L.rand(n), lambda g: [g.n]),
    "randn": (lambda L, n: L.randn(n), lambda g: [g.n]),
    "randint": (lambda L, n: L.randint(0, 100, (n,)), lambda g: [g.n]),
    "randperm": (lambda L, n: L.randperm(n), lambda g: [g.n]),
    "bernoulli": (lambda L, p: L.bernoulli(p), lambda g: [g.c("vec", 0, 1)]),
    "multinomial(1)": (lambda L, p: L.multinomial(p, 1), lambda g: [g.c("mat", 0, 1)]),
    "normal_": (lambda L, x: x.normal_(), lambda g: [g.c()]),
    "uniform_": (lambda L, x: x.uniform_(), lambda g: [g.c()]),
    "exponential_": (lambda L, x: x.exponential_(), lambda g: [g.c()]),
    "poisson": (lambda L, x: L.poisson(x), lambda g: [g.c("vec", 0, 4)]),
}.items():
    add(name, "random", call, build, grad=False, check="shape")
for name, (call, build) in {
    "zeros": (lambda L, n: L.zeros(n), lambda g: [g.n]),
    "ones": (lambda L, n: L.ones(n), lambda g: [g.n]),
    "full": (lambda L, n: L.full((n,), 1.5), lambda g: [g.n]),
    "arange": (lambda L, n: L.arange(n), lambda g: [g.n]),
    "linspace": (lambda L, n: L.linspace(0, 1, n), lambda g: [g.n]),
    "eye": (lambda L, n: L.eye(n), lambda g: [g.side()]),
    "zeros_like": (lambda L, x: L.zeros_like(x), lambda g: [g.c()]),
    "full_like": (lambda L, x: L.full_like(x, 2.0), lambda g: [g.c()]),
    "hann_window": (lambda L, n: L.hann_window(n), lambda g: [g.n]),
    "vander(8)": (lambda L, x: L.linalg.vander(x, N=8), lambda g: [g.c((g.n // 8,))]),
}.items():
    add(name, "factory", call, build, grad=False)

# ---- in-place (forward only: the inputs are leaves; each op is stable under repetition) -------
INPLACE = {
    "add_": lambda L, x, y: x.add_(y), "mul_": lambda L, x, y: x.mul_(y),
    "div_": lambda L, x, y: x.div_(y), "copy_": lambda L, x, y: x.copy_(y),
    "lerp_": lambda L, x, y: x.lerp_(y, 0.5),
    "sigmoid_": lambda L, x, y: x.sigmoid_(), "tanh_": lambda L, x, y: x.tanh_(),
    "sin_": lambda L, x, y: x.sin_(), "relu_": lambda L, x, y: x.relu_(),
    "abs_": lambda L, x, y: x.abs_(), "neg_": lambda L, x, y: x.neg_(),
    "sqrt_": lambda L, x, y: x.sqrt_(), "clamp_": lambda L, x, y: x.clamp_(-0.5, 0.5),
    "fill_": lambda L, x, y: x.fill_(1.5), "zero_": lambda L, x, y: x.zero_(),
    "masked_fill_": lambda L, x, y: x.masked_fill_(y > 1.5, 0.0),
}
for name, call in INPLACE.items():
    add(name, "inplace", call, lambda g: [g.c("vec", 0.5, 2), g.c("vec", 0.999, 1.001)],
        grad=False)

CASES.sort(key=lambda c: c.family)
if len({(c.op, c.family) for c in CASES}) != len(CASES):
    raise RuntimeError("_throughput_cases: two cases share an (op, family) name")
