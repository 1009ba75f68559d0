"""The autograd graph: Node (a backward function), Edge, AccumulateGrad, SavedVariable.

An op that records history creates one Node. Its ``next_functions`` are Edges ``(node,
input_nr)``, one per Tensor input: the input's own ``grad_fn`` and its ``output_nr``, an
AccumulateGrad for a leaf that requires grad, or ``None`` for an input that needs no
gradient. Calling a node maps the gradients of its forward outputs to the gradients of
its forward inputs (PyTorch names them ``grad_outputs`` -> ``grad_inputs``).

Nodes hold what their formulas need, each tensor with the version it had when saved: a
SavedVariable (or, in a generated node, a Tensor input itself next to its version).
Reading one after an in-place change raises PyTorch's error.

NOTE: a node never holds its own outputs as Tensors (that would be a cycle through
``grad_fn``): a saved output keeps its array and is rebuilt on unpack.
"""
from __future__ import annotations

import itertools
import threading
import weakref
from typing import Any, NamedTuple

from .. import dispatch as _d
from . import anomaly_mode as _anomaly
from .grad_ownership import may_steal as _may_steal
from .grad_mode import STATE


class Edge(NamedTuple):
    """A gradient edge (PyTorch's ``Edge``, ``torch/csrc/autograd/edge.h``): the Node that
    receives the gradient (``function``), and which of its inputs (``input_nr``: the
    ``output_nr`` of the forward output the gradient is for)."""

    function: Any  # Node
    input_nr: int


class InputMetadata(NamedTuple):
    """What a node expects of the gradient for one of its forward outputs (PyTorch's
    ``InputMetadata``): its ``shape``, its Type, and the device index on a backend that
    drives several devices (None on a single-device backend such as cpu: the engine then
    does no device work for it)."""

    shape: tuple
    type: Any  # ember.types.Type
    device_index: int | None = None


# NOTE: ``_new(Edge, (fn, nr))`` is ``Edge(fn, nr)`` without the Python-level __new__ a
# NamedTuple has (~3x cheaper); these are built once per recorded op, on the forward path.
_new = tuple.__new__

_sequence = itertools.count()  # creation order: the engine runs later nodes first
_accumulate_lock = threading.Lock()


class RemovableHandle:
    """Returned by ``register_hook``: ``handle.remove()`` unregisters the hook."""

    __slots__ = ("_hooks", "_fn")

    def __init__(self, hooks: list, fn):
        self._hooks, self._fn = hooks, fn

    def remove(self) -> None:
        if self._fn in self._hooks:
            self._hooks.remove(self._fn)


class _Hooks:
    """A node's hooks, made when the first one is registered."""

    __slots__ = ("pre", "post", "tensor_pre", "retain_grad")

    def __init__(self):
        self.pre = self.post = self.tensor_pre = self.retain_grad = None


def _hooks_field(name: str, doc: str) -> property:
    def get(node):
        hooks = node._hooks
        return None if hooks is None else getattr(hooks, name)

    def set_(node, value):
        if node._hooks is None:
            node._hooks = _Hooks()
        setattr(node._hooks, name, value)
    return property(get, set_, doc=doc)


class Node:
    """A backward function in the autograd graph (PyTorch's ``torch.autograd.graph.Node``).

    Attributes: ``next_functions`` (one Edge ``(function, input_nr)`` or ``None`` per
    forward input; a generated recorder builds its edges as plain pairs, which PyTorch's
    ``next_functions`` shows too), ``sequence_nr`` (creation order). Subclasses implement
    ``apply(grads)``: a tuple with one gradient (Tensor or None) per ``next_functions``
    entry.

    NOTE: ``_out_meta`` holds one InputMetadata per forward output (None for one that
    gets no gradient; a plain ``(shape, Type)`` pair where a generated op's ``finish``
    inlines it); the engine fits each incoming gradient to it. ``_hooks`` is None
    for a node the engine may simply ``apply``: no hooks, and a subclass that sets
    ``_trusted_arity`` (its apply returns one gradient per edge by construction).
    Otherwise the engine goes through ``call_node``.
    """

    __slots__ = ("next_functions", "sequence_nr", "_out_meta", "_hooks", "__weakref__")
    _trusted_arity = False
    _releases = True  # False where release_variables has nothing to free: the engine skips it
    _out_diff = None  # or one bool per forward output: is it differentiable (set_history)
    _pre_hooks = _hooks_field("pre", "register_prehook's hooks (a list) or None")
    _post_hooks = _hooks_field("post", "register_hook's hooks (a list) or None")
    _tensor_pre_hooks = _hooks_field("tensor_pre", "output_nr -> Tensor.register_hook's hooks")
    _retain_grad = _hooks_field("retain_grad", "output_nr -> weakref to a retain_grad tensor")

    def __init__(self):
        self.sequence_nr = next(_sequence)
        self.next_functions = ()
        self._out_meta = ()
        self._hooks = None if self._trusted_arity else _Hooks()
        if _anomaly.ENABLED:  # NOTE: codegen's recorders inline this __init__, check included
            _anomaly.record(self)

    def name(self) -> str:
        """``MulBackward0``: the class name, as PyTorch prints it."""
        return type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {id(self):#x}>"

    def apply(self, grads: tuple) -> tuple:
        """Gradients of the forward inputs (one per ``next_functions`` entry, None where not
        needed) from ``grads``, the gradients of the forward outputs (None where none came)."""
        raise NotImplementedError(f"{self.name()}.apply() is not implemented")

    def release_variables(self) -> None:
        """Free saved tensors (after a backward pass without ``retain_graph``)."""

    def __call__(self, *grads):
        """Run this node on ``grads`` (one per forward output) with its hooks."""
        return call_node(self, list(grads))

    def register_hook(self, fn) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after the node; it may return new
        ``grad_inputs`` (a tuple, one per ``next_functions`` entry)."""
        if self._post_hooks is None:
            self._post_hooks = []
        self._post_hooks.append(fn)
        return RemovableHandle(self._post_hooks, fn)

    def register_prehook(self, fn) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before the node; it may return new ``grad_outputs``."""
        if self._pre_hooks is None:
            self._pre_hooks = []
        self._pre_hooks.append(fn)
        return RemovableHandle(self._pre_hooks, fn)

    def _tensor_hooks(self, nr: int) -> list:
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        return self._tensor_pre_hooks.setdefault(nr, [])


def call_node(node: Node, grads: list) -> tuple:
    """Node pre-hooks, ``apply``, then post-hooks (tensor hooks run in the engine)."""
    if node._pre_hooks:
        for hook in node._pre_hooks:
            new = hook(tuple(grads))
            if new is not None:
                grads = list(new)
    out = node.apply(grads)
    if len(out) != len(node.next_functions):
        raise RuntimeError(f"function {node.name()} returned an incorrect number of gradients "
                           f"(expected {len(node.next_functions)}, got {len(out)})")
    if node._post_hooks:
        for hook in node._post_hooks:
            new = hook(tuple(out), tuple(grads))
            if new is not None:
                out = tuple(new)
    return out


class AccumulateGrad(Node):
    """The sink for a leaf tensor: adds the incoming gradient into ``variable.grad``.

    NOTE: the leaf holds its AccumulateGrad (``_grad_acc``) and the node holds the leaf
    weakly, so there is no cycle and the node is made once per leaf, not once per
    backward. A leaf nobody can reach any more needs no gradient.
    """

    __slots__ = ("_variable",)
    _trusted_arity = True
    _releases = False

    def __init__(self, variable):
        super().__init__()
        self.sequence_nr = float("inf")  # run as soon as ready, like PyTorch
        self._variable = weakref.ref(variable)
        self._out_meta = (input_metadata(variable),)

    @property
    def variable(self):
        """The leaf tensor (None once it has been freed)."""
        return self._variable()

    def apply(self, grads):
        g = grads[0]
        v = self._variable()
        if g is None or v is None:
            return ()
        # create_graph: keep the graph g carries. NOTE: a gradient may be shared (``a + b``
        # passes one grad to both inputs) or a view (``expand``): copy it unless nothing
        # else holds it (grad_ownership)
        keep = STATE.enabled and g.requires_grad or v.grad is None and _may_steal(g)
        with _accumulate_lock:
            if v.grad is None:
                v._grad = g if keep else _own(g)
            elif STATE.enabled:
                v._grad = v._grad + g  # create_graph: out of place, so the sum is recorded
            else:
                v.grad._data += g._data
                v.grad._bump_version()
        return ()


def _own(g):
    """A fresh, contiguous, graph-free copy of ``g``, on ``g``'s device (CuPy's ``copy``
    allocates on the current one)."""
    b = g._type.backend
    if b.device_guard is None:  # one device: nothing to make current
        return _d.wrap(g._data.copy(), b)
    with b.on_device_of(g._data):
        return _d.wrap(g._data.copy(), b)


def input_metadata(t) -> InputMetadata:
    """What a node expects of the gradient for its forward output ``t``: its shape and
    Type, plus the device index (``device_of``) when ``t``'s backend drives several
    devices, so the engine can move a gradient to that exact device (``cuda:1``, not the
    current one). A single-device backend (the cpu one) records no index (None)."""
    typ = t._type
    b = typ.backend
    if b.device_count == 1:
        return _new(InputMetadata, (t._data.shape, typ, None))
    return _new(InputMetadata, (t._data.shape, typ, b.device_of(t._data)))


def grad_accumulator(t) -> AccumulateGrad:
    """The AccumulateGrad of leaf ``t``, made on first use and kept on the tensor."""
    acc = getattr(t, "_grad_acc", None)
    if acc is None or acc._out_meta[0].shape != t._data.shape:  # (an out= may resize a leaf)
        acc = t._grad_acc = AccumulateGrad(t)
    return acc


def gradient_edge(t):
    """The Edge a gradient for ``t`` flows along, or None if ``t`` needs none."""
    if t._base is not None and t._view_fn is not None and \
            (t._vc.value != t._view_version or (t.grad_fn is None and t._base.requires_grad)):
        from .views import refresh_view
        refresh_view(t)  # an in-place op changed the base's history after t was made
    fn = t.grad_fn
    if fn is not None:
        return _new(Edge, (fn, t.output_nr))
    if t._requires_grad:
        return _new(Edge, (grad_accumulator(t), 0))
    return None


def set_history(node: Node, outputs) -> None:
    """Make ``node`` the ``grad_fn`` of each floating-point Tensor in ``outputs`` (except
    those its ``_out_diff`` marks non-differentiable)."""
    diff = node._out_diff
    if diff is None and len(outputs) == 1:  # the common case, spelled out
        t = outputs[0]
        if t.__class__ is _d._Tensor and t._type.scalar_type.is_floating_point:
            t.grad_fn, t.output_nr, t._requires_grad = node, 0, True
            if t._base is not None:
                t._view_version = t._vc.value
            typ = t._type  # input_metadata, inlined
            node._out_meta = (_new(InputMetadata, (t._data.shape, typ, None)),) \
                if typ.backend.device_count == 1 else (input_metadata(t),)
            return
    meta = []
    for i, t in enumerate(outputs):
        if not isinstance(t, _d._Tensor) or not t._type.scalar_type.is_floating_point or \
                (diff is not None and not diff[i]):
            meta.append(None)  # integral outputs (indices) never require grad
            continue
        t.grad_fn = node
        t.output_nr = i
        t._requires_grad = True
        if t._base is not None:
            t._view_version = t._vc.value
        meta.append(input_metadata(t))
    node._out_meta = tuple(meta)


# --- saved variables -------------------------------------------------------------------------

class SavedVariable:
    """A tensor saved for backward with the version it had when saved.

    An input is kept as the Tensor itself; an output keeps only its array, type and version
    counter (no ``grad_fn``, which would point back at the saving node).
    """

    __slots__ = ("tensor", "data", "type", "vc", "version", "output_nr", "name")

    def __init__(self, t, name: str, is_output: bool = False):
        self.name = name
        if is_output:
            self.tensor = None
            self.data, self.type, self.output_nr = t._data, t._type, t.output_nr
            self.vc = t._version_counter()
            self.version = self.vc.value
        else:
            self.tensor = t
            vc = t._vc
            self.version = 0 if vc is None else vc.value

    def unpack(self, node: Node):
        """The saved tensor (an output rebuilt with ``node`` as ``grad_fn``); raises the
        in-place-modification RuntimeError if its version changed since it was saved."""
        t = self.tensor
        if t is not None:
            vc = t._vc  # t._version, inlined
            if (0 if vc is None else vc.value) != self.version:
                raise _modified_error(node, self.name, self.version, t._data.shape, t._type,
                                      t._version)
            return t
        if self.vc.value != self.version:
            raise _modified_error(node, self.name, self.version, self.data.shape, self.type,
                                  self.vc.value)
        out = _d.wrap(self.data, self.type.backend)
        out._vc = self.vc
        out.grad_fn, out.output_nr, out._requires_grad = node, self.output_nr, True
        return out


def modified_input(node, name: str, t, version: int) -> RuntimeError:
    """The error for input ``t``, saved by ``node`` as ``name`` at ``version``, that an
    in-place op changed since (a generated node keeps a Tensor input itself, its version
    in a slot of its own, rather than in a SavedVariable)."""
    return _modified_error(node, name, version, t._data.shape, t._type, t._version)


def _modified_error(node, name: str, version: int, shape, typ, now: int) -> RuntimeError:
    return RuntimeError(
        f"one of the variables needed for gradient computation has been modified by an "
        f"inplace operation: [{typ.name} {list(shape)}], saved by {node.name()} as "
        f"'{name}', is at version {now}; expected version {version} instead. "
        f"Hint: find the in-place op (a method ending in '_', an augmented assignment such as "
        f"'+=', or an indexed assignment) that changed it after {_op_name(node)}() used it, "
        f"and make it out-of-place, or .clone() the tensor before changing it.")


def _op_name(node) -> str:
    """``Exp`` for ``ExpBackward0`` and for a custom Function's ``ExpBackward``."""
    name = node.name()
    stem = name.rstrip("0123456789")
    return stem[:-len("Backward")] if stem.endswith("Backward") and stem != "Backward" \
        else name


class _Freed:
    """What a released saved variable becomes: unpacking it raises."""

    __slots__ = ()

    def unpack(self, node: Node):
        raise RuntimeError(
            f"Trying to backward through the graph a second time (or directly access saved "
            f"tensors after they have already been freed): {node.name()} freed its saved "
            f"tensors after the first backward. Specify retain_graph=True in the first "
            f".backward() or autograd.grad() call if you need to backward through the graph "
            f"a second time.")


FREED = _Freed()


def save(v, name: str, is_output: bool = False):
    """What a node stores for value ``v``: a SavedVariable for a Tensor (or a tuple of them
    for a Tensor list), the value itself otherwise."""
    if isinstance(v, _d._Tensor):
        return SavedVariable(v, name, is_output)
    if v.__class__ in (list, tuple) and v and isinstance(v[0], _d._Tensor):
        return tuple(SavedVariable(x, f"{name}[{i}]") for i, x in enumerate(v))
    return v


def unpack(saved, node: Node):
    """The value ``save`` stored, checking versions; raises after ``release_variables``."""
    c = saved.__class__
    if c is SavedVariable or c is _Freed:
        return saved.unpack(node)
    if c is tuple and saved and saved[0].__class__ in (SavedVariable, _Freed):
        return [s.unpack(node) for s in saved]
    return saved
