"""Pointwise ember ops as Triton expressions: one rule per node kind.

``lower(kind, inputs, out_dtype)`` returns ONE Triton expression (no statements) that
computes an op of ``ember.jit.runtime.fuser.FUSIBLE_KINDS`` from its operands' register values, with
ember's eager (numpy) semantics. Registers hold ``compute_dtype`` values: float16 and
bfloat16 compute in float32 and are rounded once, when stored (what PyTorch's CUDA kernels
call "opmath"); bool is ``tl.int1``. For example, with ``x`` an int8 tensor::

    lower("ember::mul", [Operand("v0", int8), Operand("3", None, 3)], int8)
      -> "tl.mul(v0, tl.full([], 3, tl.int8), sanitize_overflow=False)"

The rules live by concept: ``expr.py`` builds expression text (register types, typed
constants, IEEE division, libdevice calls) and makes the choices that keep results equal
to eager; ``node.py`` holds the operand reader every rule takes and the rule table;
``unary_rules.py`` lowers unary math and predicates, ``activation_rules.py`` the
activations, ``binary_rules.py`` arithmetic (integer division and remainder among it),
selection, comparisons, logical and bitwise ops, ``special_rules.py`` the special functions
and NaN-aware ops (``xlogy``, ``logaddexp``, ``fmax``, ``addcmul``, ...). Importing this
module registers every rule.

``lower`` raises ``FusionDeclined`` where eager raises (bool ``sub``, ``gelu`` of ints,
``clamp`` bounds that overflow, an integer division by the constant 0), where it may raise
(integer division or remainder by a tensor, which raises ZeroDivisionError for a 0 in it:
a kernel cannot raise) and for integer ``pow`` with a tensor exponent (Triton has no
integer pow; one expression cannot loop). The group then runs unfused, so its results and
errors are eager's.

Differences from eager that remain: chains of float16/bfloat16 ops round once instead of
after every op; libdevice functions may differ from numpy's by a few ulp (and from numpy's
SIMD ``pow``, which gives NaN for ``(-inf) ** 0.5``); Triton flushes float32 subnormals to
zero inside libdevice unless a launch passes ``enable_reflect_ftz=False``, and contracts
``a * b + c`` into an FMA unless it passes ``enable_fp_fusion=False`` (nvcc does the same
for PyTorch); float to integer conversions of NaN and out-of-range values are undefined in
both and differ.

Reference: PyTorch's ``aten/src/ATen/native/cuda`` pointwise kernels.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ember.jit.runtime.fuser import FusionDeclined
from ember.types import ScalarType

# importing them registers the rules
from . import activation_rules, binary_rules, special_rules, unary_rules  # noqa: F401
from .expr import LIBDEVICE_FUNCTIONS, LIBDEVICE_NAME, compute_dtype, triton_type
from .node import _RULES, _Node

__all__ = ["Operand", "compute_dtype", "triton_type", "lower", "SUPPORTED_KINDS",
           "LIBDEVICE_NAME", "LIBDEVICE_FUNCTIONS"]


@dataclass(frozen=True)
class Operand:
    """One input of a node, as ``lower`` sees it.

    Attributes:
        expr: a tensor's Triton expression (a variable such as ``"v3"``), whose register
            type is ``triton_type(compute_dtype(dtype))``; ignored for a constant.
        dtype: the ember ScalarType of a tensor operand; None for a constant.
        value: a constant's Python value (bool, int, float, str or None).
        rank: a tensor's number of dimensions when known. A rank-0 tensor takes part in
            type promotion below tensors with dimensions (``torch.result_type``); only
            comparisons, whose result dtype does not show the promoted one, need it.
    """

    expr: str
    dtype: Optional[ScalarType]
    value: Any = None
    rank: Optional[int] = None

    @property
    def is_constant(self) -> bool:
        """Whether this is a constant (``dtype is None``)."""
        return self.dtype is None


# kinds whose first input may be a Python number in eager (``2 - x``, ``2 ** x``)
_NUMBER_SELF = frozenset(f"ember::{op}" for op in (
    "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
    "pow", "atan2", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and",
    "bitwise_or", "bitwise_xor", "where", "xlogy", "float_power"))


def lower(kind: str, inputs: list, out_dtype: ScalarType) -> str:
    """One Triton expression computing the pointwise node ``kind`` from ``inputs``.

    Args:
        kind: a node kind of ``SUPPORTED_KINDS`` (``"ember::add"``).
        inputs: the node's inputs as :class:`Operand`, in schema order; scalar arguments
            (``alpha``, ``rounding_mode``) are constant Operands.
        out_dtype: the dtype of the node's output (the promoted dtype; bool for
            comparisons).
    Returns the expression, of register type ``triton_type(compute_dtype(out_dtype))``.
    Raises FusionDeclined, its message the reason, for an unknown kind, a dtype outside
    ember's ten, arguments eager would refuse, or a case the module docstring lists.
    """
    entry = _RULES.get(kind)
    if entry is None:
        raise FusionDeclined(f"{kind} has no Triton lowering; supported pointwise kinds are "
                             f"ops.SUPPORTED_KINDS")
    nargs, rule = entry
    if len(inputs) != nargs:
        raise FusionDeclined(f"{kind}: expected {nargs} inputs, got {len(inputs)}")
    if inputs[0].is_constant and kind not in _NUMBER_SELF:
        raise FusionDeclined(f"{kind}: self must be a tensor, got the number "
                             f"{inputs[0].value!r} (eager raises)")
    triton_type(out_dtype)
    for o in inputs:
        if not o.is_constant:
            triton_type(o.dtype)
    return rule(_Node(kind, list(inputs), out_dtype))


#: The node kinds ``lower`` handles: every pointwise kind of ``FUSIBLE_KINDS`` (the chunk and
#: split kinds are the code generator's).
SUPPORTED_KINDS = frozenset(_RULES)
