"""ops.lower: every pointwise kind x every dtype, as a one-op kernel, against eager ember.

Each case builds ``@triton.jit``-style source around ``lower``'s expression (loads and
stores follow the fuser's memory conventions: bools as int8 bytes, float16/bfloat16 loaded
into float32), runs it through Triton's interpreter on numpy arrays and compares it with
ember's eager op on the same inputs: exactly for integer and bool results, within a few
ulp for floats (the interpreter's libdevice is numpy, so float32/float64 agree closely;
float16/bfloat16 round once at the store where eager rounds each step). Where eager
raises, ``lower`` must decline. The expressions also compile for an NVIDIA GPU (to TTIR,
no GPU needed), which checks what the interpreter does not: libdevice's overloads and
Triton's dtype checks.
"""
import itertools
import os
import linecache
import math

import numpy as np
import pytest

import ember as E
from ember.jit.runtime.fuser import CHUNK_KINDS, FUSED_CONCAT, FUSIBLE_KINDS, FusionDeclined
from ember.jit.runtime.op_registry import op_info
from ember.ops import FUNCTIONS

from ember_triton_fuser import interpreter, ops

from ._nvidia import nvidia_ttir, run_without_interpreter
from ember_triton_fuser.ops import Operand, compute_dtype, lower, triton_type

# the interpreter computes with numpy, which warns where a GPU quietly gives inf or NaN
pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
DTYPES = E.types.all_scalar_types
FLOATS = (E.float16, E.bfloat16, E.float32, E.float64)
N = 48
_names = itertools.count()


# ---- the harness -----------------------------------------------------------------------------
def _operands(args, prefix="x"):
    """Operands of ``args`` (numpy arrays are tensors named x<i>; the rest constants)."""
    return [Operand(f"{prefix}{i}", E.types.from_numpy_dtype(a.dtype), rank=a.ndim)
            if isinstance(a, np.ndarray) else Operand(repr(a), None, a)
            for i, a in enumerate(args)]


def kernel_source(name, args, expr, out_dtype):
    """A one-op kernel: load every tensor argument, store ``expr`` to ``out``."""
    params, lines = [], []
    for i, a in enumerate(args):
        if not isinstance(a, np.ndarray):
            continue
        dt = E.types.from_numpy_dtype(a.dtype)
        params.append(f"in{i}")
        cast = " != 0" if dt is E.bool_ else (".to(tl.float32)" if dt in FLOATS[:2] else "")
        where = f"in{i}" if a.ndim == 0 else f"in{i} + offs, mask=mask"
        lines.append(f"    x{i} = tl.load({where}){cast}")
    store = "tl.int8" if out_dtype is E.bool_ else triton_type(out_dtype)
    return "\n".join([
        f"def {name}(out, {', '.join(params)}, n, BLOCK: tl.constexpr):",
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)",
        "    mask = offs < n",
        *lines,
        f"    r = {expr}",
        f"    tl.store(out + offs, r.to({store}), mask=mask)", ""])


def load_kernel(source, name, interpret):
    filename = f"<test_ops {name}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = interpreter.kernel_globals(interpret)
    exec(compile(source, filename, "exec"), namespace)
    return interpreter.jit(namespace[name], interpret)


def run(kind, args, out_dtype):
    """``lower(kind, ...)`` run through the interpreter; the result as a numpy array."""
    expr = lower(kind, _operands(args), out_dtype)
    name = f"k{next(_names)}"
    kernel = load_kernel(kernel_source(name, args, expr, out_dtype), name, True)
    out = np.zeros(N, dtype=out_dtype.numpy)
    pointers = [interpreter.as_pointer(a) for a in args if isinstance(a, np.ndarray)]
    kernel[(1,)](interpreter.as_pointer(out), *pointers, N, BLOCK=64)
    return out


def eager(kind, args):
    """ember's eager op on ``args`` (arrays become tensors), called by its schema."""
    schema = op_info(kind).schema
    pos, kw = [], {}
    for arg, v in zip(schema.arguments, args):
        v = E.tensor(v) if isinstance(v, np.ndarray) else v
        if arg.kwarg_only:
            kw[arg.name] = v
        else:
            pos.append(v)
    if kind == "ember::type_as":
        return pos[0].type_as(pos[1])
    return getattr(E, schema.name)(*pos, **kw)


# float tolerances: rtol about 2 ulp of the result dtype (bfloat16: Triton's interpreter
# truncates float32 -> bfloat16 instead of rounding, so 2 ulp more)
# atol: eager's gelu, in float64, loses ~1e-16 absolute in its tail (0.5 * x * (1 + erf))
TOL = {E.float16: (2e-3, 1e-6), E.bfloat16: (3e-2, 1e-30), E.float32: (1e-5, 1e-15),
       E.float64: (1e-12, 1e-15)}
# rules that round an intermediate to float16/bfloat16 as eager's composite does (x / 6 in
# hardsigmoid, tanh(x) in tanhshrink) match float16 to TOL, but the interpreter truncates
# to bfloat16, an error the next step cancels or amplifies: bfloat16 is checked to the
# intermediate's ulp (|x / 6|, |tanh x| <= 1)
BF16_ROUNDED_INSIDE = {"ember::hardsigmoid": (3e-2, 2 ** -7),
                       "ember::tanhshrink": (3e-2, 2 ** -7)}
# eager succeeds, the kernel cannot match it: lower declines (see ops' docstring)
DECLINED = ("integer pow with a tensor exponent", "> 64", "integer division by a tensor")


def check(kind, args):
    """The kernel of ``lower(kind, ...)`` equals eager on ``args``, or both refuse."""
    try:
        want = eager(kind, args)
    except Exception:  # noqa: BLE001 - whatever eager raises, the fuser must decline
        # the dtype a graph would carry: promotion of the Tensor arguments
        schema = op_info(kind).schema
        slots = [a for s, a in zip(schema.arguments, args) if s.type.base == "Tensor"]
        tensors = [E.types.from_numpy_dtype(a.dtype) for a in slots if isinstance(a, np.ndarray)]
        guess = E.types.result_type(tensors, (), [a for a in slots if type(a) in (int, float)])
        with pytest.raises(FusionDeclined):
            lower(kind, _operands(args), guess)
        return
    out_dtype = want.dtype
    try:
        got = run(kind, args, out_dtype)
    except FusionDeclined as e:
        assert any(reason in str(e) for reason in DECLINED), f"{kind} declined: {e}"
        return
    want = np.broadcast_to(want.numpy(), got.shape)
    if not out_dtype.is_floating_point:
        np.testing.assert_array_equal(got, want, err_msg=f"{kind} {args[1:]}")
        return
    rtol, atol = TOL[out_dtype]
    if out_dtype is E.bfloat16:
        rtol, atol = BF16_ROUNDED_INSIDE.get(kind, (rtol, atol))
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol,
                               atol=atol, equal_nan=True, err_msg=f"{kind} {args[1:]}")


# ---- inputs ----------------------------------------------------------------------------------
SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.0, -3.0, 1e-3, 7.0, -7.0,
           100.0, -100.0, math.nan, math.inf, -math.inf]


def sample(dtype, seed, low=-4.0, high=4.0, special=True):
    """``N`` values of ``dtype``: special values first (floats: NaN, inf, +-0, halves;
    integers: the extremes), then random ones."""
    rng = np.random.default_rng(seed)
    if dtype is E.bool_:
        return rng.random(N) < 0.5
    if dtype.is_floating_point:
        head = SPECIAL if special else []
        rest = rng.uniform(low, high, N - len(head))
        return np.array(head + list(rest)).astype(dtype.numpy)
    info = np.iinfo(dtype.numpy)
    head = [0, 1, 2, 3, 5, 7, info.max, info.min, info.max - 1]
    if dtype.is_signed:
        head += [-1, -2, -3, -5, -7, info.min + 1]
    small = rng.integers(max(info.min, -20), 21, (N - len(head)) // 2)
    wide = rng.integers(info.min, info.max, N - len(head) - len(small), endpoint=True)
    return np.array(head + list(small) + list(wide)).astype(dtype.numpy)


def X(dt):
    return sample(dt, 1)


def Y(dt):
    return sample(dt, 2)[::-1].copy()  # other special values meet


def C(dt):
    return sample(E.bool_, 3)


def W(dt):
    return sample(dt, 4, -0.5, 1.5, special=False)


def B(dt, seed=5):
    """Large magnitudes: the special values, then +-10**u with u uniform up to the dtype's
    largest power of ten (integers: as ``sample``)."""
    if not dt.is_floating_point:
        return sample(dt, seed)
    rng = np.random.default_rng(seed)
    top = math.log10(float(E.finfo(dt).max))
    rest = rng.choice([-1.0, 1.0], N - len(SPECIAL)) * 10.0 ** rng.uniform(0, top,
                                                                        N - len(SPECIAL))
    return np.array(SPECIAL + list(rest)).astype(dt.numpy)


# ---- cases: (kind, id, dtype -> arguments) ---------------------------------------------------
UNARY = ["abs", "neg", "sign", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
         "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
         "sigmoid", "relu", "relu6", "silu", "erf", "floor", "ceil", "trunc", "reciprocal",
         "logical_not", "bitwise_not", "asinh", "acosh", "atanh", "erfc", "frac", "square",
         "absolute", "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit", "mish",
         "hardswish", "hardsigmoid", "selu", "softsign", "log_sigmoid", "tanhshrink"]
BINARY = ["mul", "true_divide", "floor_divide", "remainder", "fmod", "pow", "atan2",
          "maximum", "minimum", "max.other", "min.other", "eq", "ne", "lt", "le", "gt", "ge",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "clamp_min", "clamp_max", "xlogy", "logaddexp", "logaddexp2",
          "copysign", "fmax", "fmin", "float_power"]
# ops with edge cases at large magnitudes (overflow of exp, x + 1 == x, inf - inf)
BIG_UNARY = ["asinh", "acosh", "erfc", "frac", "square", "isinf", "isfinite", "isposinf",
             "isneginf", "signbit", "mish", "hardswish", "selu", "softsign", "log_sigmoid",
             "tanhshrink", "exp", "sigmoid"]
BIG_BINARY = ["xlogy", "logaddexp", "logaddexp2", "copysign", "fmax", "fmin", "float_power"]
# ops whose self may be a Python number (native_functions.yaml's number_self, as PyTorch's
# Scalar-self overloads): sub(1, x) is what the JIT writes for 1 - x
NUMBER_SELF = {nf.name for nf in FUNCTIONS if nf.number_self}
CASES = [(k, "x", lambda dt: [X(dt)]) for k in UNARY]
for k in BINARY:
    CASES.append((k, "xy", lambda dt: [X(dt), Y(dt)]))
    if k in ("max.other", "min.other"):  # E.max(x, 3) is max.dim
        continue
    CASES += [(k, "x3", lambda dt: [X(dt), 3]), (k, "x2.5", lambda dt: [X(dt), 2.5])]
    if k in NUMBER_SELF:  # elsewhere eager refuses a number self, so no graph holds one
        CASES.append((k, "2y", lambda dt: [2, Y(dt)]))
    if k in ("mul", "true_divide", "floor_divide", "remainder", "fmod", "pow", "lt"):
        CASES.append((k, "x-2", lambda dt: [X(dt), -2]))
for k in ("floor_divide", "remainder", "fmod"):
    CASES += [(k, f"x{d}", lambda dt, d=d: [X(dt), d]) for d in (-1, 1, 0, -7, 0.0)]
CASES += [(k, f"x{e}", lambda dt, e=e: [X(dt), e]) for k in ("pow",) for e in (0, 1, 2, 0.5, 100)]
for k in ("add", "sub", "rsub"):
    CASES += [(k, f"xy-alpha{a}", lambda dt, a=a: [X(dt), Y(dt), a]) for a in (1, 2, -3, 0.5, True)]
    CASES.append((k, "x1000", lambda dt: [X(dt), 1000, 1]))
    if k in NUMBER_SELF:
        CASES.append((k, "2.5y", lambda dt: [2.5, Y(dt), 1]))
for mode in (None, "trunc", "floor", "round"):
    CASES += [("div", f"xy-{mode}", lambda dt, m=mode: [X(dt), Y(dt), m]),
              ("div", f"x-3-{mode}", lambda dt, m=mode: [X(dt), -3, m]),
              ("div", f"x2.5-{mode}", lambda dt, m=mode: [X(dt), 2.5, m])]
CASES += [("round", f"d{d}", lambda dt, d=d: [X(dt), d]) for d in (0, 2, -1)]
CASES += [("gelu", a, lambda dt, a=a: [X(dt), a]) for a in ("none", "tanh", "erf")]
CASES += [("leaky_relu", "0.1", lambda dt: [X(dt), 0.1]), ("elu", "1", lambda dt: [X(dt), 1.0]),
          ("elu", "0.5", lambda dt: [X(dt), 0.5])]
CASES += [("hardtanh", f"{lo},{hi}", lambda dt, lo=lo, hi=hi: [X(dt), lo, hi])
          for lo, hi in ((-1, 1), (-0.5, 2.5), (2, -2), (-300, 300))]
CASES += [("nan_to_num", "default", lambda dt: [X(dt), 0.0, None, None]),
          ("nan_to_num", "given", lambda dt: [X(dt), 1.5, 100.0, -100.0]),
          ("nan_to_num", "huge", lambda dt: [X(dt), -1e300, 1e300, -1e300])]
CASES += [("clamp", "xyw", lambda dt: [X(dt), Y(dt), W(dt)]),
          ("clamp", "-1,1", lambda dt: [X(dt), -1, 1]),
          ("clamp", "None,0.5", lambda dt: [X(dt), None, 0.5]),
          ("clamp", "-2,None", lambda dt: [X(dt), -2, None]),
          ("clamp", "None,None", lambda dt: [X(dt), None, None]),
          ("clamp", "2,-2", lambda dt: [X(dt), 2, -2]),
          ("clamp", "1000,None", lambda dt: [X(dt), 1000, None])]
CASES += [("lerp.Tensor", "xyw", lambda dt: [X(dt), Y(dt), W(dt)]),
          ("lerp.Scalar", "0.3", lambda dt: [X(dt), Y(dt), 0.3]),
          ("lerp.Scalar", "0.75", lambda dt: [X(dt), Y(dt), 0.75])]
CASES += [("where", "cxy", lambda dt: [C(dt), X(dt), Y(dt)]),
          ("where", "cx0.5", lambda dt: [C(dt), X(dt), 0.5]),
          ("where", "c2y", lambda dt: [C(dt), 2, Y(dt)]),
          ("where", "c1000y", lambda dt: [C(dt), 1000, Y(dt)]),
          ("where", "xxy", lambda dt: [X(dt), X(dt), Y(dt)])]
CASES += [("masked_fill", f"{v}", lambda dt, v=v: [X(dt), C(dt), v])
          for v in (2.5, -1, 1000, math.nan, True)]
CASES += [("type_as", to.name, lambda dt, to=to: [X(dt), np.zeros(N, to.numpy)]) for to in DTYPES]
# the ops added with the special functions and composite activations
CASES += [(k, "big", lambda dt: [B(dt)]) for k in BIG_UNARY]
CASES += [(k, "big", lambda dt: [B(dt), B(dt, 6)]) for k in BIG_BINARY]
CASES += [("atanh", "w", lambda dt: [W(dt)]),
          ("acosh", "w+1", lambda dt: [W(dt) + 1 if dt.is_floating_point else W(dt)])]
CASES += [("logit", f"{eps}", lambda dt, eps=eps: [W(dt), eps])
          for eps in (None, 1e-3, 0.25, 0.75, 0)]
CASES += [("logit", "x", lambda dt: [X(dt), None])]
CASES += [("softplus", f"{b},{t}", lambda dt, b=b, t=t: [X(dt), b, t])
          for b, t in ((1, 20), (2, 40), (0.5, 1.0), (-1, 5), (1, 1e10), (3, math.inf))]
CASES += [("softplus", "big", lambda dt: [B(dt), 1, 20])]
CASES += [("celu", f"{a}", lambda dt, a=a: [X(dt), a]) for a in (1.0, 0.5, -2, 0.0)]
CASES += [("softshrink", f"{lam}", lambda dt, lam=lam: [X(dt), lam]) for lam in (0.5, 2.5, 0, -1)]
CASES += [("hardshrink", f"{lam}", lambda dt, lam=lam: [X(dt), lam]) for lam in (0.5, 3, -1)]
CASES += [("threshold", f"{t},{v}", lambda dt, t=t, v=v: [X(dt), t, v])
          for t, v in ((0.5, 20.0), (1, -7), (2.5, 1000), (-0.5, 2.9), (0, math.nan))]
CASES += [("addcmul", f"xyw-{v}", lambda dt, v=v: [X(dt), Y(dt), W(dt), v])
          for v in (1, 0.5, -2, True)]
CASES += [("addcdiv", f"xyw-{v}", lambda dt, v=v: [X(dt), Y(dt), W(dt), v]) for v in (1, 0.5, -2)]
CASES += [("addcmul", "big", lambda dt: [B(dt), B(dt, 6), B(dt, 7), 3]),
          ("addcdiv", "big", lambda dt: [B(dt), B(dt, 6), B(dt, 7), 3])]
CASES += [("clip", "xyw", lambda dt: [X(dt), Y(dt), W(dt)]),
          ("clip", "-1,1", lambda dt: [X(dt), -1, 1]),
          ("clip", "None,0.5", lambda dt: [X(dt), None, 0.5]),
          ("clip", "None,None", lambda dt: [X(dt), None, None])]


INT_DIVISION = {"ember::floor_divide", "ember::remainder", "ember::fmod", "ember::div"}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("kind,args", [(f"ember::{k}", fn) for k, _, fn in CASES],
                         ids=[f"{k}-{i}" for k, i, _ in CASES])
def test_matches_eager(kind, args, dtype):
    a = args(dtype)
    to = E.types.from_numpy_dtype(a[-1].dtype) if kind == "ember::type_as" else None
    if to is not None and dtype.is_floating_point and not to.is_floating_point:
        # float -> integer of NaN, inf or an out of range value is undefined
        a[0] = sample(dtype, 5, -100 if to.is_signed else 0, 100, special=False)
    if kind in INT_DIVISION and isinstance(a[1], np.ndarray) and a[1].dtype.kind in "iub":
        a[1] = np.where(a[1] == 0, a[1].dtype.type(1), a[1])  # eager raises (see below)
    if kind in ("ember::pow", "ember::float_power") and dtype.is_floating_point and \
            isinstance(a[0], np.ndarray):
        # numpy's SIMD pow gives NaN for (-inf) ** 0.5, C99 and libdevice +inf
        a[0] = np.where(np.isneginf(a[0]), a[0].dtype.type(-4), a[0])
    check(kind, a)


@pytest.mark.parametrize("dtype", [E.uint8, E.int8, E.int16, E.int32, E.int64],
                         ids=lambda d: d.name)
@pytest.mark.parametrize("kind,extra", [("ember::floor_divide", []), ("ember::remainder", []),
                                        ("ember::fmod", []), ("ember::div", ["trunc"]),
                                        ("ember::div", ["floor"])])
def test_integer_division_by_a_tensor_is_declined(kind, extra, dtype):
    # eager raises ZeroDivisionError for a 0 in the divisor; a kernel cannot raise, so the
    # group runs unfused rather than give another result
    x, y = X(dtype), Y(dtype)
    assert (y == 0).any()
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        eager(kind, [x, y] + extra)
    with pytest.raises(FusionDeclined, match="integer division by a tensor"):
        run(kind, [x, y] + extra, dtype)
    # by a constant it fuses, and matches eager
    got = run(kind, [x, 3] + extra, dtype)
    np.testing.assert_array_equal(got, eager(kind, [x, 3] + extra).numpy())


MIXED = [  # promotion across dtypes, Python scalars and 0-d tensors
    ("ember::add", [X(E.uint8), X(E.int8), 1]),                 # -> int16
    ("ember::mul", [X(E.int32), X(E.float16)]),                 # -> float16
    ("ember::add", [X(E.float16), X(E.bfloat16), 1]),           # -> float32
    ("ember::sub", [X(E.float16), np.array(0.1, np.float32), 1]),  # 0-d: stays float16
    ("ember::true_divide", [X(E.int64), X(E.uint8)]),           # -> float32
    ("ember::floor_divide", [X(E.int8), 2.5]),                  # -> float32
    ("ember::eq", [X(E.int8), 1000]),                           # compares with -24
    ("ember::lt", [X(E.uint8), -1]),                            # compares with 255
    ("ember::lt", [X(E.float16), np.array(0.3, np.float32)]),   # compares in float16
    ("ember::ge", [X(E.int32), np.array(2.5, np.float64)]),     # compares in float64
    ("ember::gt", [X(E.bool_), X(E.int8)]),
    ("ember::maximum", [X(E.int16), X(E.float32)]),
    ("ember::where", [C(E.bool_), X(E.int8), X(E.float64)]),
    ("ember::where", [C(E.bool_), X(E.uint8), -1.5]),
    ("ember::clamp", [X(E.int32), W(E.float32), 2]),
    ("ember::pow", [X(E.bool_), 2]),                            # -> int64
    ("ember::pow", [X(E.int16), 0.5]),
    ("ember::bitwise_xor", [X(E.bool_), X(E.uint8)]),
    ("ember::logical_and", [X(E.float16), X(E.int64)]),
    ("ember::lerp.Tensor", [X(E.float32), Y(E.float32), np.array(0.7, np.float64)]),
    ("ember::lerp.Tensor", [X(E.float32), Y(E.float64), W(E.float32)]),  # eager raises
    ("ember::masked_fill", [X(E.int8), C(E.bool_), 2.9]),      # truncates to 2
    ("ember::masked_fill", [X(E.float32), C(E.bool_), np.array(1.5, np.float64)]),
    ("ember::xlogy", [X(E.int8), Y(E.float16)]),                # -> float16
    ("ember::xlogy", [np.array(0.0, np.float32), Y(E.float32)]),  # 0-d self
    ("ember::fmax", [X(E.int16), Y(E.float32)]),
    ("ember::fmin", [X(E.float32), np.array(math.nan, np.float32)]),  # a NaN loses
    ("ember::copysign", [X(E.uint8), Y(E.int8)]),               # -> float32
    ("ember::logaddexp", [X(E.float16), np.array(0.3, np.float32)]),  # 0-d: stays float16
    ("ember::float_power", [X(E.int64), Y(E.float16)]),         # each to float64
    ("ember::float_power", [X(E.bool_), 3]),
    ("ember::addcmul", [X(E.int8), Y(E.int16), W(E.float32), 0.5]),  # -> float32
    ("ember::addcmul", [X(E.int32), Y(E.int32), X(E.int32), 2.7]),   # value truncates to 2
    ("ember::addcdiv", [X(E.int32), Y(E.int32), W(E.float16), 2]),
    ("ember::threshold", [X(E.int8), 0.5, 2.9]),                # compares in float
    ("ember::clip", [X(E.int32), W(E.float32), 2]),
]


@pytest.mark.parametrize("kind,args", MIXED, ids=[f"{k}-{i}" for i, (k, _) in enumerate(MIXED)])
def test_mixed_dtypes_match_eager(kind, args):
    check(kind, args)


def test_every_pointwise_kind_is_supported():
    assert ops.SUPPORTED_KINDS == FUSIBLE_KINDS - CHUNK_KINDS - {FUSED_CONCAT}
    tested = {f"ember::{k}" for k, _, _ in CASES}
    assert tested == ops.SUPPORTED_KINDS


# ---- precision of constants ------------------------------------------------------------------
def test_float64_constants_keep_every_bit():
    x = np.linspace(-3, 3, N)
    for c in (0.1, 1 / 3, 1e-300, 2.0 ** 0.5, 123456789.123456789):
        np.testing.assert_array_equal(run("ember::mul", [x, c], E.float64), x * c)
        np.testing.assert_array_equal(run("ember::add", [x, c, 1], E.float64), x + c)
        cond = x > 0
        want = np.where(cond, x, c)
        np.testing.assert_array_equal(run("ember::where", [cond, x, c], E.float64), want)
    # a float64 constant too large for float32 stays finite
    np.testing.assert_array_equal(run("ember::mul", [x, 1e300], E.float64), x * 1e300)


def test_non_finite_constants():
    x = np.linspace(-3, 3, N).astype(np.float32)
    for c in (math.inf, -math.inf):
        for dt in (E.float32, E.float64, E.float16):
            a = x.astype(dt.numpy)
            np.testing.assert_array_equal(run("ember::add", [a, c, 1], dt), a + dt.numpy.type(c))
    assert np.isnan(run("ember::mul", [x.astype(np.float64), math.nan], E.float64)).all()


def test_constants_round_to_the_op_dtype_first():
    # float16 * 0.1 multiplies by float16(0.1), as eager does, though it computes in float32
    x = np.linspace(-3, 3, N).astype(np.float16)
    np.testing.assert_array_equal(run("ember::mul", [x, 0.1], E.float16),
                                  E.mul(E.tensor(x), 0.1).numpy())
    assert "tl.full([], 0.0999755859375, tl.float32)" in lower(
        "ember::mul", [Operand("v0", E.float16), Operand("0.1", None, 0.1)], E.float16)


def test_int8_plus_1000_wraps():
    x = X(E.int8)
    np.testing.assert_array_equal(run("ember::add", [x, 1000, 1], E.int8), x + np.int8(-24))


# ---- declines --------------------------------------------------------------------------------
def test_declines_unknown_kinds_and_dtypes():
    x = Operand("v0", E.float32)
    for kind in ("ember::matmul", "ember::chunk", "aten::add", "ember::sum"):
        with pytest.raises(FusionDeclined, match="no Triton lowering"):
            lower(kind, [x], E.float32)
    for bad in (np.dtype(np.complex64), "complex64", np.dtype(np.float128)):
        with pytest.raises(FusionDeclined, match="no Triton type"):
            lower("ember::neg", [Operand("v0", bad)], E.float32)
        with pytest.raises(FusionDeclined, match="no Triton type"):
            lower("ember::neg", [x], bad)
    with pytest.raises(FusionDeclined, match="no Triton type"):
        lower("ember::neg", [x], None)
    with pytest.raises(FusionDeclined, match="expected 3 inputs"):
        lower("ember::add", [x, x], E.float32)


@pytest.mark.parametrize("kind,inputs,out,reason", [
    ("ember::floor_divide", [Operand("v0", E.int32), Operand("0", None, 0)], E.int32,
     "division by zero"),
    ("ember::pow", [Operand("v0", E.int64), Operand("v1", E.int64)], E.int64,
     "integer pow with a tensor exponent"),
    ("ember::pow", [Operand("v0", E.int64), Operand("65", None, 65)], E.int64, "> 64"),
    ("ember::sub", [Operand("v0", E.bool_), Operand("v1", E.bool_), Operand("1", None, 1)],
     E.bool_, "bool"),
    ("ember::where", [Operand("v0", E.float32), Operand("v1", E.float32),
                      Operand("v2", E.float32)], E.float32, "bool tensor"),
    ("ember::eq", [Operand("v0", E.float32), Operand("None", None, None)], E.bool_,
     "expected a number"),
    # the ops of the special functions and composite activations: where eager raises
    ("ember::frac", [Operand("v0", E.int32)], E.int32, "expected a floating dtype"),
    ("ember::logaddexp", [Operand("v0", E.int32), Operand("v1", E.int32)], E.int32,
     "expected a floating dtype"),
    ("ember::mish", [Operand("v0", E.int8)], E.int8, "expected a floating dtype"),
    ("ember::softsign", [Operand("v0", E.bool_)], E.float32, "bool tensors"),
    ("ember::tanhshrink", [Operand("v0", E.bool_)], E.float32, "bool tensors"),
    ("ember::threshold", [Operand("v0", E.bool_), Operand("0", None, 0),
                          Operand("1", None, 1)], E.bool_, "bool tensors"),
    ("ember::threshold", [Operand("v0", E.int8), Operand("0.5", None, 0.5),
                          Operand("1000", None, 1000)], E.int8, "masked_fill.*overflow"),
    ("ember::celu", [Operand("v0", E.float32), Operand("0.0", None, 0.0)], E.float32,
     "alpha == 0"),
    ("ember::softshrink", [Operand("v0", E.float32), Operand("-1", None, -1)], E.float32,
     "lambd = -1 < 0"),
    ("ember::softplus", [Operand("v0", E.float16), Operand("1", None, 1),
                         Operand("1e39", None, 1e39)], E.float16, "clamp_max.*overflow"),
    ("ember::addcmul", [Operand(f"v{i}", E.bool_) for i in range(3)] + [Operand("1", None, 1)],
     E.bool_, "bool tensors"),
    ("ember::addcdiv", [Operand(f"v{i}", E.int32) for i in range(3)] + [Operand("1", None, 1)],
     E.int32, "integer division with addcdiv"),
    ("ember::copysign", [Operand("2", None, 2), Operand("v0", E.float32)], E.float32,
     "self must be a tensor"),
    ("ember::float_power", [Operand("v0", E.float32), Operand("v1", E.float32)], E.float32,
     "expected a float64 result"),
])
def test_declines_with_a_reason(kind, inputs, out, reason):
    with pytest.raises(FusionDeclined, match=reason):
        lower(kind, inputs, out)


def test_compute_and_triton_types():
    assert compute_dtype(E.float16) is E.float32 and compute_dtype(E.bfloat16) is E.float32
    assert compute_dtype(E.int8) is E.int8 and compute_dtype(E.bool_) is E.bool_
    assert triton_type(E.bool_) == "tl.int1" and triton_type(E.bfloat16) == "tl.bfloat16"
    assert {triton_type(d) for d in DTYPES} == {
        "tl.int1", "tl.uint8", "tl.int8", "tl.int16", "tl.int32", "tl.int64", "tl.float16",
        "tl.bfloat16", "tl.float32", "tl.float64"}


# ---- the expressions compile for a GPU (no GPU needed) ---------------------------------------
POINTER = {E.bool_: "*i8", E.uint8: "*u8", E.int8: "*i8", E.int16: "*i16", E.int32: "*i32",
           E.int64: "*i64", E.float16: "*fp16", E.bfloat16: "*bf16", E.float32: "*fp32",
           E.float64: "*fp64"}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_compiles_for_nvidia(dtype):
    """All cases of one dtype in one kernel: Triton's front end type-checks every call
    (libdevice overloads, div_rn's float32-only check) where the interpreter does not."""
    pytest.importorskip("triton.backends.nvidia")
    if os.environ.get("TRITON_INTERPRET", "0") == "1":
        pytest.skip("compiles in a process without the interpreter: see the next test")
    params, lines, signature = [], [], {"out": "*fp64"}
    for slot, (kind, _, fn) in enumerate(CASES):
        kind = f"ember::{kind}"
        args = fn(dtype)
        try:
            out_dtype = eager(kind, args).dtype
            expr = lower(kind, _operands(args, f"v{slot}_"), out_dtype)
        except Exception:  # noqa: BLE001 - declined cases compile nothing
            continue
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                dt = E.types.from_numpy_dtype(a.dtype)
                params.append(f"p{slot}_{i}")
                signature[f"p{slot}_{i}"] = POINTER[dt]
                cast = " != 0" if dt is E.bool_ else \
                    (".to(tl.float32)" if dt in FLOATS[:2] else "")
                offs = "" if a.ndim == 0 else " + offs"
                lines.append(f"    v{slot}_{i} = tl.load(p{slot}_{i}{offs}){cast}")
        lines.append(f"    tl.store(out + {slot} * BLOCK + offs, ({expr}).to(tl.float64))")
    signature["BLOCK"] = "constexpr"
    name = f"all_{dtype.name}"
    source = "\n".join([f"def {name}(out, {', '.join(params)}, BLOCK: tl.constexpr):",
                        "    offs = tl.arange(0, BLOCK)", *lines, ""])
    kernel = load_kernel(source, name, False)
    module = nvidia_ttir(kernel, signature, {"BLOCK": 64})
    assert "tt.func" in str(module)


def test_compiles_for_nvidia_without_the_interpreter():
    """The compile check above needs Triton without its interpreter, which this test
    process switched on before importing Triton (conftest.py): run it in a fresh one."""
    pytest.importorskip("triton.backends.nvidia")
    if os.environ.get("TRITON_INTERPRET", "0") != "1":
        pytest.skip("the compile checks ran directly")
    run_without_interpreter(__file__, "test_compiles_for_nvidia", len(DTYPES))
