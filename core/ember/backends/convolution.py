"""The convolution dispatcher: ``_convolution`` picks an algorithm that plugins registered.

Following the seeds' ``at::_convolution``, every convolution (``conv1d`` ... ``conv3d``,
``conv_transpose*``) reaches one op, ``_convolution(input, weight, bias, stride, padding,
dilation, transposed, output_padding, groups, benchmark, deterministic, cudnn_enabled)``.
Its kernel, which every backend gets from the core (``install_kernels``), builds a
``ConvParams`` and asks each *convolution algorithm* registered through the
``ember_convolution_algorithms`` hook, highest ``priority`` first, whether it
``supports(params)``; the first that does runs. An algorithm is any object with::

    name: str                 # "native_im2col", "nnpack_winograd", "cudnn", ...
    priority: int             # higher is tried first (native im2col is 0)
    device_type: str          # the backend it computes on ("cpu", "cuda")
    supports_groups: bool     # False: the dispatcher runs it per group (_convolution_nogroup)
    supports(params) -> bool  # or a falsy ``Decline("why")``, which ``explain`` reports
    dynamic: bool             # optional: True if supports() reads a switch, so its
                              # answers (and the choice after it declines) are not cached
    forward(input, weight, bias, params) -> output array
    backward(grad_output, input, weight, params, output_mask) -> (grad_input,
        grad_weight, grad_bias), each an array or None where output_mask says False

Arrays are the backend's (numpy for ``cpu``); ``bias`` may be None. The op
``convolution_backward`` dispatches the same way, so autograd's ``ConvolutionBackward``
node runs the algorithm's backward; its own derivative is the generic
``convolution_double_backward`` (``autograd/nn_formulas.py``), made of these two ops, so
every order of derivative works for every algorithm.

``explain(...)`` says which algorithm a call would use and why the others declined.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import DtypeError, ShapeError

__all__ = ["ConvParams", "Decline", "algorithms", "explain", "Explanation", "select",
           "memory_format_of"]


class Decline:
    """The falsy answer of ``supports(params)`` that carries its reason.

    ``if algo.supports(p):`` treats it as False; ``explain`` prints ``reason``.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Decline({self.reason!r})"


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


# ---- selection ----------------------------------------------------------------------------

_cache: dict = {}
_cache_generation = -1
_sorted: dict = {}  # (plugin generation, device type) -> algorithms, highest priority first


def algorithms(device_type: str | None = None) -> list:
    """The registered algorithms, highest priority first (optionally for one device).

    The sorted list is kept until plugins reload (``manager.generation`` changes), so a
    convolution does not filter and sort the registry on every call."""
    from ..plugins import manager
    manager.ensure_loaded()
    key = (manager.generation, device_type)
    found = _sorted.get(key)
    if found is None:
        if any(k[0] != manager.generation for k in _sorted):
            _sorted.clear()
        algos = manager.registered["ember_convolution_algorithms"]
        found = _sorted[key] = sorted(
            (a for a in algos if device_type is None or a.device_type == device_type),
            key=lambda a: -a.priority)
    return list(found)


def _verdict(algo, params: ConvParams):
    if algo.device_type != params.device_type:
        return Decline(f"runs on '{algo.device_type}', not '{params.device_type}'")
    try:
        ok = algo.supports(params)
    except Exception as e:  # noqa: BLE001 - a faulty plugin must not break convolution
        return Decline(f"supports() raised {type(e).__name__}: {e}")
    return ok if isinstance(ok, Decline) or ok else Decline("supports() returned False")


def select(params: ConvParams):
    """The highest-priority algorithm that supports ``params`` (cached per params).

    Raises NotImplementedError naming every algorithm and why it declined.
    """
    global _cache_generation
    from ..plugins import manager
    if _cache_generation != manager.generation:
        _cache.clear()
        _cache_generation = manager.generation
    algo = _cache.get(params)
    if algo is None:
        # NOTE: switches such as ember.backends.nnpack.enabled are read by supports() of
        # algorithms marked ``dynamic``, so an answer is cached only when no dynamic
        # algorithm was asked: neither the chosen one nor one that declined before it.
        dynamic = False
        for candidate in algorithms(params.device_type):  # the others decline by device
            dynamic = dynamic or getattr(candidate, "dynamic", False)
            if _verdict(candidate, params):
                algo = candidate
                break
        else:
            raise NotImplementedError(
                f"{params.op_name()}: no convolution algorithm supports this call on "
                f"'{params.device_type}'.\n{explain_params(params)}\nInstall a backend "
                f"plugin with a native algorithm (`pip install ember-cpu` for the CPU).")
        if not dynamic:
            _cache[params] = algo
    return algo


@dataclass
class Explanation:
    """Which algorithm a convolution would use (``chosen``) and why others declined
    (``declined``: (name, reason) pairs), in priority order. ``str()`` prints a report."""

    params: ConvParams
    chosen: str | None
    declined: list

    def __str__(self) -> str:
        p = self.params
        dtype = getattr(p.dtype, "name", p.dtype)
        lines = [f"{p.op_name()} on {p.device_type} {dtype}: input {p.input_shape}, weight "
                 f"{p.weight_shape}, stride {p.stride}, padding {p.padding}, dilation "
                 f"{p.dilation}, groups {p.groups}"]
        for name, reason in self.declined:
            lines.append(f"  {name}: declined ({reason})")
        lines.append(f"  -> {self.chosen}" if self.chosen else "  -> no algorithm")
        return "\n".join(lines)


def explain_params(params: ConvParams) -> Explanation:
    """``Explanation`` for prepared ``ConvParams``."""
    chosen, declined = None, []
    for algo in algorithms():
        v = _verdict(algo, params)
        if v and chosen is None:
            chosen = algo.name
        elif not v:
            declined.append((algo.name, v.reason))
        else:
            declined.append((algo.name, f"supported, but {chosen} has a higher priority"))
    return Explanation(params, chosen, declined)


def explain(input, weight, bias=None, stride=1, padding=0, dilation=1, transposed=False,
            output_padding=0, groups=1, benchmark=False, deterministic=False,
            cudnn_enabled=True) -> Explanation:
    """Which algorithm ``_convolution`` would run for these Tensors, and why the others
    declined (``print(ember.backends.convolution.explain(x, w, padding=1))``).

    ``stride``/``padding``/``dilation``/``output_padding`` take ints or tuples. Raises
    what the convolution itself would raise for bad shapes or dtypes.
    """
    nd = weight.ndim - 2

    def tup(v):
        return tuple(v) if isinstance(v, (list, tuple)) else (v,) * nd
    p = make_params(input.device.type, input.dtype, input._data, weight._data,
                    None if bias is None else bias._data, tup(stride), tup(padding),
                    tup(dilation), transposed, tup(output_padding), groups, benchmark,
                    deterministic, cudnn_enabled)
    return explain_params(p)


# ---- the kernels every backend gets --------------------------------------------------------

def _split(xp, arr, groups: int, axis: int) -> list:
    return xp.split(arr, groups, axis=axis) if arr is not None else [None] * groups


def convolution_nogroup(algo, xp, input, weight, bias, params: ConvParams):
    """Run an algorithm without native groups once per group and concatenate
    (the seeds' ``_convolution_nogroup``)."""
    p1 = params.per_group()
    g = params.groups
    outs = [algo.forward(i, w, b, p1) for i, w, b in
            zip(_split(xp, input, g, 1), _split(xp, weight, g, 0), _split(xp, bias, g, 0))]
    return xp.concatenate(outs, axis=1)


def convolution_nogroup_backward(algo, xp, grad_output, input, weight, params, output_mask):
    """The backward of ``convolution_nogroup``: per group, then concatenated."""
    p1 = params.per_group()
    g = params.groups
    parts = [algo.backward(go, i, w, p1, output_mask) for go, i, w in
             zip(_split(xp, grad_output, g, 1), _split(xp, input, g, 1),
                 _split(xp, weight, g, 0))]
    axes = (1, 0, 0)
    return tuple(xp.concatenate([pt[k] for pt in parts], axis=axes[k]) if output_mask[k]
                 else None for k in range(3))


def install_kernels(backend) -> None:
    """Give ``backend`` the ``_convolution`` and ``convolution_backward`` kernels, which
    select among the registered algorithms (called when a backend registers)."""
    xp, name = backend.xp, backend.name

    def params_of(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                  groups, benchmark=False, deterministic=False, cudnn_enabled=True):
        scalar = backend.type_for_array(input).scalar_type
        return make_params(name, scalar, input, weight, bias, stride, padding, dilation,
                           transposed, output_padding, groups, benchmark, deterministic,
                           cudnn_enabled, backend.device_of(input))

    def _convolution(input, weight, bias, stride, padding, dilation, transposed,
                     output_padding, groups, benchmark, deterministic, cudnn_enabled):
        p = params_of(input, weight, bias, stride, padding, dilation, transposed,
                      output_padding, groups, benchmark, deterministic, cudnn_enabled)
        algo = select(p)
        if p.groups > 1 and not algo.supports_groups:
            return convolution_nogroup(algo, xp, input, weight, bias, p)
        return algo.forward(input, weight, bias, p)

    def convolution_backward(grad_output, input, weight, stride, padding, dilation,
                             transposed, output_padding, groups, output_mask):
        p = params_of(input, weight, None, stride, padding, dilation, transposed,
                      output_padding, groups)
        if tuple(grad_output.shape) != p.output_shape:
            raise ShapeError(f"{p.op_name()} backward: expected grad_output of shape "
                             f"{p.output_shape}, got {tuple(grad_output.shape)}")
        if grad_output.dtype != input.dtype:
            grad_output = grad_output.astype(input.dtype)
        algo = select(p)
        mask = tuple(bool(m) for m in output_mask)
        if p.groups > 1 and not algo.supports_groups:
            got = convolution_nogroup_backward(algo, xp, grad_output, input, weight, p, mask)
        else:
            got = algo.backward(grad_output, input, weight, p, mask)
        # NOTE: outputs not asked for are zero views (no memory), never read by autograd
        shapes = (p.input_shape, p.weight_shape, (p.out_channels,))
        return tuple(r if r is not None else xp.broadcast_to(xp.zeros((), input.dtype), s)
                     for r, s in zip(got, shapes))

    backend.kernels.setdefault("_convolution", _convolution)
    backend.kernels.setdefault("convolution_backward", convolution_backward)
