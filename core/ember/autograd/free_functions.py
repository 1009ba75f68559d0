"""The formulas of ``derivatives.yaml`` as free functions, for the JIT's symbolic autodiff.

``backward_function(name)`` generates (on first use) the formulas of one entry as a function
of the gradients, a needs-gradient mask and the saved values (see :class:`BackwardFunction`)
from the same rewritten formulas ``codegen.py`` turns into eager Nodes;
``free_source_of("mul")`` shows one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .derivatives import Derivative

# NOTE: codegen imports this module (for the JIT, which imports backward_function from
# there), so what this module needs of codegen is imported where it is used


@dataclass(frozen=True)
class BackwardFunction:
    """The formulas of one ``derivatives.yaml`` entry as a free function (no Node, no saved
    variables), for the JIT's ``prim::AutogradFormula`` nodes.

    ``fn(grads, mask, *params)`` returns one gradient per Tensor argument (schema order;
    None where ``mask`` is false or the argument is ``non_differentiable``; a list for a
    ``Tensor[]``). ``grads``: the outputs' gradients (None where undefined; for an op
    returning one ``Tensor[]``, that list's gradients); ``mask``: one bool per Tensor
    argument. Gradients are not yet summed to the inputs' shapes or cast to their dtypes
    (the engine's rule, which the caller applies).

    Attributes: ``name`` (``max.dim``), ``fn``, ``tensor_args`` (names), ``params`` (the
    parameters after ``(grads, mask)``, each defaulting to None), ``sources`` (per param,
    ``(owner, attr)``: an argument or output name and None for the value itself, or
    ``shape``/``dtype``/``device``/``ndim`` read from it), ``needs`` (per Tensor argument,
    the params its formula reads).
    """

    name: str
    fn: Callable
    tensor_args: tuple
    params: tuple
    sources: tuple
    needs: tuple

    def __call__(self, grads, mask, *params):
        return self.fn(grads, mask, *params)


_FREE: dict[str, BackwardFunction] = {}
_FREE_NS: dict = {}


def backward_function(name: str) -> BackwardFunction:
    """The free backward function of op ``name`` (``"mul"``, ``"max.dim"``), generated
    on first use (see :class:`BackwardFunction`; ``source`` of it:
    ``free_source_of(name)``). Raises KeyError when the op has no derivative, ValueError
    when it is marked ``not_differentiable``."""
    hit = _FREE.get(name)
    if hit is not None:
        return hit
    from ..ops import DERIVATIVES
    d = DERIVATIVES.get(name)
    if d is None:
        raise KeyError(f"no derivatives.yaml entry for op {name!r}: add one, or keep the op "
                       f"out of symbolically differentiated graphs")
    if d.not_differentiable:
        raise ValueError(f"op {name!r} is marked not_differentiable in derivatives.yaml; "
                         f"it has no backward function")
    from .codegen import _SOURCES, namespace
    if not _FREE_NS:
        _FREE_NS.update(namespace())
    src, bf = generate_free(d, "_jit_" + name.replace(".", "__") + "_backward", _FREE_NS)
    _SOURCES["jit:" + name] = src
    _FREE[name] = bf
    return bf


def free_source_of(name: str) -> str:
    """The generated source of op ``name``'s free backward function."""
    from .codegen import _SOURCES
    backward_function(name)
    return _SOURCES["jit:" + name]


def generate_free(d: Derivative, fn_name: str, namespace: dict) -> tuple:
    """Source and :class:`BackwardFunction` of ``d``'s free function, compiled in
    ``namespace``; ``free_source_of("mul")`` shows one."""
    from .codegen import _formula_blocks
    schema = d.schema
    tensors = [a.name for a in schema.arguments if a.type.base == "Tensor"]
    list_input = next((a.name for a in schema.arguments
                       if a.type.base == "Tensor" and a.type.is_list), None)
    blocks, uses = _formula_blocks(d, namespace)
    sources = {}
    for saved, attrs in uses.values():
        for s in saved:
            sources[s] = (s, None)
        for owner, attr, name in attrs:
            sources[name] = (owner, attr)
    params = tuple(sorted(sources))
    pos = {n: i for i, n in enumerate(tensors)}
    needs = [()] * len(tensors)
    lines = [f"def {fn_name}(_grads, _mask{''.join(f', {p}=None' for p in params)}):",
             f"    # {schema}  ({d.location})",
             "    grad = _grads[0] if _grads else None; grads = _grads",
             f"    _r = [None] * {len(tensors)}"]
    for k, f, expr, saved, masked in blocks:
        idx = [pos[n] for n in f.inputs]
        for i in idx:
            needs[i] = tuple(saved)
        lines.append(f"    if {' or '.join(f'_mask[{i}]' for i in idx)}:")
        if masked:
            lines.append(f"        grad_input_mask = ({''.join(f'_mask[{i}], ' for i in idx)})")
        if list_input is not None or len(idx) == 1:
            lines.append(f"        _r[{idx[0]}] = {expr}")
        else:
            lines.append(f"        _g = {expr}")
            lines += [f"        if _mask[{i}]: _r[{i}] = _g[{j}]" for j, i in enumerate(idx)]
    lines.append("    return _r")
    src = "\n".join(lines) + "\n"
    exec(compile(src, f"<ember.autograd generated: {fn_name} from {d.location}>",  # noqa: S102
                 "exec"), namespace)
    fn = namespace[fn_name]
    fn.__module__ = "ember.autograd.generated"
    bf = BackwardFunction(d.name, fn, tuple(tensors), params,
                          tuple(sources[p] for p in params), tuple(needs))
    return src, bf
