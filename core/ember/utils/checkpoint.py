"""``ember.utils.checkpoint``: activation checkpointing (``torch.utils.checkpoint``).

``checkpoint(fn, *args)`` returns what ``fn(*args)`` returns but keeps none of the
tensors ``fn``'s ops save for backward: the backward pass runs ``fn`` again (with the
random state it had, so dropout draws the same mask) and differentiates that. Memory for
compute: for a network split into segments, only the segments' inputs stay alive.

Two implementations, as in PyTorch:

* ``use_reentrant=False`` (:class:`CheckpointBackward`): the forward runs with grad mode
  on; its graph is then cut down to the *frontier*, the gradient edges leaving it (the
  arguments that require grad and every tensor ``fn`` reads by closure, such as module
  parameters). One node with those edges becomes the outputs' ``grad_fn`` and the rest of
  the graph, with everything it saved, is freed at once. Its backward reruns ``fn``,
  points the new graph's frontier edges at sinks, runs the engine from the outputs, and
  hands each sink's gradient on along the real edge. So gradients reach closures, work
  with ``ember.autograd.grad`` and ``backward(inputs=...)``, and a ``create_graph``
  backward is differentiable again (the recomputed graph keeps its real edges).
* ``use_reentrant=True`` (:class:`CheckpointFunction`): PyTorch's classic Function. The
  forward runs under ``no_grad``; the backward reruns ``fn`` on detached copies of the
  arguments and calls ``ember.autograd.backward`` inside the outer backward, so closure
  parameters get ``.grad`` accumulated directly.

Departures from PyTorch: ember has no saved-tensor hooks, so the non-reentrant forward
records its graph while ``fn`` runs and drops it when ``fn`` returns (peak memory inside
one call is that of running ``fn`` without checkpointing; what stays after it is the
same as PyTorch's); recomputation always runs ``fn`` to the end (``early_stop`` is
accepted and has no effect); the determinism check compares the outputs' shapes, dtypes
and devices, and the frontier edges, rather than every saved tensor. With
``use_reentrant=True`` PyTorch refuses ``autograd.grad``; ember does not detect it.
"""
from __future__ import annotations

import contextlib
import warnings

from .. import dispatch as _d
from ..autograd import function as _function
from ..autograd.custom import Function
from ..autograd.engine import run_backward
from ..autograd.function import FREED, AccumulateGrad, Edge, Node, gradient_edge, \
    modified_input, set_history
from ..autograd.grad_mode import STATE, enable_grad, no_grad
from ..random import get_states, set_states

__all__ = ["CheckpointError", "checkpoint", "checkpoint_sequential", "detach_variable",
           "noop_context_fn"]


class CheckpointError(RuntimeError):
    """The recomputation in backward did not match the forward (``determinism_check``)."""


def noop_context_fn():
    """The default ``context_fn``: two no-op context managers."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def detach_variable(inputs: tuple) -> tuple:
    """Detached copies of the Tensors in ``inputs`` that keep their ``requires_grad``; other
    values as they are (``torch.utils.checkpoint.detach_variable``). Raises RuntimeError
    for anything but a tuple."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    return tuple(x.detach().requires_grad_(x.requires_grad) if isinstance(x, _d._Tensor)
                 else x for x in inputs)


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state: bool = True,
               context_fn=noop_context_fn, determinism_check: str = "default",
               debug: bool = False, early_stop: bool = True, **kwargs):
    """``function(*args, **kwargs)``, recomputed in backward instead of keeping the tensors
    its ops save (``torch.utils.checkpoint.checkpoint``; see the module docstring).

    Args:
        function: returns a Tensor or a tuple, list or dict (nested) holding Tensors;
            with ``use_reentrant=True``, a Tensor or a tuple.
        use_reentrant: see the module docstring; None warns and means True (PyTorch
            2.x's default).
        preserve_rng_state: restore the default generators' states (of cpu and of the
            arguments' device types) for the recomputation, so random ops repeat.
        context_fn: returns two context managers, the forward runs under the first and
            the recomputation under the second (non-reentrant only).
        determinism_check: ``"default"`` checks that the recomputed outputs have the
            forward's shapes, dtypes and devices; ``"none"`` skips that.
        debug: add both lists of outputs to a determinism error (non-reentrant only).
        early_stop: accepted for PyTorch's signature; recomputation runs to the end.
    Raises ValueError for keyword arguments, ``context_fn`` or ``debug`` with
    ``use_reentrant=True`` and for an unknown ``determinism_check``; CheckpointError
    when the recomputation differs; RuntimeError for a second backward without
    ``retain_graph`` or after an argument was changed in place.
    """
    if use_reentrant is None:
        warnings.warn("ember.utils.checkpoint: the use_reentrant parameter should be passed "
                      "explicitly; it defaults to True as in PyTorch 2.x. use_reentrant=False "
                      "is recommended.", stacklevel=2)
        use_reentrant = True
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check!r}")
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    forward_ctx, recompute_ctx = context_fn()
    if not STATE.enabled:  # nothing would be saved: just run it
        with forward_ctx:
            return function(*args, **kwargs)
    states = get_states(_device_types(args, kwargs)) if preserve_rng_state else None
    start = next(_function._sequence)  # nodes made from here on are the function's
    with forward_ctx:
        out = function(*args, **kwargs)
    flat = _tensors(out)
    node = CheckpointBackward(function, args, kwargs, states, recompute_ctx,
                              determinism_check, debug, flat, start)
    if not node.next_functions:  # no output depends on anything requiring grad
        return out
    outs = [t.detach() if t.requires_grad else t for t in flat]
    set_history(node, [o if t.requires_grad else None for o, t in zip(outs, flat)])
    return _replace(out, iter(outs))


class CheckpointBackward(Node):
    """The ``grad_fn`` of non-reentrant checkpoint outputs: its edges are the frontier of
    ``function``'s graph (``next_functions``); ``apply`` recomputes and differentiates."""

    def __init__(self, function, args, kwargs, states, recompute_ctx, determinism_check,
                 debug, flat, start):
        super().__init__()
        self._fn, self._kwargs, self._states = function, kwargs, states
        self._ctx, self._check, self._debug = recompute_ctx, determinism_check, debug
        self._args = args
        self._versions = [a._version if isinstance(a, _d._Tensor) else None for a in args]
        self._meta = [_meta(t) for t in flat]
        roots, _, direct = _split(flat, [True] * len(flat), start)
        self.next_functions = tuple(dict.fromkeys([*direct, *_graph(roots, start)[1]]))

    def apply(self, grads):
        if self._args is None:
            FREED.unpack(self)  # raises: backward through it a second time
        for i, (a, v) in enumerate(zip(self._args, self._versions)):
            if v is not None and a._version != v:
                raise modified_input(self, f"args[{i}]", a, v)
        if all(g is None for g in grads):
            return (None,) * len(self.next_functions)
        start, out = self._recompute()
        flat = _tensors(out)
        self._check_outputs(flat)
        roots, root_grads, got = _split(flat, grads, start)
        interior, frontier = _graph(roots, start)
        sinks = {e: _Sink() for e in frontier}
        kept = [(n, n.next_functions) for n in interior]
        for n, edges in kept:  # the recomputed graph ends at the sinks while it runs
            n.next_functions = tuple(e if e is None or e not in sinks else
                                     Edge(sinks[e], 0) for e in edges)
        create_graph = STATE.enabled  # the engine's: True under create_graph
        try:
            if roots:
                run_backward(roots, root_grads, retain_graph=create_graph,
                             create_graph=create_graph)
        finally:  # NOTE: real edges again, so a create_graph result differentiates on
            for n, edges in kept:
                n.next_functions = edges
        for e, sink in sinks.items():
            if sink.grad is not None:
                got[e] = sink.grad if e not in got else got[e] + sink.grad
        result = tuple(got.pop(e, None) for e in self.next_functions)
        if any(g is not None for g in got.values()):
            raise CheckpointError(
                "ember.utils.checkpoint: the recomputation in backward reached tensors that "
                "require grad which the forward did not use (the function's control flow or "
                "closures changed between forward and backward); make the function "
                "deterministic given its inputs")
        return result

    def _recompute(self) -> tuple:
        """``(first sequence number of the new nodes, function's result)``, run with grad
        mode on, the forward's random state and the recompute context."""
        with contextlib.ExitStack() as stack:
            if self._states is not None:
                stack.callback(set_states, get_states(self._states))
                set_states(self._states)
            stack.enter_context(enable_grad())
            stack.enter_context(self._ctx)
            start = next(_function._sequence)
            return start, self._fn(*self._args, **self._kwargs)

    def _check_outputs(self, flat) -> None:
        now = [_meta(t) for t in flat]
        if self._check == "none" or now == self._meta:
            return
        detail = f"\nforward:       {self._meta}\nrecomputation: {now}" if self._debug else \
            " (pass debug=True to see both)"
        raise CheckpointError(
            f"ember.utils.checkpoint: Recomputed values have different metadata (shape, "
            f"dtype, device) than during the forward pass{detail}. Make the function "
            f"deterministic given its inputs, or pass determinism_check='none'.")

    def release_variables(self) -> None:
        self._args = self._kwargs = self._states = None


class _Sink(Node):
    """Where a frontier edge of the recomputed graph ends while the checkpoint's backward
    runs: it keeps the gradient instead of passing it on."""

    __slots__ = ("grad",)
    _trusted_arity = True
    _releases = False

    def __init__(self):
        super().__init__()
        self.grad = None

    def apply(self, grads):
        self.grad = grads[0]
        return ()


def _inside(node, start: int) -> bool:
    """Whether ``node`` was made by the checkpointed call (from sequence number ``start``
    on); a leaf's AccumulateGrad never is (its sequence number is infinite)."""
    return node.sequence_nr >= start and not isinstance(node, AccumulateGrad)


def _split(flat, grads, start: int) -> tuple:
    """For the tensors of ``flat`` that require grad and have a gradient in ``grads``:
    ``(edges into the call's graph, their gradients, {edge leaving it: gradient})`` (an
    output that is an argument or a closure itself leaves at once)."""
    roots, root_grads, direct = [], [], {}
    for t, g in zip(flat, grads):
        if g is None or not t.requires_grad:
            continue
        e = gradient_edge(t)
        if _inside(e.function, start):
            roots.append(e)
            root_grads.append(g)
        else:
            direct[e] = g if e not in direct else direct[e] + g
    return roots, root_grads, direct


def _graph(roots, start: int) -> tuple:
    """``(nodes of the call's graph reachable from the edges roots, the edges leaving
    it, in order of discovery)``."""
    seen = {e[0] for e in roots}
    stack, interior, frontier = list(seen), [], {}
    while stack:
        n = stack.pop()
        interior.append(n)
        for e in n.next_functions:
            if e is None:
                continue
            m = e[0]
            if not _inside(m, start):
                frontier[Edge(m, e[1])] = None
            elif m not in seen:
                seen.add(m)
                stack.append(m)
    return interior, list(frontier)


def _meta(t) -> tuple:
    return tuple(t.shape), t.dtype, t.device


def _tensors(obj) -> list:
    """The Tensors in ``obj`` (a Tensor, or tuples, lists and dicts of them), in order."""
    if isinstance(obj, _d._Tensor):
        return [obj]
    if isinstance(obj, (tuple, list)):
        return [t for x in obj for t in _tensors(x)]
    if isinstance(obj, dict):
        return [t for x in obj.values() for t in _tensors(x)]
    return []


def _replace(obj, new):
    """``obj`` with its Tensors (in ``_tensors`` order) taken from the iterator ``new``."""
    if isinstance(obj, _d._Tensor):
        return next(new)
    if isinstance(obj, tuple):
        items = [_replace(x, new) for x in obj]
        return type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    if isinstance(obj, list):
        return [_replace(x, new) for x in obj]
    if isinstance(obj, dict):
        return {k: _replace(x, new) for k, x in obj.items()}
    return obj


def _device_types(args, kwargs) -> list:
    """cpu, then the device types of the Tensor arguments: the generators to fork."""
    return ["cpu"] + [t.device.type for t in _tensors([list(args), kwargs])]


# --- use_reentrant=True -------------------------------------------------------------------

class CheckpointFunction(Function):
    """PyTorch's reentrant checkpoint: forward under ``no_grad``; backward recomputes on
    detached arguments and runs ``ember.autograd.backward`` inside the outer backward."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        if not any(isinstance(a, _d._Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=4)
        ctx.run_function = run_function
        ctx.states = get_states(_device_types(args, {})) if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, _d._Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, _d._Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, _d._Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        from ..autograd import backward
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        with contextlib.ExitStack() as stack:
            if ctx.states is not None:
                stack.callback(set_states, get_states(ctx.states))
                set_states(ctx.states)
            detached = detach_variable(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        if isinstance(outputs, _d._Tensor):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, _d._Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(x.grad if isinstance(x, _d._Tensor) else None
                                    for x in detached)


def checkpoint_sequential(functions, segments: int, input, use_reentrant=None, **kwargs):
    """Run ``functions`` (a list of callables or an ``nn.Sequential``) one after another on
    ``input``, checkpointing each of the first ``segments - 1`` segments (of
    ``len(functions) // segments`` functions; the last segment takes the rest and runs
    normally, its activations being needed at once) (``torch.utils.checkpoint
    .checkpoint_sequential``). Keyword: ``preserve_rng_state=True``.

    Raises ValueError for other keyword arguments and for ``segments`` outside
    ``[1, len(functions)]`` (PyTorch: ZeroDivisionError or range's ValueError).
    """
    if use_reentrant is None:
        warnings.warn("ember.utils.checkpoint.checkpoint_sequential: the use_reentrant "
                      "parameter should be passed explicitly; it defaults to True as in "
                      "PyTorch 2.x. use_reentrant=False is recommended.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential
    if isinstance(functions, Sequential):
        functions = list(functions.children())
    functions = list(functions)
    if not isinstance(segments, int) or not 1 <= segments <= max(1, len(functions)):
        raise ValueError(f"checkpoint_sequential(): segments must be an int in [1, "
                         f"{len(functions)}] (the number of functions), got {segments!r}")

    def run(start, end):
        def forward(x):
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
