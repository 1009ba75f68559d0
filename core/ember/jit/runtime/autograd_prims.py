"""How the autograd prim kinds of backward graphs run (registered with the interpreter).

The symbolic autodiff helper writes backward graphs (``df``) with four prim kinds; the
runtime value of an undefined gradient (a gradient known to be all zeros) is ``None``:

- ``prim::AutogradZero() -> Tensor``: an undefined gradient; runs as ``None``.
- ``prim::AutogradAnyNonZero(%g...) -> bool``: True when some input is defined (not
  None; a list or tuple of gradients counts when one of its items is).
- ``prim::AutogradAdd(%a, %b) -> Tensor``: ``a + b`` where None counts as zero, so
  ``None + b`` is ``b`` and ``None + None`` is ``None``.
- ``prim::GradOf[name="ember::mul"](%g...)``: one block with no inputs that returns the
  node's outputs (the vector-Jacobian products of one forward node); the block runs only
  when some input gradient is defined, otherwise every output is None.

For example, with ``%gy`` None the GradOf below gives ``(None, None)`` without running
``mul``; with ``%gy`` a tensor it gives ``(gy * y, gy * x)``, reading ``%x`` and ``%y`` from
the environment of the block around it::

    graph(%gy : Tensor, %x : Tensor, %y : Tensor):
      %gx : Tensor, %gw : Tensor = prim::GradOf[name="ember::mul"](%gy)
        block0():
          %a : Tensor = ember::mul(%gy, %y)
          %b : Tensor = ember::mul(%gy, %x)
          -> (%a, %b)
      return (%gx, %gw)

The required passes ``specialize_autograd_zero`` and ``lower_grad_of`` remove most of these
nodes before a plan is built; what remains runs through the functions here. Importing this
module registers them (the passes that produce these kinds import it).

Reference: PyTorch's ``register_prim_ops.cpp`` (``prim::AutogradZero``,
``prim::AutogradAnyNonZero``, ``prim::AutogradAdd``) and ``ir.h`` (``prim::GradOf``).
"""
from __future__ import annotations

from typing import Optional

from ember.jit.runtime.interpreter import register_prim, run_block
from ember.jit.ir.ir_types import JitType, ListType, TensorType, TupleType
from ember.ops import namespace as E

__all__ = ["AUTOGRAD_ZERO", "AUTOGRAD_ANY_NONZERO", "AUTOGRAD_ADD", "GRAD_OF",
           "any_defined", "autograd_add", "run_grad_of", "zero_type"]

AUTOGRAD_ZERO = "prim::AutogradZero"
AUTOGRAD_ANY_NONZERO = "prim::AutogradAnyNonZero"
AUTOGRAD_ADD = "prim::AutogradAdd"
GRAD_OF = "prim::GradOf"


def zero_type(t: JitType) -> JitType:
    """The type of the ``prim::AutogradZero`` standing for an undefined gradient of type
    ``t``: ``t`` itself for a list or tuple of gradients, else ``Tensor`` (nothing known)."""
    return t if isinstance(t, (ListType, TupleType)) else TensorType()


def any_defined(values) -> bool:
    """Whether some gradient in ``values`` is defined: not None, or a list/tuple holding a
    defined one (the gradient of a ``Tensor[]`` input)."""
    for v in values:
        if isinstance(v, (list, tuple)):
            if any_defined(v):
                return True
        elif v is not None:
            return True
    return False


def autograd_add(a, b):
    """``a + b`` for gradients where None is an all-zero gradient: ``None + b`` is ``b``,
    ``a + None`` is ``a``, ``None + None`` is None. Tensors add with ``ember.add``
    (broadcasting, type promotion, and recorded by autograd for double backward)."""
    if a is None:
        return b
    if b is None:
        return a
    return E.add(a, b)


def run_grad_of(node, args, env: Optional[dict] = None, on_value=None) -> list:
    """Run a ``prim::GradOf`` node: its block when some gradient in ``args`` is defined,
    else one None per output.

    ``env`` maps the values defined outside the node (which its block reads) to their
    runtime objects; without it only the node's own inputs are known, and a block that
    reads another outer value raises KeyError naming it.
    """
    if not any_defined(args):
        return [None] * len(node.outputs)
    scope = dict(zip(node.inputs, args)) if env is None else env
    try:
        return run_block(node.blocks[0], (), scope, on_value)
    except KeyError as e:
        value = e.args[0] if e.args else None
        name = getattr(value, "debug_name", value)
        raise KeyError(f"prim::GradOf: its block reads %{name}, defined outside the node, but "
                       f"the caller passed no environment of outer values (env); pass it, or "
                       f"lower the graph first (ember.jit.passes.lower_grad_of.lower_grad_of)"
                       ) from None


@register_prim(AUTOGRAD_ZERO)
def _autograd_zero(node, args):
    return [None]


@register_prim(AUTOGRAD_ANY_NONZERO)
def _autograd_any_nonzero(node, args):
    return [any_defined(args)]


@register_prim(AUTOGRAD_ADD)
def _autograd_add(node, args):
    return [autograd_add(args[0], args[1])]


@register_prim(GRAD_OF)
def _grad_of(node, args, env=None, on_value=None):
    return run_grad_of(node, args, env, on_value)
