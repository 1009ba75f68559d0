"""Convolutions with PyTorch's signatures (``torch.nn.functional.conv*``).

Every function here is a thin front for the op ``_convolution`` (the seeds'
``at::_convolution``): it normalizes ints to per-dim tuples, resolves the string paddings
and calls ``ember._convolution(..., benchmark, deterministic, cudnn_enabled)`` with the
flags of ``ember.backends.cudnn`` (as PyTorch reads its global context), whose kernel
picks the highest-priority convolution algorithm a plugin registered
(``ember.backends.convolution.explain`` tells which). Autograd comes from
``_convolution``'s derivative entry, to any order.

Choices, following PyTorch:

* An unbatched input (C, *spatial) is accepted and gives an unbatched output.
* ``padding="valid"`` is no padding; ``padding="same"`` needs stride 1 and pads
  ``dilation * (kernel - 1)`` in total per dim, the odd element (even kernels) going to
  the end. Instead of padding the input, the convolution runs with the larger symmetric
  padding and drops its first output row in that dim, which gives the same values and
  gradients.
* ``conv_transpose*`` take ``(input, weight, bias, stride, padding, output_padding,
  groups, dilation)`` in this order (PyTorch's); their padding is an int or a tuple.
"""
from __future__ import annotations

from ember.ops import namespace as E
from ember.backends import cudnn as _cudnn
from ember.errors import ShapeError

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d"]

_KERNEL = {1: "kL", 2: "kH, kW", 3: "kD, kH, kW"}
_SPATIAL = {1: "L", 2: "H, W", 3: "D, H, W"}


def _tuple(op: str, name: str, value, nd: int) -> tuple:
    """An int or a sequence of ``nd`` ints as a tuple of ``nd`` ints."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (value,) * nd
    if isinstance(value, (tuple, list)) and len(value) == nd and \
            all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return tuple(value)
    raise TypeError(f"{op}: expected {name} to be an int or a tuple of {nd} int(s), got "
                    f"{value!r}")


def _check_ranks(op: str, input, weight, nd: int, transposed: bool) -> bool:
    """Raise for ranks that do not fit; return whether ``input`` is batched."""
    if not isinstance(input, E.Tensor) or not isinstance(weight, E.Tensor):
        raise TypeError(f"{op}: expected Tensor input and weight, got "
                        f"{type(input).__name__} and {type(weight).__name__}")
    if weight.ndim != nd + 2:
        names = "in_channels, out_channels/groups" if transposed else \
            "out_channels, in_channels/groups"
        raise ShapeError(f"{op}: expected weight of rank {nd + 2} ({names}, {_KERNEL[nd]}), "
                         f"got shape {tuple(weight.shape)}")
    if input.ndim not in (nd + 1, nd + 2):
        raise ShapeError(f"{op}: expected {nd + 1}-D (unbatched: C, {_SPATIAL[nd]}) or "
                         f"{nd + 2}-D (batched: N, C, {_SPATIAL[nd]}) input, got shape "
                         f"{tuple(input.shape)}")
    return input.ndim == nd + 2


def _conv(nd: int, input, weight, bias, stride, padding, dilation, groups):
    op = f"conv{nd}d"
    batched = _check_ranks(op, input, weight, nd, False)
    stride = _tuple(op, "stride", stride, nd)
    dilation = _tuple(op, "dilation", dilation, nd)
    trim = ()
    if isinstance(padding, str):
        if padding == "valid":
            padding = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError(f"{op}: padding='same' is not supported for strided "
                                 f"convolutions (stride={list(stride)}); pass the padding "
                                 f"as ints instead")
            totals = [d * (k - 1) for d, k in zip(dilation, weight.shape[2:])]
            # NOTE: an odd total puts its extra element at the end (PyTorch); padding
            # ceil(total / 2) on both sides and dropping the first output gives that.
            padding = tuple((t + 1) // 2 for t in totals)
            trim = tuple(i for i, t in enumerate(totals) if t % 2)
        else:
            raise ValueError(f"{op}: expected padding to be 'same', 'valid', an int or a "
                             f"tuple of {nd} int(s), got {padding!r}")
    else:
        padding = _tuple(op, "padding", padding, nd)
    x = input if batched else input.unsqueeze(0)
    out = E._convolution(x, weight, bias, stride, padding, dilation, False, (0,) * nd,
                         groups, *_cudnn.flags_tuple())
    for i in trim:
        out = out.narrow(2 + i, 1, out.shape[2 + i] - 1)
    return out if batched else out.squeeze(0)


def _conv_transpose(nd: int, input, weight, bias, stride, padding, output_padding, groups,
                    dilation):
    op = f"conv_transpose{nd}d"
    batched = _check_ranks(op, input, weight, nd, True)
    if isinstance(padding, str):
        raise ValueError(f"{op}: expected padding to be an int or a tuple of {nd} int(s), "
                         f"got {padding!r} (string paddings exist only for conv{nd}d)")
    x = input if batched else input.unsqueeze(0)
    out = E._convolution(x, weight, bias, _tuple(op, "stride", stride, nd),
                         _tuple(op, "padding", padding, nd),
                         _tuple(op, "dilation", dilation, nd), True,
                         _tuple(op, "output_padding", output_padding, nd), groups,
                         *_cudnn.flags_tuple())
    return out if batched else out.squeeze(0)


_CONV_DOC = """{nd}-D convolution over an input of several planes (cross-correlation, as in
    every deep-learning library).

    Args:
        input: ``(N, C_in, {sp})`` or unbatched ``(C_in, {sp})``; a floating dtype.
        weight: ``(C_out, C_in / groups, {k})``, the same dtype.
        bias: ``(C_out,)`` or None.
        stride, dilation: an int or a tuple of {nd} ints (>= 1).
        padding: an int, a tuple of {nd} ints (zeros on both sides), ``"valid"`` (none) or
            ``"same"`` (output size = input size; needs stride 1).
        groups: split the channels into this many independent convolutions (C_in and
            C_out divisible by it).

    Returns:
        ``(N, C_out, {out})`` with ``out = (in + 2 * padding - dilation * (k - 1) - 1) //
        stride + 1`` per dim (unbatched input: no N).

    Raises:
        ShapeError: ranks, channel counts or sizes that do not fit (the message gives the
            expected weight shape); DtypeError: mixed dtypes; TypeError: a bad argument
            type; ValueError: a bad padding string or "same" with a stride;
            NotImplementedError: an integral dtype (no algorithm supports it).

    Reference: torch.nn.functional.conv{nd}d.
    """

_TRANSPOSE_DOC = """{nd}-D transposed convolution ("deconvolution"): the gradient of
    conv{nd}d with respect to its input, used to upsample.

    Args:
        input: ``(N, C_in, {sp})`` or unbatched ``(C_in, {sp})``; a floating dtype.
        weight: ``(C_in, C_out / groups, {k})`` (conv{nd}d's weight layout), same dtype.
        bias: ``(C_out,)`` or None.
        stride, padding, dilation: an int or a tuple of {nd} ints; ``padding`` is cropped
            from each side of the full output (it undoes conv{nd}d's padding).
        output_padding: extra size added at the end of each dim (smaller than stride or
            dilation), to pick among the input sizes a strided conv{nd}d maps alike.
        groups: as in conv{nd}d.

    Returns:
        ``(N, C_out, {out})`` with ``out = (in - 1) * stride - 2 * padding + dilation *
        (k - 1) + output_padding + 1`` per dim.

    Raises:
        ShapeError, DtypeError, TypeError, ValueError, NotImplementedError: as conv{nd}d.

    Reference: torch.nn.functional.conv_transpose{nd}d; Dumoulin & Visin, "A guide to
    convolution arithmetic for deep learning" (2016).
    """


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv(3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(1, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(2, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_transpose(3, input, weight, bias, stride, padding, output_padding, groups,
                           dilation)


for _nd in (1, 2, 3):
    _fmt = dict(nd=_nd, sp=_SPATIAL[_nd], k=_KERNEL[_nd],
                out={1: "L_out", 2: "H_out, W_out", 3: "D_out, H_out, W_out"}[_nd])
    globals()[f"conv{_nd}d"].__doc__ = _CONV_DOC.format(**_fmt)
    globals()[f"conv_transpose{_nd}d"].__doc__ = _TRANSPOSE_DOC.format(**_fmt)
del _nd, _fmt
