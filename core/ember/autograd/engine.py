"""The autograd engine: run the backward graph from some roots to the leaves.

``run_backward`` is independent of any frontend (``Tensor.backward`` and
``ember.autograd.grad`` both call it). One call is one *graph task* with its own state,
so independent graphs can run from several threads at once; the only shared writes are
into leaves' ``.grad``, which AccumulateGrad guards with a lock.

The walk, as in PyTorch's engine:

1. discover the nodes reachable from the roots and count, for each node, how many edges
   point at it (its dependencies); with ``inputs`` given, keep only nodes that lead to
   one of them;
2. put the roots' gradients in their input buffers and the roots on a ready queue
   (a heap: of the ready nodes, the most recently created runs first);
3. pop a node, run its tensor hooks, run it (pre-hooks, apply, post-hooks), and add each
   resulting gradient into the buffer of the node its edge points to, reduced to the
   shape, cast to the dtype and moved to the device (the index too) that node expects;
   a node whose dependencies reach zero is ready.

A node whose incoming gradients live on a backend of several devices runs (hooks and
backward) with their device current, as PyTorch runs a node on its device's thread under
a DeviceGuard, so what its formula allocates (``zeros(n, device="cuda")``) lands next to
its operands. A single-device backend (cpu) enters no guard and records no device index.

Without ``retain_graph`` each node frees its saved tensors once it has run. With
``create_graph`` the walk runs in grad mode, so the formulas record a graph of their own.
In anomaly mode (``anomaly_mode.py``) each node's gradients are checked for NaN after it
runs, and an error raised while running a node is reported with its forward traceback.
"""
from __future__ import annotations

import contextlib
import heapq
import itertools
import operator
import threading

from ..types import Device
from . import anomaly_mode as _anomaly
from .fast_formulas import accumulate as _accumulate
from .formulas import is_expandable_to, sum_to
from .function import AccumulateGrad, InputMetadata, call_node
from .grad_mode import STATE

# NOTE: Edges ``(function, input_nr)`` and InputMetadata ``(shape, type, device_index)`` are
# read by index in the per-edge loops below: about half the cost of an attribute read, and
# a node may hold plain tuples in their place (a generated recorder builds its edges and
# metadata inline, where a NamedTuple's construction would cost ~0.15 us each).
_node_of = operator.itemgetter(0)  # Edge.function
_tasks = threading.local()  # .callbacks: a list of callbacks per backward running here


def queue_callback(callback) -> None:
    """Run ``callback()`` (no arguments) once the backward pass running on this thread has
    run its last node, before ``backward`` returns; callbacks run in the order queued, and
    one may queue another. A hook's way to act once per backward: DDP's reducer waits for
    its all-reduces there, after every node, not only the ones before its last hook.

    Raises RuntimeError outside a backward pass. A backward that raises runs none.
    Reference: PyTorch's ``Variable._execution_engine.queue_callback``.
    """
    stack = getattr(_tasks, "callbacks", None)
    if not stack:
        raise RuntimeError("queue_callback: no backward pass is running on this thread; "
                           "call it from a hook that backward runs (a tensor or node hook)")
    stack[-1].append(callback)


def _discover(roots) -> list:
    """Every node reachable from ``roots``, children before parents (post-order)."""
    order, seen = [], set()
    for root in roots:
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(root.next_functions))]
        while stack:
            node, it = stack[-1]
            for e in it:
                if e is not None and e[0] not in seen:
                    seen.add(e[0])
                    stack.append((e[0], iter(e[0].next_functions)))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def _validate(g, node, nr: int, producer):
    """``g`` fitted to the ``input_metadata`` of input ``nr`` of ``node``: reduced to its
    shape (the gradient of a broadcast operand is summed over the broadcast dims), then
    converted to its Type and moved to its device, index included (``cuda:1``, not the
    current device). Metadata without an index (single-device backends, the JIT's) leaves
    the device to the backend: the current one.

    Raises RuntimeError naming ``producer`` when the shape cannot be summed to the expected
    one. Reference: PyTorch's ``validate_outputs`` (``grad = grad.to(metadata.device())``).
    """
    om = node._out_meta
    meta = om[nr] if nr < len(om) else None
    if meta is None:
        return g
    if meta.__class__ is not InputMetadata:  # a plain (shape, Type[, index]) tuple
        meta = InputMetadata(*meta)
    shape, typ, index = meta.shape, meta.type, meta.device_index
    if g._data.shape != shape:
        if not is_expandable_to(shape, g._data.shape):
            raise RuntimeError(f"Function {producer.name()} returned an invalid gradient - "
                               f"got shape {list(g._data.shape)} but expected shape "
                               f"compatible with {list(shape)}")
        g = sum_to(g, shape)
    if index is None:
        if g._type is not typ:
            g = g.to(dtype=typ.scalar_type, device=typ.backend.name)
    elif g._type is not typ or typ.backend.device_of(g._data) != index:
        with typ.backend.on_device(index):
            g = g.to(dtype=typ.scalar_type, device=Device(typ.backend.name, index))
    return g


def _device_guard(buf: list):
    """A context manager making the device of the first gradient in ``buf`` current (as
    ``run_backward`` does around a node's backward); a no-op when there is none or its
    backend has one device. Reference: PyTorch's ``InputBuffer::device``."""
    for g in buf:
        if g is not None:
            b = g._type.backend
            if b.device_count > 1:
                return b.on_device(b.device_of(g._data))
            break
    return contextlib.nullcontext()


def _dependencies(roots) -> dict:
    """For every node reachable from ``roots`` (the roots included): how many Edges point
    at it."""
    deps = dict.fromkeys(roots, 0)  # NOTE: a root reached from another is not walked twice
    stack = list(deps)
    while stack:
        for e in stack.pop().next_functions:
            if e is not None:
                n = e[0]
                if n in deps:
                    deps[n] += 1
                else:
                    deps[n] = 1
                    stack.append(n)
    return deps


def _dependencies_toward(roots, inputs) -> tuple:
    """``_dependencies`` counting only edges into nodes that lead to one of ``inputs``
    (Edges). Returns ``(deps, reach, targets)``: ``reach`` the set of such nodes,
    ``targets`` node -> {input_nr: [positions in inputs]}."""
    targets: dict = {}
    for i, (function, input_nr) in enumerate(inputs):
        targets.setdefault(function, {}).setdefault(input_nr, []).append(i)
    reach = set()
    order = _discover(roots)
    for node in order:  # children come first, so one pass suffices
        if node in targets or any(e is not None and e[0] in reach
                                  for e in node.next_functions):
            reach.add(node)
    deps: dict = {}
    for node in order:
        for e in node.next_functions:
            if e is not None and e[0] in reach:
                deps[e[0]] = deps.get(e[0], 0) + 1
    return deps, reach, targets


def run_backward(roots, grads, *, retain_graph: bool, create_graph: bool, inputs=None,
                 accumulate: bool = True):
    """Run the graph from ``roots`` (Edges ``(node, output_nr)``) seeded with ``grads``.

    ``inputs``: Edges to stop at; their gradients are returned (a list, None where no
    gradient arrived). With ``accumulate`` the leaves among them (or every reachable leaf
    when ``inputs`` is None) get ``.grad`` accumulated.
    """
    root_nodes = list(map(_node_of, roots))
    if inputs is None:
        deps, reach, targets = _dependencies(root_nodes), None, None
    else:
        deps, reach, targets = _dependencies_toward(root_nodes, inputs)
    captured = [None] * len(inputs or ())
    buffers: dict = {}
    for (node, nr), g in zip(roots, grads):
        _add(buffers, node, nr, g)
    tie = itertools.count()
    ready = []
    for n in dict.fromkeys(root_nodes):
        if not deps.get(n):
            ready.append((-n.sequence_nr, next(tie), n))
    heapq.heapify(ready)
    pop, push = heapq.heappop, heapq.heappush

    prev_mode = STATE.enabled
    STATE.enabled = create_graph
    check_nan = _anomaly.ENABLED and _anomaly.CHECK_NAN
    node = None
    stack = getattr(_tasks, "callbacks", None)
    if stack is None:
        stack = _tasks.callbacks = []
    callbacks: list = []
    stack.append(callbacks)
    try:
        while ready:
            node = pop(ready)[2]
            buf = buffers.pop(node, None) or [None] * max(1, len(node._out_meta))
            hooks = node._hooks
            if hooks is not None and (hooks.tensor_pre or hooks.retain_grad):
                with _device_guard(buf):
                    _tensor_hooks(node, buf)
            out = None
            if reach is None or _runs(node, buf, reach, targets, captured, accumulate):
                # run it on its first gradient's device (its allocations land there), through
                # call_node if it has hooks; not at all if no gradient reached it
                # NOTE: ``g`` is bound here on every path: AccumulateGrad's reference counts
                # (grad_ownership) must not depend on where a gradient came from
                for g in buf:
                    if g is not None:
                        b = g._type.backend
                        if b.device_count > 1:
                            with b.on_device(b.device_of(g._data)):
                                out = call_node(node, buf)
                        else:
                            out = node.apply(buf) if hooks is None else call_node(node, buf)
                        if not retain_graph and node._releases:
                            node.release_variables()
                        break
            if out is None:  # nothing flows on, but the nodes it points at stop waiting
                out = (None,) * len(node.next_functions)
            elif check_nan:
                _anomaly.check_nan(node, out)
            # each gradient goes to the buffer of the node its edge points to, fitted to
            # what that node expects; a node all of whose edges have come in is ready
            i = -1
            for e in node.next_functions:
                i += 1
                if e is None or reach is not None and e[0] not in reach:
                    continue
                nxt = e[0]
                g = out[i]
                if g is not None:
                    _deliver(buffers, nxt, e[1], g, node)
                d = deps[nxt] - 1
                deps[nxt] = d
                if d == 0:
                    push(ready, (-nxt.sequence_nr, next(tie), nxt))
        node = None
        i = 0
        while i < len(callbacks):  # a callback may queue another
            callbacks[i]()
            i += 1
    except Exception as exc:
        if _anomaly.ENABLED and node is not None:  # the forward traceback of the culprit
            _anomaly.report(node, exc)
        raise
    finally:
        STATE.enabled = prev_mode
        stack.pop()
    return captured


def _runs(node, buf, reach, targets, captured, accumulate) -> bool:
    """With ``inputs`` given: capture the gradients of the targets among ``node``'s
    outputs, and whether ``node`` must run (an AccumulateGrad target being accumulated,
    or a node leading to a target)."""
    hit = targets.get(node)
    if hit is not None:
        for nr, idx in hit.items():
            for i in idx:
                captured[i] = buf[nr] if nr < len(buf) else None
        if accumulate and node.__class__ is AccumulateGrad:
            return True
    return any(e is not None and e[0] in reach for e in node.next_functions)


def _deliver(buffers: dict, node, nr: int, g, producer) -> None:
    """Add ``g`` into input ``nr`` of ``node``'s buffer, fitted (``_validate``) to what
    ``node`` expects unless it already is (the common case, checked inline)."""
    om = node._out_meta
    meta = om[nr] if nr < len(om) else None
    if meta is not None and (g._data.shape != meta[0] or g._type is not meta[1] or
                             len(meta) > 2 and meta[2] is not None and
                             meta[1].backend.device_of(g._data) != meta[2]):
        g = _validate(g, node, nr, producer)
    buf = buffers.get(node)
    if buf is None:
        buf = buffers[node] = [None] * (len(om) if len(om) > nr else nr + 1)
    elif nr >= len(buf):
        buf.extend([None] * (nr + 1 - len(buf)))
    old = buf[nr]
    buf[nr] = g if old is None else _accumulate(old, g)


def _add(buffers: dict, node, nr: int, g) -> None:
    buf = buffers.get(node)
    if buf is None:
        n = len(node._out_meta)
        buf = buffers[node] = [None] * (n if n > nr else nr + 1)
    elif nr >= len(buf):
        buf.extend([None] * (nr + 1 - len(buf)))
    buf[nr] = g if buf[nr] is None else buf[nr] + g


def _check_hook_result(hook, new, old) -> None:
    """Raise unless the tensor hook's result ``new`` can replace the gradient ``old``: a
    Tensor of the same shape, dtype and device (PyTorch's check on a hook's result)."""
    name = getattr(hook, "__qualname__", None) or repr(hook)
    if not isinstance(new, type(old)):  # gradients are plain Tensors
        raise TypeError(f"hook '{name}' returned {type(new).__name__}: expected a hook to "
                        f"return None or a Tensor (the new gradient)")
    shape, new_shape = old._data.shape, new._data.shape
    if new.dtype is not old.dtype or new.device != old.device or new_shape != shape:
        what = ("size" if new_shape != shape else
                "type" if new.dtype is not old.dtype else "device")
        was = {"size": (list(shape), list(new_shape)),
               "type": (old.dtype, new.dtype), "device": (old.device, new.device)}[what]
        raise RuntimeError(f"hook '{name}' has changed the {what} of value (was {was[0]}, "
                           f"got {was[1]}); a hook returns a gradient like the one it was "
                           f"given, or None")


def _tensor_hooks(node, buf: list) -> None:
    """Hooks registered with ``Tensor.register_hook`` (in order), then ``retain_grad``."""
    for nr, hooks in (node._tensor_pre_hooks or {}).items():
        if nr < len(buf) and buf[nr] is not None:
            for hook in list(hooks):
                new = hook(buf[nr])
                if new is not None:
                    _check_hook_result(hook, new, buf[nr])
                    buf[nr] = new
    for nr, ref in (node._retain_grad or {}).items():
        t = ref()
        if t is not None and nr < len(buf) and buf[nr] is not None:
            g = buf[nr]
            if t.grad is None:
                t._grad = g if (STATE.enabled and g.requires_grad) else g.detach().clone()
            else:
                t._grad = t._grad + g
