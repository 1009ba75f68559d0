"""ConvParams: one convolution's checked arguments, which algorithms decide and run on.

``make_params`` checks the arguments of a convolution (ranks, channel counts, kernel
sizes, stride/padding/dilation, dtypes) and returns a frozen, hashable ``ConvParams``:
what an algorithm's ``supports(params)`` reads, and the key of the dispatcher's and the
algorithms' caches. ``memory_format_of`` gives the input's layout, which it holds.

The dispatcher that selects an algorithm for these is ``convolution.py``, which
re-exports all three names (``from ember.backends.convolution import ConvParams``).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import DtypeError, ShapeError

__all__ = ["ConvParams", "make_params", "memory_format_of"]


@dataclass(frozen=True)
class ConvParams:
    """Everything an algorithm needs to decide and to run, hashable (a cache key).

    Shapes are tuples: ``input_shape`` (N, C_in, *spatial), ``weight_shape`` (C_out,
    C_in/groups, *kernel) or, transposed, (C_in, C_out/groups, *kernel); ``stride``,
    ``padding``, ``dilation``, ``output_padding`` have one entry per spatial dim.
    ``dtype`` is an ``ember.ScalarType``; ``device_type`` the backend name.
    ``memory_format`` is the input's (``memory_format_of``): ``"contiguous"`` or
    ``"channels_last"``; ``device_index`` its device (None for a backend with one device).
    Algorithms whose kernels depend on either (cuDNN's graphs do) key their caches by them,
    as PyTorch's ``ConvolutionParams`` holds ``memory_format`` and ``device_id``.
    """

    device_type: str
    dtype: object
    input_shape: tuple
    weight_shape: tuple
    has_bias: bool
    stride: tuple
    padding: tuple
    dilation: tuple
    transposed: bool
    output_padding: tuple
    groups: int
    benchmark: bool = False
    deterministic: bool = False
    cudnn_enabled: bool = True
    memory_format: str = "contiguous"
    device_index: int | None = None

    @property
    def spatial_dims(self) -> int:
        return len(self.input_shape) - 2

    @property
    def kernel_size(self) -> tuple:
        return self.weight_shape[2:]

    @property
    def out_channels(self) -> int:
        w = self.weight_shape
        return w[1] * self.groups if self.transposed else w[0]

    @property
    def output_shape(self) -> tuple:
        """(N, C_out, *spatial) of the result."""
        spatial = []
        for i, size in enumerate(self.input_shape[2:]):
            k, s, p, d = self.kernel_size[i], self.stride[i], self.padding[i], self.dilation[i]
            if self.transposed:
                spatial.append((size - 1) * s - 2 * p + d * (k - 1) + self.output_padding[i] + 1)
            else:
                spatial.append((size + 2 * p - d * (k - 1) - 1) // s + 1)
        return (self.input_shape[0], self.out_channels, *spatial)

    def per_group(self) -> "ConvParams":
        """The parameters of one group's convolution (``_convolution_nogroup``)."""
        g = self.groups
        inp = (self.input_shape[0], self.input_shape[1] // g, *self.input_shape[2:])
        w = (self.weight_shape[0] // g, *self.weight_shape[1:])
        return ConvParams(self.device_type, self.dtype, inp, w, self.has_bias, self.stride,
                          self.padding, self.dilation, self.transposed, self.output_padding,
                          1, self.benchmark, self.deterministic, self.cudnn_enabled,
                          self.memory_format, self.device_index)

    def op_name(self) -> str:
        """``conv2d``, ``conv_transpose1d``, ...: the name errors use."""
        return f"conv{'_transpose' if self.transposed else ''}{self.spatial_dims}d"


def _expand(value: tuple, n: int, what: str, op: str) -> tuple:
    if len(value) == n:
        return tuple(value)
    if len(value) == 1:
        return tuple(value) * n
    raise ShapeError(f"{op}: expected {what} to have {n} element(s) (one per spatial dim) "
                     f"or 1, got {list(value)}")


def memory_format_of(a) -> str:
    """``"channels_last"`` when the (N, C, *spatial) array ``a`` (numpy or CuPy, any
    dtype) is packed with channels innermost (NLC, NHWC, NDHWC) and is not also
    C-contiguous (C == 1 or 1x1 maps are NCHW), else ``"contiguous"``; strides of size-1
    dims are ignored. PyTorch's ``suggest_memory_format`` for 3-D to 5-D tensors."""
    if a.ndim < 3 or a.flags.c_contiguous:
        return "contiguous"
    step = a.itemsize
    for dim in (1, *range(a.ndim - 1, 1, -1), 0):  # innermost first: C, W, H, (D), N
        if a.shape[dim] != 1 and a.strides[dim] != step:
            return "contiguous"
        step *= a.shape[dim]
    return "channels_last"


def make_params(device_type: str, scalar_type, input, weight, bias, stride, padding, dilation,
                transposed, output_padding, groups, benchmark=False, deterministic=False,
                cudnn_enabled=True, device_index=None) -> ConvParams:
    """Check the arguments of one convolution and return its ``ConvParams``.

    ``input``/``weight``/``bias`` are backend arrays; ``device_index`` is the input's
    device (``Backend.device_of``). Raises ShapeError for ranks, channel counts, kernel
    sizes or parameters that do not fit, DtypeError for mixed dtypes; every message names
    the op (``conv2d``), what was expected and what was given.
    """
    nd = weight.ndim - 2
    op = f"conv{'_transpose' if transposed else ''}{max(nd, 1)}d"
    if weight.ndim < 3:
        raise ShapeError(f"{op}: expected weight of rank 3 to 5 ((out_channels, "
                         f"in_channels/groups, *kernel)), got shape {tuple(weight.shape)}")
    if input.ndim != nd + 2:
        raise ShapeError(f"{op}: expected {nd + 2}-D input (N, C, {_dims(nd)}) for a "
                         f"{nd + 2}-D weight, got input of shape {tuple(input.shape)}; a "
                         f"single unbatched sample needs .unsqueeze(0)")
    if input.dtype != weight.dtype or (bias is not None and bias.dtype != input.dtype):
        got = f"input {input.dtype}, weight {weight.dtype}" + \
            (f", bias {bias.dtype}" if bias is not None else "")
        raise DtypeError(f"{op}: expected input, weight and bias of one dtype, got {got}; "
                         f"cast with .to(input.dtype)")
    stride = _expand(stride, nd, "stride", op)
    padding = _expand(padding, nd, "padding", op)
    dilation = _expand(dilation, nd, "dilation", op)
    output_padding = _expand(output_padding, nd, "output_padding", op) if transposed \
        else (0,) * nd
    if groups < 1:
        raise ShapeError(f"{op}: expected groups >= 1, got {groups}")
    if any(s < 1 for s in stride) or any(d < 1 for d in dilation) or any(p < 0 for p in padding):
        raise ShapeError(f"{op}: expected stride >= 1, dilation >= 1 and padding >= 0, got "
                         f"stride={list(stride)}, dilation={list(dilation)}, "
                         f"padding={list(padding)}")
    ishape, wshape = tuple(input.shape), tuple(weight.shape)
    c_in = ishape[1]
    kernel = wshape[2:]
    if transposed:
        if wshape[0] != c_in or c_in % groups:
            raise ShapeError(f"{op}: expected weight of shape (in_channels, "
                             f"out_channels/groups, {_dims(nd, 'k')}) with in_channels = "
                             f"{c_in} (divisible by groups={groups}), got {wshape}")
        if any(o >= max(s, d) for o, s, d in zip(output_padding, stride, dilation)):
            raise ShapeError(f"{op}: expected output_padding smaller than stride or dilation, "
                             f"got output_padding={list(output_padding)}, stride="
                             f"{list(stride)}, dilation={list(dilation)}")
        c_out = wshape[1] * groups
    else:
        if c_in % groups or wshape[0] % groups or wshape[1] * groups != c_in:
            want = (wshape[0], c_in // groups if c_in % groups == 0 else f"{c_in}/{groups}",
                    *kernel)
            raise ShapeError(f"{op}: expected weight of shape (out_channels, "
                             f"in_channels/groups, {_dims(nd, 'k')}) = "
                             f"({', '.join(map(str, want))}) with out_channels divisible by "
                             f"groups={groups}, got {wshape} for input {ishape}")
        c_out = wshape[0]
    if bias is not None and tuple(bias.shape) != (c_out,):
        raise ShapeError(f"{op}: expected bias of shape ({c_out},) (out_channels), got "
                         f"{tuple(bias.shape)}")
    p = ConvParams(device_type, scalar_type, ishape, wshape, bias is not None, stride,
                   padding, dilation, bool(transposed), output_padding, groups,
                   bool(benchmark), bool(deterministic), bool(cudnn_enabled),
                   memory_format_of(input), device_index)
    if not transposed:
        padded = [i + 2 * q for i, q in zip(ishape[2:], padding)]
        eff = [d * (k - 1) + 1 for k, d in zip(kernel, dilation)]
        if any(e > q for e, q in zip(eff, padded)):
            raise ShapeError(f"{op}: the (dilated) kernel {tuple(eff)} is larger than the "
                             f"padded input {tuple(padded)} (input {ishape[2:]}, padding "
                             f"{list(padding)}); pad more or use a smaller kernel")
    if any(o < 1 for o in p.output_shape[2:]):
        raise ShapeError(f"{op}: the output would be empty ({p.output_shape}) for input "
                         f"{ishape} and kernel {kernel}")
    return p


def _dims(nd: int, prefix: str = "") -> str:
    names = {1: ("L",), 2: ("H", "W"), 3: ("D", "H", "W")}.get(nd, ("*",))
    return ", ".join(prefix + n for n in names)
