"""Sample inputs for the per-op derivative tests: one or more per differentiable op.

Each ``Sample`` names the ``derivatives.yaml`` entry it exercises (``op``, a qualified
name such as ``max.dim``), a short description, a callable and its inputs. ``inputs`` are
float64 numpy arrays; ``tensors(sample)`` turns them into fresh float64 leaves that require
grad (index tensors, masks and conditions live in the callable, built with ``_i``/``_b``).
Inputs stay away from non-differentiable points: no ties for max/sort (``distinct``), no
zeros at the kinks of abs/relu/sign (``nz``), positive arguments for sqrt/log (``pos``),
|x| < 1 for asin, values away from clamp bounds and from the jumps of floor/remainder
(``noninteger``). Every input has at most 12 elements: gradcheck costs one forward pass per
element and gradgradcheck one per element of the inputs and of the outputs.

``check_grad`` / ``check_gradgrad`` run ember's gradcheck / gradgradcheck on a sample with
its tolerances; ``recorded_nodes`` lists the backward nodes a sample's graph holds, which
the coverage test uses to prove a sample really exercises its op.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass, field

import numpy as np

import ember as E
from ember.autograd import gradcheck, gradgradcheck


@dataclass(frozen=True)
class Sample:
    op: str                 # qualified derivatives.yaml name ("add", "max.dim", "index")
    desc: str               # short, readable; part of the test id
    fn: object              # (*tensors) -> Tensor or tuple of Tensors
    inputs: tuple           # float64 numpy arrays, one per tensor argument of fn
    group: str              # which test file runs it
    gradcheck: dict = field(default_factory=dict)   # eps/atol/rtol overrides
    gradgrad: bool = True   # False where second derivatives do not exist (ties)

    @property
    def id(self) -> str:
        return f"{self.op}-{self.desc}"


def tensors(sample: Sample) -> tuple:
    """Fresh float64 leaves requiring grad, one per input array."""
    return tuple(E.tensor(np.array(a, dtype=np.float64), requires_grad=True)
                 for a in sample.inputs)


# --- running the checks ------------------------------------------------------------------------

def _float_outputs(out) -> list:
    out = out if isinstance(out, (tuple, list)) else (out,)
    return [o for o in out if isinstance(o, E.Tensor) and o.is_floating_point()]


def check_grad(sample: Sample) -> bool:
    return gradcheck(sample.fn, tensors(sample), **sample.gradcheck)


def check_gradgrad(sample: Sample) -> bool:
    return gradgradcheck(sample.fn, tensors(sample), **sample.gradcheck)


def recorded_nodes(sample: Sample) -> set:
    """Names of the backward nodes reachable from the sample's outputs (CopySlices
    included with the node it wraps)."""
    seen, names = set(), set()
    stack = [o.grad_fn for o in _float_outputs(sample.fn(*tensors(sample)))]
    while stack:
        node = stack.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        names.add(node.name())
        inner = getattr(node, "fn", None)
        if isinstance(inner, E.autograd.Node):
            stack.append(inner)
        stack.extend(e[0] for e in node.next_functions if e is not None)
    return names


# --- input makers --------------------------------------------------------------------------------

def _seed(shape, salt) -> int:
    # NOTE: not hash(): str hashes change between processes (PYTHONHASHSEED).
    return zlib.crc32(repr((tuple(shape), salt)).encode())


def u(*shape, lo=-2.0, hi=2.0, salt=0):
    """Uniform values in [lo, hi): distinct with probability 1, deterministic per shape."""
    return np.random.default_rng(_seed(shape, ("u", salt))).uniform(lo, hi, shape)


def nz(*shape, lo=0.3, hi=2.0, salt=0):
    """Values with lo <= |x| < hi and random signs: away from 0."""
    rng = np.random.default_rng(_seed(shape, ("nz", salt)))
    return rng.uniform(lo, hi, shape) * rng.choice([-1.0, 1.0], shape)


def pos(*shape, lo=0.5, hi=2.0, salt=0):
    return u(*shape, lo=lo, hi=hi, salt=salt)


def distinct(*shape, salt=0):
    """A permutation of well-separated values (gaps of 0.37): no ties for max/sort."""
    n = int(np.prod(shape, dtype=int))
    vals = (np.arange(n) - n / 2) * 0.37 + 0.05
    return np.random.default_rng(_seed(shape, ("d", salt))).permutation(vals).reshape(shape)


def noninteger(*shape, salt=0):
    """Values at least 0.1 away from integers and from halves: the jumps of floor, ceil,
    trunc and round."""
    rng = np.random.default_rng(_seed(shape, ("f", salt)))
    frac = rng.uniform(0.1, 0.4, shape) + rng.choice([0.0, 0.5], shape)
    return rng.integers(-3, 3, shape) + frac


def _i(values):
    return E.tensor(np.array(values, dtype=np.int64))


def _b(values):
    return E.tensor(np.array(values, dtype=bool))


# --- building blocks of the sample callables ----------------------------------------------------

def _on_view(x, f):
    """``f`` applied in place to a view of a non-leaf copy of ``x`` (CopySlices)."""
    base = x.clone()
    f(base[1:])
    return base


def _with_infs(x):
    """x with +inf and -inf at positions 1 and 3 (where() gives them zero gradient)."""
    infs = E.tensor(np.array([0.0, np.inf, 0.0, -np.inf]))
    return E.where(_b([True, False, True, False]), x, infs)


def _f(values):
    return E.tensor(np.array(values, dtype=np.float64))


def _with_nans(x):
    """x with NaN at flat positions 1 and 4 (where() gives them zero gradient)."""
    keep = np.ones(x.shape, dtype=bool).reshape(-1)
    keep[[i for i in (1, 4) if i < keep.size]] = False
    return E.where(E.tensor(keep.reshape(x.shape)), x, float("nan"))


def _setitem(x, index, value):
    y = x * 1
    y[index] = value
    return y


def _index_put(x, index, value):
    """``x * 1`` with ``value`` added at ``index`` (repeats add up): index_put_ with
    accumulate=True, which ember reaches only through its indexing module."""
    from ember._indexing import index_put_normalized, normalize
    y = x * 1
    return index_put_normalized(y, normalize(y, index)[0], value, accumulate=True)


SAMPLES: list[Sample] = []
_GROUP = [""]


def section(group: str) -> None:
    """Samples added from here on run in test_op_gradients_<group>.py."""
    _GROUP[0] = group


def add(op, desc, fn, *inputs, **kw):
    SAMPLES.append(Sample(op, desc, fn, tuple(inputs), _GROUP[0], **kw))


# ==== pointwise: binary ========================================================================
section("pointwise")
add("add", "broadcast_3x1_4", lambda x, y: E.add(x, y), u(3, 1), u(4))
add("add", "scalar_2.5", lambda x: E.add(x, 2.5), u(2, 3))
add("add", "radd_scalar", lambda x: 2.5 + x, u(2, 3))
add("add", "alpha_2", lambda x, y: E.add(x, y, alpha=2), u(2, 3), u(3))
add("add", "same_tensor", lambda x: x + x, u(4))
add("add", "inplace", lambda x, y: x.clone().add_(y, alpha=-1.5), u(2, 3), u(2, 1))
add("sub", "broadcast", lambda x, y: E.sub(x, y), u(4), u(3, 1))
add("sub", "alpha_0.5", lambda x, y: x.sub(y, alpha=0.5), u(2, 3), u(2, 3))
add("sub", "rsub_scalar", lambda x: 2.5 - x, u(2, 3))
add("sub", "inplace", lambda x, y: x.clone().sub_(y), u(2, 3), u(3))
add("mul", "broadcast_3x1_4", lambda x, y: x * y, u(3, 1), u(4))
add("mul", "scalar", lambda x: E.mul(x, -1.5), u(2, 3))
add("mul", "square", lambda x: x * x, u(5))
add("mul", "inplace", lambda x, y: x.clone().mul_(y), u(2, 3), u(2, 3))
add("mul", "inplace_on_view", lambda x, y: _on_view(x, lambda v: v.mul_(y)), u(3, 4), u(4))
add("div", "broadcast", lambda x, y: x / y, u(3, 1), nz(4))
add("div", "rdiv_scalar", lambda x: 1.5 / x, nz(2, 3))
add("div", "scalar", lambda x: E.div(x, 4.0), u(2, 3))
add("div", "floor_mode", lambda x, y: E.div(x, y, rounding_mode="floor"), u(2, 3), pos(3))
add("div", "trunc_mode", lambda x, y: E.div(x, y, rounding_mode="trunc"), u(2, 3), pos(3))
add("div", "inplace", lambda x, y: x.clone().div_(y), u(2, 3), nz(3))
add("true_divide", "broadcast", lambda x, y: E.true_divide(x, y), u(2, 1), nz(3))
add("true_divide", "inplace", lambda x, y: x.clone().true_divide_(y), u(3), nz(3))
add("floor_divide", "broadcast", lambda x, y: x // y, u(2, 3), pos(3))
add("floor_divide", "inplace", lambda x, y: x.clone().floor_divide_(y), u(4), pos(4))
add("remainder", "broadcast", lambda x, y: E.remainder(x, y), u(2, 3, lo=-3, hi=3),
    pos(3, lo=0.7, hi=1.3))
add("remainder", "scalar", lambda x: x % 1.5, u(2, 3, lo=-3, hi=3))
add("remainder", "inplace", lambda x, y: x.clone().remainder_(y), u(4, lo=-3, hi=3),
    pos(4, lo=0.7, hi=1.3))
add("fmod", "broadcast", lambda x, y: E.fmod(x, y), u(2, 3, lo=-3, hi=3),
    pos(2, 1, lo=0.7, hi=1.3))
add("fmod", "scalar", lambda x: E.fmod(x, 1.5), u(2, 3, lo=-3, hi=3))
add("fmod", "inplace", lambda x, y: x.clone().fmod_(y), u(4, lo=-3, hi=3), pos(4, lo=0.7, hi=1.3))
add("pow", "tensor_tensor", lambda x, y: E.pow(x, y), pos(2, 3), u(3))
add("pow", "int_exponent_3", lambda x: E.pow(x, 3), u(2, 3))
add("pow", "float_exponent", lambda x: x ** 2.5, pos(2, 3))
add("pow", "exponent_0", lambda x: x ** 0, u(4))
add("pow", "scalar_base_2", lambda x: E.pow(2, x), u(2, 3))
add("pow", "rpow_scalar", lambda x: 1.5 ** x, u(2, 3))
add("pow", "broadcast_exponent", lambda x, y: x.pow(y), pos(3, 1), u(1, 4))
add("pow", "inplace", lambda x, y: x.clone().pow_(y), pos(2, 2), u(2, 2))
add("atan2", "broadcast", lambda x, y: E.atan2(x, y), u(3, 1), nz(4))
add("atan2", "inplace", lambda x, y: x.clone().atan2_(y), u(3), nz(3))
add("maximum", "broadcast", lambda x, y: E.maximum(x, y), distinct(3, 1), distinct(4, salt=1))
add("minimum", "broadcast", lambda x, y: E.minimum(x, y), distinct(3, 1), distinct(4, salt=1))
add("lerp.Tensor", "broadcast", lambda a, b, w: E.lerp(a, b, w), u(3, 1), u(4), u(3, 4, lo=0,
    hi=1))
add("lerp.Tensor", "inplace", lambda a, b, w: a.clone().lerp_(b, w), u(2, 3), u(2, 3), u(3))
add("lerp.Scalar", "weight_0.3", lambda a, b: E.lerp(a, b, 0.3), u(2, 3), u(3))
add("lerp.Scalar", "weight_0.7", lambda a, b: a.lerp(b, 0.7), u(2, 3), u(2, 3))
add("lerp.Scalar", "inplace", lambda a, b: a.clone().lerp_(b, 0.6), u(4), u(4))
add("where", "broadcast", lambda x, y: E.where(_b([[True], [False], [True]]), x, y),
    u(3, 4), u(4))
add("where", "scalar_other", lambda x: E.where(_b([True, False, True, False]), x, 0.5),
    u(4))
add("where", "method", lambda x, y: x.where(_b([[True], [False], [True]]), y), u(3, 4), u(4))
# NaN-aware binaries and fused multiply-adds (kernels/special.py)
add("xlogy", "broadcast", E.xlogy, u(3, 1), pos(4))
add("xlogy", "zero_self", lambda y: E.xlogy(_f([0.0, 1.5, 0.0, -2.0]), y), pos(4))
add("xlogy", "scalar_self", lambda y: E.xlogy(2, y), pos(2, 3))
add("xlogy", "scalar_other", lambda x: x.xlogy(2.5), u(2, 3))
add("xlogy", "inplace", lambda x, y: x.clone().xlogy_(y), u(4), pos(4))
add("logaddexp", "broadcast", E.logaddexp, u(3, 1), u(4))
add("logaddexp2", "broadcast", lambda x, y: x.logaddexp2(y), u(3, 1), u(4))
add("copysign", "broadcast", E.copysign, nz(3, 1), nz(4))
add("copysign", "scalar", lambda x: E.copysign(x, -1.0), nz(2, 3))
add("copysign", "inplace", lambda x, y: x.clone().copysign_(y), nz(4), nz(4))
add("fmax", "broadcast", E.fmax, distinct(3, 1), distinct(4, salt=1))
add("fmax", "nan_other_picks_self", lambda x, y: E.fmax(x, _with_nans(y)), distinct(4),
    distinct(4, salt=1))
add("fmin", "broadcast", lambda x, y: x.fmin(y), distinct(3, 1), distinct(4, salt=1))
add("fmin", "nan_other_scalar", lambda x: E.fmin(x, float("nan")), u(4))
add("addcmul", "broadcast", lambda a, b, c: E.addcmul(a, b, c, value=0.5), u(3, 1), u(4),
    u(3, 4))
add("addcmul", "inplace", lambda a, b, c: a.clone().addcmul_(b, c, value=-2), u(2, 3), u(3),
    u(2, 3))
add("addcdiv", "broadcast", lambda a, b, c: E.addcdiv(a, b, c, value=1.5), u(3, 1), u(4),
    nz(3, 4))
add("addcdiv", "inplace", lambda a, b, c: a.clone().addcdiv_(b, c), u(2, 3), u(3), nz(2, 3))


# ==== pointwise: unary =========================================================================
# op -> input maker; each gets a 2x3 sample and an in-place one
_UNARY = {
    "abs": nz, "neg": u, "exp": u, "exp2": u, "log": pos, "log2": pos, "log10": pos,
    "expm1": u, "sqrt": pos, "rsqrt": pos, "sin": u, "cos": u, "atan": u, "sinh": u,
    "cosh": u, "tanh": u, "sigmoid": u, "relu": nz, "erf": u, "reciprocal": nz,
    "sign": nz, "floor": noninteger, "ceil": noninteger, "trunc": noninteger,
    "round": noninteger,
    "log1p": lambda *s: u(*s, lo=-0.7, hi=2.0),
    "tan": lambda *s: u(*s, lo=-1.2, hi=1.2),
    "asin": lambda *s: u(*s, lo=-0.9, hi=0.9),
    "acos": lambda *s: u(*s, lo=-0.9, hi=0.9),
}
for _name, _maker in _UNARY.items():
    add(_name, "2x3", getattr(E, _name), _maker(2, 3))
    add(_name, "inplace", lambda x, _n=_name: getattr(x.clone(), _n + "_")(), _maker(4))
add("exp", "0d", E.exp, u())
add("sin", "method_3d", lambda x: x.sin(), u(2, 1, 3))
add("log", "inplace_on_view", lambda x: _on_view(x, lambda v: v.log_()), pos(3, 2))
add("round", "decimals_1", lambda x: E.round(x, decimals=1), noninteger(4) / 10)
add("positive", "2x3", E.positive, u(2, 3))
add("positive", "unary_plus", lambda x: +x, u(3))
add("gelu", "none", E.gelu, u(2, 3))
add("gelu", "tanh", lambda x: E.gelu(x, approximate="tanh"), u(2, 3))
add("gelu", "inplace_tanh", lambda x: x.clone().gelu_(approximate="tanh"), u(4))
add("silu", "2x3", E.silu, u(2, 3))
add("silu", "inplace", lambda x: x.clone().silu_(), u(4))
# activations with kernels (backends/kernels/activation.py): inputs away from the kinks at
# 0, +-0.5 (the shrinks' lambd), +-1 and 2 (hardtanh's bounds), 0.1 (threshold) and +-3
_ACT = np.array([[-4.1, -2.7, -1.3, -0.8, -0.3, 0.35], [0.9, 1.4, 2.6, 4.2, -0.05, 0.2]])
add("leaky_relu", "slope_0.2", lambda x: E.leaky_relu(x, 0.2), _ACT)
add("hardtanh", "-1_2", lambda x: E.hardtanh(x, -1.0, 2.0), _ACT)
add("threshold", "0.1_5", lambda x: E.threshold(x, 0.1, 5.0), _ACT)
add("hardswish", "2x6", E.hardswish, _ACT)
add("hardsigmoid", "2x6", E.hardsigmoid, _ACT)
add("softshrink", "0.5", lambda x: E.softshrink(x, 0.5), _ACT)
add("hardshrink", "0.5", lambda x: E.hardshrink(x, 0.5), _ACT)
add("elu", "alpha_0.7", lambda x: E.elu(x, 0.7), _ACT)
add("selu", "2x6", E.selu, _ACT)
add("celu", "alpha_-2", lambda x: E.celu(x, -2.0), _ACT)
add("softplus", "beta_2_threshold_1", lambda x: E.softplus(x, 2.0, 1.0), _ACT)
add("log_sigmoid", "2x6", E.log_sigmoid, _ACT)
add("mish", "2x6", E.mish, _ACT)
# clamp: inputs at +-(0.3..2), bounds at +-0.1 or tensors well apart from them
add("clamp", "scalar_min_max", lambda x: E.clamp(x, -0.1, 0.1), nz(2, 3))
add("clamp", "scalar_min_only", lambda x: x.clamp(min=0.1), nz(2, 3))
add("clamp", "scalar_max_only", lambda x: x.clamp(max=-0.1), nz(2, 3))
add("clamp", "tensor_min_max_broadcast", lambda x, lo, hi: E.clamp(x, lo, hi),
    np.array([[-1.5, -0.4, 0.4], [1.5, 0.0, -0.9]]), np.array([-1.0, -0.5, 0.2]),
    np.array([[0.5], [1.0]]))
add("clamp", "min_above_max", lambda x, lo, hi: E.clamp(x, lo, hi),
    np.array([-1.5, 0.0, 1.5]), np.array([0.5, 0.5, 0.5]), np.array([-0.5, -0.5, -0.5]))
add("clamp", "inplace", lambda x: x.clone().clamp_(-0.1, 0.1), nz(4))
add("clamp_min", "tensor_broadcast", lambda x, m: E.clamp_min(x, m),
    np.array([[-1.5, 0.4], [1.5, -0.3]]), np.array([0.0, 0.1]))
add("clamp_min", "inplace", lambda x, m: x.clone().clamp_min_(m), np.array([-1.0, 1.0]),
    np.array([0.0, 0.0]))
add("clamp_max", "tensor_broadcast", lambda x, m: E.clamp_max(x, m),
    np.array([[-1.5, 0.4], [1.5, -0.3]]), np.array([0.0, 0.1]))
add("clamp_max", "inplace", lambda x, m: x.clone().clamp_max_(m), np.array([-1.0, 1.0]),
    np.array([0.0, 0.0]))
add("nan_to_num", "finite", E.nan_to_num, u(2, 3))
add("nan_to_num", "with_inf", lambda x: E.nan_to_num(_with_infs(x), posinf=5.0), u(4))
add("nan_to_num", "inplace", lambda x: x.clone().nan_to_num_(), u(4))
# special functions (kernels/special.py)
add("asinh", "2x3", E.asinh, u(2, 3))
add("asinh", "inplace", lambda x: x.clone().asinh_(), u(4))
add("acosh", "2x3", E.acosh, u(2, 3, lo=1.2, hi=3.0))
add("acosh", "inplace", lambda x: x.clone().acosh_(), u(4, lo=1.2, hi=3.0))
add("atanh", "2x3", lambda x: x.atanh(), u(2, 3, lo=-0.8, hi=0.8))
add("atanh", "inplace", lambda x: x.clone().atanh_(), u(4, lo=-0.8, hi=0.8))
add("erfc", "2x3", E.erfc, u(2, 3))
add("erfc", "inplace", lambda x: x.clone().erfc_(), u(4))
add("logit", "2x3", E.logit, u(2, 3, lo=0.1, hi=0.9))
add("logit", "eps_clamps_ends", lambda x: x.logit(eps=0.2), np.array([0.05, 0.3, 0.6, 0.95]))
add("logit", "inplace", lambda x: x.clone().logit_(), u(4, lo=0.1, hi=0.9))
add("frac", "2x3", E.frac, noninteger(2, 3))
add("frac", "inplace", lambda x: x.clone().frac_(), noninteger(4))
# composites that record the ops they are made of
add("pow", "square", E.square, u(2, 3))
add("pow", "square_inplace", lambda x: x.clone().square_(), u(4))
add("pow", "float_power_scalar_base", lambda x: E.float_power(2, x), u(2, 3))
add("pow", "float_power_inplace", lambda x, y: x.clone().float_power_(y), pos(4), u(4))
add("clamp", "clip", lambda x: E.clip(x, -0.1, 0.1), nz(2, 3))
add("abs", "absolute", E.absolute, nz(2, 3))


# ==== reductions ===============================================================================
section("reductions")
X234 = u(2, 3, 2)  # 12 elements: the largest input this file uses
add("sum", "all", E.sum, u(2, 3))
add("sum", "dim_1", lambda x: x.sum(1), X234)
add("sum", "dim_-1_keepdim", lambda x: x.sum(-1, keepdim=True), X234)
add("sum", "dims_0_2", lambda x: E.sum(x, (0, 2)), X234)
add("sum", "dtype_float64", lambda x: x.sum(dtype=E.float64), u(3))
add("sum", "0d", E.sum, u())
add("mean", "all", E.mean, u(2, 3))
add("mean", "dim_0", lambda x: x.mean(0), X234)
add("mean", "dims_-1_0_keepdim", lambda x: x.mean((-1, 0), keepdim=True), X234)
add("prod", "all", E.prod, nz(2, 3))
add("prod", "dim_1", lambda x: x.prod(1), nz(2, 3))
add("prod", "dim_-1_keepdim", lambda x: x.prod(-1, keepdim=True), nz(3, 2))
add("prod", "with_zero", lambda x: x.prod(0), np.array([[0.0, 1.5], [2.0, -0.5], [0.7, 0.0]]))
add("prod", "all_with_zero", E.prod, np.array([1.5, 0.0, -0.7, 2.0]))
add("max", "all", E.max, distinct(3, 4))
add("max.dim", "dim_1", lambda x: E.max(x, 1), distinct(3, 4))
add("max.dim", "dim_-1_keepdim", lambda x: x.max(-1, keepdim=True)[0], distinct(2, 3, 2))
add("max.dim", "dim_0_values", lambda x: x.max(dim=0).values, distinct(3, 4))
add("max.other", "broadcast", lambda x, y: E.max(x, y), distinct(3, 1), distinct(4, salt=2))
add("min", "all", lambda x: x.min(), distinct(3, 4))
add("min.dim", "dim_0", lambda x: E.min(x, 0), distinct(3, 4))
add("min.dim", "dim_-2_keepdim", lambda x: x.min(-2, keepdim=True)[0], distinct(2, 3, 2))
add("min.other", "broadcast", lambda x, y: E.min(x, y), distinct(3, 1), distinct(4, salt=2))
add("amax", "all", E.amax, distinct(3, 4))
add("amax", "dims_0_2", lambda x: E.amax(x, (0, 2)), distinct(2, 3, 2))
add("amax", "dim_-1_keepdim", lambda x: x.amax(-1, keepdim=True), distinct(3, 4))
# at a tie the central difference sees half the slope: the even split matches it
add("amax", "ties_split_evenly", lambda x: x.amax(1),
    np.array([[1.0, 1.0, 0.0], [0.5, 2.0, 2.0]]), gradgrad=False)
add("amin", "dim_1", lambda x: E.amin(x, 1), distinct(3, 4))
add("amin", "dims_-1_0_keepdim", lambda x: x.amin((-1, 0), keepdim=True), distinct(2, 3, 2))
add("var", "all", E.var, u(2, 3))
add("var", "dim_1", lambda x: x.var(1), X234)
add("var", "dim_-1_unbiased_false_keepdim", lambda x: E.var(x, -1, unbiased=False,
    keepdim=True), u(3, 4))
add("var", "correction_2", lambda x: E.var(x, (0, 1), correction=2), X234)
add("std", "all", E.std, u(2, 3))
add("std", "dim_0_keepdim", lambda x: x.std(0, keepdim=True), u(3, 4))
add("std", "correction_0", lambda x: E.std(x, -1, correction=0), u(3, 4))
for _p in (1, 2, 3, 0.5, 0, float("inf"), float("-inf")):
    add("norm", f"p_{_p}", lambda x, _p=_p: E.norm(x, _p), distinct(3, 4))
add("norm", "default_p", E.norm, u(2, 3))
add("norm", "p_2_dim_1", lambda x: x.norm(2, 1), u(3, 4))
add("norm", "p_1_dim_-1_keepdim", lambda x: E.norm(x, 1, -1, keepdim=True), nz(3, 4))
add("norm", "p_3_dims_0_2", lambda x: E.norm(x, 3, (0, 2)), nz(2, 3, 2))
add("norm", "p_inf_dim_0", lambda x: E.norm(x, float("inf"), 0), distinct(3, 4))
add("norm.str", "fro", lambda x: E.norm(x, "fro"), u(3, 4))
add("norm.str", "fro_dim_1_keepdim", lambda x: x.norm("fro", (1,), keepdim=True), u(3, 4))
add("logsumexp", "dim_1", lambda x: E.logsumexp(x, 1), u(3, 4))
add("logsumexp", "dims_0_-1_keepdim", lambda x: x.logsumexp((0, -1), keepdim=True), X234)
add("cumsum", "dim_0", lambda x: E.cumsum(x, 0), u(3, 4))
add("cumsum", "dim_-1", lambda x: x.cumsum(-1), X234)
add("cumsum", "inplace", lambda x: x.clone().cumsum_(1), u(2, 3))
add("cumprod", "dim_1", lambda x: E.cumprod(x, 1), nz(3, 4))
add("cumprod", "dim_-1_with_zero", lambda x: x.cumprod(-1),
    np.array([[1.5, 0.0, -0.7, 2.0], [0.0, 1.2, 0.0, 0.8]]))
add("cumprod", "inplace", lambda x: x.clone().cumprod_(0), nz(3, 2))
add("softmax", "dim_-1", lambda x: E.softmax(x, -1), u(3, 4))
add("softmax", "dim_0", lambda x: x.softmax(0), X234)
add("log_softmax", "dim_1", lambda x: E.log_softmax(x, 1), u(3, 4))
add("log_softmax", "dim_-3", lambda x: x.log_softmax(-3), X234)
# NaN-skipping sums and running extrema (kernels/scan.py), and composites over them and sort
add("nansum", "all", E.nansum, u(2, 3))
add("nansum", "dim_1_with_nan", lambda x: E.nansum(_with_nans(x), 1), u(3, 4))
add("nansum", "dims_0_-1_keepdim", lambda x: x.nansum((0, -1), keepdim=True), X234)
add("nansum", "nanmean", lambda x: E.nanmean(_with_nans(x), 0), u(3, 4))
add("cummax", "dim_1", lambda x: E.cummax(x, 1), distinct(3, 4))
add("cummax", "dim_0_values", lambda x: x.cummax(0).values, distinct(3, 4))
add("cummin", "dim_-1", lambda x: E.cummin(x, -1)[0], distinct(2, 3, 2))
add("std", "std_mean", lambda x: E.std_mean(x, 1), u(3, 4))
add("median.dim", "dim_1", lambda x: E.median(x, 1)[0], distinct(3, 4))
add("median.dim", "all", E.median, distinct(3, 4))
add("median.dim", "dim_0_keepdim", lambda x: x.median(0, keepdim=True).values, distinct(4, 3))
add("nanmedian.dim", "dim_1_with_nan", lambda x: E.nanmedian(_with_nans(x), 1).values,
    distinct(3, 4))
add("kthvalue", "k_2_dim_0", lambda x: E.kthvalue(x, 2, 0)[0], distinct(3, 4))
add("mode", "dim_1", lambda x: E.mode(x, 1).values, distinct(3, 4))
add("sort", "quantile_linear_dim_1", lambda x: E.quantile(x, _f([0.3, 0.5]), 1), distinct(3, 4))
add("sort", "quantile_midpoint_all", lambda x: x.quantile(0.4, interpolation="midpoint"),
    distinct(3, 4))
add("sort", "nanquantile_nearest", lambda x: E.nanquantile(_with_nans(x), 0.6, 0,
                                                           interpolation="nearest"),
    distinct(3, 4))

# ==== sorting and selection ====================================================================
add("sort", "dim_-1", lambda x: E.sort(x), distinct(3, 4))
add("sort", "dim_0_descending", lambda x: x.sort(0, descending=True)[0], distinct(3, 4))
add("topk", "k2_dim_-1", lambda x: E.topk(x, 2), distinct(3, 4))
add("topk", "k2_dim_0_smallest", lambda x: x.topk(2, 0, largest=False)[0], distinct(3, 4))

# ==== shape and views ==========================================================================
section("shape")
add("view", "2x3_to_3x2", lambda x: x.view(3, 2), u(2, 3))
add("view", "minus_1", lambda x: x.view(-1), X234)
add("reshape", "flat_to_2x3x2", lambda x: E.reshape(x, (2, 3, 2)), u(12))
add("reshape", "minus_1_of_transposed", lambda x: x.t().reshape(-1, 2), u(2, 4))
add("contiguous", "of_transposed", lambda x: x.t().contiguous(), u(2, 3))
add("permute", "negative_dims", lambda x: E.permute(x, (-1, 0, 1)), X234)
add("permute", "method", lambda x: x.permute(1, 2, 0), X234)
add("transpose", "0_-1", lambda x: E.transpose(x, 0, -1), X234)
add("transpose", "swapaxes", lambda x: x.swapaxes(1, 2), X234)
add("t", "2d", E.t, u(2, 3))
add("t", "1d", lambda x: x.t() * 2, u(3))
add("expand", "3x1_to_2x3x4", lambda x: x.expand(2, 3, 4), u(3, 1))
add("expand", "minus_1_keeps", lambda x: x.expand(-1, 3), u(2, 1))
add("expand", "expand_as", lambda x, y: x.expand_as(y), u(3), u(2, 3))
add("squeeze", "all", E.squeeze, u(2, 1, 3, 1))
add("squeeze", "dim_-1", lambda x: x.squeeze(-1), u(2, 1, 3, 1))
add("squeeze", "dims_tuple", lambda x: E.squeeze(x, (1, 2)), u(2, 1, 3, 1))
add("unsqueeze", "dim_-1", lambda x: x.unsqueeze(-1), u(2, 3))
add("unsqueeze", "dim_0", lambda x: E.unsqueeze(x, 0), u(3))
add("flatten", "start_1", lambda x: E.flatten(x, 1), X234)
add("flatten", "all", lambda x: x.flatten(), X234)
add("flatten", "0d", lambda x: x.flatten(), u())
add("unflatten", "dim_1", lambda x: E.unflatten(x, 1, (2, 3)), u(2, 6))
add("unflatten", "dim_-1_minus_1", lambda x: x.unflatten(-1, (-1, 2)), u(3, 4))
add("narrow", "dim_1", lambda x: E.narrow(x, 1, 1, 2), u(3, 4))
add("narrow", "dim_-1_negative_start", lambda x: x.narrow(-1, -3, 2), u(3, 4))
add("narrow", "start_0", lambda x: x.narrow(0, 0, 2), u(3, 4))
add("unfold", "overlapping_dim_1", lambda x: x.unfold(1, 3, 1), u(3, 4))
add("unfold", "step_2_dim_-2", lambda x: x.unfold(-2, 2, 2), u(4, 3))
add("unfold", "0d", lambda x: x.unfold(0, 1, 1), u())
add("_as_strided", "overlapping", lambda x: x.as_strided((3, 3), (1, 1)), u(6))
add("_as_strided", "of_a_transposed_slice", lambda x: x.t()[1:].as_strided((2, 2), (3, 1), 1),
    u(2, 3))
add("_as_strided", "mul_on_view", lambda x: _on_view(x, lambda v: v.as_strided((2,), (1,), 3)
                                                  .mul_(2)), u(2, 3))
add("select", "dim_1", lambda x: E.select(x, 1, 2), u(3, 4))
add("select", "dim_-1_index_-1", lambda x: x.select(-1, -1), X234)
add("split", "size_2_dim_1", lambda x: E.split(x, 2, 1), u(2, 5))
add("split", "size_2_dim_0", lambda x: x.split(2), u(3, 2))
add("split", "first_piece_only", lambda x: x.split(2, -1)[0] * 2, u(2, 5))
add("split.sizes", "1_3_dim_-1", lambda x: E.split(x, [1, 3], -1), u(3, 4))
add("split.sizes", "last_piece_only", lambda x: x.split([2, 1])[1], u(3, 2))
add("chunk", "3_dim_1", lambda x: E.chunk(x, 3, 1), u(2, 5))
add("chunk", "2_dim_0", lambda x: x.chunk(2)[1], u(4, 2))
add("unbind", "dim_0", E.unbind, u(3, 4))
add("unbind", "dim_-1_one_slice", lambda x: x.unbind(-1)[1], X234)
add("cat", "dim_-1", lambda x, y: E.cat([x, y], -1), u(2, 3), u(2, 1))
add("cat", "dim_0_three", lambda x, y: E.cat([x, y, x], 0), u(1, 3), u(2, 3))
add("cat", "legacy_empty", lambda x: E.cat([x, E.zeros(0, dtype=E.float64)], 0), u(2, 2))
add("stack", "dim_0", lambda x, y: E.stack([x, y]), u(2, 3), u(2, 3))
add("stack", "dim_-1", lambda x, y: E.stack((x, y), -1), u(3), u(3))
add("flip", "dims_0_-1", lambda x: E.flip(x, (0, -1)), X234)
add("flip", "dim_1", lambda x: x.flip([1]), u(3, 4))
add("roll", "flat", lambda x: E.roll(x, 2), u(3, 4))
add("roll", "dims", lambda x: x.roll((1, -2), (0, -1)), u(3, 4))
add("repeat", "2x1x2", lambda x: x.repeat(2, 1, 2), u(2, 3))
add("repeat", "same_rank", lambda x: x.repeat(1, 3), u(2, 2))
add("clone", "2x3", E.clone, u(2, 3))
add("fill_", "whole", lambda x: (x * 2).fill_(1.5), u(2, 3))
add("fill_", "on_view", lambda x: _on_view(x, lambda v: v.fill_(0.5)), u(3, 2))
add("fill_", "zero_", lambda x: _on_view(x, lambda v: v.zero_()) * x, u(3, 2))
add("copy_", "broadcast_src", lambda x, y: (x * 1).copy_(y), u(2, 3), u(3))
add("copy_", "into_view", lambda x, y: _on_view(x, lambda v: v.copy_(y)), u(3, 2), u(2))


def _seeded():
    """A fresh generator at a fixed seed: the sampling samples below draw the same values
    on every gradcheck evaluation, so only their (zero) formulas are checked."""
    return E.Generator().manual_seed(0)


# Random draws do not depend on the inputs' values (PyTorch's zero formulas): the inputs
# enter through ``x * 0`` where the draw would otherwise move with them (normal's mean).
add("normal_", "whole", lambda x: (x * 2).normal_(1.0, 2.0, generator=_seeded()), u(2, 3))
add("uniform_", "on_view", lambda x: _on_view(x, lambda v: v.uniform_(-1, 1,
                                                                      generator=_seeded())),
    u(3, 2))
add("bernoulli_.float", "whole", lambda x: (x * 2).bernoulli_(0.3, generator=_seeded()), u(4))
add("bernoulli_.Tensor", "broadcast_p",
    lambda x, p: (x * 2).bernoulli_(p * 0 + 0.5, generator=_seeded()), u(2, 3), u(3))
add("exponential_", "whole", lambda x: (x * 2).exponential_(2.0, generator=_seeded()), u(4))
add("geometric_", "whole", lambda x: (x * 2).geometric_(0.4, generator=_seeded()), u(4))
add("log_normal_", "whole", lambda x: (x * 2).log_normal_(0.0, 0.5, generator=_seeded()), u(4))
add("cauchy_", "whole", lambda x: (x * 2).cauchy_(generator=_seeded()), u(4))
add("random_.from", "2_9", lambda x: (x * 2).random_(2, 9, generator=_seeded()), u(4))
add("random_.to", "7", lambda x: (x * 2).random_(7, generator=_seeded()), u(4))
add("random_", "default", lambda x: (x * 2).random_(generator=_seeded()), u(4))
add("bernoulli", "p_self", lambda x: E.bernoulli(x * 0 + 0.5, generator=_seeded()), u(2, 3))
add("bernoulli.p", "method", lambda x: x.bernoulli(0.5, generator=_seeded()), u(2, 3))
add("normal.Tensor_Tensor", "broadcast",
    lambda m, s: E.normal(m * 0, s * 0 + 1, generator=_seeded()), u(2, 1), u(3))
add("normal.Tensor_float", "std_2", lambda m: E.normal(m * 0, 2.0, generator=_seeded()), u(3))
add("normal.float_Tensor", "mean_1", lambda s: E.normal(1.0, s * 0 + 1, generator=_seeded()),
    u(3))
add("poisson", "rate_3", lambda x: E.poisson(x * 0 + 3, generator=_seeded()), u(2, 2))
# composites: broadcast_to, tile and meshgrid record expand/repeat; repeat_interleave
# records index_select (in indexing_linalg below)
add("expand", "broadcast_to", lambda x: E.broadcast_to(x, (2, 3, 4)), u(3, 1))
add("expand", "meshgrid_xy", lambda x, y: E.meshgrid(x, y, indexing="xy"), u(3), u(2))
add("repeat", "tile_fewer_dims", lambda x: E.tile(x, (2,)), u(2, 3))
add("repeat", "tile_more_dims", lambda x: x.tile((2, 1, 2)), u(2, 3))

# ==== matrices: triangles and diagonals ========================================================
add("tril", "diagonal_-1", lambda x: E.tril(x, -1), u(3, 4))
add("tril", "batched_diagonal_1", lambda x: x.tril(1), u(2, 2, 3))
add("tril", "inplace", lambda x: x.clone().tril_(), u(3, 3))
add("triu", "diagonal_1", lambda x: E.triu(x, 1), u(3, 4))
add("triu", "batched_diagonal_-1", lambda x: x.triu(-1), u(2, 3, 2))
add("triu", "inplace", lambda x: x.clone().triu_(-1), u(3, 3))
add("diagonal", "offset_1", lambda x: E.diagonal(x, 1), u(3, 4))
add("diagonal", "dims_-1_0_offset_-1", lambda x: x.diagonal(-1, -1, 0), u(2, 3, 2))
add("diagonal", "diag_2d", lambda x: E.diag(x, -1), u(3, 4))
# trace is a kernel pair (TraceBackward0; its gradients: test_matrix.py); its reference:
add("diagonal", "trace_reference", lambda x: x.diagonal().sum(), u(3, 4))
add("diagonal", "fill_on_view", lambda x: _on_view(x, lambda v: v.diagonal().fill_(0.5)),
    u(4, 3))
add("diagonal_backward", "direct", lambda g: E.diagonal_backward(g, (3, 4), 1, 0, 1), u(3))
add("diagonal_backward", "diag_embed_offset_1", lambda x: E.diag_embed(x, 1), u(2, 3))
add("diagonal_backward", "diag_1d", lambda x: E.diag(x, -1), u(3))

# ==== indexing =================================================================================
section("indexing_linalg")
add("masked_fill", "broadcast_mask", lambda x: E.masked_fill(x, _b([True, False, True]), 0.5),
    u(2, 3))
add("masked_fill", "inplace", lambda x: x.clone().masked_fill_(_b([[False], [True]]), -1.0),
    u(2, 3))
add("index_select", "dim_0_repeated", lambda x: E.index_select(x, 0, _i([2, 0, 2])),
    u(3, 4))
add("index_select", "dim_-1", lambda x: x.index_select(-1, _i([1, 0, 1])), X234)
add("index_select", "repeat_interleave_int", lambda x: E.repeat_interleave(x, 2, dim=1),
    u(2, 3))
add("index_select", "repeat_interleave_tensor_flat",
    lambda x: x.repeat_interleave(_i([1, 0, 2, 1])), u(2, 2))
add("gather", "dim_1_repeated", lambda x: E.gather(x, 1, _i([[0, 0, 2], [1, 3, 1]])),
    u(2, 4))
add("gather", "dim_0", lambda x: x.gather(0, _i([[2, 0], [1, 2]])), u(3, 2))
_SCATTER_IDX = [[1, 0, 2], [0, 2, 1]]  # unique per column: no write races
add("scatter", "src_dim_0", lambda x, s: E.scatter(x, 0, _i(_SCATTER_IDX), s), u(3, 3),
    u(2, 3))
add("scatter", "src_dim_-1", lambda x, s: x.scatter(-1, _i([[2, 0], [1, 2]]), s), u(2, 3),
    u(2, 2))
add("scatter", "inplace", lambda x, s: x.clone().scatter_(1, _i([[1], [0]]), s), u(2, 3),
    u(2, 1))
add("scatter.value", "value_2.5", lambda x: E.scatter(x, 0, _i(_SCATTER_IDX), 2.5), u(3, 3))
add("scatter.value", "inplace", lambda x: x.clone().scatter_(1, _i([[1], [0]]), -1.0),
    u(2, 3))
add("scatter_add", "repeated", lambda x, s: E.scatter_add(x, 1, _i([[0, 0, 2], [1, 1, 1]]), s),
    u(2, 3), u(2, 3))
add("scatter_add", "inplace", lambda x, s: x.clone().scatter_add_(0, _i([[1, 1], [1, 0]]), s),
    u(2, 2), u(2, 2))
add("take_along_dim", "dim_1", lambda x: E.take_along_dim(x, _i([[0, 2, 0], [1, 1, 3]]), 1),
    u(2, 4))
add("take_along_dim", "flat", lambda x: x.take_along_dim(_i([5, 0, 5, -1])), u(2, 3))
add("take_along_dim", "broadcast_self", lambda x: E.take_along_dim(x, _i([[0, 2], [1, 1]]), -1),
    u(1, 3))
add("take_along_dim", "negative_dim_1", lambda x: x.take_along_dim(_i([[-1, 0], [2, -3]]), 1),
    u(2, 3))
add("index_add", "dim_0_repeated", lambda x, s: E.index_add(x, 0, _i([2, 0, 2]), s, alpha=1.5),
    u(3, 2), u(3, 2))
add("index_add", "dim_-1", lambda x, s: x.index_add(-1, _i([1]), s), u(2, 3), u(2, 1))
add("index_add", "inplace", lambda x, s: x.clone().index_add_(1, _i([0, 2]), s), u(2, 3),
    u(2, 2))
add("index_fill", "dim_1_negative", lambda x: E.index_fill(x, 1, _i([0, -1]), 2.5), u(2, 3))
add("index_fill", "inplace", lambda x: x.clone().index_fill_(0, _i([1]), -1.0), u(3, 2))
add("index", "masked_select_broadcast", lambda x: E.masked_select(x, _b([True, False, True])),
    u(2, 3))
add("flip", "rot90", lambda x: E.rot90(x, 1, [1, 0]), u(2, 3))
add("sub", "diff_n2_prepend", lambda x, p: E.diff(x, 2, 0, prepend=p), u(3, 2), u(1, 2))

# ==== linear algebra ===========================================================================
add("matmul", "2d_2d", E.matmul, u(2, 3), u(3, 2))
add("matmul", "1d_2d", lambda x, y: x @ y, u(3), u(3, 2))
add("matmul", "2d_1d", lambda x, y: x.matmul(y), u(2, 3), u(3))
add("matmul", "1d_1d", E.matmul, u(4), u(4))
add("matmul", "batched_broadcast", E.matmul, u(2, 2, 3), u(3, 2))
add("matmul", "1d_batched", E.matmul, u(2), u(2, 2, 3))
add("matmul", "batch_broadcast_both", E.matmul, u(2, 1, 2, 2), u(3, 2, 2))
add("mm", "2x3_3x2", E.mm, u(2, 3), u(3, 2))
add("bmm", "2x2x3_2x3x2", lambda x, y: x.bmm(y), u(2, 2, 3), u(2, 3, 2))
add("addmm", "broadcast_self", lambda b, m1, m2: E.addmm(b, m1, m2), u(2), u(3, 2), u(2, 2))
add("addmm", "beta_alpha", lambda b, m1, m2: E.addmm(b, m1, m2, beta=0.5, alpha=-2),
    u(3, 2), u(3, 2), u(2, 2))
add("addmm", "inplace", lambda b, m1, m2: b.clone().addmm_(m1, m2, alpha=1.5), u(2, 2),
    u(2, 3), u(3, 2))
add("dot", "len_4", E.dot, u(4), u(4))
add("outer", "3_by_2", lambda x, y: x.outer(y), u(3), u(2))
add("einsum", "ij_jk", lambda x, y: E.einsum("ij,jk->ik", x, y), u(2, 3), u(3, 2))
add("einsum", "implicit_list", lambda x, y: E.einsum("ij,jk", [x, y]), u(2, 3), u(3, 2))
add("einsum", "sum_away", lambda x: E.einsum("ij->j", x), u(3, 4))
add("einsum", "batched_three", lambda a, b, c: E.einsum("bi,bij,j->b", a, b, c), u(2, 2),
    u(2, 2, 3), u(3))
add("einsum", "outer_only_letter", lambda x, y: E.einsum("i,jk->ij", x, y), u(2), u(3, 2))

# ==== torch.linalg (ember.linalg) ==============================================================
# Well-conditioned inputs: ``_wc`` adds 3 I to uniform values in [-2, 2) (|eigenvalues| >= 1
# for 2x2/3x3); symmetric and SPD ones are built inside the callable (x + x^T, x x^T + I), as
# eigh/cholesky read one triangle only. Eigen/singular vectors enter through gauge-invariant
# outputs (v * v, U @ Vh): their signs are arbitrary.
def _wc(*shape, salt=0):
    return u(*shape, salt=salt) + 3 * np.eye(shape[-1])


def _eye(n):
    return E.eye(n, dtype=E.float64)


def _svd_parts(full_matrices=False):
    def fn(a):
        U, S, Vh = E.linalg.svd(a, full_matrices=full_matrices)
        k = S.shape[-1]
        U, Vh = U[..., :k], Vh[..., :k, :]
        return U * U, S, Vh * Vh, U @ Vh
    return fn


add("linalg_inv", "3x3", E.linalg.inv, _wc(3, 3))
add("linalg_inv", "batched", E.inverse, _wc(2, 2, 2))
add("linalg_inv", "matrix_power_-2", lambda a: E.linalg.matrix_power(a, -2), _wc(2, 2))
add("linalg_solve", "matrix_rhs", E.linalg.solve, _wc(3, 3), u(3, 2))
add("linalg_solve", "vector_rhs_batched", E.linalg.solve, _wc(2, 2, 2), u(2))
add("linalg_solve", "left_false", lambda a, b: E.linalg.solve(a, b, left=False), _wc(2, 2),
    u(3, 2))
add("linalg_solve", "broadcast_batch", E.linalg.solve, _wc(2, 2), u(2, 2, 1))
add("linalg_det", "3x3", E.linalg.det, _wc(3, 3))
add("linalg_det", "batched_method", lambda a: a.det(), _wc(2, 2, 2, salt=1))
add("linalg_slogdet", "negative_det", lambda a: E.linalg.slogdet(a.flip([0]))[1], _wc(3, 3))
add("linalg_slogdet", "batched_logdet", E.logdet, _wc(2, 2, 2))
add("linalg_cholesky", "spd_3x3", lambda x: E.linalg.cholesky(x @ x.mT + _eye(3)), u(3, 3))
add("linalg_cholesky", "upper_batched",
    lambda x: E.linalg.cholesky(x @ x.mT + _eye(2), upper=True), u(2, 2, 2))
add("linalg_qr", "tall_3x2", E.linalg.qr, u(3, 2))
add("linalg_qr", "square_batched", E.linalg.qr, u(2, 2, 2))
add("linalg_qr", "r_only", lambda a: E.linalg.qr(a)[1], u(4, 3))
add("linalg_eigh", "3x3", lambda x: (lambda w, v: (w, v * v))(*E.linalg.eigh(x + x.mT)),
    u(3, 3))
add("linalg_eigh", "upper_batched",
    lambda x: (lambda w, v: (w, v * v))(*E.linalg.eigh(x + x.mT, UPLO="U")), u(2, 2, 2))
add("linalg_eigh", "eigvalsh", lambda x: E.linalg.eigvalsh(x + x.mT), u(3, 3))
add("linalg_svd", "tall_reduced", _svd_parts(), u(3, 2))
add("linalg_svd", "wide_reduced", _svd_parts(), u(2, 3))
add("linalg_svd", "full_tall", _svd_parts(True), u(4, 2))
add("linalg_svd", "square_batched", _svd_parts(True), u(2, 2, 2))
add("linalg_svd", "svdvals", E.linalg.svdvals, u(3, 2))
add("linalg_svd", "matrix_norm_nuc", lambda a: E.linalg.matrix_norm(a, "nuc"), u(2, 3))
add("linalg_svd", "matrix_norm_2", lambda a: E.linalg.matrix_norm(a, -2), u(3, 3))
add("linalg_svd", "pinv_tall", E.linalg.pinv, u(3, 2))
add("linalg_eigh", "pinv_hermitian", lambda x: E.linalg.pinv(x + x.mT + 4 * _eye(2),
                                                             hermitian=True), u(2, 2))

# ---- torch.linalg: LU, triangular solves, lstsq, matrix_exp (ember/linalg/) --------------------
# LU pivots are piecewise constant in A: the inputs keep a clear winner in every column.
def _pivots(n):
    return E.tensor(np.arange(1, n + 1, dtype=np.int32))


add("linalg_solve_triangular", "upper", lambda a, b: E.linalg.solve_triangular(a, b, upper=True),
    _wc(3, 3), u(3, 2))
add("linalg_solve_triangular", "lower_right_unit_batched",
    lambda a, b: E.linalg.solve_triangular(a, b, upper=False, left=False, unitriangular=True),
    u(2, 2, 2), u(2, 3, 2))
add("linalg_solve_triangular", "cholesky_solve", lambda b, x: E.cholesky_solve(
    b, E.linalg.cholesky(x @ x.mT + _eye(2))), u(2, 2), u(2, 2))
add("linalg_solve_triangular", "triangular_solve_transpose",
    lambda b, a: E.triangular_solve(b, a, upper=False, transpose=True)[0], u(3, 1), _wc(3, 3))
add("linalg_lu_factor_ex", "square", lambda a: E.linalg.lu_factor_ex(a)[0], _wc(3, 3))
add("linalg_lu_factor_ex", "lu_tall", lambda a: E.linalg.lu(a)[1:], u(4, 2))
add("linalg_lu_factor_ex", "lu_wide_batched", lambda a: E.linalg.lu(a)[1:], u(2, 2, 3))
add("linalg_lu_factor_ex", "lu_factor_solve",
    lambda a, b: E.linalg.lu_solve(*E.linalg.lu_factor(a), b), _wc(2, 2), u(2, 3))
add("lu_unpack", "no_pivoting", lambda lu: E.lu_unpack(lu, _pivots(3))[1:], _wc(3, 3))
add("lu_unpack", "lu_solve_adjoint_right", lambda lu, b: E.linalg.lu_solve(
    lu, _pivots(2), b, left=False, adjoint=True), _wc(2, 2), u(3, 2))
add("linalg_lstsq", "tall", lambda a, b: E.linalg.lstsq(a, b).solution, u(4, 2), u(4, 2))
add("linalg_lstsq", "residuals_gelsd", lambda a, b: E.linalg.lstsq(a, b, driver="gelsd")[:2],
    u(4, 2), u(4, 1))
add("linalg_lstsq", "wide_vector", lambda a, b: E.linalg.lstsq(a, b).solution, u(2, 3), u(2))
add("linalg_matrix_exp", "small_norm", E.linalg.matrix_exp, u(3, 3, lo=-0.1, hi=0.1))
add("linalg_matrix_exp", "scaled_batched", E.matrix_exp, u(2, 2, 2, lo=-3.0, hi=3.0))
add("linalg_cholesky_ex", "spd", lambda x: E.linalg.cholesky_ex(x @ x.mT + _eye(3))[0], u(3, 3))
add("linalg_cholesky_ex", "upper_cholesky_inverse",
    lambda x: E.cholesky_inverse(E.linalg.cholesky_ex(x @ x.mT + _eye(2), upper=True)[0],
                                 upper=True), u(2, 2))

# ==== written by hand: Tensor.to, indexing =====================================================
add("_to_copy", "float64_copy", lambda x: x.to(E.float64, copy=True), u(2, 3))
# float32 rounds the finite-difference step: a coarse eps keeps that error below atol
_COARSE = {"eps": 1e-2, "atol": 1e-4}
add("_to_copy", "float32_round_trip", lambda x: x.to(E.float32).to(E.float64) * 2, u(2, 3),
    gradcheck=_COARSE)
add("_to_copy", "float_double", lambda x: x.float().double(), u(3), gradcheck=_COARSE)
add("index", "int", lambda x: x[1], u(3, 4))
add("index", "slices_step", lambda x: x[:, 1::2], u(3, 4))
add("index", "none_ellipsis_neg", lambda x: x[None, ..., -1], X234)
add("index", "list_repeated", lambda x: x[[0, 2, 0]], u(3, 2))
add("index", "tensor_repeated_2d", lambda x: x[_i([[1, 1], [0, 1]])], u(2, 3))
add("index", "bool_mask", lambda x: x[_b([[True, False, True], [False, True, True]])],
    u(2, 3))
add("index", "mixed_adv_slice", lambda x: x[[0, 1, 0], 1:], u(2, 3))
add("index", "two_adv_broadcast", lambda x: x[_i([[0], [1]]), _i([2, 0, 2])], u(2, 3))
add("index_put_", "tensor_value_adv", lambda x, v: _setitem(x, [2, 0], v), u(3, 2), u(2, 2))
add("index_put_", "broadcast_value", lambda x, v: _setitem(x, (slice(None), 1), v), u(3, 2),
    u(1))
add("index_put_", "bool_mask_value", lambda x, v: _setitem(x, _b([True, False, True]), v),
    u(3, 2), u(2))
add("index_put_", "scalar_value", lambda x: _setitem(x, _i([1]), 0.5) * x, u(3, 2))
add("index_put_", "accumulate_repeated", lambda x, v: _index_put(x, _i([0, 2, 0]), v), u(3, 2),
    u(3, 2))

# ==== nn: convolution, pooling =================================================================
# Closed-form and reference checks of these live in tests/core/nn/ and tests/core/backends/.
section("nn")


def _conv(x, w, b=None, stride=(1,), padding=(0,), dilation=(1,), transposed=False,
          output_padding=(0,), groups=1):
    return E._convolution(x, w, b, stride, padding, dilation, transposed, output_padding,
                          groups, False, False, True)


add("_convolution", "2d_pad_bias", lambda x, w, b: _conv(x, w, b, padding=(1,)), u(1, 1, 3, 3),
    u(1, 1, 2, 2), u(1))
add("_convolution", "1d_stride_dilation", lambda x, w: _conv(x, w, stride=(2,), dilation=(2,)),
    u(1, 2, 6), u(2, 2, 2))
add("_convolution", "2d_transposed_groups",
    lambda x, w, b: _conv(x, w, b, stride=(2,), transposed=True, output_padding=(1,),
                          groups=2), u(1, 2, 2, 2), u(2, 1, 2, 2), u(2))
add("convolution_backward", "1d_all_outputs",
    lambda go, x, w: E.convolution_backward(go, x, w, (1,), (1,), (1,), False, (0,), 1,
                                            (True, True, True)), u(1, 2, 5), u(1, 1, 4),
    u(2, 1, 2))
add("_convolution", "1d_transposed_dilation_output_padding",
    lambda x, w: _conv(x, w, dilation=(2,), transposed=True, output_padding=(1,)),
    u(1, 1, 3), u(1, 2, 2))
add("convolution_backward", "1d_transposed_stride",
    lambda go, x, w: E.convolution_backward(go, x, w, (2,), (0,), (1,), True, (1,), 1,
                                            (True, True, True)), u(1, 1, 7), u(1, 1, 3),
    u(1, 1, 2))
add("convolution_backward", "2d_input_grad_only",
    lambda go, w: E.convolution_backward(go, E.zeros(1, 1, 3, 3, dtype=E.float64), w, (1,),
                                         (0,), (1,), False, (0,), 1, (True, False, False))[0],
    u(1, 2, 2, 2), u(2, 1, 2, 2))
add("max_pool2d_with_indices", "overlap_pad_ceil",
    lambda x: E.max_pool2d_with_indices(x, (2, 2), (1, 2), (1, 1), (1, 1), True)[0],
    distinct(1, 1, 3, 3))
add("max_pool2d_with_indices_backward", "overlap_repeated_index",
    lambda go: E.max_pool2d_with_indices_backward(
        go, E.zeros(1, 1, 3, 3, dtype=E.float64), (2, 2), (1, 1), (0, 0), (1, 1), False,
        _i([[[[0, 1], [4, 4]]]])), u(1, 1, 2, 2))
add("max_pool3d_with_indices", "overlap_pad_ceil",
    lambda x: E.max_pool3d_with_indices(x, (2, 2, 2), (1, 2, 1), (1, 0, 1), (1, 1, 1),
                                        True)[0], distinct(1, 1, 2, 2, 3))
add("max_pool3d_with_indices_backward", "overlap_repeated_index",
    lambda go: E.max_pool3d_with_indices_backward(
        go, E.zeros(1, 1, 2, 2, 3, dtype=E.float64), (2, 2, 2), (1, 1, 1), (0, 0, 0),
        (1, 1, 1), False, _i([[[[[0, 4]]]]])), u(1, 1, 1, 1, 2))


def _class_weight():
    return E.tensor(np.array([0.5, 2.0, 1.5]))


# targets [1, 2, 0, 2] with ignore_index 0: weights 2.0 + 1.5 + 1.5 count, total 5.0
add("nll_loss_forward", "mean_weight_ignore",
    lambda x: E.nll_loss_forward(x, _i([1, 2, 0, 2]), _class_weight(), "mean", 0)[0],
    u(4, 3))
add("nll_loss_forward", "none_spatial",
    lambda x: E.nll_loss_forward(x, _i([[0, 2], [1, 1]]), None, "none", -100)[0],
    u(2, 3, 2))
add("nll_loss_forward", "sum_1d", lambda x: E.nll_loss_forward(x, _i(2), None, "sum", -100)[0],
    u(3))
add("nll_loss_backward", "mean_weight_ignore",
    lambda go: E.nll_loss_backward(go, E.zeros(4, 3, dtype=E.float64), _i([1, 2, 0, 2]),
                                   _class_weight(), "mean", 0, E.tensor(np.array(5.0))), u())
add("nll_loss_backward", "none",
    lambda go: E.nll_loss_backward(go, E.zeros(4, 3, dtype=E.float64), _i([1, 2, 0, 2]),
                                   None, "none", -100, E.tensor(np.array(4.0))), u(4))


# special functions (kernels/special_math.py)
section("pointwise")
add("lgamma", "mixed_sign", E.lgamma, np.array([[0.3, 1.7, 4.2], [-0.4, -1.3, 2.5]]))
add("digamma", "mixed_sign", E.digamma, np.array([[0.3, 1.7, 4.2], [-0.4, -1.3, 12.5]]))
add("polygamma", "n2", lambda x: E.polygamma(2, x), np.array([0.3, 1.7, 4.2, -0.4]))
add("erfinv", "2x3", E.erfinv, np.array([[-0.9, -0.3, 0.1], [0.4, 0.7, 0.95]]))
add("i0", "2x3", E.i0, u(2, 3))
add("special_i1", "with_zero", E.special_i1, np.array([0.0, -1.2, 2.5, 0.4]))
add("sinc", "2x3", E.sinc, nz(2, 3))
add("hypot", "broadcast", E.hypot, nz(3, 1), nz(4))
add("lgamma", "inplace", lambda x: x.clone().lgamma_(), pos(4))
add("digamma", "inplace", lambda x: x.clone().digamma_(), pos(4))
add("erfinv", "inplace", lambda x: x.clone().erfinv_(), np.array([-0.5, 0.2, 0.8]))
add("i0", "inplace", lambda x: x.clone().i0_(), u(4))
add("sinc", "inplace", lambda x: x.clone().sinc_(), nz(4))
add("hypot", "inplace", lambda x, y: x.clone().hypot_(y), nz(4), nz(4))


# ==== statistics and numerics (opsa: kernels/log_scan.py, kernels/float_parts.py) ============
section("reductions")
add("logcumsumexp", "dim1", lambda x: E.logcumsumexp(x, 1), u(2, 4))
add("logcumsumexp", "wide_range_dim0", lambda x: x.logcumsumexp(0), u(5, lo=-30, hi=30))
add("logcumsumexp", "0d", lambda x: E.logcumsumexp(x, 0), u())
section("pointwise")
add("frexp", "mantissa", lambda x: E.frexp(x).mantissa, np.array([[0.3, -1.7, 5.2],
                                                                  [12.5, -0.06, 2.2]]))


# ==== scatter_reduce (kernels/scatter_reduce.py; formulas/_scatter.py) =========================
# Distinct values, so amax/amin have no ties (a tie's subgradient is a choice); zeros for
# prod, whose derivative (the product of the others) is smooth through them.
section("indexing_linalg")
_SR_IDX = [[0, 1, 0], [1, 1, 0]]  # repeats within each column
for _red in ("sum", "prod", "mean", "amax", "amin"):
    add("scatter_reduce.two", f"{_red}_self",
        lambda x, s, r=_red: E.scatter_reduce(x, 0, _i(_SR_IDX), s, r), distinct(2, 3),
        distinct(2, 3, salt=1) + 0.11)  # (distinct's values repeat across calls)
    add("scatter_reduce.two", f"{_red}_no_self",
        lambda x, s, r=_red: x.scatter_reduce(0, _i(_SR_IDX), s, r, include_self=False),
        distinct(3, 3), distinct(2, 3, salt=2) + 0.11)
add("scatter_reduce.two", "prod_zeros",
    lambda x, s: E.scatter_reduce(x, 1, _i([[0, 0, 1], [1, 1, 1]]), s, "prod"),
    np.array([[0.0, 1.5], [2.0, 0.5]]), np.array([[0.9, 1.2, -0.7], [0.0, 1.1, 1.3]]))
add("scatter_reduce.two", "mean_small_index_dim_-1",
    lambda x, s: x.scatter_reduce(-1, _i([[2, 2], [0, 1]]), s, "mean"), u(2, 3), u(2, 3))
add("scatter_reduce.two", "inplace",
    lambda x, s: x.clone().scatter_reduce_(1, _i([[0, 0], [2, 0]]), s, "amax",
                                          include_self=False), distinct(2, 3),
    distinct(2, 2) + 0.11)


# ==== torch.special (kernels/special_stats.py, special_gamma.py, special_bessel.py) ==========
# zeta and igamma/igammac are differentiable in their second operand only (as PyTorch): the
# first is a constant inside the callable.
section("pointwise")
add("special_entr", "positive", E.special_entr, pos(2, 3, lo=0.1))
add("special_ndtr", "2x3", E.special_ndtr, u(2, 3, lo=-4, hi=4))
add("special_ndtri", "2x3", E.special_ndtri, u(2, 3, lo=0.02, hi=0.98))
add("special_log_ndtr", "both_tails", E.special_log_ndtr,
    np.array([-30.0, -3.0, -0.5, 0.4, 2.0, 6.0]))
add("special_erfcx", "both_signs", E.special_erfcx, np.array([-1.5, -0.2, 0.3, 2.0, 6.0, 40.0]))
add("special_i0e", "both_signs", E.special_i0e, np.array([-35.0, -1.2, 0.4, 2.5, 31.0]))
add("special_i1e", "with_zero", E.special_i1e, np.array([0.0, -1.2, 0.4, 2.5, -31.0]))
add("special_xlog1py", "broadcast", E.special_xlog1py, nz(3, 1), pos(4, lo=-0.5, hi=2.0))
add("special_xlog1py", "number_self", lambda y: E.special_xlog1py(2.5, y), pos(4))
add("special_zeta", "in_q", lambda q: E.special_zeta(E.tensor([2.0, 3.5, 5.0], dtype=E.float64), q),
    pos(3, lo=0.3, hi=3.0))
add("igamma", "in_x", lambda x: E.igamma(E.tensor([0.5, 2.0, 7.5], dtype=E.float64), x),
    pos(3, lo=0.3, hi=6.0))
add("igammac", "in_x", lambda x: E.igammac(E.tensor([0.5, 2.0, 7.5], dtype=E.float64), x),
    pos(3, lo=0.3, hi=6.0))
add("igamma", "inplace", lambda x: E.tensor([0.5, 2.0, 7.5], dtype=E.float64).igamma_(x),
    pos(3, lo=0.3, hi=6.0, salt=1))
add("igammac", "inplace", lambda x: E.tensor([0.5, 2.0, 7.5], dtype=E.float64).igammac_(x),
    pos(3, lo=0.3, hi=6.0, salt=1))
