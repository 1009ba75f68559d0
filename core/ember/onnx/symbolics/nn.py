"""Symbolics of the layer ops: convolution, normalization, linear algebra, softmax,
dropout, embedding and padding (pooling is in ``pooling.py``).

Mapping (ONNX operators, https://onnx.ai/onnx/operators/):

* ``_convolution`` -> ``Conv`` / ``ConvTranspose`` (1-3 spatial dims, every stride,
  padding, dilation, groups and output_padding; the benchmark/deterministic/cudnn flags
  only choose an algorithm and are ignored).
* ``batch_norm`` -> ``BatchNormalization`` on the running statistics; ``layer_norm`` ->
  ``LayerNormalization`` from opset 17 (float32 and below; float64 and older opsets
  compose ``ReduceMean``/``Sqrt``); ``group_norm`` is always composed (ONNX's
  GroupNormalization has per-group scale in opset 18 and per-channel in 21).
* ``linear`` -> ``Gemm`` (2-D input) or ``MatMul`` + ``Add``; ``addmm`` -> ``Gemm``;
  ``matmul``/``mm``/``bmm``/``dot`` -> ``MatMul``; ``outer`` -> ``Mul`` of unsqueezed
  vectors; ``einsum`` -> ``Einsum``; ``bilinear`` -> ``Einsum`` + ``Add``.
* ``softmax``/``log_softmax`` -> ``Softmax``/``LogSoftmax`` (opset 13's single-axis
  semantics, after a ``Cast`` for the ``dtype`` argument).
* ``dropout`` (and ``feature_dropout``, ``alpha_dropout``, ``feature_alpha_dropout``: the
  Dropout1d/2d/3d, AlphaDropout and FeatureAlphaDropout layers) in evaluation -> nothing
  (the input itself); ``embedding`` -> ``Gather``;
  ``pad`` -> ``Pad`` (constant, reflect, edge) with ``Slice`` for negative amounts, and
  ``Slice`` + ``Concat`` for circular (wrap) padding.

Departures and choices:

* ``batch_norm`` with ``training=True`` and no running statistics (a BatchNorm with
  ``track_running_stats=False``) normalizes with the batch statistics, composed; with
  running statistics it would update them, and is declined.
* matmul-family ops on int8/int16/uint8 compute in int32 and cast back (ONNX MatMul has
  no such types; the wrap-around is the same).

Reference: PyTorch's ``torch/onnx/symbolic_opset9.py``, ``symbolic_opset11.py``,
``symbolic_opset13.py`` and ``symbolic_opset17.py`` (the mapping; own code).
"""
from __future__ import annotations

import numpy as np

from ... import types as _t
from ..registry import builtin
from ._shapes import INT64_MAX, _batched, _ntuple, _unbatched, _unsqueeze


# --- convolution ------------------------------------------------------------------------------

@builtin("ember::_convolution")
def _convolution(g, x, weight, bias, stride, padding, dilation, transposed, output_padding,
                 groups, benchmark, deterministic, cudnn_enabled):
    """Conv / ConvTranspose; weight layouts are ONNX's own ((C_out, C_in/g, *k) and
    (C_in, C_out/g, *k)), and padding is symmetric per dim."""
    nd = weight.rank - 2
    pads = _ntuple(padding, nd)
    attrs = dict(kernel_shape=list(weight.sizes[2:]), strides=_ntuple(stride, nd),
                 pads=pads + pads, dilations=_ntuple(dilation, nd), group=int(groups))
    x, added = _batched(g, x, nd)
    if transposed:
        y = g.op("ConvTranspose", x, weight, bias, dtype=x.dtype,
                 output_padding=_ntuple(output_padding, nd), **attrs)
    else:
        y = g.op("Conv", x, weight, bias, dtype=x.dtype, **attrs)
    return _unbatched(g, y, added)


# --- normalization ----------------------------------------------------------------------------

def _normalize(g, x, axes, eps: float):
    """(x - mean) / sqrt(biased var + eps) over ``axes``, as ember's composites compute it."""
    mean = g.reduce("ReduceMean", x, axes, True)
    centered = g.op("Sub", x, mean, dtype=x.dtype)
    var = g.reduce("ReduceMean", g.op("Mul", centered, centered, dtype=x.dtype), axes, True)
    std = g.op("Sqrt", g.op("Add", var, g.scalar(eps, like=x), dtype=x.dtype), dtype=x.dtype)
    return g.op("Div", centered, std, dtype=x.dtype)


def _affine(g, y, weight, bias, shape):
    """``y * weight + bias`` with the (optional) parameters reshaped to ``shape``."""
    for p, op_type in ((weight, "Mul"), (bias, "Add")):
        if p is not None:
            p = g.cast(p, y.dtype)
            if p.sizes is None or tuple(p.sizes) != tuple(shape):
                p = g.op("Reshape", p, g.ints(shape), dtype=y.dtype)
            y = g.op(op_type, y, p, dtype=y.dtype)
    return y


@builtin("ember::batch_norm")
def batch_norm(g, x, running_mean, running_var, weight, bias, training, momentum, eps):
    """BatchNormalization on the running statistics (inference mode)."""
    c = x.sizes[1]
    stat_shape = [c] + [1] * (x.rank - 2)
    if training:
        if running_mean is not None or running_var is not None:
            g.fail("batch_norm with training=True uses the batch statistics and updates the "
                   "running ones, which an ONNX model cannot do; export the model in eval "
                   "mode (model.eval()), or pass training=False")
        # no running statistics (track_running_stats=False): the batch's own, as ember
        axes = [0] + list(range(2, x.rank))
        return _affine(g, _normalize(g, x, axes, eps), weight, bias, stat_shape)
    if running_mean is None or running_var is None:
        g.fail("batch_norm with training=False needs running_mean and running_var; pass "
               "them, or build the BatchNorm with track_running_stats=True and call "
               "model.eval()")
    ones = np.ones(c)
    scale = g.cast(weight, x.dtype) if weight is not None else g.constant(ones, x.dtype)
    shift = g.cast(bias, x.dtype) if bias is not None else g.constant(0 * ones, x.dtype)
    return g.op("BatchNormalization", x, scale, shift, g.cast(running_mean, x.dtype),
                g.cast(running_var, x.dtype), epsilon=float(eps), dtype=x.dtype)


def _layer_norm_composed(g, x, normalized_shape, weight, bias, eps):
    k = len(normalized_shape)
    y = _normalize(g, x, list(range(-k, 0)), eps)
    return _affine(g, y, weight, bias, list(normalized_shape))


@builtin("ember::layer_norm")
def layer_norm(g, x, normalized_shape, weight, bias, eps):
    """Composed below opset 17 (ReduceMean, Sqrt)."""
    g.dynamic(1)    # only its length is read: the axes
    return _layer_norm_composed(g, x, list(normalized_shape), weight, bias, eps)


@builtin("ember::layer_norm", opset=17)
def layer_norm17(g, x, normalized_shape, weight, bias, eps):
    """LayerNormalization over the last len(normalized_shape) axes; its statistics are
    float32 (stash_type), so float64 stays composed to keep its precision."""
    g.dynamic(1)
    k = len(normalized_shape)
    if x.dtype is _t.float64:
        return _layer_norm_composed(g, x, list(normalized_shape), weight, bias, eps)
    if weight is None:
        dims = range(x.rank - k, x.rank)
        if any(x.is_dynamic(d) for d in dims):
            weight = g.op("Expand", g.scalar(1, like=x), g.shape_of(x, x.rank - k),
                          dtype=x.dtype)
        else:
            weight = g.constant(np.ones([x.sizes[d] for d in dims]), x.dtype)
    bias = g.cast(bias, x.dtype) if bias is not None else None
    return g.op("LayerNormalization", x, g.cast(weight, x.dtype), bias, axis=-k,
                epsilon=float(eps), dtype=x.dtype)


@builtin("ember::group_norm")
def group_norm(g, x, num_groups, weight, bias, eps):
    """Composed: normalize (N, G, -1), reshape back, per-channel weight and bias (ONNX's
    GroupNormalization scales per group at opset 18 and per channel at 21)."""
    grouped = g.op("Reshape", x, g.ints([0, int(num_groups), -1]), dtype=x.dtype)
    y = g.op("Reshape", _normalize(g, grouped, [2], eps), g.shape_of(x), dtype=x.dtype)
    return _affine(g, y, weight, bias, [x.sizes[1]] + [1] * (x.rank - 2))


# --- linear algebra ---------------------------------------------------------------------------

_SMALL_INTS = (_t.int8, _t.int16, _t.uint8)


def _operands(g, *values):
    """The operands in the IR's output dtype (int8/int16/uint8: int32, which ONNX's
    MatMul takes), and that compute dtype."""
    dtype = g.out(0).dtype
    work = _t.int32 if dtype in _SMALL_INTS else dtype
    return [None if v is None else g.cast(v, work) for v in values], work


@builtin("ember::matmul", "ember::mm", "ember::bmm", "ember::dot")
def matmul(g, a, b):
    """MatMul has numpy's (and ember's) rank rules, 1-D operands included."""
    (a, b), work = _operands(g, a, b)
    return g.op("MatMul", a, b, dtype=work)


@builtin("ember::outer")
def outer(g, a, b):
    (a, b), work = _operands(g, a, b)
    col, row = _unsqueeze(g, a, [1]), _unsqueeze(g, b, [0])
    return g.op("And" if work is _t.bool_ else "Mul", col, row, dtype=work)


def _f32_exact(v) -> bool:
    return float(np.float32(v)) == float(v)


@builtin("ember::addmm")
def addmm(g, bias, a, b, beta, alpha):
    """Gemm where its float32 alpha/beta are exact; else MatMul, Mul, Add (integers
    truncate alpha and beta, as ember). beta == 0 leaves self out (NaN included)."""
    (bias, a, b), work = _operands(g, bias, a, b)
    if work.is_floating_point and _f32_exact(alpha) and _f32_exact(beta):
        return g.op("Gemm", a, b, bias if beta != 0 else None, alpha=float(alpha),
                    beta=float(beta), dtype=work)
    cast = float if work.is_floating_point else int
    alpha, beta = cast(alpha), cast(beta)
    y = g.op("MatMul", a, b, dtype=work)
    if alpha != 1:
        y = g.op("Mul", y, g.scalar(alpha, dtype=work), dtype=work)
    if beta != 0:
        scaled = bias if beta == 1 else g.op("Mul", bias, g.scalar(beta, dtype=work),
                                             dtype=work)
        y = g.op("Add", y, scaled, dtype=work)
    return y


@builtin("ember::linear")
def linear(g, x, weight, bias):
    """Gemm(transB=1) for 2-D input, else MatMul with the transposed weight and Add."""
    (x, weight, bias), work = _operands(g, x, weight, bias)
    if x.rank == 2:
        return g.op("Gemm", x, weight, bias, transB=1, dtype=work)
    y = g.op("MatMul", x, g.op("Transpose", weight, perm=[1, 0], dtype=work), dtype=work)
    return y if bias is None else g.op("Add", y, bias, dtype=work)


@builtin("ember::bilinear")
def bilinear(g, x1, x2, weight, bias):
    """y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] + b[o], one Einsum."""
    (x1, x2, weight, bias), work = _operands(g, x1, x2, weight, bias)
    y = g.op("Einsum", x1, weight, x2, equation="...i,oij,...j->...o", dtype=work)
    return y if bias is None else g.op("Add", y, bias, dtype=work)


@builtin("ember::einsum")
def einsum(g, equation, tensors):
    """Einsum; ONNX's implicit output (no ``->``) is ember's: the labels seen once, in
    alphabetical order."""
    operands, work = _operands(g, *tensors)
    return g.op("Einsum", *operands, equation=equation.replace(" ", ""), dtype=work)


# --- softmax ----------------------------------------------------------------------------------

@builtin("ember::softmax")
def softmax(g, x, dim, dtype):
    """Softmax over one axis (opset 13 semantics); ``dtype`` casts the input first."""
    x = g.cast(x, dtype or g.out(0).dtype)
    return g.op("Softmax", x, axis=int(dim), dtype=x.dtype)


@builtin("ember::log_softmax")
def log_softmax(g, x, dim, dtype):
    x = g.cast(x, dtype or g.out(0).dtype)
    return g.op("LogSoftmax", x, axis=int(dim), dtype=x.dtype)


# --- dropout, embedding -----------------------------------------------------------------------

@builtin("ember::dropout", "ember::feature_dropout", "ember::alpha_dropout",
         "ember::feature_alpha_dropout")
def dropout(g, x, p, train):
    """The identity in evaluation (or p == 0): the input itself. ``feature_dropout``
    (Dropout1d/2d/3d) and the alpha variants are identities there too."""
    if train and p != 0:
        name = g.node.kind.split("::")[-1] if g.node is not None else "dropout"
        g.fail(f"{name} with train=True (p={p}) is random; export the model in eval mode "
               f"(model.eval()), or call it with training=False")
    return x


@builtin("ember::embedding")
def embedding(g, weight, indices, padding_idx, scale_grad_by_freq, sparse):
    """Gather of rows (padding_idx and scale_grad_by_freq only shape gradients)."""
    return g.op("Gather", weight, indices, axis=0, dtype=weight.dtype)


# --- padding ----------------------------------------------------------------------------------

def _onnx_pads(pad, rank: int, sign: int) -> list:
    """ember's (left, right) pairs from the last dim back, as ONNX's begins-then-ends
    over every dim, keeping the amounts of ``sign`` (+1 pads, -1 crops, as positives)."""
    begins, ends = [0] * rank, [0] * rank
    for i in range(len(pad) // 2):
        d = rank - 1 - i
        begins[d], ends[d] = (max(sign * int(v), 0) for v in pad[2 * i:2 * i + 2])
    return begins + ends


def _crop(g, x, crops: list):
    """Slice the (begin, end) amounts of ``crops`` (ONNX pads layout) off each dim."""
    rank = len(crops) // 2
    axes = [d for d in range(rank) if crops[d] or crops[rank + d]]
    if not axes:
        return x
    starts = [crops[d] for d in axes]
    ends = [-crops[rank + d] if crops[rank + d] else INT64_MAX for d in axes]
    return g.op("Slice", x, g.ints(starts), g.ints(ends), g.ints(axes), dtype=x.dtype)


def _wrap(g, x, pads: list):
    """Circular padding: per dim, Concat of the tail, x and the head."""
    rank = len(pads) // 2
    for d in range(rank):
        before, after = pads[d], pads[rank + d]
        if not (before or after):
            continue
        parts = [x]
        if before:
            parts.insert(0, g.op("Slice", x, g.ints([-before]), g.ints([INT64_MAX]),
                                 g.ints([d]), dtype=x.dtype))
        if after:
            parts.append(g.op("Slice", x, g.ints([0]), g.ints([after]), g.ints([d]),
                              dtype=x.dtype))
        x = g.op("Concat", *parts, axis=d, dtype=x.dtype)
    return x


@builtin("ember::pad")
def pad(g, x, pad, mode, value):
    """Pad; negative amounts crop with Slice, after padding for reflect/replicate (whose
    mirror spans the uncropped dim, as ember's) and before for circular (which wraps
    over the cropped one). Circular is composed (Pad's wrap mode is opset 19)."""
    grow, crop = _onnx_pads(pad, x.rank, 1), _onnx_pads(pad, x.rank, -1)
    if mode == "circular":
        return _wrap(g, _crop(g, x, crop), grow)
    if mode == "constant":
        x = _crop(g, x, crop)
    if any(grow):
        fill = None
        if mode == "constant":
            fill = g.constant(np.array(0 if value is None else value).astype(x.dtype.numpy))
        onnx_mode = {"constant": "constant", "reflect": "reflect", "replicate": "edge"}[mode]
        x = g.op("Pad", x, g.ints(grow), fill, mode=onnx_mode, dtype=x.dtype)
    if mode != "constant":
        x = _crop(g, x, crop)
    return x
