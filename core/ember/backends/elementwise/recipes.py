"""Recipes: ember's pointwise ops written as steps of an elementwise :class:`Program`.

A recipe emits one op into a program as a few ufunc steps that write into the engine's
scratch buffers (``out=``), so a chain of them runs block by block without allocating:
``sigmoid(x)`` is ``negative -> exp -> add 1 -> reciprocal``. The CPU fuser lowers each
node of a FusionGroup through :func:`emit`; an op without a recipe here is run by the
fuser as a ``call`` of its eager kernel on each block instead (correct, just not
allocation-free).

Every recipe computes in ``ct``, the compute dtype the caller chose (float32 for float16
and bfloat16 results, as PyTorch's kernels compute them), on operands already converted to
``ct`` (Values) or Python numbers. Formulas follow PyTorch's CPU kernels where they choose
one (``pow(x, 2)`` is ``x * x``, ``lerp`` switches formula at ``weight = 0.5``,
``hardsigmoid`` is ``relu6(x + 3) / 6``), so fused results differ from eager ember's by
rounding only: eager computes some of these in float64 or through other identities
(``sigmoid`` through ``logaddexp``), and rounds to float16 after every op.

Reference: PyTorch's ``aten/src/ATen/native/cpu/UnaryOpsKernel.cpp``,
``BinaryOpsKernel.cpp`` and ``Activation.cpp`` (the formulas), NNC's lowerings
(``torch/csrc/jit/tensorexpr/operators/pointwise.cpp``).
"""
from __future__ import annotations

import math
from typing import Callable, Optional

import numpy as np

__all__ = ["emit", "RECIPES", "compute_dtype", "PREDICATES", "gelu_backward"]

# op -> numpy ufunc of one operand, for floating compute dtypes
_FLOAT_UNARY = {
    "exp": "exp", "exp2": "exp2", "log": "log", "log2": "log2", "log10": "log10",
    "log1p": "log1p", "expm1": "expm1", "sqrt": "sqrt", "sin": "sin", "cos": "cos",
    "tan": "tan", "asin": "arcsin", "acos": "arccos", "atan": "arctan", "sinh": "sinh",
    "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh", "acosh": "arccosh",
    "atanh": "arctanh", "reciprocal": "reciprocal", "floor": "floor", "ceil": "ceil",
    "trunc": "trunc",
}
# op -> ufunc of two operands, any numeric compute dtype (bool refused where eager does)
_BINARY = {"mul": "multiply", "maximum": "maximum", "minimum": "minimum",
           "max.other": "maximum", "min.other": "minimum"}
_FLOAT_BINARY = {"true_divide": "true_divide", "atan2": "arctan2", "fmax": "fmax",
                 "fmin": "fmin", "copysign": "copysign", "logaddexp": "logaddexp",
                 "logaddexp2": "logaddexp2"}
_INT_BINARY = {"bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or",
               "bitwise_xor": "bitwise_xor"}
# ops whose result is bool: op -> ufunc (computed in the operands' promoted dtype)
PREDICATES = {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
              "gt": "greater", "ge": "greater_equal", "logical_and": "logical_and",
              "logical_or": "logical_or", "logical_xor": "logical_xor",
              "logical_not": "logical_not", "isnan": "isnan", "isinf": "isinf",
              "isfinite": "isfinite"}
_SELU_ALPHA, _SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
_SQRT_2_OVER_PI = 0.7978845608028654


def compute_dtype(op: str, result: np.dtype, operands: np.dtype) -> np.dtype:
    """The dtype ``op`` computes in: the operands' promoted dtype ``operands`` for a
    predicate (its result is bool), else ``result``; float16/bfloat16 widen to float32."""
    ct = np.dtype(operands) if op in PREDICATES else np.dtype(result)
    return np.dtype(np.float32) if ct.name in ("float16", "bfloat16") else ct


def _is_float(ct) -> bool:
    return ct.kind == "f"


def _is_number(v) -> bool:
    return isinstance(v, (bool, int, float))


def _ufunc(name: str) -> Callable:
    def recipe(p, ct, args, consts):
        return p.ufunc(name, *args, dtype=ct)
    return recipe


def _float_only(name: str) -> Callable:
    def recipe(p, ct, args, consts):
        return p.ufunc(name, *args, dtype=ct) if _is_float(ct) else None
    return recipe


def _scaled(op: str) -> Callable:
    """add/sub with ``alpha``: ``a op alpha * b``."""
    def recipe(p, ct, args, consts):
        a, b = args
        alpha = consts.get("alpha", 1)
        if ct.kind == "b":
            return None  # bool add/sub: eager's rules (sub refuses bool)
        if alpha != 1:
            b = p.ufunc("multiply", b, alpha, dtype=ct)
        return p.ufunc(op, a, b, dtype=ct)
    return recipe


def _rsub(p, ct, args, consts):
    return _scaled("subtract")(p, ct, args[::-1], consts)


def _sigmoid(p, ct, x):
    t = p.ufunc("negative", x, dtype=ct)
    t = p.ufunc("exp", t, dtype=ct)
    t = p.ufunc("add", t, 1.0, dtype=ct)
    return p.ufunc("reciprocal", t, dtype=ct)


def _float_recipe(fn: Callable) -> Callable:
    def recipe(p, ct, args, consts):
        return fn(p, ct, *args, **consts) if _is_float(ct) else None
    return recipe


def _relu(p, ct, args, consts):
    return None if ct.kind == "b" else p.ufunc("maximum", args[0], 0, dtype=ct)


def _clamp(p, ct, x, lo, hi):
    if lo is not None:
        x = p.ufunc("maximum", x, lo, dtype=ct)
    if hi is not None:  # applied last: min > max gives max everywhere, as PyTorch
        x = p.ufunc("minimum", x, hi, dtype=ct)
    return x


def _clamp_recipe(p, ct, args, consts):
    x, lo, hi = (list(args) + [None, None])[:3]
    if lo is None and hi is None or ct.kind == "b":
        return None  # eager raises for clamp() without bounds: let it
    return _clamp(p, ct, x, lo, hi)


def _where_positive(p, ct, x, negative_branch):
    """``x if x > 0 else negative_branch`` (NaN takes the negative branch, as PyTorch's
    ``x > 0 ? x : f(x)``)."""
    return p.where(p.ufunc("greater", x, 0, dtype=np.bool_), x, negative_branch, dtype=ct)


def _pow(p, ct, args, consts):
    base, exponent = args
    if not _is_float(ct) or _is_number(base):
        return None
    if _is_number(exponent):  # PyTorch's pow_tensor_scalar special cases
        if exponent == 2:
            return p.ufunc("multiply", base, base, dtype=ct)
        if exponent == 3:
            return p.ufunc("multiply", p.ufunc("multiply", base, base, dtype=ct), base,
                           dtype=ct)
        if exponent == 0.5:
            return p.ufunc("sqrt", base, dtype=ct)
        if exponent == -1:
            return p.ufunc("reciprocal", base, dtype=ct)
    return p.ufunc("power", base, exponent, dtype=ct)


def _lerp_scalar(p, ct, args, consts):
    a, b = args
    w = consts["weight"]
    if not _is_float(ct):
        return None
    diff = p.ufunc("subtract", b, a, dtype=ct)
    if abs(w) < 0.5:
        return p.ufunc("add", a, p.ufunc("multiply", diff, w, dtype=ct), dtype=ct)
    return p.ufunc("subtract", b, p.ufunc("multiply", diff, 1 - w, dtype=ct), dtype=ct)


def _addc(op: str) -> Callable:
    def recipe(p, ct, args, consts):
        s, t1, t2 = args
        if not _is_float(ct):
            return None  # integer addcdiv is refused by eager; addcmul keeps its rules
        prod = p.ufunc(op, t1, t2, dtype=ct)
        value = consts.get("value", 1)
        if value != 1:
            prod = p.ufunc("multiply", prod, value, dtype=ct)
        return p.ufunc("add", s, prod, dtype=ct)
    return recipe


# erf(x) = x P(x^2) / Q(x^2) on [-4, 4] (erf(+-4) rounds to +-1 in float32): Eigen's
# ``generic_fast_erf_float`` (XLA's ErfImpl32), within 4e-7 relative of erf; highest
# degree first
_ERF32_P = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
            -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
            -1.60960333262415e-02)
_ERF32_Q = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
            -7.37332916720468e-03, -1.42647390514189e-02)


def _horner(p, ct, x, coefficients):
    acc = p.ufunc("multiply", x, coefficients[0], dtype=ct)
    for c in coefficients[1:-1]:
        acc = p.ufunc("multiply", p.ufunc("add", acc, c, dtype=ct), x, dtype=ct)
    return p.ufunc("add", acc, coefficients[-1], dtype=ct)


def _erf32(p, ct, x):
    """erf of a float32 Value as ufunc steps (see ``_ERF32_P``); NaN stays NaN."""
    xc = _clamp(p, ct, x, -4.0, 4.0)
    x2 = p.ufunc("multiply", xc, xc, dtype=ct)
    num = p.ufunc("multiply", xc, _horner(p, ct, x2, _ERF32_P), dtype=ct)
    return p.ufunc("true_divide", num, _horner(p, ct, x2, _ERF32_Q), dtype=ct)


def _erf(p, ct, args, consts):
    return _erf32(p, ct, args[0]) if ct == np.float32 else None


def _gelu(erf: Optional[Callable]) -> Callable:
    def recipe(p, ct, args, consts):
        (x,) = args
        if not _is_float(ct):
            return None
        if consts.get("approximate", "none") == "tanh":
            x3 = p.ufunc("multiply", p.ufunc("multiply", x, x, dtype=ct), x, dtype=ct)
            inner = p.ufunc("add", x, p.ufunc("multiply", x3, 0.044715, dtype=ct), dtype=ct)
            t = p.ufunc("tanh", p.ufunc("multiply", inner, _SQRT_2_OVER_PI, dtype=ct),
                        dtype=ct)
        elif consts.get("approximate", "none") == "none" and (erf is not None
                                                              or ct == np.float32):
            scaled = p.ufunc("multiply", x, 0.7071067811865476, dtype=ct)
            # float64: erf has no ufunc, so the backend's own erf kernel on each block
            t = _erf32(p, ct, scaled) if ct == np.float32 else p.call(erf, scaled, dtype=ct)
        else:
            return None
        half_x = p.ufunc("multiply", x, 0.5, dtype=ct)
        return p.ufunc("multiply", half_x, p.ufunc("add", t, 1.0, dtype=ct), dtype=ct)
    return recipe


def gelu_backward(p, ct, grad, x):
    """``derivatives.yaml``'s gelu (approximate='none') formula, ``grad * (cdf + x pdf)``
    with ``cdf = 0.5 (1 + erf(x / sqrt 2))`` and ``pdf = exp(-0.5 x x) / sqrt(2 pi)``, as
    the same float32 ufuncs in the same order as the ops (so the same bits): one pass
    instead of a dozen. float32 only (erf's recipe); None otherwise."""
    if ct != np.float32:
        return None
    t = _erf32(p, ct, p.ufunc("multiply", x, 1 / math.sqrt(2.0), dtype=ct))
    cdf = p.ufunc("multiply", p.ufunc("add", t, 1, dtype=ct), 0.5, dtype=ct)
    e = p.ufunc("multiply", p.ufunc("multiply", x, -0.5, dtype=ct), x, dtype=ct)
    pdf = p.ufunc("multiply", p.ufunc("exp", e, dtype=ct), 1 / math.sqrt(2 * math.pi),
                  dtype=ct)
    total = p.ufunc("add", cdf, p.ufunc("multiply", x, pdf, dtype=ct), dtype=ct)
    return p.ufunc("multiply", grad, total, dtype=ct)


def _activations() -> dict:
    def silu(p, ct, x):
        return p.ufunc("multiply", x, _sigmoid(p, ct, x), dtype=ct)

    def leaky_relu(p, ct, x, negative_slope=0.01):
        return _where_positive(p, ct, x, p.ufunc("multiply", x, negative_slope, dtype=ct))

    def elu(p, ct, x, alpha=1.0):
        neg = p.ufunc("multiply", p.ufunc("expm1", x, dtype=ct), alpha, dtype=ct)
        return _where_positive(p, ct, x, neg)

    def celu(p, ct, x, alpha=1.0):
        neg = p.ufunc("expm1", p.ufunc("true_divide", x, alpha, dtype=ct), dtype=ct)
        return _where_positive(p, ct, x, p.ufunc("multiply", neg, alpha, dtype=ct))

    def selu(p, ct, x):
        neg = p.ufunc("multiply", p.ufunc("expm1", x, dtype=ct), _SELU_ALPHA, dtype=ct)
        return p.ufunc("multiply", _where_positive(p, ct, x, neg), _SELU_SCALE, dtype=ct)

    def hardtanh(p, ct, x, min_val=-1, max_val=1):
        return _clamp(p, ct, x, min_val, max_val)

    def relu6(p, ct, x):
        return _clamp(p, ct, x, 0.0, 6.0)

    def hardsigmoid(p, ct, x):
        t = _clamp(p, ct, p.ufunc("add", x, 3.0, dtype=ct), 0.0, 6.0)
        return p.ufunc("true_divide", t, 6.0, dtype=ct)

    def hardswish(p, ct, x):
        return p.ufunc("multiply", x, hardsigmoid(p, ct, x), dtype=ct)

    def softplus(p, ct, x, beta=1, threshold=20):
        bx = p.ufunc("multiply", x, beta, dtype=ct) if beta != 1 else x
        soft = p.ufunc("log1p", p.ufunc("exp", bx, dtype=ct), dtype=ct)
        if beta != 1:
            soft = p.ufunc("true_divide", soft, beta, dtype=ct)
        big = p.ufunc("greater", bx, threshold, dtype=np.bool_)
        return p.where(big, x, soft, dtype=ct)

    def softsign(p, ct, x):
        den = p.ufunc("add", p.ufunc("absolute", x, dtype=ct), 1.0, dtype=ct)
        return p.ufunc("true_divide", x, den, dtype=ct)

    def log_sigmoid(p, ct, x):
        # min(x, 0) - log1p(exp(-|x|)): never overflows (PyTorch's log_sigmoid_forward)
        tail = p.ufunc("log1p", p.ufunc("exp", p.ufunc("negative", p.ufunc(
            "absolute", x, dtype=ct), dtype=ct), dtype=ct), dtype=ct)
        return p.ufunc("subtract", p.ufunc("minimum", x, 0.0, dtype=ct), tail, dtype=ct)

    def tanhshrink(p, ct, x):
        return p.ufunc("subtract", x, p.ufunc("tanh", x, dtype=ct), dtype=ct)

    def threshold(p, ct, x, threshold, value):
        return p.where(p.ufunc("greater", x, threshold, dtype=np.bool_), x, value, dtype=ct)

    def rsqrt(p, ct, x):
        return p.ufunc("reciprocal", p.ufunc("sqrt", x, dtype=ct), dtype=ct)

    def sigmoid(p, ct, x):
        return _sigmoid(p, ct, x)

    def round_(p, ct, x, decimals=0):
        return p.ufunc("rint", x, dtype=ct) if decimals == 0 else None

    fns = dict(silu=silu, leaky_relu=leaky_relu, elu=elu, celu=celu, selu=selu,
               hardtanh=hardtanh, relu6=relu6, hardsigmoid=hardsigmoid, hardswish=hardswish,
               softplus=softplus, softsign=softsign, log_sigmoid=log_sigmoid,
               tanhshrink=tanhshrink, threshold=threshold, rsqrt=rsqrt, sigmoid=sigmoid,
               round=round_)
    return {name: _float_recipe(fn) for name, fn in fns.items()}


def _where(p, ct, args, consts):
    cond, a, b = args
    return p.where(cond, a, b, dtype=ct)


def _masked_fill(p, ct, args, consts):
    x, mask = args
    return p.where(mask, consts["value"], x, dtype=ct)


def _negative(p, ct, args, consts):
    return None if ct.kind == "b" else p.ufunc("negative", args[0], dtype=ct)


def _absolute(p, ct, args, consts):
    return None if ct.kind == "b" else p.ufunc("absolute", args[0], dtype=ct)


def _square(p, ct, args, consts):
    return None if ct.kind == "b" else p.ufunc("multiply", args[0], args[0], dtype=ct)


def _bitwise_not(p, ct, args, consts):
    return p.ufunc("logical_not" if ct.kind == "b" else "invert", args[0], dtype=ct) \
        if ct.kind in "biu" else None


def _same(p, ct, args, consts):  # type_as: the cast to the result dtype is the op
    return args[0]


def _recipes() -> dict:
    table: dict = {}
    table.update({op: _float_only(u) for op, u in _FLOAT_UNARY.items()})
    table.update({op: _ufunc(u) for op, u in _BINARY.items()})
    table.update({op: _float_only(u) for op, u in _FLOAT_BINARY.items()})
    table.update({op: (lambda u: lambda p, ct, a, c: p.ufunc(u, *a, dtype=ct)
                       if ct.kind in "biu" else None)(u) for op, u in _INT_BINARY.items()})
    table.update(_activations())
    table.update({
        "add": _scaled("add"), "sub": _scaled("subtract"), "rsub": _rsub,
        "div": lambda p, ct, a, c: p.ufunc("true_divide", *a, dtype=ct)
        if c.get("rounding_mode") is None and _is_float(ct) else None,
        "neg": _negative, "abs": _absolute, "absolute": _absolute, "square": _square,
        "relu": _relu, "clamp": _clamp_recipe, "clip": _clamp_recipe,
        "clamp_min": lambda p, ct, a, c: None if ct.kind == "b" else p.ufunc(
            "maximum", *a, dtype=ct),
        "clamp_max": lambda p, ct, a, c: None if ct.kind == "b" else p.ufunc(
            "minimum", *a, dtype=ct),
        "pow": _pow, "lerp.Scalar": _lerp_scalar, "addcmul": _addc("multiply"),
        "addcdiv": _addc("true_divide"), "where": _where, "masked_fill": _masked_fill,
        "bitwise_not": _bitwise_not, "type_as": _same, "erf": _erf,
    })
    return table


#: op name (``add``, ``max.other``) -> ``recipe(program, ct, operands, constants)``,
#: returning the result Value, or None where the recipe does not apply to ``ct``.
RECIPES = _recipes()


def emit(program, op: str, ct: np.dtype, operands: list, constants: dict,
         erf: Optional[Callable] = None) -> Optional[object]:
    """Emit ``op`` (an ember op name such as ``"add"`` or ``"max.other"``) into
    ``program``, computing in ``ct``; returns the result Value, or None when there is no
    recipe for ``op`` at ``ct`` (the caller then calls the eager kernel per block).

    ``operands``: the op's tensor operands in schema order, each a Value of dtype ``ct``
    (predicates: the operands' promoted dtype) or a Python number; ``constants``: its
    other arguments by schema name (``alpha``, ``approximate``). ``erf``: the backend's
    ``erf`` kernel, which ``gelu(approximate='none')`` calls per block.
    """
    if op in PREDICATES:
        return program.ufunc(PREDICATES[op], *operands, dtype=np.bool_) \
            if op not in ("isnan", "isinf", "isfinite") or _is_float(ct) else None
    if op == "gelu":
        return _gelu(erf)(program, ct, operands, constants)
    recipe = RECIPES.get(op)
    return None if recipe is None else recipe(program, ct, operands, constants)
