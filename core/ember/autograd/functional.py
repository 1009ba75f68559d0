"""``ember.autograd.functional``: derivatives of whole functions (PyTorch's
``torch.autograd.functional``): ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``,
``hvp``.

Each takes ``func`` and ``inputs`` (a Tensor or a tuple of Tensors, passed to ``func`` as
positional arguments; ``func`` returns a Tensor or a tuple of Tensors). Results follow
the structure rules of PyTorch: a tuple in gives a tuple out, a Tensor gives a Tensor;
``jacobian`` of a tuple -> tuple function is a tuple (per output) of tuples (per input),
and entry ``[i][j]`` has shape ``outputs[i].shape + inputs[j].shape``.

``create_graph=True`` keeps the graph of the results (they are differentiable again, with
respect to ``inputs`` too); otherwise results are detached. ``strict=True`` raises
RuntimeError where an output does not depend on an input (instead of returning zeros).

ember has no forward-mode AD: ``jvp`` and ``hvp`` use the double-backward trick (a
vector-Jacobian product is linear in its vector, so differentiating it with respect to
that vector gives a Jacobian-vector product), as PyTorch's do. ``vectorize=True`` is
accepted and computes the same way as ``vectorize=False`` (one backward per output
element); ``strategy="forward-mode"`` raises NotImplementedError.
"""
from __future__ import annotations

from .. import dispatch as _d
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STAGE_MSG = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}
_NOT_REQUIRING = {
    "outputs": "Output {i} of the user-provided function does not require gradients. The "
               "outputs must be computed in a differentiable manner from the input when "
               "running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs of "
                   "the user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the user-provided "
                "function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
               "independent of the input. This is not allowed in strict mode. You should "
               "ensure that your function is thrice differentiable and that the hessian "
               "depends on the inputs.",
}


# --- structure and checks (PyTorch's helpers, same names) --------------------------------

def _as_tuple(inp, arg_name: str, fn_name: str) -> tuple:
    """``(was_a_tuple, tuple_of_tensors)``; TypeError naming the bad entry otherwise."""
    is_tuple = isinstance(inp, tuple)
    items = inp if is_tuple else (inp,)
    for i, el in enumerate(items):
        if not isinstance(el, _d._Tensor):
            where = f"value at index {i}" if is_tuple else f"given {arg_name}"
            raise TypeError(f"The {arg_name} given to {fn_name} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(el).__name__}.")
    return is_tuple, items


def _tuple_postprocess(res, to_unpack):
    """Undo ``_as_tuple``: ``to_unpack`` is one flag, or (outer, inner) for nested results."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs, create_graph: bool, need_graph: bool) -> tuple:
    """Fresh Tensors for ``inputs`` (so captured originals are told apart from the
    arguments): a differentiable alias with ``create_graph``, a detached one otherwise."""
    return tuple(inp.view_as(inp) if create_graph and inp.requires_grad
                 else inp.detach().requires_grad_(need_graph) for inp in inputs)


def _grad_postprocess(inputs, create_graph: bool):
    if inputs and isinstance(inputs[0], _d._Tensor):
        return inputs if create_graph else tuple(inp.detach() for inp in inputs)
    return tuple(_grad_postprocess(inp, create_graph) for inp in inputs)


def _validate_v(v, other, is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.shape} but "
                               f"got {el_v.shape}.")


def _check_requires_grad(inputs, input_type: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if inp is None:  # only grad_inputs can hold None
            raise RuntimeError(_STAGE_MSG["back"].format(i=i))
        if not inp.requires_grad:
            raise RuntimeError(_NOT_REQUIRING[input_type].format(i=i))


def _autograd_grad(outputs, inputs, grad_outputs=None, create_graph=False, retain_graph=None):
    """``ember.autograd.grad`` over the outputs that require grad (None where an input gets
    no gradient); all None without calling the engine when no output requires grad."""
    from . import grad
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], list(inputs), [g for _, g in pairs], allow_unused=True,
                create_graph=create_graph, retain_graph=retain_graph)


def _fill_in_zeros(grads, refs, strict: bool, create_graph: bool, stage: str) -> tuple:
    """``grads`` with zeros (of ``refs[i]``'s shape) for None, or the strict-mode error."""
    from ..ops.namespace import zeros_like
    res = []
    for i, g in enumerate(grads):
        if g is None:
            if strict:
                raise RuntimeError(_STAGE_MSG[stage].format(i=i))
            g = zeros_like(refs[i])
        elif strict and create_graph and not g.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               f"create_graph=True.")
        res.append(g)
    return tuple(res)


def _prepare(fn_name: str, inputs, v, create_graph: bool):
    """Inputs and ``v`` (shaped like them) tupled, preprocessed and checked."""
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", fn_name)
    inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
    if v is not None:
        _, v = _as_tuple(v, "v", fn_name)
        v = _grad_preprocess(v, create_graph, need_graph=False)
        _validate_v(v, inputs, is_inputs_tuple)
    elif len(inputs) != 1 or inputs[0].numel() != 1:
        raise RuntimeError("The vector v can only be None if the input to the user-provided "
                           "function is a single Tensor with a single element.")
    return is_inputs_tuple, inputs, v


def _call(func, inputs, fn_name: str, strict: bool) -> tuple:
    is_outputs_tuple, outputs = _as_tuple(func(*inputs), "outputs of the user-provided "
                                          "function", fn_name)
    _check_requires_grad(outputs, "outputs", strict)
    return is_outputs_tuple, outputs


def _single_output(fn_name: str, is_outputs_tuple: bool, outputs) -> None:
    if is_outputs_tuple:
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs[0].numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should "
                           f"contain a single element")


# --- public API ---------------------------------------------------------------------------

def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The vector-Jacobian product ``v^T J`` of ``func`` at ``inputs``.

    Args:
        func: takes Tensors (as many as ``inputs``), returns a Tensor or a tuple of them.
        inputs: a Tensor or a tuple of Tensors.
        v: shaped like ``func``'s outputs (same tuple structure); may be None only when
            ``func`` returns a single one-element Tensor.
        create_graph, strict: see the module docstring.
    Returns ``(func_output, vjp)``: ``vjp`` shaped like ``inputs``.
    Raises TypeError for non-Tensor inputs or outputs, RuntimeError for a ``v`` of the
    wrong length or shape and for strict-mode violations. Follows
    ``torch.autograd.functional.vjp``.
    """
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "vjp")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "vjp", strict)
        if v is not None:
            _, v = _as_tuple(v, "v", "vjp")
            v = _grad_preprocess(v, create_graph, need_graph=False)
            _validate_v(v, outputs, is_outputs_tuple)
        elif len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(outputs, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The Jacobian-vector product ``J v`` of ``func`` at ``inputs``, by the double-backward
    trick (two reverse passes; ember has no forward-mode AD).

    Args: as ``vjp``, but ``v`` is shaped like ``inputs`` (None only for a single
    one-element input). Returns ``(func_output, jvp)``: ``jvp`` shaped like the outputs.
    Raises as ``vjp``. Follows ``torch.autograd.functional.jvp``.
    """
    from ..ops.namespace import zeros_like
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepare("jvp", inputs, v, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "jvp", strict)
        # the backward is linear in grad_outputs, so their value does not matter (zeros:
        # no inf or nan to leak into the double-backward graph)
        grad_outputs = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = _autograd_grad(outputs, inputs, grad_outputs, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(grad_inputs, grad_outputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, outputs, strict, create_graph, "back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_outputs_tuple))


def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of ``func`` at ``inputs``, one backward pass per output element.

    Returns a Tensor of shape ``output.shape + input.shape`` for Tensor -> Tensor; a tuple
    over inputs for tuple -> Tensor, over outputs for Tensor -> tuple, and a tuple (per
    output) of tuples (per input) for tuple -> tuple. ``vectorize=True`` gives the same
    result the same way (ember has no vmap); ``strategy`` must be ``"reverse-mode"``.

    Raises ValueError for another strategy name (PyTorch: AssertionError),
    NotImplementedError for ``"forward-mode"``, RuntimeError for ``strict`` with
    ``vectorize`` (as PyTorch) and strict-mode violations, TypeError for non-Tensor inputs
    or outputs. Follows ``torch.autograd.functional.jacobian``.
    """
    from ..ops.namespace import stack, zeros, zeros_like
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'Expected strategy to be either "forward-mode" or "reverse-mode", '
                         f'got {strategy!r}.')
    if strategy == "forward-mode":
        raise NotImplementedError('jacobian(strategy="forward-mode"): ember has no forward-mode '
                                  'AD; use strategy="reverse-mode" (the default)')
    if strict and vectorize:
        raise RuntimeError("ember.autograd.functional.jacobian: `strict=True` and "
                           "`vectorized=True` are not supported together. Please either set "
                           "`strict=False` or `vectorize=False`.")
    with enable_grad():
        is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "jacobian")
        inputs = _grad_preprocess(inputs, create_graph, need_graph=True)
        is_outputs_tuple, outputs = _call(func, inputs, "jacobian", strict)
        jac = []
        for i, out in enumerate(outputs):
            rows = [[] for _ in inputs]
            flat = out.reshape(-1)
            for k in range(out.numel()):
                vj = _autograd_grad((flat[k],), inputs, retain_graph=True,
                                    create_graph=create_graph)
                for j, (row, g, inp) in enumerate(zip(rows, vj, inputs)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is "
                                               f"independent of input {j}. This is not "
                                               f"allowed in strict mode.")
                        g = zeros_like(inp)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is "
                                           f"independent of input {i}. This is not allowed "
                                           f"in strict mode when create_graph=True.")
                    row.append(g)
            # NOTE: an empty output gives an empty Jacobian (PyTorch's stack raises there)
            jac.append(tuple(
                stack(row, 0).reshape(tuple(out.shape) + tuple(inp.shape)) if row else
                zeros(tuple(out.shape) + tuple(inp.shape), dtype=inp.dtype, device=inp.device)
                for row, inp in zip(rows, inputs)))
        jac = _grad_postprocess(tuple(jac), create_graph)
    return _tuple_postprocess(jac, (is_outputs_tuple, is_inputs_tuple))


def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of the scalar function ``func`` at ``inputs``: the Jacobian of its
    gradient. Entry ``[i][j]`` has shape ``inputs[i].shape + inputs[j].shape`` (one Tensor
    for a Tensor input).

    Raises RuntimeError when ``func`` does not return a single one-element Tensor and for
    strict-mode violations; otherwise as ``jacobian``. Follows
    ``torch.autograd.functional.hessian``.
    """
    is_inputs_tuple, inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(f'Expected strategy to be either "forward-mode" or "reverse-mode", '
                         f'got {outer_jacobian_strategy!r}.')

    def single_output(*inp):
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict)
        _single_output("hessian", is_out_tuple, t_out)
        return out.squeeze()

    def jac_func(*inp):
        jac = jacobian(single_output, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        return jac

    res = jacobian(jac_func, inputs, create_graph=create_graph, strict=strict,
                   vectorize=vectorize, strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The vector-Hessian product ``v^T H`` of the scalar function ``func`` at ``inputs``.

    ``v`` is shaped like ``inputs`` (None only for a single one-element input). Returns
    ``(func_output, vhp)``, ``vhp`` shaped like ``inputs``. Raises RuntimeError when
    ``func`` does not return a single one-element Tensor; otherwise as ``vjp``. Follows
    ``torch.autograd.functional.vhp``.
    """
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepare("vhp", inputs, v, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "vhp", strict)
        _single_output("vhp", is_outputs_tuple, outputs)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(jac, inputs, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))


def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """The Hessian-vector product ``H v`` of the scalar function ``func`` at ``inputs``, by
    the double-backward trick over the gradient (for a twice-differentiable ``func``, ``H``
    is symmetric and this equals ``vhp``; ``vhp`` is cheaper).

    Arguments, result and errors as ``vhp``. Follows ``torch.autograd.functional.hvp``.
    """
    from ..ops.namespace import zeros_like
    with enable_grad():
        is_inputs_tuple, inputs, v = _prepare("hvp", inputs, v, create_graph)
        is_outputs_tuple, outputs = _call(func, inputs, "hvp", strict)
        _single_output("hvp", is_outputs_tuple, outputs)
        jac = _autograd_grad(outputs, inputs, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict)
        grad_jac = tuple(zeros_like(inp, requires_grad=True) for inp in inputs)
        double_back = _autograd_grad(jac, inputs, grad_jac, create_graph=True)
        _check_requires_grad(jac, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        res = _autograd_grad(double_back, grad_jac, v, create_graph=create_graph)
        res = _fill_in_zeros(res, inputs, strict, create_graph, "double_back_trick")
    return (_tuple_postprocess(_grad_postprocess(outputs, create_graph), is_outputs_tuple),
            _tuple_postprocess(_grad_postprocess(res, create_graph), is_inputs_tuple))
