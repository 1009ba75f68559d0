"""Fusers: per-device compilers of ``prim::FusionGroup`` subgraphs, and how a group runs.

The FuseGraph pass (:mod:`ember.jit.passes.fuse_graph`) groups chains of pointwise ops
into ``prim::FusionGroup`` nodes, but only for a device type that has a fuser here. A fuser
turns a group's ``Subgraph`` into one callable (a Triton kernel on CUDA); every group runs
through a :class:`FusionGroupOp`, built once per node, which asks the fuser once and runs
the subgraph unfused (op by op, through the interpreter) when the fuser declines or fails,
logging the reason to the ``ember.jit.fuser`` logger and keeping it for
:func:`fusion_fallbacks`. So a fuser can only make a group faster, never change its result.

Fusers come from two places, looked up by device type (``"cuda"``):

- plugins: the ``ember_fusers`` hook returns fuser objects carrying ``device_type``; they
  are read lazily, on the first lookup after plugins (re)load;
- :func:`register_fuser` (or the :func:`using_fuser` context manager, for tests), which
  takes precedence over a plugin's fuser for the same device type;
  ``using_fuser("cpu", None)`` turns fusion off for that type inside the block (as
  ``torch._C._jit_override_can_fuse_on_cpu(False)`` does).

Reference: PyTorch's ``torch/csrc/jit/fuser/interface.h`` (``registerFusionBackend``,
``runFusion``) and its executor's fallback to the unfused graph.
"""
from __future__ import annotations

import contextlib
import logging
import threading
from collections import deque
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from ember._base.registry import ensure_loaded, table
from ember.jit.runtime.interpreter import register_prim, register_prim_factory, run_graph
from ember.jit.ir.ir_types import TensorType
from ember.jit.ir.kinds import prim

__all__ = ["Fuser", "FusionDeclined", "FusionFallback", "FusionGroupOp", "FUSIBLE_KINDS",
           "CHUNK_KINDS", "register_fuser", "unregister_fuser", "using_fuser", "get_fuser",
           "registered_fusers", "can_fuse_node", "group_device", "fusion_fallbacks",
           "clear_fusion_fallbacks", "record_fallback", "BROADCASTING_CHUNK",
           "broadcasting_chunk", "broadcast_shapes", "FUSED_CONCAT"]

logger = logging.getLogger("ember.jit.fuser")

_POINTWISE = (
    # unary
    "abs", "neg", "sign", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
    "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid",
    "relu", "relu6", "gelu", "silu", "erf", "floor", "ceil", "trunc", "round", "reciprocal",
    "logical_not", "bitwise_not", "leaky_relu", "elu", "hardtanh", "nan_to_num",
    "asinh", "acosh", "atanh", "erfc", "frac", "logit", "square", "absolute",
    "isnan", "isinf", "isfinite", "isposinf", "isneginf", "signbit",
    # activations (composites the tracer records as one node)
    "softplus", "mish", "hardswish", "hardsigmoid", "selu", "celu", "softsign", "log_sigmoid",
    "tanhshrink", "softshrink", "hardshrink", "threshold",
    # binary and ternary, broadcasting
    "add", "sub", "rsub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod",
    "pow", "atan2", "maximum", "minimum", "max.other", "min.other", "lerp.Tensor",
    "lerp.Scalar", "where", "clamp", "clamp_min", "clamp_max", "masked_fill", "type_as",
    "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor",
    "bitwise_and", "bitwise_or", "bitwise_xor", "clip", "xlogy", "logaddexp", "logaddexp2",
    "copysign", "fmax", "fmin", "float_power", "addcmul", "addcdiv",
)
#: ``prim::BroadcastingChunk[chunks=c, dim=d](%x_1, ..., %x_m)``: broadcast the m tensors
#: to their common shape, then chunk each in ``c`` along ``d``; outputs are piece ``j`` of
#: ``x_k`` at position ``k * n + j`` (``n`` pieces each: the output count over m). FuseGraph
#: makes it when it moves a chunk above the pointwise op that fed it (see
#: :mod:`ember.jit.passes.fuse_graph`), so the chunk cuts group inputs.
BROADCASTING_CHUNK = "prim::BroadcastingChunk"
#: ``prim::FusedConcat[dim=d](%x_1, ..., %x_n)``: ``cat([x_1, ..., x_n], d)``, made by
#: FuseGraph (:mod:`ember.jit.passes.fuse_concat`) as the last node of a FusionGroup whose
#: ops compute the pieces; a fuser writes each piece into its slice of the result.
FUSED_CONCAT = "prim::FusedConcat"
# Ops that cut a fusion input into views; FuseGraph pulls them into the group that reads
# all their pieces, so the kernel indexes the whole input (the seeds' LSTM cell: the gates
# tensor chunked in four).
CHUNK_KINDS = frozenset({"ember::chunk", "ember::split", "ember::split.sizes",
                         BROADCASTING_CHUNK})
#: The node kinds a fuser fuses unless its ``can_fuse_node`` says otherwise: pointwise ops
#: (each output element depends on the same element of the broadcast inputs), the
#: ``CHUNK_KINDS`` and ``FUSED_CONCAT``.
FUSIBLE_KINDS = (frozenset({f"ember::{name}" for name in _POINTWISE}) | CHUNK_KINDS
                 | {FUSED_CONCAT})


def broadcast_shapes(shapes, who: str) -> tuple:
    """The common shape ``shapes`` (tuples of ints) broadcast to, numpy's rule; the first
    one at once when all are equal (the steady case, no numpy call). Raises ShapeError
    naming ``who`` (the prim that asked) when they do not broadcast."""
    first = shapes[0]
    if all(s == first for s in shapes):
        return tuple(first)
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        from ember.errors import ShapeError
        raise ShapeError(f"{who}: shapes do not broadcast: {[list(s) for s in shapes]}. "
                         f"Each dimension, aligned from the right, must be equal or 1; "
                         f"reshape or unsqueeze an operand") from None


def broadcasting_chunk(tensors, chunks: int, dim: int, pieces: int) -> list:
    """What ``prim::BroadcastingChunk`` computes: each of ``tensors`` (m Tensors whose
    shapes broadcast to a common ``S``) expanded to ``S`` and cut by ``chunk(chunks, dim)``
    into ``pieces`` views; returns the m * pieces views, those of ``tensors[0]`` first.

    Raises ShapeError when the shapes do not broadcast, and when ``S`` splits into other
    than ``pieces`` pieces (the graph was traced for another size along ``dim``).
    Reference: PyTorch's ``prim::BroadcastingChunk`` (``graph_fuser.cpp``).
    """
    from ember.errors import ShapeError
    common = broadcast_shapes([tuple(t.shape) for t in tensors], "BroadcastingChunk")
    out = []
    for t in tensors:
        cut = t.expand(*common).chunk(chunks, dim)
        if len(cut) != pieces:
            raise ShapeError(f"BroadcastingChunk: chunk({chunks}, dim={dim}) of shape "
                             f"{list(common)} gives {len(cut)} pieces; the graph unpacks "
                             f"{pieces}. Trace again for this size")
        out.extend(cut)
    return out


@register_prim(BROADCASTING_CHUNK)
def _broadcasting_chunk(node, args) -> list:
    return broadcasting_chunk(args, node.attr("chunks"), node.attr("dim"),
                              len(node.outputs) // max(len(args), 1))


@register_prim(FUSED_CONCAT)
def _fused_concat(node, args):
    # a group that runs unfused concatenates as cat does, and raises cat's errors
    from ember.ops import namespace as E
    return [E.cat(list(args), node.attr("dim"))]


class FusionDeclined(Exception):
    """Raised by ``Fuser.compile`` when it will not fuse a group (an unsupported dtype,
    too many inputs); the group then runs unfused. The message is the reason shown."""


class Fuser:
    """The interface of a fuser (subclass it, or provide the same attributes).

    Attributes:
        name: shown in logs, ``fusion_fallbacks()`` and ``ember plugins``.
        device_type: the device type whose groups it compiles (``"cuda"``); a plugin's
            fuser must carry it, :func:`register_fuser` takes it as an argument.

    Methods:
        can_fuse_node(node) -> bool: whether FuseGraph may put ``node`` into a group. The
            default accepts the kinds in ``FUSIBLE_KINDS``; override it to refuse dtypes or
            ops the code generator lacks. FuseGraph has already checked that every tensor
            the node reads or writes is on this fuser's device and that its other inputs
            are constants.
        compile(subgraph) -> callable: ``kernel(*inputs) -> list of outputs`` for the
            ``Subgraph`` of one group (inputs and outputs are Tensors, one per subgraph
            input/output). Called once per group and plan; may raise
            :class:`FusionDeclined` or any exception, and the group runs unfused.
    """

    name = "fuser"
    device_type = ""

    def can_fuse_node(self, node) -> bool:
        """Whether ``node`` may be fused (default: its kind is in ``FUSIBLE_KINDS``)."""
        return node.kind in FUSIBLE_KINDS

    def compile(self, subgraph) -> Callable:
        """Return ``kernel(*inputs) -> list of outputs`` for ``subgraph``; this base class
        compiles nothing and raises NotImplementedError."""
        raise NotImplementedError(f"fuser {self.name!r} does not implement compile(subgraph)")


def can_fuse_node(fuser, node) -> bool:
    """``fuser.can_fuse_node(node)``, or the default rule (``FUSIBLE_KINDS``) for a fuser
    without that method."""
    method = getattr(fuser, "can_fuse_node", None)
    return node.kind in FUSIBLE_KINDS if method is None else bool(method(node))


# ---- the registry -------------------------------------------------------------------------
# FUSERS is the ember_fusers hook's table: the plugin manager registers each plugin's
# fusers there by owner; register_fuser's choices (_explicit) win over it
FUSERS = table("ember_fusers")
_lock = threading.Lock()
_explicit: dict[str, object] = {}
_plugin_cache: tuple = (-1, {})  # (FUSERS.version, {device_type: fuser})


def _plugin_fusers() -> dict:
    global _plugin_cache
    ensure_loaded()
    version, fusers = _plugin_cache
    if version != FUSERS.version:
        fusers = {f.device_type: f for f in FUSERS.items(load=False)}
        _plugin_cache = (FUSERS.version, fusers)
    return fusers


def register_fuser(device_type: str, fuser) -> None:
    """Use ``fuser`` for FusionGroups on devices of type ``device_type`` (``"cuda"``),
    replacing any fuser registered or provided by a plugin for that type.

    Raises TypeError when ``device_type`` is not a non-empty string or ``fuser`` has no
    callable ``compile``.
    """
    if not isinstance(device_type, str) or not device_type:
        raise TypeError(f"register_fuser: device_type must be a device type name such as "
                        f"'cuda' or 'cpu', got {device_type!r}")
    if not callable(getattr(fuser, "compile", None)):
        raise TypeError(f"register_fuser: a fuser needs a callable compile(subgraph) (see "
                        f"ember.jit.runtime.fuser.Fuser), got {fuser!r}")
    with _lock:
        _explicit[device_type] = fuser


def unregister_fuser(device_type: str) -> None:
    """Forget the fuser given to :func:`register_fuser` for ``device_type`` (a plugin's
    fuser for that type, if any, applies again). Raises KeyError if none was registered."""
    with _lock:
        if _explicit.get(device_type) is None:
            raise KeyError(f"no fuser was registered for device type {device_type!r}; "
                           f"registered: {sorted(_explicit) or 'none'}")
        del _explicit[device_type]


_MISSING = object()


@contextlib.contextmanager
def using_fuser(device_type: str, fuser):
    """``with using_fuser("cpu", my_fuser):`` registers ``fuser`` inside the block and
    restores the previous registration for ``device_type`` after it; ``fuser=None``
    means no fuser for ``device_type`` inside the block (a plugin's included). Raises
    TypeError as :func:`register_fuser` does."""
    with _lock:
        previous = _explicit.get(device_type, _MISSING)
    if fuser is None:
        if not isinstance(device_type, str) or not device_type:
            raise TypeError(f"using_fuser: device_type must be a device type name such as "
                            f"'cpu', got {device_type!r}")
        with _lock:
            _explicit[device_type] = None
    else:
        register_fuser(device_type, fuser)
    try:
        yield fuser
    finally:
        with _lock:
            if previous is _MISSING:
                _explicit.pop(device_type, None)
            else:
                _explicit[device_type] = previous


def registered_fusers() -> dict:
    """``{device_type: fuser}`` for every device type that has a fuser (plugins', then
    the ones given to :func:`register_fuser`, which win)."""
    fusers = dict(_plugin_fusers())
    with _lock:
        fusers.update(_explicit)
    return {k: f for k, f in fusers.items() if f is not None}


def get_fuser(device_type: str):
    """The fuser for ``device_type`` (``"cuda"``), or None when there is none."""
    with _lock:
        if device_type in _explicit:  # None: turned off by using_fuser(type, None)
            return _explicit[device_type]
    return _plugin_fusers().get(device_type)


# ---- running a group ----------------------------------------------------------------------
@dataclass(frozen=True)
class FusionFallback:
    """One FusionGroup that runs unfused: which fuser (or None), the device, the reason,
    and the kinds of the nodes in its subgraph."""

    fuser: Optional[str]
    device: Optional[str]
    reason: str
    kinds: tuple

    def __str__(self) -> str:
        ops = ", ".join(k for k in self.kinds if k != prim.Constant)
        return f"{self.fuser or 'no fuser'} on {self.device}: {self.reason} [{ops}]"


_fallbacks: deque = deque(maxlen=256)


def fusion_fallbacks() -> list:
    """The most recent groups that run unfused (up to 256), oldest first, as
    :class:`FusionFallback` records; the executor shows them in its debug state."""
    return list(_fallbacks)


def clear_fusion_fallbacks() -> None:
    """Forget the recorded fallbacks."""
    _fallbacks.clear()


def record_fallback(fuser, device, reason: str, subgraph,
                    level: int = logging.INFO) -> FusionFallback:
    """Record and log that a FusionGroup ran unfused: ``fuser`` (the fuser object, or
    None), ``device`` (an ember Device, or None), why, and the group's ``Subgraph``.

    FusionGroupOp calls it when a group cannot be compiled; a fuser's kernel calls it when
    it runs one call unfused itself (an input too large for its kernel), so the reason
    shows in :func:`fusion_fallbacks` and the executor's ``get_debug_state()``. Returns
    the :class:`FusionFallback`.
    """
    name = None if fuser is None else getattr(fuser, "name", type(fuser).__name__)
    record = FusionFallback(name, None if device is None else str(device), reason,
                            tuple(n.kind for n in subgraph.nodes()))
    _fallbacks.append(record)
    logger.log(level, "FusionGroup runs unfused: %s", record)
    return record


def group_device(node):
    """The device a FusionGroup runs on: its ``device`` attribute (set by FuseGraph), else
    the one device all its subgraph's tensor inputs share, else None."""
    device = node.attr("device", None)
    if device is not None:
        return device
    devices = {v.type.device for v in node.g("Subgraph").inputs
               if isinstance(v.type, TensorType)}
    return devices.pop() if len(devices) == 1 else None


class FusionGroupOp:
    """The runtime op of one ``prim::FusionGroup`` node: ``op(*inputs) -> list of outputs``.

    Built once per node (by the ExecutionPlan, or by the interpreter on first run): it
    looks up the fuser of the group's device and calls ``fuser.compile(subgraph)`` once.
    When there is no fuser, or ``compile`` raises (:class:`FusionDeclined` or any error),
    or the compiled kernel later raises or returns the wrong number of outputs, the group
    runs its subgraph unfused from then on; the reason goes to the ``ember.jit.runtime.fuser``
    logger and to :func:`fusion_fallbacks`. A runtime error the unfused ops also raise
    (a shape mismatch) reaches the caller as the eager ops word it, and keeps the kernel.

    Attributes:
        kernel: the compiled callable, or None when the group runs unfused.
        fallback: the :class:`FusionFallback` explaining why it runs unfused, or None.
    Raises ValueError when ``node`` is not a ``prim::FusionGroup``.
    """

    def __init__(self, node):
        if node.kind != prim.FusionGroup:
            raise ValueError(f"FusionGroupOp needs a prim::FusionGroup node, got {node.kind}")
        self.subgraph = node.g("Subgraph")
        self.device = group_device(node)
        self.fuser = None if self.device is None else get_fuser(self.device.type)
        self.kernel: Optional[Callable] = None
        self.fallback: Optional[FusionFallback] = None
        self._num_outputs = len(self.subgraph.outputs)
        if self.fuser is None:
            where = ("an unknown device" if self.device is None
                     else f"device type '{self.device.type}'")
            self._fall_back(f"no fuser is registered for {where}", logging.INFO)
            return
        try:
            kernel = self.fuser.compile(self.subgraph)
            if not callable(kernel):
                raise TypeError(f"compile returned {type(kernel).__name__}, expected a "
                                f"callable kernel(*inputs) -> list of outputs")
            self.kernel = kernel
        except FusionDeclined as e:
            self._fall_back(f"declined: {e}", logging.INFO)
        except Exception as e:  # noqa: BLE001 - any fuser failure falls back to unfused
            self._fall_back(f"compile failed: {type(e).__name__}: {e}", logging.WARNING)

    def __call__(self, *inputs) -> list:
        kernel = self.kernel
        if kernel is not None:
            try:
                outs = list(kernel(*inputs))
            except Exception as e:  # noqa: BLE001 - the unfused run re-raises real errors
                # inputs the unfused ops refuse too (a shape mismatch) raise their error
                # here and keep the kernel; otherwise the kernel is at fault
                result = run_graph(self.subgraph, inputs)
                self._disable(f"kernel failed: {type(e).__name__}: {e}")
                return result
            else:
                if len(outs) == self._num_outputs:
                    return outs
                self._disable(f"kernel returned {len(outs)} outputs, expected "
                              f"{self._num_outputs}")
        return run_graph(self.subgraph, inputs)

    def _disable(self, reason: str) -> None:
        if self.kernel is not None:
            self.kernel = None
            self._fall_back(reason, logging.WARNING)

    def _fall_back(self, reason: str, level: int) -> None:
        self.fallback = record_fallback(self.fuser, self.device, reason, self.subgraph, level)


register_prim_factory(prim.FusionGroup)(FusionGroupOp)
