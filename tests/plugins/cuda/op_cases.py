"""Cases for comparing the cuda backend with the cpu backend op by op, over dtypes.

Each ``Case`` names the kernel it covers (``op``, as in the cpu backend's kernel table),
a short description, a callable and its inputs as numpy arrays of any dtype; the test
makes tensors from the inputs on each device, runs the callable with that device as the
default one (so index tensors and factories inside it land there too) and compares every
output. The derivative samples of ``tests/core/autograd/op_samples.py`` cover float64
and gradients; these cases add float16, bfloat16, float32, the integer types and bool,
special values (NaN, infinities, signed zeros, ties), and the ops without derivatives
(comparisons, logical and bitwise ops, argmax, one_hot, factories). ``tol`` overrides
the per-dtype tolerance where an op sums many products (matmul, convolution).
"""
from __future__ import annotations

import contextlib
import zlib

import numpy as np

import ember as E


@contextlib.contextmanager
def default_device(device):
    """Within the block, factories and ``E.tensor`` create on ``device``."""
    previous = E.get_default_device()
    E.set_default_device(device)
    try:
        yield
    finally:
        E.set_default_device(previous)


class Case:
    """One comparison: ``fn(*tensors(inputs))`` on cuda against the same on cpu."""

    def __init__(self, op, desc, fn, *inputs, tol=None):
        self.op, self.desc, self.fn, self.inputs, self.tol = op, desc, fn, inputs, tol
        self.id = f"{op}-{desc}"


def gen(shape, dtype, lo=-3.0, hi=3.0, salt=0):
    """Deterministic test values of ember dtype ``dtype`` as a numpy array."""
    rng = np.random.default_rng(zlib.crc32(repr((shape, dtype.name, lo, hi, salt)).encode()))
    if dtype is E.bool_:
        return rng.random(shape) > 0.5
    if not dtype.is_floating_point:
        low = max(int(lo), 0) if dtype is E.uint8 else int(lo)
        return rng.integers(low, int(hi) + 1, shape).astype(dtype.numpy)
    return rng.uniform(lo, hi, shape).astype(dtype.numpy)


def special(dtype):
    """NaN, infinities, signed zeros, halves and a tie, as ember dtype ``dtype``."""
    return np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 2.5, -2.5, 0.5, 1.5, 1.0, 1.0],
                    dtype=np.float32).astype(dtype.numpy)


F16, BF16, F32, I8, I32, I64, U8, B = (E.float16, E.bfloat16, E.float32, E.int8, E.int32,
                                       E.int64, E.uint8, E.bool_)
CASES: list = []


def case(op, desc, fn, *inputs, tol=None):
    CASES.append(Case(op, desc, fn, *inputs, tol=tol))


UNARY_FLOAT = {"exp": (-3, 3), "exp2": (-3, 3), "log": (0.1, 5), "log2": (0.1, 5),
               "log10": (0.1, 5), "log1p": (-0.9, 3), "expm1": (-3, 3), "sqrt": (0, 5),
               "rsqrt": (0.2, 5), "sin": (-3, 3), "cos": (-3, 3), "tan": (-1.2, 1.2),
               "asin": (-1, 1), "acos": (-1, 1), "atan": (-3, 3), "sinh": (-3, 3),
               "cosh": (-3, 3), "tanh": (-3, 3), "sigmoid": (-8, 8), "erf": (-3, 3),
               "reciprocal": (0.2, 5), "gelu": (-3, 3), "silu": (-6, 6)}
for _op, (_lo, _hi) in UNARY_FLOAT.items():
    for _dt in (F16, BF16, F32, I32):
        if _dt is I32 and _op in ("gelu", "silu"):
            continue
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, _lo, _hi))
case("gelu", "tanh", lambda x: E.gelu(x, approximate="tanh"), gen((5,), F32))
for _op in ("abs", "neg", "sign", "floor", "ceil", "trunc", "round", "relu", "positive"):
    for _dt in (I8, I32, I64, F16, BF16, F32):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt))
    case(_op, "specials", getattr(E, _op), special(F32))
case("round", "decimals", lambda x: E.round(x, decimals=2), gen((6,), F32))
case("nan_to_num", "specials", lambda x: E.nan_to_num(x, nan=1.0), special(F32))
case("nan_to_num", "half", E.nan_to_num, special(F16))
case("clamp", "int", lambda x: E.clamp(x, -1, 2), gen((3, 4), I32))
case("clamp", "half", lambda x: E.clamp(x, -1.5, 0.5), gen((3, 4), F16))
case("clamp_min", "int_tensor", E.clamp_min, gen((3, 4), I32), gen((4,), I32))
case("clamp_max", "float_specials", lambda x: E.clamp_max(x, 1.0), special(F32))
# special functions, NaN-aware binaries, fused multiply-adds (kernels/special.py)
for _op, (_lo, _hi) in {"asinh": (-3, 3), "acosh": (1, 5), "atanh": (-0.9, 0.9),
                        "erfc": (-3, 5), "logit": (0.05, 0.95)}.items():
    for _dt in (F16, BF16, F32, I32):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, _lo, _hi))
case("logit", "eps", lambda x: E.logit(x, eps=0.25), gen((8,), F32, 0, 1))
for _dt in (F16, BF16, F32):
    case("frac", _dt.name, E.frac, gen((3, 4), _dt))
    case("copysign", _dt.name, E.copysign, gen((3, 4), _dt), special(_dt)[:4])
    case("xlogy", _dt.name, E.xlogy, gen((3, 4), _dt, 0, 2), gen((4,), _dt, 0, 3, salt=1))
    for _op in ("logaddexp", "logaddexp2"):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, -20, 20),
             gen((4,), _dt, -20, 20, salt=1))
    case("addcdiv", _dt.name, lambda a, b, c: E.addcdiv(a, b, c, value=-0.5), gen((3, 4), _dt),
         gen((4,), _dt), gen((3, 1), _dt, 1, 3))
case("frac", "specials", E.frac, special(F32))
case("xlogy", "specials", lambda y: E.xlogy(E.zeros_like(y), y), special(F32))
for _dt in (B, U8, I8, I32, F16, BF16, F32):
    case("signbit", _dt.name, E.signbit, gen((3, 4), _dt))
for _dt in (B, U8, I32, F16, BF16, F32):
    for _op in ("fmax", "fmin"):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt), gen((4,), _dt, salt=1))
for _dt in (U8, I32, I64, F16, BF16, F32):
    case("addcmul", _dt.name, lambda a, b, c: E.addcmul(a, b, c, value=2), gen((3, 4), _dt, 0, 3),
         gen((4,), _dt, 0, 3), gen((3, 1), _dt, 0, 3))
case("signbit", "specials", E.signbit, special(F32))
for _op in ("fmax", "fmin"):
    case(_op, "specials", getattr(E, _op), special(F32), special(F32)[::-1].copy())

BINARY = ("add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
          "pow", "atan2", "maximum", "minimum")
for _op in BINARY:
    for _dt in (I32, I64, U8, F16, BF16, F32):
        if _op == "atan2" and not _dt.is_floating_point:
            continue
        lo, hi = (0, 3) if _op == "pow" else (-9, 9)
        rhs = gen((4,), _dt, 1, 4, salt=1) if _op in ("floor_divide", "remainder", "fmod",
                                                     "div", "true_divide", "pow") and \
            not _dt.is_floating_point else gen((4,), _dt, lo, hi, salt=1)
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, lo, hi), rhs)
    case(_op, "mixed_int32_half", getattr(E, _op), gen((3, 4), I32, 1, 4),
         gen((4,), F16, 1, 4, salt=2))
case("add", "scalar_alpha", lambda x, y: E.add(x, y, alpha=-2), gen((5,), I64), gen((5,), I64))
case("mul", "wrapped_number", lambda x: x * 1000, gen((5,), I8))
case("pow", "scalar_base", lambda x: 2 ** x, gen((5,), I32, 0, 6))
case("floor_divide", "boundary", lambda x: x // 0.1, np.array([5.0, -5.0, 0.3], np.float32))
case("remainder", "boundary", lambda x: x % 0.1, np.array([5.0, -5.0, 0.3], np.float64))
for _mode in ("trunc", "floor"):
    case("div", f"{_mode}_int", lambda x, y, m=_mode: E.div(x, y, rounding_mode=m),
         gen((3, 4), I32, -9, 9), np.array([2, -3, 4, -1], np.int32))
    case("div", f"{_mode}_float", lambda x, y, m=_mode: E.div(x, y, rounding_mode=m),
         gen((3, 4), F32), gen((4,), F32, 0.5, 2))
case("bitwise_left_shift", "counts", E.bitwise_left_shift, gen((8,), I8, -9, 9),
     np.arange(-1, 7, dtype=np.int8))
case("bitwise_right_shift", "counts", E.bitwise_right_shift, gen((8,), I32, -99, 99),
     np.array([-1, 0, 1, 5, 31, 32, 33, 2], np.int32))
for _op in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
            "bitwise_right_shift"):
    for _dt in (B, U8, I8, I32, I64):
        if _dt is B and "shift" in _op:
            continue
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, 0, 5), gen((4,), _dt, 0, 5, 1))
for _dt in (B, U8, I64):
    case("bitwise_not", _dt.name, E.bitwise_not, gen((3, 4), _dt))
for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    for _dt in (B, U8, I32, F16, BF16):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, -2, 2), gen((4,), _dt, -2, 2, 1))
    case(_op, "nan_scalar", lambda x, o=_op: getattr(E, o)(x, 1.0), special(F32))
for _op in ("logical_and", "logical_or", "logical_xor"):
    for _dt in (B, I32, F32):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, -1, 1), gen((4,), _dt, -1, 1, 1))
    case(_op, "specials", getattr(E, _op), special(F32), special(F32)[::-1].copy())
case("logical_not", "float", E.logical_not, special(F32))
case("logical_not", "int", E.logical_not, gen((5,), I32, -1, 1))
case("where", "int_scalar", lambda c, x: E.where(c, x, 7), gen((3, 4), B), gen((4,), I32))
case("where", "half", E.where, gen((3, 1), B), gen((3, 4), F16), gen((4,), F16, salt=1))
case("lerp.Scalar", "half", lambda a, b: E.lerp(a, b, 0.3), gen((3, 4), F16), gen((4,), F16))
case("lerp.Tensor", "float", E.lerp, gen((3, 4), F32), gen((4,), F32), gen((3, 4), F32, 0, 1))

# ---- reductions, softmax, sorting
for _dt in (B, U8, I32, F16, BF16, F32):
    case("sum", _dt.name, lambda x: (E.sum(x), E.sum(x, (0, 2), keepdim=True)),
         gen((3, 4, 5), _dt))
    case("cumsum", _dt.name, lambda x: E.cumsum(x, 1), gen((3, 4), _dt))
    case("any", _dt.name, lambda x: (E.any(x), E.any(x, 1)), gen((3, 4), _dt, 0, 1))
    case("all", _dt.name, lambda x: (E.all(x), E.all(x, 0, keepdim=True)), gen((3, 4), _dt, 0, 1))
for _dt in (I32, F16, F32):
    case("prod", _dt.name, lambda x: (E.prod(x), E.prod(x, 1)), gen((3, 4), _dt, -2, 2))
    case("cumprod", _dt.name, lambda x: E.cumprod(x, 0), gen((3, 4), _dt, -2, 2))
    for _op in ("max", "min"):
        case(_op, _dt.name, lambda x, o=_op: getattr(E, o)(x), gen((3, 4), _dt, -2, 2))
        case(f"{_op}.dim", _dt.name, lambda x, o=_op: getattr(E, o)(x, 1), gen((3, 5), _dt, -1, 1))
        case(f"{_op}.other", _dt.name, getattr(E, _op), gen((3, 4), _dt), gen((4,), _dt, 1))
        case(f"a{_op}", _dt.name, lambda x, o=_op: getattr(E, "a" + o)(x, (0, 2)),
             gen((2, 3, 4), _dt, -1, 1))
        case(f"arg{_op}", _dt.name, lambda x, o=_op: (getattr(E, "arg" + o)(x),
                                                      getattr(E, "arg" + o)(x, 0)),
             gen((4, 5), _dt, -1, 1))
for _op in ("max.dim", "argmax", "argmin", "min.dim"):
    case(_op, "nan_ties", lambda x, o=_op: getattr(E, o.split(".")[0])(x, 1),
         np.array([[1, np.nan, 2, np.nan], [3, 3, -1, 3]], np.float32))
for _dt in (F16, BF16, F32):
    case("mean", _dt.name, lambda x: (E.mean(x), E.mean(x, (-1, 0))), gen((3, 4, 5), _dt))
    case("var", _dt.name, lambda x: (E.var(x), E.var(x, 1, correction=0)), gen((3, 8), _dt))
    case("std", _dt.name, lambda x: E.std(x, 0, keepdim=True), gen((5, 3), _dt))
    case("norm", _dt.name, lambda x: (E.norm(x), E.norm(x, 1, 1), E.norm(x, float("inf"), 0)),
         gen((3, 4), _dt))
    case("logsumexp", _dt.name, lambda x: E.logsumexp(x, 1), gen((3, 6), _dt, -20, 20))
    case("softmax", _dt.name, lambda x: E.softmax(x, -1), gen((3, 6), _dt, -20, 20))
    case("log_softmax", _dt.name, lambda x: E.log_softmax(x, 0), gen((3, 6), _dt, -20, 20))
case("norm.str", "nuclear", lambda x: (E.norm(x, "nuc", (1, 2)), E.norm(x, "fro", (0, 1))),
     gen((2, 4, 3), F32), tol=(1e-4, 1e-5))
for _dt in (F16, BF16, F32, I32, B):
    ties = gen((3, 9), _dt, -2, 2)
    case("sort", _dt.name, lambda x: (E.sort(x), E.sort(x, 0, descending=True)), ties)
    case("argsort", _dt.name, lambda x: E.argsort(x, 1, descending=True), ties)
    if _dt is not B:
        case("topk", _dt.name, lambda x: (E.topk(x, 3), E.topk(x, 2, 0, largest=False)), ties)
case("sort", "nan", lambda x: (E.sort(x), E.sort(x, descending=True)), special(F32))
case("topk", "nan", lambda x: E.topk(x, 4), special(F32))
case("one_hot", "int64", lambda x: (E.one_hot(x), E.one_hot(x, 7)), gen((3, 4), I64, 0, 5))
for _dt in (B, U8, I32, F16, BF16, F32):
    case("nansum", _dt.name, lambda x: (E.nansum(x), E.nansum(x, (0, 2), keepdim=True)),
         gen((3, 4, 5), _dt))
    case("cummax", _dt.name, lambda x: (E.cummax(x, 1), E.cummax(x, 0)), gen((3, 5), _dt, -2, 2))
    case("cummin", _dt.name, lambda x: E.cummin(x, -1), gen((3, 5), _dt, -2, 2))
case("nansum", "specials", lambda x: E.nansum(x[x.abs() != float("inf")]), special(F32))
for _op in ("cummax", "cummin"):
    case(_op, "nan_ties", lambda x, o=_op: getattr(E, o)(x, 0), special(F32))
    # CuPy has no maximum.accumulate: a log-step scan, six passes over 37 (ember_cuda/kernels.py)
    case(_op, "long_rows", lambda x, o=_op: getattr(E, o)(x, 1), gen((4, 37), I8, -3, 3))

# ---- shape, copies, indexing, linear algebra, nn kernels
_x = gen((2, 3, 4), I32)
case("cat", "mixed_dtypes", lambda a, b: E.cat([a, b], 1), gen((2, 3), I32), gen((2, 2), F16))
case("stack", "bool", lambda a, b: E.stack([a, b], -1), gen((2, 3), B), gen((2, 3), B, salt=1))
case("flip", "int", lambda x: E.flip(x, (0, 2)), _x)
case("roll", "int", lambda x: E.roll(x, (1, -2), (0, 2)), _x)
case("repeat", "uint8", lambda x: x.repeat(2, 1, 3), gen((2, 2), U8))
case("clone", "half_transposed", lambda x: E.clone(x.t()), gen((3, 4), F16))
case("contiguous", "int_permuted", lambda x: x.permute(2, 0, 1).contiguous(), _x)
case("fill_", "uint8_wrap", lambda x: x.clone().fill_(-1), gen((2, 3), U8))
case("copy_", "casts", lambda a, b: (a.clone().copy_(b), b.clone().copy_(a > 0)),
     gen((2, 3), I32), gen((2, 3), F32))
case("masked_fill", "int", lambda x, m: E.masked_fill(x, m, -5), gen((3, 4), I64), gen((4,), B))
case("index", "mask_and_arrays", lambda x, m: (x[m], x[[0, 2, 2], 1:], x[..., [3, 0]]),
     gen((3, 4), I32), gen((3, 4), B))
for _dt in (I64, I8, B, F16, BF16, F32):
    case("index_put_", f"accumulate_{_dt.name}", lambda x, v: _index_put(x, [0, 2, 0], v),
         gen((3, 4), _dt, 0, 3), gen((3, 4), _dt, 0, 3, salt=1))
    case("scatter_add", _dt.name, lambda x, s: E.scatter_add(
        x, 1, E.tensor([[0, 0, 2], [1, 1, 1]]), s), gen((2, 3), _dt, 0, 3), gen((2, 3), _dt, 0, 3))
case("index_put_", "mask_value", lambda x, m: _set(x, m, 9), gen((3, 4), I32), gen((3, 4), B))
case("index_select", "int32_index", lambda x: E.index_select(x, 2, E.tensor([3, 0, 3],
                                                                          dtype=E.int32)), _x)
for _dt in (B, U8, I64, F16, BF16, F32):
    case("index_add", _dt.name, lambda x, s: E.index_add(x, 1, E.tensor([2, 0, 2]), s, alpha=2),
         gen((2, 3), _dt, 0, 3), gen((2, 3), _dt, 0, 3, salt=1))
    case("index_fill", _dt.name, lambda x: E.index_fill(x, 0, E.tensor([-1], dtype=E.int32), 1),
         gen((2, 3), _dt, 0, 3))
case("gather", "int", lambda x: E.gather(x, 0, E.tensor([[1, 0, 1], [0, 0, 1]])),
     gen((2, 3), I64))
case("scatter", "bool", lambda x, s: E.scatter(x, 1, E.tensor([[2, 0], [1, 2]]), s),
     gen((2, 3), B), gen((2, 2), B, salt=1))
case("scatter.value", "uint8", lambda x: E.scatter(x, 0, E.tensor([[1, 0, 1]]), 200),
     gen((2, 3), U8))
case("take_along_dim", "negative", lambda x: (E.take_along_dim(x, E.tensor([[-1, 0], [2, 1]]), 1),
                                              E.take_along_dim(x, E.tensor([5, -6]))),
     gen((2, 3), F16))
for _dt in (F16, BF16, F32, I64):
    tol = (2e-2, 2e-2) if _dt in (F16, BF16) else None
    case("matmul", _dt.name, lambda a, b: (a @ b, a[0] @ b, a @ b[:, 0]),
         gen((2, 3, 8), _dt, -2, 2), gen((8, 5), _dt, -2, 2, 1), tol=tol)
    case("mm", _dt.name, E.mm, gen((4, 8), _dt, -2, 2), gen((8, 3), _dt, -2, 2, 1), tol=tol)
    case("bmm", _dt.name, E.bmm, gen((2, 3, 8), _dt, -2, 2), gen((2, 8, 4), _dt, -2, 2), tol=tol)
    case("addmm", _dt.name, lambda c, a, b: E.addmm(c, a, b, beta=2, alpha=-1), gen((3,), _dt),
         gen((2, 8), _dt, -2, 2), gen((8, 3), _dt, -2, 2, 1), tol=tol)
    case("dot", _dt.name, E.dot, gen((16,), _dt, -2, 2), gen((16,), _dt, -2, 2, 1), tol=tol)
    case("outer", _dt.name, E.outer, gen((3,), _dt), gen((4,), _dt, salt=1), tol=tol)
    case("einsum", _dt.name, lambda a, b: E.einsum("bij,jk->bki", a, b),
         gen((2, 3, 8), _dt, -2, 2), gen((8, 5), _dt, -2, 2, 1), tol=tol)
# torch.linalg (kernels/factorizations/): float32 and float64; decompositions compare
# gauge-invariant outputs (Q R, |R|, v * v, U S Vh), as LAPACK and cuSOLVER may pick other signs
for _dt in (F32, E.float64):
    _lt = (1e-3, 1e-4) if _dt is F32 else None
    _a, _b = gen((2, 3, 3), _dt, -1, 1) + 3 * np.eye(3, dtype=_dt.numpy), gen((2, 3, 2), _dt)
    case("linalg_inv", _dt.name, E.linalg.inv, _a, tol=_lt)
    case("linalg_solve", _dt.name, lambda a, b: (E.linalg.solve(a, b), E.linalg.solve(a, b[..., 0]),
                                                 E.linalg.solve(a, b.mT, left=False)), _a, _b,
         tol=_lt)
    case("linalg_det", _dt.name, E.linalg.det, _a, tol=_lt)
    case("linalg_slogdet", _dt.name, E.linalg.slogdet, _a, tol=_lt)
    case("linalg_cholesky", _dt.name, lambda a: (E.linalg.cholesky(a @ a.mT),
                                                 E.linalg.cholesky(a @ a.mT, upper=True)), _a,
         tol=_lt)
    case("linalg_qr", _dt.name, lambda a: [(lambda q, r: (q @ r, r.abs()))(*E.linalg.qr(a, m))
                                           for m in ("reduced", "complete")], gen((2, 4, 3), _dt),
         tol=_lt)
    case("linalg_eigh", _dt.name, lambda a: (lambda w, v: (w, v * v))(*E.linalg.eigh(a + a.mT)),
         gen((2, 3, 3), _dt), tol=_lt)
    case("linalg_svd", _dt.name, lambda a: (lambda u, s, vh: (s, (u * s.unsqueeze(-2)) @ vh))(
        *E.linalg.svd(a, full_matrices=False)), gen((2, 4, 3), _dt), tol=_lt)
    # LU, triangular solves, lstsq, matrix_exp (factorizations/lu.py, lstsq.py,
    # matrix_exp.py): loops written over xp, so the GPU runs the same algorithm
    case("linalg_lu_factor_ex", _dt.name, lambda a: (
        E.linalg.lu_factor_ex(a), E.linalg.lu_factor_ex(a, pivot=False)[0],
        E.linalg.lu_factor_ex(E.zeros_like(a))), gen((2, 4, 3), _dt), tol=_lt)
    case("lu_unpack", _dt.name, lambda a: E.lu_unpack(*E.linalg.lu_factor(a)), _a, tol=_lt)
    case("linalg_solve_triangular", _dt.name, lambda a, b: [
        E.linalg.solve_triangular(a, b, upper=up, left=True, unitriangular=unit)
        for up in (True, False) for unit in (True, False)] + [
        E.linalg.solve_triangular(a, b.mT, upper=True, left=False)], _a, _b, tol=_lt)
    case("linalg_lstsq", _dt.name, lambda a, b: E.linalg.lstsq(a, b, driver="gelsd"),
         gen((2, 5, 3), _dt), gen((2, 5, 2), _dt, salt=1), tol=_lt)
    case("linalg_matrix_exp", _dt.name, lambda a: (E.linalg.matrix_exp(a * 0.01),
                                                   E.linalg.matrix_exp(a)), _a, tol=_lt)
    case("linalg_cholesky_ex", _dt.name, lambda a: (E.linalg.cholesky_ex(a @ a.mT),
                                                    E.linalg.cholesky_ex(-a @ a.mT)), _a,
         tol=_lt)
for _dt in (F16, F32):
    case("_convolution", _dt.name, lambda x, w, b: E.nn.functional.conv2d(x, w, b, padding=1),
         gen((2, 3, 6, 6), _dt), gen((4, 3, 3, 3), _dt), gen((4,), _dt), tol=(2e-2, 2e-2)
         if _dt is F16 else (1e-4, 1e-5))
    case("convolution_backward", _dt.name, lambda g, x, w: E.convolution_backward(
        g, x, w, (1, 1), (1, 1), (1, 1), False, (0, 0), 1, (True, True, True)),
        gen((2, 4, 6, 6), _dt), gen((2, 3, 6, 6), _dt), gen((4, 3, 3, 3), _dt),
        tol=(5e-2, 5e-2) if _dt is F16 else (1e-4, 1e-4))
for _dt in (F16, F32, I32):
    case("max_pool2d_with_indices", _dt.name,
         lambda x: (E.max_pool2d_with_indices(x, (2, 2), (2, 2), (0, 0), (1, 1), False),
                    E.max_pool2d_with_indices(x, (3, 3), (1, 2), (1, 1), (1, 1), True)),
         gen((2, 3, 7, 7), _dt, -2, 2))
case("max_pool2d_with_indices_backward", "overlap", lambda g, x: E.max_pool2d_with_indices_backward(
    g, x, (3, 3), (1, 1), (1, 1), (1, 1), False,
    E.max_pool2d_with_indices(x, (3, 3), (1, 1), (1, 1), (1, 1), False)[1]),
    gen((1, 2, 5, 5), F32), gen((1, 2, 5, 5), F32, -1, 1))
for _dt in (F16, F32, I32):
    case("max_pool3d_with_indices", _dt.name,
         lambda x: (E.max_pool3d_with_indices(x, (2, 2, 2), (2, 2, 2), (0, 0, 0), (1, 1, 1),
                                              False),
                    E.max_pool3d_with_indices(x, (3, 2, 3), (1, 2, 2), (1, 1, 1), (1, 2, 1),
                                              True)),
         gen((2, 2, 4, 5, 6), _dt, -2, 2))
case("max_pool3d_with_indices_backward", "overlap",
     lambda g, x: E.max_pool3d_with_indices_backward(
         g, x, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), False,
         E.max_pool3d_with_indices(x, (3, 3, 3), (1, 1, 1), (1, 1, 1), (1, 1, 1), False)[1]),
     gen((1, 2, 3, 4, 4), F32), gen((1, 2, 3, 4, 4), F32, -1, 1))
for _dt in (F16, F32):   # targets (2, 2) of a (2, 3, 2) input; one ignored in the second call
    case("nll_loss_forward", _dt.name, lambda x: (
        E.nll_loss_forward(x, E.tensor([[1, 2], [0, 2]]), None, "mean", -100),
        E.nll_loss_forward(x, E.tensor([[1, -100], [0, 2]]),
                           E.tensor([0.5, 2.0, 1.5], dtype=x.dtype), "none", -100)),
        gen((2, 3, 2), _dt), tol=(1e-3, 1e-3) if _dt is F16 else None)
case("nll_loss_backward", "mean_ignore", lambda g, x: E.nll_loss_backward(
    g, x, E.tensor([1, 2, 0, 2]), E.tensor([0.5, 2.0, 1.5]), "mean", 0,
    E.nll_loss_forward(x, E.tensor([1, 2, 0, 2]), E.tensor([0.5, 2.0, 1.5]), "mean", 0)[1]),
    gen((), F32), gen((4, 3), F32))
case("empty", "shape", lambda: E.empty(2, 3, dtype=E.int16).shape)
case("full", "int", lambda: E.full((2, 3), 7, dtype=E.int32))
case("arange", "float", lambda: (E.arange(0, 1, 0.1), E.arange(5, dtype=E.uint8)))
case("linspace", "half", lambda: E.linspace(-1, 1, 7, dtype=E.float16))
case("eye", "bool", lambda: E.eye(3, 4, dtype=E.bool_))
case("logspace", "int_and_half", lambda: (E.logspace(0, 1, 3, dtype=E.int64),
                                          E.logspace(-2, 2, 5, base=2.0, dtype=E.float16)))
# a permutation's sorted values do not depend on the device's random stream
case("randperm", "sorted", lambda: (E.randperm(50).sort()[0], E.randperm(7, dtype=E.int32)
                                    .sort()[0], E.randperm(0)))

# ---- matrices, special values, data-dependent sizes
for _dt in (B, U8, I32, F16, BF16, F32):
    case("tril", _dt.name, lambda x: (E.tril(x), E.tril(x, -1), x.clone().tril_(2)),
         gen((2, 3, 4), _dt))
    case("triu", _dt.name, lambda x: (E.triu(x, 1), E.triu(x.transpose(-1, -2), -2)),
         gen((2, 3, 4), _dt))
    case("diagonal", _dt.name, lambda x: (E.diagonal(x, 1, 0, 2).clone(), E.diag(x[0], -1)),
         gen((3, 2, 4), _dt))
    case("diagonal_backward", _dt.name, lambda x: (E.diag_embed(x, -1), E.diag(x[0])),
         gen((2, 3), _dt))
    case("nonzero", _dt.name, lambda x: (E.nonzero(x), E.argwhere(x[0, 0]), x[0, 0, 0].nonzero()),
         gen((2, 3, 4), _dt, -1, 1))
    case("count_nonzero", _dt.name, lambda x: (E.count_nonzero(x), E.count_nonzero(x, (0, 2))),
         gen((2, 3, 4), _dt, -1, 1))
    case("_unique2", _dt.name, lambda x: E.unique(x, return_inverse=True, return_counts=True),
         gen((3, 5), _dt, -2, 2))
    case("unique_dim", _dt.name, lambda x: E.unique(x, dim=1, return_inverse=True,
                                                    return_counts=True), gen((2, 6), _dt, 0, 1))
    case("unique_consecutive", _dt.name, lambda x: (
        E.unique_consecutive(x, return_inverse=True, return_counts=True),
        E.unique_consecutive(x, return_counts=True, dim=0)), gen((6, 2), _dt, 0, 1))
for _op in ("isnan", "isinf", "isfinite", "isposinf", "isneginf"):
    for _dt in (F16, BF16, F32, I32, B):
        case(_op, _dt.name, getattr(E, _op), special(_dt) if _dt.is_floating_point else
             gen((5,), _dt))
for _dt in (F16, BF16, F32, I8, B):
    case("isclose", _dt.name, lambda x, y: (E.isclose(x, y, atol=0.5), E.isclose(
        x, y, rtol=0.1, atol=0, equal_nan=True)), special(_dt) if _dt.is_floating_point else
        gen((11,), _dt), (special(_dt)[::-1] if _dt.is_floating_point else
                          gen((11,), _dt, salt=1)).copy())
case("_unique2", "nan", lambda x: E.unique(x, return_inverse=True), special(F32))
for _dt in (I32, I64):
    case("repeat_interleave.Tensor", _dt.name, lambda r: (
        E.repeat_interleave(r), E.repeat_interleave(E.arange(4.0), r, output_size=int(r.sum()))),
        gen((4,), _dt, 0, 3))
for _dt in (F32, E.float64):
    case("_fused_adam_", _dt.name, lambda p, g: _adam_steps(p, g), gen((3, 4), _dt),
         gen((3, 4), _dt, salt=1))
RANDOM = ("rand", "randn", "randint")  # statistics, in test_random_factories
# the sampling kernels (backends/kernels/sampling.py): statistics in test_rng_sampling.py
RANDOM += ("normal_", "uniform_", "bernoulli_.float", "bernoulli_.Tensor", "exponential_",
           "geometric_", "log_normal_", "cauchy_", "random_.from", "random_.to", "random_",
           "bernoulli", "bernoulli.p", "normal.Tensor_Tensor", "normal.Tensor_float",
           "normal.float_Tensor", "poisson", "multinomial")


def _adam_steps(p, g):
    """Three Adam(fused=True) steps (amsgrad, weight decay): the parameter and moments."""
    from ember.optim import Adam
    p = p.clone().requires_grad_()
    opt = Adam([p], lr=0.1, weight_decay=0.1, amsgrad=True, fused=True)
    for k in range(3):
        p.grad = g * (k - 1)
        opt.step()
    state = opt.state[p]
    return p.detach(), state["exp_avg"], state["exp_avg_sq"], state["max_exp_avg_sq"]


def _index_put(x, index, value):
    from ember._indexing import index_put_normalized, normalize
    y = x.clone()
    return index_put_normalized(y, normalize(y, E.tensor(index))[0], value[:len(index)],
                                accumulate=True)


def _set(x, index, value):
    y = x.clone()
    y[index] = value
    return y



# gamma family, erfinv, Bessel, sinc, hypot, nextafter, gcd/lcm (kernels/special_math.py)
for _op, (_lo, _hi) in {"lgamma": (-4, 6), "digamma": (0.1, 6), "erfinv": (-0.99, 0.99),
                        "i0": (-40, 40), "special_i1": (-40, 40), "sinc": (-3, 3)}.items():
    for _dt in (F16, BF16, F32, I32):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, _lo, _hi))
case("polygamma", "n2", lambda x: E.polygamma(2, x), gen((3, 4), F32, -3, 5))
for _dt in (F16, BF16, F32):
    case("hypot", _dt.name, E.hypot, gen((3, 4), _dt), gen((4,), _dt, salt=1))
for _dt in (F16, F32):
    case("nextafter", _dt.name, E.nextafter, gen((3, 4), _dt), special(_dt)[:4])
for _dt in (U8, I8, I32, I64):
    case("gcd", _dt.name, E.gcd, gen((3, 4), _dt, -20, 20), gen((4,), _dt, 0, 20, salt=1))
    case("lcm", _dt.name, E.lcm, gen((3, 4), _dt, -9, 9), gen((4,), _dt, 0, 9, salt=1))
# bucketing and counting (kernels/bucketing.py)
case("searchsorted", "1d", lambda s, v: E.searchsorted(s.sort().values, v, right=True),
     gen((6,), F32), gen((3, 4), F32, salt=1))
case("searchsorted", "nd_sorter",
     lambda s, v: E.searchsorted(s, v, sorter=s.argsort(dim=-1)), gen((2, 5), F32),
     gen((2, 3), F32, salt=1))
case("bucketize", "int", lambda x, b: E.bucketize(x, b.sort().values), gen((3, 4), I64),
     gen((5,), I64, salt=1))
case("bincount", "weights", lambda x, w: E.bincount(x, w, minlength=8), gen((12,), I64, 0, 5),
     gen((12,), F32))
case("histc", "f32", lambda x: E.histc(x, bins=6, min=-2, max=2), gen((20,), F32))
# statistics and numerics (kernels/log_scan.py, kernels/float_parts.py)
for _dt in (F16, BF16, F32, I32):
    case("logcumsumexp", _dt.name, lambda x: (E.logcumsumexp(x, 1), E.logcumsumexp(x, 0)),
         gen((3, 9), _dt, -20, 20))
case("logcumsumexp", "special", lambda x: E.logcumsumexp(x, 0), special(F32))
for _dt in (F16, BF16, F32):
    case("frexp", _dt.name, E.frexp, gen((3, 4), _dt, -1e3, 1e3))
case("frexp", "special", E.frexp, special(F32))

# ==== scatter_reduce (kernels/scatter_reduce.py): repeats, every reduction, dtypes ==========
for _dt in (B, U8, I64, F16, BF16, F32):
    for _red in ("sum", "prod", "mean", "amax", "amin"):
        if _dt is B and _red == "mean":
            continue
        case("scatter_reduce.two", f"{_red}_{_dt.name}",
             lambda x, s, r=_red: (E.scatter_reduce(x, 1, E.tensor([[0, 0, 2], [1, 1, 1]]), s, r),
                                   x.scatter_reduce(0, E.tensor([[1, 0, 1]]), s, r,
                                                    include_self=False)),
             gen((2, 3), _dt, 0, 3), gen((2, 3), _dt, 0, 3, salt=1))
# CuPy's maximum.at/minimum.at take no 8- or 16-bit type, skip NaN and round float64
# through float32 (atomics.cuh): ember widens or keys them (ember_cuda/kernels.py)
_SR = [[0, 0, 2], [1, 1, 1]]
for _red in ("amax", "amin"):
    for _dt in (I8, E.int16):
        case("scatter_reduce.two", f"{_red}_{_dt.name}",
             lambda x, s, r=_red: E.scatter_reduce(x, 1, E.tensor(_SR), s, r),
             gen((2, 3), _dt, -3, 3), gen((2, 3), _dt, -3, 3, salt=1))
    case("scatter_reduce.two", f"{_red}_nan_specials",
         lambda x, s, r=_red: (E.scatter_reduce(x, 1, E.tensor(_SR), s, r),
                               x.scatter_reduce(1, E.tensor(_SR), s, r, include_self=False)),
         gen((2, 3), F32), special(F32)[:6].reshape(2, 3))
    case("scatter_reduce.two", f"{_red}_float64_exact",
         lambda x, s, r=_red: E.scatter_reduce(x, 1, E.tensor(_SR), s, r),
         gen((2, 3), E.float64) + 0.1, gen((2, 3), E.float64, salt=1) + 1e-9)

# ==== torch.special (kernels/special_stats.py, special_gamma.py, special_bessel.py, ==========
# ==== special_airy.py, special_polynomials.py): dtypes, each range's branches, specials ======
for _op, (_lo, _hi) in {"special_entr": (0, 3), "special_ndtr": (-40, 8),
                        "special_ndtri": (0, 1), "special_log_ndtr": (-40, 30),
                        "special_erfcx": (-20, 40), "special_i0e": (-40, 40),
                        "special_i1e": (-40, 40), "special_bessel_j0": (-40, 40),
                        "special_bessel_j1": (-40, 40), "special_bessel_y0": (0, 40),
                        "special_bessel_y1": (0, 40), "special_modified_bessel_k0": (0, 10),
                        "special_modified_bessel_k1": (0, 10),
                        "special_scaled_modified_bessel_k0": (0, 40),
                        "special_scaled_modified_bessel_k1": (0, 40),
                        "special_spherical_bessel_j0": (-10, 10),
                        "special_airy_ai": (-15, 15)}.items():
    for _dt in (F16, BF16, F32, I32):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, _lo, _hi))
    case(_op, "specials", getattr(E, _op), special(F32))
for _op in ("special_xlog1py", "special_zeta", "igamma", "igammac"):
    for _dt in (F16, F32, I32):
        case(_op, _dt.name, getattr(E, _op), gen((3, 4), _dt, 0, 6), gen((4,), _dt, 0.1, 6, salt=1))
    case(_op, "specials", getattr(E, _op), special(F32), special(F32)[::-1].copy())
case("igamma", "large_a", E.igamma, gen((3, 4), F32, 50, 500), gen((3, 4), F32, 50, 500, salt=1))
for _op in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
            "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
            "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
            "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
            "laguerre_polynomial_l", "legendre_polynomial_p"):
    _op = "special_" + _op
    case(_op, "f32", getattr(E, _op), gen((3, 4), F32, -1.2, 1.2), gen((4,), I64, -1, 12, salt=1))
    case(_op, "number_n", lambda x, o=_op: getattr(E, o)(x, 9), gen((3, 4), F32, -1.2, 1.2))
