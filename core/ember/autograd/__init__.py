"""``ember.autograd``: reverse-mode automatic differentiation (PyTorch's semantics).

* ``backward(tensors, grad_tensors)`` / ``Tensor.backward()`` accumulate into leaves'
  ``.grad``; ``grad(outputs, inputs)`` returns the gradients instead.
* ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``is_grad_enabled``,
  ``inference_mode``, ``is_inference_mode_enabled``: grad modes.
* ``Function``: custom ops with a hand-written backward.
* ``gradcheck`` / ``gradgradcheck``: finite-difference checks of first and second
  derivatives.
* ``functional``: ``vjp``, ``jvp``, ``jacobian``, ``hessian``, ``vhp``, ``hvp``.
* ``detect_anomaly`` / ``set_detect_anomaly``: forward tracebacks and NaN checks for
  backward errors (``anomaly_mode.py``).

How it fits together: ``derivatives.yaml`` gives each op a formula per input; at import
``codegen.py`` turns each entry into a Node class and a recorder that the op wrappers call
when an input requires grad; ``engine.py`` walks the recorded graph; ``views.py`` handles
in-place ops on views.
"""
from __future__ import annotations

from .._base.grad_mode import STATE as _GRAD_MODE
from ..tensor import Tensor as _Tensor
from ..tensor import wrap as _wrap
from ..errors import DeviceMismatchError, ShapeError
from .engine import run_backward
from .function import AccumulateGrad, Edge, Node, gradient_edge
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, \
    no_grad, set_grad_enabled
from . import graph  # noqa: F401 - ember.autograd.graph.Node, as in PyTorch

RECORDERS: dict = {}  # qualified op name -> (Node class, recorder)


def compile_recorders(derivatives: dict) -> dict:
    """Compile the backward nodes of ``derivatives`` (op name -> Derivative) into
    ``RECORDERS``; returns the op wrappers' globals that name the recorders (``_ag_mul``),
    which the composition root (``ember/_build.py``) hands to ``ember.ops.codegen``."""
    from ..ops.codegen import recorder_name
    from .codegen import compile_all
    RECORDERS.clear()
    RECORDERS.update(compile_all(derivatives))
    return {recorder_name(name): rec for name, (_, rec) in RECORDERS.items()}


def record_handwritten(name: str, outputs, *args) -> None:
    """Record the backward of a hand-written op (``Tensor.to``, indexing) whose
    ``derivatives.yaml`` entry is ``name``, if grad mode is on."""
    if _GRAD_MODE.enabled:
        from .views import finish
        finish(RECORDERS[name][1](False, *args), outputs)


def _ones_like(xp, data):
    """The seed of ``loss.backward()``: ones of ``data``'s shape and dtype (a 0-d loss, the
    usual one, through ``asarray``: numpy's ``ones_like`` costs five times as much)."""
    return xp.asarray(1, dtype=data.dtype) if data.ndim == 0 else xp.ones_like(data)


def _tensors(x, what: str) -> list:
    if isinstance(x, _Tensor):
        return [x]
    if isinstance(x, (list, tuple)) and all(isinstance(t, _Tensor) for t in x):
        return list(x)
    raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got "
                    f"{type(x).__name__}")


def _make_grads(outputs, grads) -> list:
    """One gradient per output: ``ones_like`` for a scalar output without one, the
    caller's otherwise, checked and converted by ``_fit_gradient``."""
    from ..ops.namespace import ones_like
    if grads is None:
        grads = [None] * len(outputs)
    elif isinstance(grads, _Tensor):
        grads = [grads]
    elif isinstance(grads, (list, tuple)):
        grads = list(grads)
    else:
        raise TypeError(f"gradients must be a Tensor, a sequence of Tensors (None for scalar "
                        f"outputs) or None, got {type(grads).__name__}; wrap a number in a "
                        f"tensor of the output's shape, e.g. ember.full_like(output, value)")
    if len(grads) != len(outputs):
        raise RuntimeError(f"got {len(grads)} gradients for {len(outputs)} outputs; pass one "
                           f"per output (None for scalar outputs)")
    out = []
    for i, (t, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if t.numel() != 1:
                raise RuntimeError(f"grad can be implicitly created only for scalar outputs; "
                                   f"output {i} has shape {list(t.shape)}: pass a gradient "
                                   f"of that shape (e.g. ember.ones_like(output))")
            g = ones_like(t)
        elif not isinstance(g, _Tensor):
            raise TypeError(f"gradient {i} must be a Tensor or None, got {type(g).__name__}")
        elif g._data.shape != t._data.shape:
            raise ShapeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                             f"{list(g.shape)} and output[{i}] has a shape of "
                             f"{list(t.shape)}; pass a gradient of the output's shape")
        elif g._type is not t._type or g._type.backend.device_count > 1:
            g = _fit_gradient(i, t, g)
        out.append(g)
    return out


def _fit_gradient(i: int, output, g):
    """The caller's gradient ``g`` for output ``i``, on the output's device and of its
    dtype, as PyTorch's engine makes it before the walk (``validate_outputs``): a gradient
    of another dtype (float64 for float32, even int or bool) is cast; a 0-dim gradient on
    another device is moved there; any other on another device raises
    DeviceMismatchError, naming both devices and ``.to``."""
    dev, gdev = output.device, g.device
    if gdev != dev:
        if g._data.ndim:
            raise DeviceMismatchError(
                f"invalid gradient at index {i} - expected device {dev} but got {gdev}; "
                f"make the gradient on the output's device, or move it with .to('{dev}')")
        return g.to(dtype=output.dtype, device=dev)
    return g if g._type is output._type else g.to(dtype=output.dtype)


def _roots(outputs) -> list:
    from .function import gradient_edge
    roots = []
    for i, t in enumerate(outputs):
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn; did you compute it under no_grad, from "
                               f"tensors without requires_grad=True, or .detach() it?")
        roots.append(e)
    return roots


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph: bool = False,
             inputs=None) -> None:
    """Accumulate d(tensors)/d(leaf) into each leaf's ``.grad`` (``torch.autograd.backward``).

    Args:
        tensors: Tensor(s) to differentiate; a non-scalar one needs a ``grad_tensors``
            entry of its shape.
        grad_tensors: one gradient per tensor (None for a scalar one), of its shape; as in
            PyTorch it is cast to the tensor's dtype, and a 0-dim one on another device is
            moved to the tensor's device.
        retain_graph: keep saved tensors for another backward (default: ``create_graph``).
        create_graph: record the backward pass itself, for higher derivatives.
        inputs: only accumulate into these tensors (leaves, or non-leaves whose ``.grad``
            is then set as by ``retain_grad``).
    Raises RuntimeError for outputs that do not require grad, non-scalar outputs without
    a gradient, and a second backward through freed saved tensors; ShapeError for a
    gradient of another shape, DeviceMismatchError for one (not 0-dim) on another device,
    TypeError for a gradient that is not a Tensor.
    """
    if tensors.__class__ is _Tensor and grad_tensors is None and inputs is None and \
            tensors._data.size == 1:  # loss.backward(): the common case, kept short
        fn = tensors.grad_fn
        e = (fn, tensors.output_nr) if fn is not None and tensors._base is None else \
            gradient_edge(tensors)
        if e is not None:
            b, data = tensors._type.backend, tensors._data
            if b.device_guard is None:  # one device (cpu): no guard to enter
                seed = _ones_like(b.xp, data)
            else:
                with b.on_device_of(data):  # CuPy allocates on the current device
                    seed = _ones_like(b.xp, data)
            run_backward([e], [_wrap(seed, b)],
                         retain_graph=create_graph if retain_graph is None else retain_graph,
                         create_graph=create_graph)
            return
    outputs = _tensors(tensors, "backward()")
    grads = _make_grads(outputs, grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        run_backward(_roots(outputs), grads, retain_graph=retain_graph,
                     create_graph=create_graph)
        return
    inputs = _tensors(inputs, "backward(inputs=...)")
    if not inputs:
        raise RuntimeError("backward(): 'inputs' must not be empty; pass None to accumulate "
                           "into every leaf")
    edges = []
    for i, t in enumerate(inputs):
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError(f"backward(): input {i} of 'inputs' does not require grad")
        edges.append(e)
    got = run_backward(_roots(outputs), grads, retain_graph=retain_graph,
                       create_graph=create_graph, inputs=edges, accumulate=True)
    for t, g in zip(inputs, got):  # non-leaves: the captured gradient becomes .grad
        if t.grad_fn is not None and g is not None:
            t.grad = g if t.grad is None else t.grad + g


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph: bool = False,
         allow_unused=None, materialize_grads: bool = False) -> tuple:
    """The gradients of ``outputs`` w.r.t. ``inputs``, without touching ``.grad``
    (``torch.autograd.grad``).

    ``grad_outputs`` are checked and converted as ``backward``'s ``grad_tensors``.
    Returns a tuple with one Tensor per input (None for an unused input when
    ``allow_unused``; zeros with ``materialize_grads``). Raises RuntimeError if an input
    does not require grad, or is unused and ``allow_unused`` is not set.
    """
    from ..ops.namespace import zeros_like
    from .engine import run_backward
    from .function import gradient_edge
    outs = _tensors(outputs, "grad()")
    ins = _tensors(inputs, "grad(inputs=...)")
    if materialize_grads and allow_unused is False:
        raise ValueError("grad(): expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got allow_unused=False")
    if allow_unused is None:
        allow_unused = materialize_grads
    grads = _make_grads(outs, grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    edges = []
    for i, t in enumerate(ins):
        e = gradient_edge(t)
        if e is None:
            raise RuntimeError(f"One of the differentiated Tensors (input {i}) does not "
                               f"require grad")
        edges.append(e)
    got = run_backward(_roots(outs), grads, retain_graph=retain_graph,
                       create_graph=create_graph, inputs=edges, accumulate=False)
    result = []
    for i, (t, g) in enumerate(zip(ins, got)):
        if g is None:
            if materialize_grads:
                g = zeros_like(t)
            elif not allow_unused:
                raise RuntimeError(f"One of the differentiated Tensors (input {i}) appears to "
                                   f"not have been used in the graph. Set allow_unused=True if "
                                   f"this is the desired behavior.")
        result.append(g)
    return tuple(result)


from .custom import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from . import functional  # noqa: E402,F401 - ember.autograd.functional.jacobian & co.
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402

__all__ = ["AccumulateGrad", "Edge", "Function", "FunctionCtx", "GradcheckError", "Node",
           "backward", "enable_grad", "grad", "gradcheck", "gradgradcheck", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled",
           "no_grad", "once_differentiable", "set_grad_enabled",
           "detect_anomaly", "set_detect_anomaly"]
