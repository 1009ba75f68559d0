"""The ``cudnn`` convolution algorithm: ember's protocol on cuDNN graphs.

Passes (``graphs.py`` builds them), for ``ConvParams`` p with input x, weight w:

===================  ==========================  =====================================
call                 regular convolution         transposed (p.transposed)
===================  ==========================  =====================================
forward              fprop(x, w) -> y            dgrad(dy=x, w) -> (N, C_out, *O)
grad_input           dgrad(dy=gy, w) -> gx       fprop(x=gy, w) -> gx
grad_weight          wgrad(x, dy=gy) -> gw       wgrad(x=gy, dy=x) -> gw
===================  ==========================  =====================================

A transposed convolution is the input gradient of the regular one whose input has the
transposed output's shape, with the same weight (C_in, C_out/G, *k) = (K, C/G, *k); PyTorch
runs it the same way. The bias is added after the convolution and its gradient is a sum
over (N, *spatial) accumulated in float32 for half types: PyTorch adds it after cuDNN too,
and fusing it (``graph.bias``) would need the runtime-fusion engines, which not every
GPU, dtype and layout has, so a bias could turn a supported convolution into a declined
one.

Dtypes float16, bfloat16 (float32 compute), float32 and float64; 1-D (as 2-D), 2-D and
3-D; stride, padding, dilation; groups are cuDNN's (inferred from the weight's second
dim). Layouts: ``layout.py``.

Switches. ``convolution_backward`` receives no flags, so a flag is on when the call
passes it or ``ember.backends.cudnn`` has it set, and cuDNN runs when both the call's
``cudnn_enabled`` and ``ember.backends.cudnn.enabled`` allow it (PyTorch's backward reads
its global context the same way). ``dynamic = True``: ``supports`` reads the switches and
the declines remembered below, so the dispatcher does not cache its answer.

Declines. ``supports(params)`` answers up front for what cuDNN cannot do (non-floating
dtypes, zero-size or >= 2**31-element tensors, transposed ``output_padding >= stride``,
rank) and for configurations cuDNN already refused: when building a graph fails, that call
runs the native algorithm (im2col on CuPy) and the reason is remembered per
configuration, so later calls go native and ``explain`` prints why. A configuration is
what the graphs are keyed by (``GraphKey``): the device, the dtype, the shapes and the
layout the call computes in (so the strides), the convolution parameters, deterministic
and allow_tf32; a refused NCHW configuration does not decline the NHWC one. A grouped
configuration cuDNN refuses is first tried per group (the dispatcher's
``convolution_nogroup``); only if that is refused too does it decline.

Caches. Per call only the switches are read; what follows from the parameters alone is
computed once per configuration and kept: the up-front verdict per ``ConvParams``, the
graph key per (pass, call facts, ``ConvParams``) and the decline key per (``ConvParams``,
deterministic, allow_tf32). The switches are part of those keys (or read before them), so
changing one takes effect on the next call. Each cache holds at most ``_MAX_VERDICTS``
entries and starts over when full.

Reference: PyTorch ``aten/src/ATen/native/cudnn/Conv_v8.cpp`` (plan cache, engine
filters, benchmark) and ``native/Convolution.cpp`` (``convolution_backward`` flags);
cuDNN Frontend Python samples (``samples/python/00_introduction``, convolutions).
"""
from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import ember.backends.cudnn as _switches
from ember.backends.convolution import (ConvParams, Decline, convolution_nogroup,
                                        convolution_nogroup_backward)

from . import layout
from .frontend import CupyRuntime, Handles
from .graphs import OUTPUT_ROLE, Declined, GraphCache, GraphKey, build

__all__ = ["CudnnConvolution"]

DTYPES = ("float16", "bfloat16", "float32", "float64")
MAX_ELEMENTS = 2 ** 31 - 1   # cuDNN indexes most tensors with 32-bit integers
_MAX_VERDICTS = 4096


class CudnnConvolution:
    """cuDNN convolution on CuPy arrays through the cuDNN Frontend graph API.

    Args:
        fe: the ``cudnn`` module (``frontend.load()``).
        xp: the array namespace (``cupy``).
        native: the algorithm a declined call runs (``Im2colConvolution(cupy, "cuda")``).
        runtime: device, stream, pointer, workspace and timing services
            (``frontend.CupyRuntime(cupy)`` by default).
    """

    name = "cudnn"
    priority = 100
    device_type = "cuda"
    supports_groups = True
    dynamic = True

    def __init__(self, fe, xp, native, runtime=None):
        self.fe, self.xp, self.native = fe, xp, native
        self.runtime = runtime if runtime is not None else CupyRuntime(xp)
        self.handles = Handles(fe, self.runtime)
        self.graphs = GraphCache()
        self._declined: dict = {}
        self._static: dict = {}        # ConvParams -> True | Decline (params alone)
        self._graph_keys: dict = {}    # (op, _Call, ConvParams) -> GraphKey
        self._verdict_keys: dict = {}  # (ConvParams, deterministic, tf32) -> decline key

    def __repr__(self) -> str:
        return f"CudnnConvolution(cuDNN {self.version()})"

    def version(self) -> int:
        """cuDNN's version as an int: 90800 for 9.8.0."""
        return int(self.fe.backend_version())

    # ---- the algorithm protocol ----

    def supports(self, params: ConvParams):
        """True, or a ``Decline`` saying why cuDNN does not run this call."""
        if params.device_type != "cuda":
            return Decline(f"runs on cuda, not '{params.device_type}'")
        if not (params.cudnn_enabled and _switches.enabled):
            return Decline("disabled: ember.backends.cudnn.enabled is False (or the call "
                           "passed cudnn_enabled=False)")
        verdict = self._static.get(params)
        if verdict is None:
            verdict = _bounded(self._static)[params] = self._static_verdict(params)
        return self._remembered(params) if verdict is True else verdict

    def _static_verdict(self, params: ConvParams):
        """True, or the Decline for what cuDNN cannot do whatever the switches."""
        dtype = params.dtype.name
        if dtype not in DTYPES:
            return Decline(f"dtype {dtype}: cuDNN convolution takes float16, bfloat16, "
                           f"float32 or float64")
        if not 1 <= params.spatial_dims <= 3:
            return Decline(f"{params.spatial_dims}-D convolution (cuDNN: 1-D to 3-D)")
        shapes = (params.input_shape, params.weight_shape, params.output_shape)
        if any(0 in s for s in shapes):
            return Decline(f"zero-size tensor (input {params.input_shape}, weight "
                           f"{params.weight_shape}): nothing for cuDNN to compute")
        if any(math.prod(s) > MAX_ELEMENTS for s in shapes):
            return Decline(f"a tensor has more than 2**31-1 elements (input "
                           f"{params.input_shape}, output {params.output_shape}); cuDNN "
                           f"indexes with 32 bits")
        if params.transposed and any(o >= s for o, s in
                                     zip(params.output_padding, params.stride)):
            return Decline(f"output_padding {params.output_padding} not smaller than stride "
                           f"{params.stride}: the input gradient cuDNN computes would not "
                           f"have the transposed output's size")
        return True

    def forward(self, input, weight, bias, params: ConvParams):
        """``_convolution``: (N, C_in, *S) x weight -> (N, C_out, *O), plus bias."""
        call = self._call(params, input)
        if params.transposed:
            out = self._pass("dgrad", call, params, {"y": input, "w": weight},
                             params.output_shape)
        else:
            out = self._pass("fprop", call, params, {"x": input, "w": weight},
                             params.output_shape)
        if out is None:
            return self._fallback_forward(input, weight, bias, params)
        if bias is not None:
            out += bias.reshape((1, -1) + (1,) * params.spatial_dims)
        return layout.restore(self.xp, out, call.keep_channels_last)

    def backward(self, grad_output, input, weight, params: ConvParams, output_mask):
        """``convolution_backward``: (grad_input, grad_weight, grad_bias), each None where
        ``output_mask`` is False."""
        need_input, need_weight, need_bias = output_mask
        call = self._call(params, input)
        gi = gw = None
        if need_input:
            if params.transposed:
                gi = self._pass("fprop", call, params, {"x": grad_output, "w": weight},
                                params.input_shape)
            else:
                gi = self._pass("dgrad", call, params, {"y": grad_output, "w": weight},
                                params.input_shape)
            gi = self._fallback_backward(grad_output, input, weight, params, 0) \
                if gi is None else layout.restore(self.xp, gi, call.keep_channels_last)
        if need_weight:
            roles = {"x": grad_output, "y": input} if params.transposed else \
                {"x": input, "y": grad_output}
            gw = self._pass("wgrad", call, params, roles, params.weight_shape)
            gw = self._fallback_backward(grad_output, input, weight, params, 1) \
                if gw is None else layout.restore(self.xp, gw, False)
        gb = self._grad_bias(grad_output) if need_bias else None
        return gi, gw, gb

    # ---- one pass ----

    def _call(self, params: ConvParams, input) -> "_Call":
        dtype = params.dtype.name
        return _Call(device=self.runtime.device_of(input), dtype=dtype,
                     channels_last=layout.choose(dtype, input),
                     keep_channels_last=layout.is_channels_last(input),
                     benchmark=bool(params.benchmark or _switches.benchmark),
                     deterministic=bool(params.deterministic or _switches.deterministic),
                     allow_tf32=_allow_tf32())

    def _pass(self, op: str, call: "_Call", params: ConvParams, inputs: dict, out_shape):
        """Run pass ``op`` on ``inputs`` ({role: array}); returns its output (role
        ``OUTPUT_ROLE[op]``) in the call's layout, or None if cuDNN declined."""
        xp, rt = self.xp, self.runtime
        key = self._key(op, call, params)
        with rt.on_device(call.device), self.handles.lock:
            graph = self._graph(key)
            if isinstance(graph, Declined):
                self._remember(params, call, str(graph))
                return None
            arrays = {role: layout.prepare(xp, a, call.channels_last, rt.pointer)
                      for role, a in inputs.items()}
            out = layout.empty(xp, tuple(out_shape), next(iter(inputs.values())).dtype,
                               call.channels_last)
            arrays[OUTPUT_ROLE[op]] = out
            handle = self.handles.bound(call.device)
            try:
                graph.execute({r: rt.pointer(a) for r, a in arrays.items()}, handle, rt)
            except Declined as e:   # benchmark mode: no candidate plan ran
                self.graphs.put(key, e)
                self._remember(params, call, str(e))
                return None
        return out

    def _key(self, op: str, call: "_Call", params: ConvParams) -> GraphKey:
        """The graph cache key: tensors of the regular convolution the pass runs (kept
        per (op, call, params): the call holds the switches, so a change makes a new key)."""
        cached = self._graph_keys.get((op, call, params))
        if cached is None:
            cached = _bounded(self._graph_keys)[op, call, params] = \
                self._make_key(op, call, params)
        return cached

    def _make_key(self, op: str, call: "_Call", params: ConvParams) -> GraphKey:
        x_shape, y_shape = params.input_shape, params.output_shape
        if params.transposed:
            x_shape, y_shape = y_shape, x_shape
        cl, nd = call.channels_last, params.spatial_dims
        return GraphKey(
            call.device, op, call.dtype, layout.describe(x_shape, cl),
            layout.describe(params.weight_shape, cl), layout.describe(y_shape, cl),
            layout.lift_params(params.padding, 0, nd), layout.lift_params(params.stride, 1, nd),
            layout.lift_params(params.dilation, 1, nd), call.benchmark, call.deterministic,
            call.allow_tf32)

    def _graph(self, key: GraphKey):
        """The cached graph (or Declined) of ``key``, built on a miss."""
        graph = self.graphs.get(key)
        if graph is None:
            try:
                graph = build(self.fe, key, self.handles.get(key.device))
            except Declined as e:
                graph = e
            self.graphs.put(key, graph)
        return graph

    def _grad_bias(self, grad_output):
        """Sum over (N, *spatial), accumulated in float32 for half types."""
        xp = self.xp
        wide = grad_output.dtype if grad_output.dtype in (xp.float32, xp.float64) \
            else xp.float32
        axes = (0, *range(2, grad_output.ndim))
        return grad_output.sum(axis=axes, dtype=wide).astype(grad_output.dtype)

    # ---- declines and the fallback ----

    def _verdict_key(self, params: ConvParams, deterministic: bool, allow_tf32: bool):
        """What a decline depends on: what the graphs are keyed by (device, dtype,
        shapes, the compute layout and so the strides, parameters, deterministic,
        allow_tf32), not the bias, benchmark or the enabled switch (forward and backward
        params differ only in those). The input's memory format counts through the
        layout it computes in: half types compute NHWC whatever the input's."""
        cached = self._verdict_keys.get((params, deterministic, allow_tf32))
        if cached is None:
            fmt = "channels_last" if layout.choose_for(params) else "contiguous"
            cached = (dataclasses.replace(params, has_bias=False, benchmark=False,
                                          deterministic=deterministic, cudnn_enabled=True,
                                          memory_format=fmt), allow_tf32)
            _bounded(self._verdict_keys)[params, deterministic, allow_tf32] = cached
        return cached

    def _remember(self, params: ConvParams, call: "_Call", reason: str) -> None:
        key = self._verdict_key(params, call.deterministic, call.allow_tf32)
        _bounded(self._declined)[key] = Decline(reason)

    def _remembered(self, params: ConvParams):
        """True, or the Decline recorded for ``params``; a grouped configuration whose
        grouped graph was refused still runs per group unless that was refused too."""
        if not self._declined:
            return True
        det = bool(params.deterministic or _switches.deterministic)
        tf32 = _allow_tf32()
        verdict = self._declined.get(self._verdict_key(params, det, tf32))
        if verdict is None:
            return True
        if params.groups > 1:
            per_group = self._declined.get(self._verdict_key(params.per_group(), det, tf32))
            if per_group is None:
                return True
            return Decline(f"{verdict.reason}; per group: {per_group.reason}")
        return verdict

    def _per_group_open(self, params: ConvParams) -> bool:
        if params.groups == 1:
            return False
        det = bool(params.deterministic or _switches.deterministic)
        return self._verdict_key(params.per_group(), det, _allow_tf32()) not in self._declined

    def _fallback_forward(self, input, weight, bias, params: ConvParams):
        if self._per_group_open(params):
            return convolution_nogroup(self, self.xp, input, weight, bias, params)
        return self.native.forward(input, weight, bias, params)

    def _fallback_backward(self, grad_output, input, weight, params, which: int):
        """grad_input (``which`` 0) or grad_weight (1) without cuDNN's grouped graph."""
        mask = (which == 0, which == 1, False)
        if self._per_group_open(params):
            got = convolution_nogroup_backward(self, self.xp, grad_output, input, weight,
                                               params, mask)
        else:
            got = self.native.backward(grad_output, input, weight, params, mask)
        return got[which]


class _Call(NamedTuple):
    """Per-call facts: device index, dtype name, compute layout, whether the input was
    channels-last (results keep it), and the effective flags."""

    device: int
    dtype: str
    channels_last: bool
    keep_channels_last: bool
    benchmark: bool
    deterministic: bool
    allow_tf32: bool


def _bounded(cache: dict) -> dict:
    """``cache``, emptied first when it holds ``_MAX_VERDICTS`` entries."""
    if len(cache) >= _MAX_VERDICTS:
        cache.clear()
    return cache


def _allow_tf32() -> bool:
    """``ember.backends.cudnn.allow_tf32`` (True by default, as in PyTorch)."""
    return bool(_switches.allow_tf32)
